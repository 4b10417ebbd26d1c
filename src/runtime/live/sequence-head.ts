/**
 * Where the account's private sequence stands now, found from the event log alone.
 *
 * After a halted resync (the counter went backwards, a gap the log cannot fill) the stream
 * client holds private delivery until told where to resume. Resuming at the service's current
 * head, then reconciling from REST, loses nothing: every event at or below the head is covered
 * by the REST reads that follow, every event above it is delivered.
 *
 * GET /v1/events?after_sequence=x, limit 1, lists an event (or says `has_more`) exactly when an
 * event after x exists, so one-item probes find the head by an
 * exponential then a binary search: about 2 log2(head) small reads, whichever way the counter
 * moved.
 */

/** True when the account has an event with a sequence above `afterSequence`. */
export type SequenceProbe = (afterSequence: number) => Promise<boolean>;

/**
 * The highest sequence the account has. `hint` (the last sequence delivered) is where the search
 * starts; the head may lie above or below it.
 */
export async function findSequenceHead(probe: SequenceProbe, hint: number): Promise<number> {
  const start = Math.max(0, Math.floor(hint));
  let low: number;
  let high: number;
  if (await probe(start)) {
    // Above the hint: double the step until a probe finds nothing beyond.
    low = start + 1;
    let step = 1;
    high = start + step;
    while (await probe(high)) {
      low = high + 1;
      step *= 2;
      high = start + step;
    }
  } else {
    low = 0;
    high = start;
  }
  // The head lies in [low, high]: the smallest x with nothing after it.
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (await probe(middle)) low = middle + 1;
    else high = middle;
  }
  return low;
}
