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
 *
 * Idempotency records are kept as the ledger hands them over, the newest `retainedIdempotency`
 * of all accounts (oldest forgotten first: a resend of a forgotten request id runs anew), and
 * copied through JSON only when read back, which only a resend or a request-status read does.
 * Serializing every record as it was saved cost 30 to 50 µs per placement of a live emulator,
 * most of it the fingerprint's hash, which the ledger computes only when it is read. The ledger
 * saves new objects and never changes them afterwards, and the engine's answers are new wire
 * objects no one writes to.
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
  OrderArchive,
  PackableRecord,
  PackedColumns,
  RecordSource,
  RecordUnpacker,
  Store,
  StoredState,
} from './store.ts';
import { firstAtOrAfter } from './ordinals.ts';
import { DEFAULT_RETAINED_ORDERS, EVENT_COLUMNS, FILL_COLUMNS } from './store.ts';

/** Per account. An event takes about 100 to 200 bytes in the engine's compact form. */
export const DEFAULT_RETAINED_EVENTS = 100_000;
export const DEFAULT_RETAINED_FILLS = 100_000;
/** Of all accounts. A placement's record takes about 2 KB until it is forgotten. */
export const DEFAULT_RETAINED_IDEMPOTENCY = 100_000;

export interface MemoryStoreOptions {
  /** Newest events kept per account (at least 1). */
  readonly retainedEvents?: number;
  /** Newest fills kept per account (at least 1). */
  readonly retainedFills?: number;
  /** Terminal orders kept per account, besides the active ones (at least 1). */
  readonly retainedOrders?: number;
  /** Newest idempotency records kept, of all accounts (at least 1). */
  readonly retainedIdempotency?: number;
}

function records<Record extends { readonly ordinal: number }>(
  sources: Map<string, RecordSource<Record>>,
): Record[] {
  return [...sources.values()]
    .map((source) => source.record())
    .sort((a, b) => a.ordinal - b.ordinal);
}

/**
 * The newest `capacity` records of an append-only list: a ring buffer once full. Records that
 * can pack themselves (`PackableRecord`) are kept as numbers in typed-array columns and read
 * back on demand; others as objects. Kept records are many and live long, so objects would be
 * copied by the garbage collector as they age; the columns hold no object per record.
 */
class RetainedRecords<Record extends PackableRecord<Record>> implements PackedColumns {
  readonly numberStride: number;
  readonly moneyStride: number;
  numbers = new Float64Array(0);
  money = new BigInt64Array(0);
  readonly refs: unknown[] = [];
  /** Per slot: what reads the packed record back, or null when `refs` holds the record. */
  private readonly readers: (RecordUnpacker<Record> | null)[] = [];
  /** Per slot: the record's key (event sequence, fill ordinal), readable without unpacking. */
  private keys = new Float64Array(0);
  private count = 0;
  /** Slot of the oldest record once the buffer is full. */
  private head = 0;

  constructor(
    private readonly capacity: number,
    private readonly accountId: string,
    layout: { readonly numberStride: number; readonly moneyStride: number },
  ) {
    this.numberStride = layout.numberStride;
    this.moneyStride = layout.moneyStride;
  }

  get length(): number {
    return this.count;
  }

  push(record: Record, key: number): void {
    let slot: number;
    if (this.count < this.capacity) {
      slot = this.count;
      if (slot === this.keys.length) this.grow();
      this.count++;
    } else {
      slot = this.head;
      this.head = this.head + 1 === this.capacity ? 0 : this.head + 1;
    }
    this.keys[slot] = key;
    const reader = record.pack?.(this, slot) ?? null;
    this.readers[slot] = reader;
    if (reader === null) this.refs[slot] = record;
  }

  /** The key of the `index`-th oldest record. */
  keyAt(index: number): number {
    return this.keys[this.slotOf(index)]!;
  }

  /** The `index`-th oldest record. */
  at(index: number): Record {
    const slot = this.slotOf(index);
    const reader = this.readers[slot];
    return reader == null ? (this.refs[slot] as Record) : reader.unpack(this, slot, this.accountId);
  }

  private slotOf(index: number): number {
    const position = this.head + index;
    return position < this.capacity ? position : position - this.capacity;
  }

  /** Doubles the columns (up to `capacity` slots); they fill in order until the ring is full. */
  private grow(): void {
    const slots = Math.min(this.capacity, Math.max(256, this.keys.length * 2));
    const keys = new Float64Array(slots);
    keys.set(this.keys);
    this.keys = keys;
    const numbers = new Float64Array(slots * this.numberStride);
    numbers.set(this.numbers);
    this.numbers = numbers;
    const money = new BigInt64Array(slots * this.moneyStride);
    money.set(this.money);
    this.money = money;
  }
}

/**
 * Order sources by ordinal. New orders have ever larger ordinals, so adding one is a push; a
 * source saved again is the same object, which the store recognizes by its `storeMark` without
 * a search. A new object for a known ordinal (a second exchange opened on this store) replaces
 * the one kept.
 */
class SourcesByOrdinal<Record> {
  private sources: RecordSource<Record>[] = [];
  /** Released sources still in `sources` (their mark no longer points here). */
  private released = 0;

  put(source: RecordSource<Record>): void {
    if (source.storeMark === this) return;
    source.storeMark = this;
    const sources = this.sources;
    const ordinal = source.ordinal;
    const last = sources.length - 1;
    if (last < 0 || sources[last]!.ordinal < ordinal) {
      sources.push(source);
      return;
    }
    const low = firstAtOrAfter(sources, ordinal);
    const replaced = sources[low];
    if (replaced?.ordinal === ordinal) {
      if (replaced.storeMark === this) replaced.storeMark = null;
      else this.released--;
      sources[low] = source;
    } else {
      sources.splice(low, 0, source);
    }
  }

  /**
   * Forgets a source. Released ones are dropped when they make up half of the array, so a
   * release costs no search and no move of the entries after it.
   */
  release(source: RecordSource<Record>): void {
    if (source.storeMark !== this) return;
    source.storeMark = null;
    this.released++;
    if (this.released < 64 || this.released * 2 < this.sources.length) return;
    this.sources = this.sources.filter((kept) => kept.storeMark === this);
    this.released = 0;
  }

  records(): Record[] {
    const records: Record[] = [];
    for (const source of this.sources) {
      if (source.storeMark === this) records.push(source.record());
    }
    return records;
  }
}

/** The option `name`, or `fallback` when it is not given; a positive integer or a RangeError. */
function capacityOf(
  options: MemoryStoreOptions,
  name: keyof MemoryStoreOptions,
  fallback: number,
): number {
  const value = options[name] ?? fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  return value;
}

const fillKey = (record: FillRecord): number => record.ordinal;
const eventKey = (record: EventRecord): number => record.sequence;

/** Appends each record to its account's retained list, made on the account's first record. */
function retainEach<Record extends PackableRecord<Record> & { readonly account_id: string }>(
  records: readonly Record[],
  lists: Map<string, RetainedRecords<Record>>,
  capacity: number,
  layout: { readonly numberStride: number; readonly moneyStride: number },
  keyOf: (record: Record) => number,
): void {
  // Consecutive records mostly belong to one account: look its list up once per run.
  let account: string | null = null;
  let list: RetainedRecords<Record> | undefined;
  for (const record of records) {
    if (record.account_id !== account) {
      account = record.account_id;
      list = lists.get(account);
      if (list === undefined) {
        list = new RetainedRecords(capacity, account, layout);
        lists.set(account, list);
      }
    }
    list!.push(record, keyOf(record));
  }
}

export class MemoryStore implements Store {
  readonly retainedEvents: number;
  readonly retainedFills: number;
  readonly retainedOrders: number;
  readonly retainedIdempotency: number;
  /** Released orders are forgotten. */
  readonly orderArchive: OrderArchive | null = null;
  private readonly accounts = new Map<string, RecordSource<AccountRecord>>();
  private readonly orders = new SourcesByOrdinal<OrderRecord>();
  private readonly positions = new Map<string, RecordSource<PositionRecord>>();
  private readonly fills = new Map<string, RetainedRecords<FillRecord>>();
  private readonly events = new Map<string, RetainedRecords<EventRecord>>();
  private readonly keys = new Map<string, string>();
  /**
   * By account, then request id: two lookups of strings the caller already holds, where one
   * joined key would be a new string to hash at every save and every find.
   */
  private readonly idempotency = new Map<string, Map<string, unknown>>();
  /**
   * The keys in the order they came, a ring once full: the oldest is found here, not by
   * iterating a map, whose deleted entries stay at its front until it is rehashed (finding the
   * oldest there cost a walk over them at every save of a long replay).
   */
  private readonly idempotencyAccounts: string[] = [];
  private readonly idempotencyRequests: string[] = [];
  /** The slot of the oldest key once the ring is full. */
  private oldestIdempotency = 0;
  private idempotencyCount = 0;
  private nextIdentifier = 1;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.retainedEvents = capacityOf(options, 'retainedEvents', DEFAULT_RETAINED_EVENTS);
    this.retainedFills = capacityOf(options, 'retainedFills', DEFAULT_RETAINED_FILLS);
    this.retainedOrders = capacityOf(options, 'retainedOrders', DEFAULT_RETAINED_ORDERS);
    this.retainedIdempotency = capacityOf(
      options,
      'retainedIdempotency',
      DEFAULT_RETAINED_IDEMPOTENCY,
    );
  }

  /** How many idempotency records the store holds now. */
  get idempotencySize(): number {
    return this.idempotencyCount;
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
    for (const order of changes.releasedOrders) this.orders.release(order);
    for (const position of changes.positions) this.positions.set(position.key, position);
    for (const positionId of changes.closedPositions) this.positions.delete(positionId);
    retainEach(changes.fills, this.fills, this.retainedFills, FILL_COLUMNS, fillKey);
    retainEach(changes.events, this.events, this.retainedEvents, EVENT_COLUMNS, eventKey);
    this.nextIdentifier = changes.nextIdentifier;
  }

  listFills(accountId: string, query: FillQuery): FillRecord[] {
    this.ensureOpen();
    const list = this.fills.get(accountId);
    const result: FillRecord[] = [];
    if (list === undefined) return result;
    for (let index = list.length - 1; index >= 0 && result.length < query.limit; index--) {
      if (query.beforeOrdinal !== undefined && list.keyAt(index) >= query.beforeOrdinal) continue;
      const record = list.at(index);
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
      if (list.keyAt(middle) <= afterSequence) low = middle + 1;
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
    let byRequest = this.idempotency.get(accountId);
    if (byRequest === undefined) {
      byRequest = new Map();
      this.idempotency.set(accountId, byRequest);
    }
    // One lookup: a request new to the map is told by the size it adds.
    const size = byRequest.size;
    byRequest.set(requestId, record);
    if (byRequest.size === size) return;
    if (this.idempotencyCount < this.retainedIdempotency) {
      this.idempotencyAccounts.push(accountId);
      this.idempotencyRequests.push(requestId);
      this.idempotencyCount++;
    } else {
      // The oldest request leaves (never the new one: it was not in the map before).
      const slot = this.oldestIdempotency;
      this.idempotency
        .get(this.idempotencyAccounts[slot]!)
        ?.delete(this.idempotencyRequests[slot]!);
      this.idempotencyAccounts[slot] = accountId;
      this.idempotencyRequests[slot] = requestId;
      this.oldestIdempotency = slot + 1 === this.retainedIdempotency ? 0 : slot + 1;
    }
  }

  loadIdempotency(accountId: string, requestId: string): unknown | undefined {
    this.ensureOpen();
    const record = this.idempotency.get(accountId)?.get(requestId);
    return record === undefined ? undefined : (JSON.parse(JSON.stringify(record)) as unknown);
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
