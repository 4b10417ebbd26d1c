/**
 * A store for the idempotency ledger of an in-process run nothing outlives (a replay): the last
 * `maxRecords` requests, oldest forgotten first, so a long replay keeps flat memory. A request id
 * older than the window is unknown again: a resend of it would run anew, and a status read of it
 * answers ORDER_NOT_FOUND.
 *
 * A `MemoryStore` with a smaller idempotency bound: records are kept as the ledger hands them
 * over and copied only when read back (see `MemoryStore`). The answer in a record is also the
 * one the venue hands to the runtime, which treats wire objects as read-only (nothing in
 * `src/runtime` writes to one). They are not frozen: freezing every answer was about a quarter
 * of the cost of a save.
 */
import { MemoryStore } from '../store/memory-store.ts';

export const DEFAULT_IDEMPOTENCY_WINDOW = 10_000;

export class IdempotencyWindow extends MemoryStore {
  constructor(maxRecords: number = DEFAULT_IDEMPOTENCY_WINDOW) {
    if (!Number.isInteger(maxRecords) || maxRecords < 1) {
      throw new RangeError(
        `the idempotency window must hold at least one record, not ${maxRecords}`,
      );
    }
    super({ retainedIdempotency: maxRecords });
  }

  /** How many records the window holds now. */
  get size(): number {
    return this.idempotencySize;
  }
}
