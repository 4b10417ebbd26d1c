/**
 * Persistence seam of the emulator. The exchange keeps its working state in memory and, at the
 * end of every unit of work (a command, a timer, a market step), hands the store one ChangeSet
 * with everything that changed; the store writes it atomically. `Exchange.open` rebuilds the
 * state from `load()`. Fills and events, which only grow, are read back through the store.
 *
 * Keys and idempotency records belong to the server; the store keeps them as opaque JSON values
 * that the server parses with its own schemas when it reads them back (a MemoryStore keeps an
 * idempotency record as the object handed over and reads back a JSON copy of it).
 */
import type { Fill, OrderStatus, PrivateEvent } from '../../protocol/index.ts';

export interface AccountRecord {
  readonly account_id: string;
  readonly ordinal: number;
  /** Wallet balance, a decimal string (pUSDC). */
  readonly wallet: string;
  readonly starting_balance: string;
  /** Highest private event sequence handed out. */
  readonly sequence: number;
  readonly snapshot_version: number;
  readonly created_at: number;
  /** False once the account was reset (its keys then answer KEY_REVOKED). */
  readonly active: boolean;
  /** Cancel-all-after deadline in epoch ms, or null when disabled. */
  readonly cancel_all_after_deadline: number | null;
}

export interface OrderRecord {
  readonly ordinal: number;
  readonly order_id: string;
  readonly account_id: string;
  readonly request_id: string | null;
  readonly client_order_id: string;
  readonly market_id: string;
  readonly side: 'buy' | 'sell';
  readonly type: 'market' | 'limit';
  readonly quantity: string;
  readonly price: string | null;
  readonly time_in_force: 'GTC' | 'IOC';
  readonly post_only: boolean;
  readonly reduce_only: boolean;
  readonly position_id: string | null;
  readonly leverage: number;
  readonly margin_mode: 'cross' | 'isolated';
  readonly max_slippage_percent: string | null;
  readonly status: OrderStatus;
  readonly received_at: number;
  readonly updated_at: number;
  readonly filled_quantity: string;
  /** Σ price × quantity of the fills, a decimal string. */
  readonly filled_notional: string;
  /** Margin still reserved for the unfilled part, a decimal string. */
  readonly reserved_margin: string;
  readonly last_event_sequence: number | null;
  /** Time priority among resting orders (lower first), or null when not resting. */
  readonly book_priority: number | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}

export interface PositionRecord {
  readonly position_id: string;
  readonly account_id: string;
  readonly market_id: string;
  readonly ordinal: number;
  readonly side: 'long' | 'short';
  readonly quantity: string;
  /** Σ entry price × quantity of what is open, a decimal string. */
  readonly cost_basis: string;
  /** Margin held by the position, a decimal string. */
  readonly margin: string;
  readonly margin_mode: 'cross' | 'isolated';
  readonly opened_at: number;
  readonly updated_at: number;
  /** Funding received (negative: paid) over the position's life, a decimal string. */
  readonly funding_total?: string;
}

/**
 * Where a store that keeps records in memory keeps them without an object per record: slot `s`
 * owns `numberStride` entries of `numbers` from `s * numberStride`, `moneyStride` entries of
 * `money` from `s * moneyStride`, and `refs[s]` (a string the record shares with the
 * exchange's state, such as an order id). Hundreds of thousands of kept records as objects
 * would each be copied by the garbage collector as they age; typed arrays are not.
 */
export interface PackedColumns {
  readonly numberStride: number;
  readonly moneyStride: number;
  readonly numbers: Float64Array;
  /** Money amounts as two entries each (low and high 64 bits, see `packMoney`). */
  readonly money: BigInt64Array;
  readonly refs: unknown[];
}

/** Event columns: enough for every packable event (the widest is a position event). */
export const EVENT_COLUMNS = { numberStride: 11, moneyStride: 8 } as const;
/** Fill columns: numbers only. */
export const FILL_COLUMNS = { numberStride: 8, moneyStride: 0 } as const;

const MONEY_LIMIT = 2n ** 127n;

/**
 * Writes `value` at `money[index]` and `money[index + 1]` (its low and high 64 bits); false,
 * writing nothing, when it needs more than 128 bits.
 */
export function packMoney(money: BigInt64Array, index: number, value: bigint): boolean {
  if (value >= MONEY_LIMIT || value < -MONEY_LIMIT) return false;
  money[index] = value; // the low 64 bits
  money[index + 1] = value >> 64n;
  return true;
}

export function unpackMoney(money: BigInt64Array, index: number): bigint {
  return (money[index + 1]! << 64n) + BigInt.asUintN(64, money[index]!);
}

/** Reads a packed record back: an equal record (the same `fill` and `event`). */
export interface RecordUnpacker<Record> {
  unpack(columns: PackedColumns, slot: number, accountId: string): Record;
}

/**
 * A record that can write itself into a slot of `PackedColumns`. `pack` returns what reads it
 * back, or null when the record does not fit (the store then keeps the object).
 */
export interface PackableRecord<Record> {
  pack?(columns: PackedColumns, slot: number): RecordUnpacker<Record> | null;
}

/**
 * A fill or an event as the exchange hands it over. `fill` and `event` may be built on access
 * from a compact record (the engine's records are), so a store that serializes reads them in
 * `commit`, and a store that keeps the records in memory reads them when asked.
 */
export interface FillRecord extends PackableRecord<FillRecord> {
  readonly ordinal: number;
  readonly account_id: string;
  readonly market_id: string;
  readonly fill: Fill;
}

export interface EventRecord extends PackableRecord<EventRecord> {
  readonly account_id: string;
  readonly sequence: number;
  readonly event: PrivateEvent;
}

/**
 * A changed entity. `record()` builds its record as of the end of the unit of work; a store that
 * writes at once (SqliteStore) calls it in `commit`, the MemoryStore keeps the source and calls
 * it in `load()`. Exchange state changes only inside units of work, each ending in a commit, so
 * both read the same record; the MemoryStore thereby keeps no second copy of the state.
 */
export interface RecordSource<Record> {
  readonly key: string;
  /** The record's `ordinal`: unique, and increasing in the order entities are created. */
  readonly ordinal: number;
  /**
   * For the store that keeps the source itself (the MemoryStore notes there that it holds it,
   * so saving it again costs no search); the exchange only sets it to null when creating it.
   */
  storeMark: unknown;
  record(): Record;
}

/**
 * One unit of work. The object and its arrays are valid only during `commit` (the exchange
 * empties and reuses them afterwards): a store copies what it keeps. Fill and event records are
 * immutable.
 */
export interface ChangeSet {
  readonly accounts: readonly RecordSource<AccountRecord>[];
  readonly orders: readonly RecordSource<OrderRecord>[];
  readonly positions: readonly RecordSource<PositionRecord>[];
  /** Position ids that closed (quantity reached zero). */
  readonly closedPositions: readonly string[];
  readonly fills: readonly FillRecord[];
  readonly events: readonly EventRecord[];
  /**
   * Terminal orders the exchange no longer keeps in memory (see `Store.retainedOrders`); their
   * last record was committed before, or is in `orders` of this change set. A store with an
   * `orderArchive` keeps them; the MemoryStore forgets them.
   */
  readonly releasedOrders: readonly RecordSource<OrderRecord>[];
  /** The identifier counter after this unit of work. */
  readonly nextIdentifier: number;
}

export interface StoredState {
  readonly accounts: AccountRecord[];
  /** Every order the store keeps (all of them, or the MemoryStore's retained ones), by ordinal. */
  readonly orders: OrderRecord[];
  readonly positions: PositionRecord[];
  readonly nextIdentifier: number;
}

export interface FillQuery {
  readonly limit: number;
  /** Only fills with a smaller ordinal (the cursor of the previous page). */
  readonly beforeOrdinal?: number;
  readonly marketId?: string;
}

export interface OrderQuery {
  readonly limit: number;
  /** Only orders with a smaller ordinal. */
  readonly beforeOrdinal: number;
  readonly marketId?: string;
  readonly status?: OrderStatus;
}

/** Reads of orders the exchange released from memory, in a store that keeps every order. */
export interface OrderArchive {
  findOrder(accountId: string, orderId: string): OrderRecord | undefined;
  /** The newest order of the account with that client order id. */
  findOrderByClientId(accountId: string, clientOrderId: string): OrderRecord | undefined;
  /** Newest first. */
  listOrders(accountId: string, query: OrderQuery): OrderRecord[];
}

/** Terminal orders per account an exchange keeps in memory unless its store says otherwise. */
export const DEFAULT_RETAINED_ORDERS = 10_000;

export interface Store {
  /**
   * How many terminal orders of each account the exchange keeps in memory, besides every active
   * one: those that became terminal most recently. It releases older ones (`ChangeSet.releasedOrders`)
   * and reads them from `orderArchive` when the store has one.
   */
  readonly retainedOrders: number;
  /** Null when the store keeps no order the exchange released (the MemoryStore). */
  readonly orderArchive: OrderArchive | null;

  load(): StoredState;
  commit(changes: ChangeSet): void;
  /** Newest first. */
  listFills(accountId: string, query: FillQuery): FillRecord[];
  /**
   * Sequence above `afterSequence`, ascending, at most `limit`. A store with a retention bound
   * starts at its oldest retained event when older ones were dropped (the reader sees the gap).
   */
  listEvents(accountId: string, afterSequence: number, limit: number): PrivateEvent[];

  saveKey(keyId: string, record: unknown): void;
  loadKeys(): unknown[];
  saveIdempotency(accountId: string, requestId: string, record: unknown): void;
  loadIdempotency(accountId: string, requestId: string): unknown | undefined;
  /**
   * Runs `work` so that everything it writes lands together or not at all (the engine's commit
   * of a mutation and the request's idempotency record). A throw from `work` writes nothing.
   */
  atomically<T>(work: () => T): T;

  close(): void;
}
