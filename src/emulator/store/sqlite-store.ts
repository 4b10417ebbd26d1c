/**
 * The persistent store: one SQLite file (better-sqlite3, WAL journal). Each ChangeSet is one
 * transaction, so a crash leaves the file at the end of some unit of work, never inside one.
 * Records are kept as JSON next to the columns they are looked up by. Every order stays here:
 * the exchange reads those it released from memory through `orderArchive`.
 */
import Database from 'better-sqlite3';
import type { PrivateEvent } from '../../protocol/index.ts';
import type {
  AccountRecord,
  ChangeSet,
  FillQuery,
  FillRecord,
  OrderArchive,
  OrderQuery,
  OrderRecord,
  PositionRecord,
  Store,
  StoredState,
} from './store.ts';
import { TERMINAL_ORDER_STATUSES } from '../../protocol/primitives.ts';
import {
  DEFAULT_RETAINED_EVENTS,
  DEFAULT_RETAINED_FILLS,
  DEFAULT_RETAINED_IDEMPOTENCY,
} from './memory-store.ts';
import { DEFAULT_RETAINED_ORDERS } from './store.ts';

/** Terminal orders per account the file keeps (the newest; active orders always stay). */
export const DEFAULT_STORED_TERMINAL_ORDERS = 100_000;
/** Commits between two pruning steps. */
const PRUNE_EVERY_COMMITS = 256;
/** Rows per table and account one pruning step deletes at most. */
const PRUNE_BATCH_ROWS = 2_000;
/** Free pages one pruning step gives back (a file made with incremental auto-vacuum). */
const RECLAIM_PAGES = 256;

const TERMINAL_SQL = [...TERMINAL_ORDER_STATUSES].map((status) => `'${status}'`).join(', ');

const SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (
  account_id TEXT PRIMARY KEY, ordinal INTEGER NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS orders (
  order_id TEXT PRIMARY KEY, ordinal INTEGER NOT NULL, account_id TEXT NOT NULL,
  record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS orders_by_ordinal ON orders (ordinal);
CREATE INDEX IF NOT EXISTS orders_by_account ON orders (account_id, ordinal);
CREATE INDEX IF NOT EXISTS orders_by_client_id
  ON orders (account_id, json_extract(record, '$.client_order_id'), ordinal);
CREATE TABLE IF NOT EXISTS positions (
  position_id TEXT PRIMARY KEY, ordinal INTEGER NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fills (
  account_id TEXT NOT NULL, ordinal INTEGER NOT NULL, market_id TEXT NOT NULL,
  fill TEXT NOT NULL, PRIMARY KEY (account_id, ordinal));
CREATE TABLE IF NOT EXISTS events (
  account_id TEXT NOT NULL, sequence INTEGER NOT NULL, event TEXT NOT NULL,
  PRIMARY KEY (account_id, sequence));
CREATE TABLE IF NOT EXISTS keys (key_id TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency (
  account_id TEXT NOT NULL, request_id TEXT NOT NULL, record TEXT NOT NULL,
  PRIMARY KEY (account_id, request_id));
`;

export interface SqliteStoreOptions {
  /** Terminal orders per account the exchange keeps in memory (the rest are read from here). */
  readonly retainedOrders?: number;
  /**
   * Windows of the file, as the MemoryStore's (docs/emulator.md, Persistence): the newest
   * events and fills per account (100,000 each), idempotency records of all accounts (100,000)
   * and terminal orders per account (100,000). Older rows are deleted a batch at a time.
   */
  readonly retainedEvents?: number;
  readonly retainedFills?: number;
  readonly retainedIdempotency?: number;
  readonly retainedTerminalOrders?: number;
  /** Commits between two pruning steps (default 256). */
  readonly pruneEveryCommits?: number;
}

/** Rows one pruning step deleted, per table. */
export interface StorePruneReport {
  readonly events: number;
  readonly fills: number;
  readonly orders: number;
  readonly idempotency: number;
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  const chosen = value ?? fallback;
  if (!Number.isSafeInteger(chosen) || chosen < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${chosen}`);
  }
  return chosen;
}

export class SqliteStore implements Store, OrderArchive {
  readonly retainedOrders: number;
  readonly orderArchive: OrderArchive = this;
  private readonly database: Database.Database;
  private readonly statements;
  private readonly commitTransaction: (changes: ChangeSet) => void;
  /** One transaction wrapper, built once (better-sqlite3 builds several functions per wrapper). */
  private readonly runAtomically: (work: () => unknown) => unknown;
  private readonly windows: {
    readonly events: number;
    readonly fills: number;
    readonly idempotency: number;
    readonly terminalOrders: number;
  };
  private readonly prune;
  private commitsSincePrune = 0;
  private readonly pruneEveryCommits: number;

  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    const retainedOrders = options.retainedOrders ?? DEFAULT_RETAINED_ORDERS;
    if (!Number.isSafeInteger(retainedOrders) || retainedOrders < 1) {
      throw new RangeError(`retainedOrders must be a positive integer, got ${retainedOrders}`);
    }
    this.retainedOrders = retainedOrders;
    this.windows = {
      events: positiveInteger(options.retainedEvents, DEFAULT_RETAINED_EVENTS, 'retainedEvents'),
      fills: positiveInteger(options.retainedFills, DEFAULT_RETAINED_FILLS, 'retainedFills'),
      idempotency: positiveInteger(
        options.retainedIdempotency,
        DEFAULT_RETAINED_IDEMPOTENCY,
        'retainedIdempotency',
      ),
      terminalOrders: positiveInteger(
        options.retainedTerminalOrders,
        DEFAULT_STORED_TERMINAL_ORDERS,
        'retainedTerminalOrders',
      ),
    };
    this.pruneEveryCommits = positiveInteger(
      options.pruneEveryCommits,
      PRUNE_EVERY_COMMITS,
      'pruneEveryCommits',
    );
    this.database = new Database(path);
    // A new file gives the pages pruning frees back to the disk, a few at a time.
    const tables = this.database
      .prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'")
      .pluck()
      .get() as number;
    if (tables === 0) this.database.pragma('auto_vacuum = INCREMENTAL');
    this.database.pragma('journal_mode = WAL');
    // NORMAL keeps WAL commits durable across a process crash (not an OS crash), at a fraction
    // of FULL's cost.
    this.database.pragma('synchronous = NORMAL');
    this.database.exec(SCHEMA);
    const version = this.database
      .prepare<[], { value: string }>("SELECT value FROM meta WHERE name = 'schema_version'")
      .get();
    if (version === undefined) {
      this.database
        .prepare("INSERT INTO meta (name, value) VALUES ('schema_version', ?)")
        .run(String(SCHEMA_VERSION));
    } else if (Number(version.value) !== SCHEMA_VERSION) {
      this.database.close();
      throw new Error(
        `emulator store ${path} has schema version ${version.value}, expected ${SCHEMA_VERSION}`,
      );
    }
    const database = this.database;
    this.statements = {
      upsertAccount: database.prepare(
        'INSERT OR REPLACE INTO accounts (account_id, ordinal, record) VALUES (?, ?, ?)',
      ),
      upsertOrder: database.prepare(
        'INSERT OR REPLACE INTO orders (order_id, ordinal, account_id, record) VALUES (?, ?, ?, ?)',
      ),
      upsertPosition: database.prepare(
        'INSERT OR REPLACE INTO positions (position_id, ordinal, record) VALUES (?, ?, ?)',
      ),
      deletePosition: database.prepare('DELETE FROM positions WHERE position_id = ?'),
      insertFill: database.prepare(
        'INSERT INTO fills (account_id, ordinal, market_id, fill) VALUES (?, ?, ?, ?)',
      ),
      insertEvent: database.prepare(
        'INSERT INTO events (account_id, sequence, event) VALUES (?, ?, ?)',
      ),
      setMeta: database.prepare('INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)'),
      getMeta: database.prepare<[string], { value: string }>(
        'SELECT value FROM meta WHERE name = ?',
      ),
      loadAccounts: database.prepare<[], { record: string }>(
        'SELECT record FROM accounts ORDER BY ordinal',
      ),
      loadOrders: database.prepare<[], { record: string }>(
        'SELECT record FROM orders ORDER BY ordinal',
      ),
      orderById: database.prepare<[string, string], { record: string }>(
        'SELECT record FROM orders WHERE order_id = ? AND account_id = ?',
      ),
      orderByClientId: database.prepare<[string, string], { record: string }>(
        'SELECT record FROM orders WHERE account_id = ? ' +
          "AND json_extract(record, '$.client_order_id') = ? ORDER BY ordinal DESC LIMIT 1",
      ),
      ordersBefore: database.prepare<
        [
          {
            account: string;
            before: number;
            market: string | null;
            status: string | null;
            limit: number;
          },
        ],
        { record: string }
      >(
        'SELECT record FROM orders WHERE account_id = @account AND ordinal < @before ' +
          "AND (@market IS NULL OR json_extract(record, '$.market_id') = @market) " +
          "AND (@status IS NULL OR json_extract(record, '$.status') = @status) " +
          'ORDER BY ordinal DESC LIMIT @limit',
      ),
      loadPositions: database.prepare<[], { record: string }>(
        'SELECT record FROM positions ORDER BY ordinal',
      ),
      fillsAll: database.prepare<
        [string, number, number],
        { ordinal: number; market_id: string; fill: string }
      >(
        'SELECT ordinal, market_id, fill FROM fills WHERE account_id = ? AND ordinal < ? ' +
          'ORDER BY ordinal DESC LIMIT ?',
      ),
      fillsOfMarket: database.prepare<
        [string, number, string, number],
        { ordinal: number; market_id: string; fill: string }
      >(
        'SELECT ordinal, market_id, fill FROM fills WHERE account_id = ? AND ordinal < ? AND market_id = ? ' +
          'ORDER BY ordinal DESC LIMIT ?',
      ),
      events: database.prepare<[string, number, number], { event: string }>(
        'SELECT event FROM events WHERE account_id = ? AND sequence > ? ORDER BY sequence LIMIT ?',
      ),
      upsertKey: database.prepare('INSERT OR REPLACE INTO keys (key_id, record) VALUES (?, ?)'),
      loadKeys: database.prepare<[], { record: string }>('SELECT record FROM keys ORDER BY key_id'),
      upsertIdempotency: database.prepare(
        'INSERT OR REPLACE INTO idempotency (account_id, request_id, record) VALUES (?, ?, ?)',
      ),
      getIdempotency: database.prepare<[string, string], { record: string }>(
        'SELECT record FROM idempotency WHERE account_id = ? AND request_id = ?',
      ),
    };
    this.prune = {
      accounts: database.prepare('SELECT account_id FROM accounts ORDER BY ordinal').pluck(),
      events: database.prepare(
        `DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE account_id = @account
           AND sequence <= (SELECT MAX(sequence) FROM events WHERE account_id = @account) - @keep
           ORDER BY sequence LIMIT @batch)`,
      ),
      fills: database.prepare(
        `DELETE FROM fills WHERE rowid IN (SELECT rowid FROM fills WHERE account_id = @account
           AND ordinal <= (SELECT MAX(ordinal) FROM fills WHERE account_id = @account) - @keep
           ORDER BY ordinal LIMIT @batch)`,
      ),
      // The ordinal below which an account's terminal orders may go: the @keep-th newest order's.
      orderFloor: database
        .prepare(
          `SELECT ordinal FROM orders WHERE account_id = @account ORDER BY ordinal DESC
             LIMIT 1 OFFSET @keep`,
        )
        .pluck(),
      orders: database.prepare(
        `DELETE FROM orders WHERE rowid IN (SELECT rowid FROM orders WHERE account_id = @account
           AND ordinal <= @floor AND json_extract(record, '$.status') IN (${TERMINAL_SQL})
           ORDER BY ordinal LIMIT @batch)`,
      ),
      idempotency: database.prepare(
        `DELETE FROM idempotency WHERE rowid IN (SELECT rowid FROM idempotency
           WHERE rowid <= (SELECT MAX(rowid) FROM idempotency) - @keep ORDER BY rowid LIMIT @batch)`,
      ),
    };
    this.runAtomically = this.database.transaction((work: () => unknown) => work());
    this.commitTransaction = this.database.transaction((changes: ChangeSet) => {
      const s = this.statements;
      for (const source of changes.accounts) {
        const account = source.record();
        s.upsertAccount.run(account.account_id, account.ordinal, JSON.stringify(account));
      }
      for (const source of changes.orders) {
        const order = source.record();
        s.upsertOrder.run(order.order_id, order.ordinal, order.account_id, JSON.stringify(order));
      }
      for (const source of changes.positions) {
        const position = source.record();
        s.upsertPosition.run(position.position_id, position.ordinal, JSON.stringify(position));
      }
      for (const positionId of changes.closedPositions) s.deletePosition.run(positionId);
      for (const record of changes.fills) {
        s.insertFill.run(
          record.account_id,
          record.ordinal,
          record.market_id,
          JSON.stringify(record.fill),
        );
      }
      for (const record of changes.events) {
        s.insertEvent.run(record.account_id, record.sequence, JSON.stringify(record.event));
      }
      s.setMeta.run('next_identifier', String(changes.nextIdentifier));
    });
  }

  load(): StoredState {
    const s = this.statements;
    const next = s.getMeta.get('next_identifier');
    return {
      accounts: s.loadAccounts.all().map((row) => JSON.parse(row.record) as AccountRecord),
      orders: s.loadOrders.all().map((row) => JSON.parse(row.record) as OrderRecord),
      positions: s.loadPositions.all().map((row) => JSON.parse(row.record) as PositionRecord),
      nextIdentifier: next === undefined ? 1 : Number(next.value),
    };
  }

  commit(changes: ChangeSet): void {
    this.commitTransaction(changes);
    this.commitsSincePrune += 1;
    this.maybePrune();
  }

  /** A pruning step once enough commits went by, outside any transaction (its own is short). */
  private maybePrune(): void {
    if (this.commitsSincePrune < this.pruneEveryCommits || this.database.inTransaction) return;
    this.commitsSincePrune = 0;
    this.pruneStep();
  }

  /**
   * Deletes at most a batch of rows per table and account beyond the windows (oldest first),
   * then gives a few free pages back. Runs every so many commits; a test may call it.
   */
  pruneStep(batch = PRUNE_BATCH_ROWS): StorePruneReport {
    const p = this.prune;
    const w = this.windows;
    let events = 0;
    let fills = 0;
    let orders = 0;
    const idempotency = this.database.transaction(() => {
      for (const account of p.accounts.all() as string[]) {
        events += p.events.run({ account, keep: w.events, batch }).changes;
        fills += p.fills.run({ account, keep: w.fills, batch }).changes;
        const floor = p.orderFloor.get({ account, keep: w.terminalOrders }) as number | undefined;
        if (floor !== undefined) orders += p.orders.run({ account, floor, batch }).changes;
      }
      return p.idempotency.run({ keep: w.idempotency, batch }).changes;
    })();
    if (events + fills + orders + idempotency > 0 && this.path !== ':memory:') {
      this.database.pragma(`incremental_vacuum(${RECLAIM_PAGES})`);
    }
    return { events, fills, orders, idempotency };
  }

  /** Rows per table (the soak and the metrics read the store's size). */
  rowCounts(): Readonly<Record<'orders' | 'events' | 'fills' | 'idempotency', number>> {
    const count = (table: string) =>
      this.database.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
    return {
      orders: count('orders'),
      events: count('events'),
      fills: count('fills'),
      idempotency: count('idempotency'),
    };
  }

  findOrder(accountId: string, orderId: string): OrderRecord | undefined {
    const row = this.statements.orderById.get(orderId, accountId);
    return row === undefined ? undefined : (JSON.parse(row.record) as OrderRecord);
  }

  findOrderByClientId(accountId: string, clientOrderId: string): OrderRecord | undefined {
    const row = this.statements.orderByClientId.get(accountId, clientOrderId);
    return row === undefined ? undefined : (JSON.parse(row.record) as OrderRecord);
  }

  listOrders(accountId: string, query: OrderQuery): OrderRecord[] {
    return this.statements.ordersBefore
      .all({
        account: accountId,
        before: query.beforeOrdinal,
        market: query.marketId ?? null,
        status: query.status ?? null,
        limit: query.limit,
      })
      .map((row) => JSON.parse(row.record) as OrderRecord);
  }

  listFills(accountId: string, query: FillQuery): FillRecord[] {
    const before = query.beforeOrdinal ?? Number.MAX_SAFE_INTEGER;
    const rows =
      query.marketId === undefined
        ? this.statements.fillsAll.all(accountId, before, query.limit)
        : this.statements.fillsOfMarket.all(accountId, before, query.marketId, query.limit);
    return rows.map((row) => ({
      ordinal: row.ordinal,
      account_id: accountId,
      market_id: row.market_id,
      fill: JSON.parse(row.fill) as FillRecord['fill'],
    }));
  }

  listEvents(accountId: string, afterSequence: number, limit: number): PrivateEvent[] {
    return this.statements.events
      .all(accountId, afterSequence, limit)
      .map((row) => JSON.parse(row.event) as PrivateEvent);
  }

  saveKey(keyId: string, record: unknown): void {
    this.statements.upsertKey.run(keyId, JSON.stringify(record));
  }

  loadKeys(): unknown[] {
    return this.statements.loadKeys.all().map((row) => JSON.parse(row.record) as unknown);
  }

  atomically<T>(work: () => T): T {
    // Commits inside (the engine's) become savepoints of this one transaction.
    const result = (this.runAtomically as (work: () => T) => T)(work);
    this.maybePrune();
    return result;
  }

  saveIdempotency(accountId: string, requestId: string, record: unknown): void {
    this.statements.upsertIdempotency.run(accountId, requestId, JSON.stringify(record));
  }

  loadIdempotency(accountId: string, requestId: string): unknown | undefined {
    const row = this.statements.getIdempotency.get(accountId, requestId);
    return row === undefined ? undefined : (JSON.parse(row.record) as unknown);
  }

  close(): void {
    if (this.database.open) this.database.close();
  }
}
