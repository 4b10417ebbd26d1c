/**
 * The in-memory store: used when the emulator runs without a data dir, and by tests. Opening a
 * second exchange on the same MemoryStore restores the first one's state, as a SqliteStore would.
 */
import type { PrivateEvent } from '../../protocol/index.ts';
import type {
  AccountRecord,
  ChangeSet,
  FillQuery,
  FillRecord,
  OrderRecord,
  PositionRecord,
  RecordSource,
  Store,
  StoredState,
} from './store.ts';

function records<Record extends { readonly ordinal: number }>(
  sources: Map<string, RecordSource<Record>>,
): Record[] {
  return [...sources.values()]
    .map((source) => source.record())
    .sort((a, b) => a.ordinal - b.ordinal);
}

export class MemoryStore implements Store {
  private readonly accounts = new Map<string, RecordSource<AccountRecord>>();
  private readonly orders = new Map<string, RecordSource<OrderRecord>>();
  private readonly positions = new Map<string, RecordSource<PositionRecord>>();
  private readonly fills = new Map<string, FillRecord[]>();
  private readonly events = new Map<string, PrivateEvent[]>();
  private readonly keys = new Map<string, string>();
  private readonly idempotency = new Map<string, string>();
  private nextIdentifier = 1;
  private closed = false;

  load(): StoredState {
    this.ensureOpen();
    return {
      accounts: records(this.accounts),
      orders: records(this.orders),
      positions: records(this.positions),
      nextIdentifier: this.nextIdentifier,
    };
  }

  commit(changes: ChangeSet): void {
    this.ensureOpen();
    for (const account of changes.accounts) this.accounts.set(account.key, account);
    for (const order of changes.orders) this.orders.set(order.key, order);
    for (const position of changes.positions) this.positions.set(position.key, position);
    for (const positionId of changes.closedPositions) this.positions.delete(positionId);
    for (const fill of changes.fills) {
      let list = this.fills.get(fill.account_id);
      if (list === undefined) {
        list = [];
        this.fills.set(fill.account_id, list);
      }
      list.push(fill);
    }
    for (const record of changes.events) {
      let list = this.events.get(record.account_id);
      if (list === undefined) {
        list = [];
        this.events.set(record.account_id, list);
      }
      list.push(record.event);
    }
    this.nextIdentifier = changes.nextIdentifier;
  }

  listFills(accountId: string, query: FillQuery): FillRecord[] {
    this.ensureOpen();
    const list = this.fills.get(accountId) ?? [];
    const result: FillRecord[] = [];
    for (let index = list.length - 1; index >= 0 && result.length < query.limit; index--) {
      const record = list[index]!;
      if (query.beforeOrdinal !== undefined && record.ordinal >= query.beforeOrdinal) continue;
      if (query.marketId !== undefined && record.fill.market_id !== query.marketId) continue;
      result.push(record);
    }
    return result;
  }

  listEvents(accountId: string, afterSequence: number, limit: number): PrivateEvent[] {
    this.ensureOpen();
    const list = this.events.get(accountId) ?? [];
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (list[middle]!.sequence <= afterSequence) low = middle + 1;
      else high = middle;
    }
    return list.slice(low, low + limit);
  }

  saveKey(keyId: string, record: unknown): void {
    this.ensureOpen();
    this.keys.set(keyId, JSON.stringify(record));
  }

  loadKeys(): unknown[] {
    this.ensureOpen();
    return [...this.keys.values()].map((text) => JSON.parse(text) as unknown);
  }

  saveIdempotency(accountId: string, requestId: string, record: unknown): void {
    this.ensureOpen();
    this.idempotency.set(`${accountId}\u0000${requestId}`, JSON.stringify(record));
  }

  loadIdempotency(accountId: string, requestId: string): unknown | undefined {
    this.ensureOpen();
    const text = this.idempotency.get(`${accountId}\u0000${requestId}`);
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  }

  /** Refuses further use, like a closed database; `reopen()` lifts it (tests of a restart). */
  close(): void {
    this.closed = true;
  }

  /** Lets a test reopen an exchange on the same memory after `close()`. */
  reopen(): void {
    this.closed = false;
  }

  private ensureOpen(): void {
    if (this.closed) throw new Error('the store is closed');
  }
}
