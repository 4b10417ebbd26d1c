/**
 * A store for the idempotency ledger of an in-process run nothing outlives (a replay): the last
 * `maxRecords` requests, oldest forgotten first, so a long replay keeps flat memory. A request id
 * older than the window is unknown again: a resend of it would run anew, and a status read of it
 * answers ORDER_NOT_FOUND.
 *
 * Records are kept as the ledger hands them over and copied only when read back, which only a
 * resend or a request-status read does, where `MemoryStore` serializes every answer as it is
 * recorded. The ledger saves new objects and never changes them afterwards; the answer in a
 * record is also the one the venue hands to the runtime, which treats wire objects as read-only
 * (nothing in `src/runtime` writes to one). They are not frozen: freezing every answer was about
 * a quarter of the cost of a save.
 */
import { MemoryStore } from '../store/memory-store.ts';

export const DEFAULT_IDEMPOTENCY_WINDOW = 10_000;

export class IdempotencyWindow extends MemoryStore {
  /**
   * By account, then request id: two lookups of strings the caller already holds, where one
   * joined key would be a new string to hash at every save and every find.
   */
  private readonly records = new Map<string, Map<string, unknown>>();
  /**
   * The keys in the order they came, a ring once full: the oldest is found here, not by
   * iterating a map, whose deleted entries stay at its front until it is rehashed (finding the
   * oldest there cost a walk over them at every save of a long replay).
   */
  private readonly orderAccounts: string[] = [];
  private readonly orderRequests: string[] = [];
  /** The slot of the oldest key once the ring is full. */
  private oldest = 0;
  private count = 0;
  private readonly maxRecords: number;

  constructor(maxRecords: number = DEFAULT_IDEMPOTENCY_WINDOW) {
    super();
    if (!Number.isInteger(maxRecords) || maxRecords < 1) {
      throw new RangeError(
        `the idempotency window must hold at least one record, not ${maxRecords}`,
      );
    }
    this.maxRecords = maxRecords;
  }

  /** How many records the window holds now. */
  get size(): number {
    return this.count;
  }

  override saveIdempotency(accountId: string, requestId: string, record: unknown): void {
    let byRequest = this.records.get(accountId);
    if (byRequest === undefined) {
      byRequest = new Map();
      this.records.set(accountId, byRequest);
    }
    if (!byRequest.has(requestId)) {
      if (this.count < this.maxRecords) {
        this.orderAccounts.push(accountId);
        this.orderRequests.push(requestId);
        this.count++;
      } else {
        const slot = this.oldest;
        this.records.get(this.orderAccounts[slot]!)?.delete(this.orderRequests[slot]!);
        this.orderAccounts[slot] = accountId;
        this.orderRequests[slot] = requestId;
        this.oldest = slot + 1 === this.maxRecords ? 0 : slot + 1;
      }
    }
    byRequest.set(requestId, record);
  }

  override loadIdempotency(accountId: string, requestId: string): unknown | undefined {
    const record = this.records.get(accountId)?.get(requestId);
    return record === undefined ? undefined : (JSON.parse(JSON.stringify(record)) as unknown);
  }
}
