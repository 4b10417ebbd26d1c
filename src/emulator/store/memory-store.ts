/**
 * The in-memory store: used when the emulator runs without a data dir, and by tests. Opening a
 * second exchange on the same MemoryStore restores the first one's state, as a SqliteStore would.
 *
 * Fills and events are kept as the exchange's compact records (their wire objects are built
 * when read), and only the newest `retainedEvents` events and `retainedFills` fills of each
 * account: a process without a data dir must not grow without bound. Older ones are dropped,
 * so `listEvents` after a dropped sequence starts at the oldest retained event (the reader sees
 * the gap in `sequence`) and fill pages end at the oldest retained fill. The SqliteStore keeps
 * everything.
 */
import type { PrivateEvent } from '../../protocol/index.ts';
import type {
  AccountRecord,
  ChangeSet,
  EventRecord,
  FillQuery,
  FillRecord,
  OrderRecord,
  PositionRecord,
  RecordSource,
  Store,
  StoredState,
} from './store.ts';

/** Per account. An event takes about 100 to 200 bytes in the engine's compact form. */
export const DEFAULT_RETAINED_EVENTS = 100_000;
export const DEFAULT_RETAINED_FILLS = 100_000;

export interface MemoryStoreOptions {
  /** Newest events kept per account (at least 1). */
  readonly retainedEvents?: number;
  /** Newest fills kept per account (at least 1). */
  readonly retainedFills?: number;
}

function records<Record extends { readonly ordinal: number }>(
  sources: Map<string, RecordSource<Record>>,
): Record[] {
  return [...sources.values()]
    .map((source) => source.record())
    .sort((a, b) => a.ordinal - b.ordinal);
}

/**
 * The newest `capacity` items of an append-only list: a ring buffer once full, so appending
 * never copies or allocates in the steady state.
 */
class RetainedList<Item> {
  private readonly items: Item[] = [];
  /** Index of the oldest item once the buffer is full. */
  private head = 0;

  constructor(private readonly capacity: number) {}

  get length(): number {
    return this.items.length;
  }

  push(item: Item): void {
    const items = this.items;
    if (items.length < this.capacity) {
      items.push(item);
      return;
    }
    items[this.head] = item;
    this.head = this.head + 1 === this.capacity ? 0 : this.head + 1;
  }

  /** The `index`-th oldest item. */
  at(index: number): Item {
    const position = this.head + index;
    return this.items[position < this.capacity ? position : position - this.capacity]!;
  }
}

/**
 * Order sources by ordinal. New orders have ever larger ordinals and an order is mostly saved
 * again soon after it was created, so this costs a push or a short look back from the end
 * instead of a lookup in a large hash table. A source with a known ordinal replaces the one
 * kept (a second exchange opened on this store has new objects for the same orders).
 */
class SourcesByOrdinal<Record> {
  private readonly sources: RecordSource<Record>[] = [];

  put(source: RecordSource<Record>): void {
    const sources = this.sources;
    const ordinal = source.ordinal;
    const last = sources.length - 1;
    if (last < 0 || sources[last]!.ordinal < ordinal) {
      sources.push(source);
      return;
    }
    const stop = Math.max(0, last - 16);
    for (let index = last; index >= stop; index--) {
      const current = sources[index]!.ordinal;
      if (current === ordinal) {
        sources[index] = source;
        return;
      }
      if (current < ordinal) {
        sources.splice(index + 1, 0, source);
        return;
      }
    }
    // Galloping back from the end, then a binary search in the range found: orders saved again
    // are mostly recent ones, and this reads entries near the end (in cache) instead of the
    // middle of a long array.
    let high = stop;
    let low = 0;
    for (let distance = 32; distance < stop; distance *= 2) {
      const index = stop - distance;
      if (sources[index]!.ordinal < ordinal) {
        low = index;
        break;
      }
      high = index + 1;
    }
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (sources[middle]!.ordinal < ordinal) low = middle + 1;
      else high = middle;
    }
    if (sources[low]?.ordinal === ordinal) sources[low] = source;
    else sources.splice(low, 0, source);
  }

  records(): Record[] {
    return this.sources.map((source) => source.record());
  }
}

function checkCapacity(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  return value;
}

export class MemoryStore implements Store {
  readonly retainedEvents: number;
  readonly retainedFills: number;
  private readonly accounts = new Map<string, RecordSource<AccountRecord>>();
  private readonly orders = new SourcesByOrdinal<OrderRecord>();
  private readonly positions = new Map<string, RecordSource<PositionRecord>>();
  private readonly fills = new Map<string, RetainedList<FillRecord>>();
  private readonly events = new Map<string, RetainedList<EventRecord>>();
  private readonly keys = new Map<string, string>();
  private readonly idempotency = new Map<string, string>();
  private nextIdentifier = 1;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.retainedEvents = checkCapacity(
      'retainedEvents',
      options.retainedEvents ?? DEFAULT_RETAINED_EVENTS,
    );
    this.retainedFills = checkCapacity(
      'retainedFills',
      options.retainedFills ?? DEFAULT_RETAINED_FILLS,
    );
  }

  load(): StoredState {
    this.ensureOpen();
    return {
      accounts: records(this.accounts),
      orders: this.orders.records(),
      positions: records(this.positions),
      nextIdentifier: this.nextIdentifier,
    };
  }

  commit(changes: ChangeSet): void {
    this.ensureOpen();
    for (const account of changes.accounts) this.accounts.set(account.key, account);
    for (const order of changes.orders) this.orders.put(order);
    for (const position of changes.positions) this.positions.set(position.key, position);
    for (const positionId of changes.closedPositions) this.positions.delete(positionId);
    // Consecutive records mostly belong to one account: look its list up once per run.
    let fillAccount: string | null = null;
    let fillList: RetainedList<FillRecord> | undefined;
    for (const record of changes.fills) {
      if (record.account_id !== fillAccount) {
        fillAccount = record.account_id;
        fillList = this.fills.get(fillAccount);
        if (fillList === undefined) {
          fillList = new RetainedList(this.retainedFills);
          this.fills.set(fillAccount, fillList);
        }
      }
      fillList!.push(record);
    }
    let eventAccount: string | null = null;
    let eventList: RetainedList<EventRecord> | undefined;
    for (const record of changes.events) {
      if (record.account_id !== eventAccount) {
        eventAccount = record.account_id;
        eventList = this.events.get(eventAccount);
        if (eventList === undefined) {
          eventList = new RetainedList(this.retainedEvents);
          this.events.set(eventAccount, eventList);
        }
      }
      eventList!.push(record);
    }
    this.nextIdentifier = changes.nextIdentifier;
  }

  listFills(accountId: string, query: FillQuery): FillRecord[] {
    this.ensureOpen();
    const list = this.fills.get(accountId);
    const result: FillRecord[] = [];
    if (list === undefined) return result;
    for (let index = list.length - 1; index >= 0 && result.length < query.limit; index--) {
      const record = list.at(index);
      if (query.beforeOrdinal !== undefined && record.ordinal >= query.beforeOrdinal) continue;
      if (query.marketId !== undefined && record.market_id !== query.marketId) continue;
      result.push(record);
    }
    return result;
  }

  listEvents(accountId: string, afterSequence: number, limit: number): PrivateEvent[] {
    this.ensureOpen();
    const list = this.events.get(accountId);
    const result: PrivateEvent[] = [];
    if (list === undefined) return result;
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (list.at(middle).sequence <= afterSequence) low = middle + 1;
      else high = middle;
    }
    const end = Math.min(list.length, low + limit);
    for (let index = low; index < end; index++) result.push(list.at(index).event);
    return result;
  }

  saveKey(keyId: string, record: unknown): void {
    this.ensureOpen();
    this.keys.set(keyId, JSON.stringify(record));
  }

  loadKeys(): unknown[] {
    this.ensureOpen();
    return [...this.keys.values()].map((text) => JSON.parse(text) as unknown);
  }

  /** Memory has nothing to lose in a crash: the work simply runs. */
  atomically<T>(work: () => T): T {
    return work();
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
