/**
 * The pieces every venue's private stream shares, so that the live venue (over the stream and
 * REST clients) and the replay venue (over the in-process engine) hand the order tracker the
 * same items by the same rules (`PrivateStreamFeed` in `venue.ts`):
 * - `privateStreamItem`: a private event as the item the tracker applies;
 * - `PrivateSequence`: the last sequence handed on, and the `gap` item a jump past it makes;
 * - `readFillsBackFrom`: a read-back of fills, newest first, down to its stop.
 */
import type { Fill, PrivateEvent, UnreadablePrivateEvent } from '../protocol/index.ts';
import type { FillReadBack, FillReadBackStop, PrivateStreamItem } from './venue.ts';

/** A private event (or one that broke its schema) as the item the tracker applies. */
export function privateStreamItem(event: PrivateEvent | UnreadablePrivateEvent): PrivateStreamItem {
  if ('unreadable' in event) {
    return {
      kind: 'unreadable',
      sequence: event.sequence,
      channel: event.channel,
      type: event.type,
      entityId: event.entityId,
      problem: event.problem,
    };
  }
  if (event.type === 'authoritative_status') {
    return { kind: 'order', sequence: event.sequence, event };
  }
  if (event.type === 'fill') {
    return {
      kind: 'fill',
      sequence: event.sequence,
      occurredAt: event.occurred_at,
      fill: event.data,
    };
  }
  return { kind: 'other', sequence: event.sequence, occurredAt: event.occurred_at };
}

/**
 * The last sequence handed on. A sequence at or below it was handed on before; one beyond the
 * next says that those between will never be delivered (a `gap`, whose fills are read back).
 */
export class PrivateSequence {
  constructor(public last: number | null) {}

  /** True when `sequence` was handed on before (it is then ignored). */
  seen(sequence: number): boolean {
    return this.last !== null && sequence <= this.last;
  }

  /** Whether handing on `sequence` now skips sequences (a gap comes first). */
  jumps(sequence: number): boolean {
    return this.last !== null && sequence > this.last + 1;
  }

  /** The gap before `sequence`, if it jumps; `sequence` is then the last handed on. */
  advance(sequence: number): PrivateStreamItem | null {
    const last = this.last;
    this.last = sequence;
    if (last === null || sequence <= last + 1) return null;
    return {
      kind: 'gap',
      after: last,
      next: sequence,
      reason: `sequences ${last + 1} to ${sequence - 1} were not delivered`,
    };
  }
}

/** Epoch milliseconds of an RFC 3339 time, or null when it does not parse. */
function timeOf(text: string): number | null {
  const value = Date.parse(text);
  return Number.isFinite(value) ? value : null;
}

/**
 * Fills, newest first (GET /v1/fills order), down to the stop: the newest fill known (not
 * returned), a fill older than the stop time, or `maximumFills` (then incomplete). Oldest first.
 */
export async function readFillsBackFrom(
  newestFirst: AsyncIterable<Fill> | Iterable<Fill>,
  stop: FillReadBackStop,
): Promise<FillReadBack> {
  const stopAt = stop.stopOccurredAt === null ? null : timeOf(stop.stopOccurredAt);
  const fills: Fill[] = [];
  for await (const fill of newestFirst) {
    if (stop.stopFillId !== null && fill.fill_id === stop.stopFillId) break;
    const at = timeOf(fill.occurred_at);
    if (stopAt !== null && at !== null && at < stopAt) break;
    if (fills.length >= stop.maximumFills) return { fills: fills.reverse(), complete: false };
    fills.push(fill);
  }
  return { fills: fills.reverse(), complete: true };
}
