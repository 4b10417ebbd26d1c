/**
 * A millisecond of the clock as a shared object. Epoch milliseconds are too large for V8's small
 * integers, so a number kept in an object field gets a heap box of its own; orders, events and
 * fills point to one Instant per clock millisecond instead (and it keeps its RFC 3339 text once
 * made), which saves an object per record for the garbage collector to copy.
 */
export class Instant {
  /** The wire text, once someone asked for it (see `WireFormat.text`). */
  text: string | null = null;

  constructor(readonly ms: number) {}
}

/** Hands out the Instant of a millisecond, the same object while the clock stays on it. */
export class InstantSource {
  private current = new Instant(Number.NaN);

  at(ms: number): Instant {
    if (ms !== this.current.ms) this.current = new Instant(ms);
    return this.current;
  }
}
