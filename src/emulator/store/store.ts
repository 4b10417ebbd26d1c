/**
 * Persistence seam of the emulator. The exchange keeps its working state in memory and, at the
 * end of every unit of work (a command, a timer, a market step), hands the store one ChangeSet
 * with everything that changed; the store writes it atomically. `Exchange.open` rebuilds the
 * state from `load()`. Fills and events, which only grow, are read back through the store.
 *
 * Keys and idempotency records belong to the server; the store keeps them as opaque JSON values
 * that the server parses with its own schemas when it reads them back.
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
}

/**
 * A fill or an event as the exchange hands it over. `fill` and `event` may be built on access
 * from a compact record (the engine's records are), so a store that serializes reads them in
 * `commit`, and a store that keeps the records in memory reads them when asked.
 */
export interface FillRecord {
  readonly ordinal: number;
  readonly account_id: string;
  readonly market_id: string;
  readonly fill: Fill;
}

export interface EventRecord {
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
  /** The identifier counter after this unit of work. */
  readonly nextIdentifier: number;
}

export interface StoredState {
  readonly accounts: AccountRecord[];
  /** Every order, in ordinal order. */
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

export interface Store {
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
