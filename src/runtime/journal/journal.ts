/**
 * The execution journal: a SQLite file (better-sqlite3, WAL, synchronous FULL) that holds every
 * intent the executor took, its request id and the exact bytes of its command before anything
 * is sent (design rule 6), and what became of it. A crash at any point leaves enough behind to
 * recover the same request id and bytes.
 *
 * It also holds the journal epoch (random, fixed at creation, part of every id), the sequence
 * counters (so ids continue after a restart), the fill ids already seen (fills are counted once
 * across restarts), the runtime's own commands and the dead-man state.
 *
 * The file is opened with an exclusive lock: two processes on one journal would hand out the
 * same ids, so the second one is refused (`JOURNAL_LOCKED`).
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { PaperbotError } from '../../core/errors.ts';
import { type Fill, type OrderStatusEvent, TERMINAL_ORDER_STATUSES } from '../../protocol/index.ts';
import type { StampedIntent } from '../intents.ts';
import { JournalExits } from './exits.ts';
import type { CommandEndpoint } from '../venue.ts';
import { IntentWindow } from './intent-window.ts';
import {
  type IntentState,
  type InternalCommandState,
  JOURNAL_SCHEMA_VERSION,
  migrations,
  OPEN_INTENT_STATES,
} from './schema.ts';

/** A command as journaled: what `ExecutionVenue.restore` takes back. */
export interface JournaledCommand {
  readonly endpoint: CommandEndpoint;
  readonly path: string;
  readonly bodyBytes: Uint8Array;
  readonly bodySha256: string;
}

/** What the executor learned while building the command, kept for a later resend decision. */
export interface IntentContext {
  /** Amend and cancel: the venue order the command targets. */
  readonly targetOrderId?: string;
  /** Amend: the target's filled quantity when the replacement was sized. */
  readonly checkedFilledQuantity?: string;
  /** Close: the position closed. */
  readonly positionId?: string;
}

/** The last outcome of an intent as stored (an IntentOutcome without the intent, plus a note). */
export interface OutcomeRecord {
  readonly status: 'accepted' | 'rejected' | 'denied' | 'unknown' | 'resolved';
  readonly code?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly resolution?: 'accepted' | 'rejected';
  readonly orderId?: string | null;
  readonly issues?: readonly unknown[];
  readonly denials?: readonly unknown[];
  readonly note?: string;
}

export interface IntentRecord {
  readonly requestId: string;
  readonly strategyId: string;
  readonly sequence: number;
  readonly kind: StampedIntent['intent']['kind'];
  readonly clientOrderId: string | null;
  readonly marketId: string | null;
  readonly intent: StampedIntent;
  readonly state: IntentState;
  readonly simulateRequestId: string | null;
  readonly simulateAttempt: number;
  readonly command: JournaledCommand | null;
  readonly sendAttempts: number;
  readonly context: IntentContext;
  readonly orderId: string | null;
  readonly replacesOrderId: string | null;
  readonly outcome: OutcomeRecord | null;
  readonly resolutionAttempts: number;
  readonly nextResolutionAt: number | null;
  readonly fillReported: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface InternalCommandRecord {
  readonly requestId: string;
  readonly purpose: string;
  readonly command: JournaledCommand;
  readonly state: InternalCommandState;
  readonly outcome: Readonly<Record<string, unknown>> | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface DeadmanRecord {
  readonly armed: boolean;
  readonly timeoutSeconds: number;
  /** Epoch milliseconds of the deadline as last confirmed (the earlier of the venue's and ours). */
  readonly deadlineAt: number | null;
  readonly lastRequestId: string | null;
  readonly confirmedAt: number | null;
  readonly firedAt: number | null;
}

export interface JournalOptions {
  /** Epoch milliseconds for row timestamps; pass the runtime's clock. */
  readonly now: () => number;
  /** The epoch of a new journal; random by default. Ignored when the file already has one. */
  readonly epoch?: string;
  /**
   * `full` (default): every commit reaches the disk before the command is sent, surviving a
   * power loss. `normal`: commits survive a crash of the process but not of the machine; for
   * tests and replays, where the venue is simulated too. `none`: for a replay into a
   * `:memory:` journal, which no crash survives anyway (refused for a file): an intent's row
   * changes are kept in the process and written in batches, before any query that could see
   * them and at `close`, so a run ends with the same rows and every read sees what `normal`
   * would; only the SQLite work per intent shrinks.
   */
  readonly durability?: 'full' | 'normal' | 'none';
  /**
   * The order event ledger keeps the events of this many latest private sequences (default
   * 100 000); older rows are deleted as new ones come. The highest sequence applied, which is
   * what applies each event once, is kept whatever the window.
   */
  readonly orderEventWindow?: number;
  /**
   * Durability `none` only: keep about this many latest intents, plus every one the runtime may
   * still ask for; settled intents older than that leave the journal (`intent-window.ts`), so a
   * long replay's journal stays bounded. Default: every intent is kept.
   */
  readonly intentWindow?: number;
}

/** A fill as the journal holds it. */
export interface FillRecord {
  readonly fillId: string;
  readonly orderId: string | null;
  /** The private sequence that delivered it; null when read back over REST (or journaled by schema 1). */
  readonly sequence: number | null;
  /** `stream` (the stream or the event log), `rest` (GET /v1/fills); null for a schema-1 row. */
  readonly source: 'stream' | 'rest' | null;
  /** The fill as the venue gave it; null for a schema-1 row. */
  readonly fill: Fill | null;
  readonly seenAt: number;
}

/** An order state event as applied (one row per private sequence). */
export interface OrderEventRecord {
  readonly sequence: number;
  readonly eventId: string;
  readonly orderId: string;
  readonly fromState: string | null;
  readonly toState: string;
  readonly occurredAt: string;
  readonly appliedAt: number;
}

/** Where the private stream stands: the highest sequence applied. */
export interface PrivateCursor {
  readonly lastSequence: number;
  /** The venue's `occurred_at` of that event. */
  readonly lastEventAt: string | null;
}

/** A read-back of GET /v1/fills still owed: down to `stopFillId`, or to fills older than `stopOccurredAt`. */
export interface FillReadBackRecord {
  /** Moves on with every new request, so a read-back finished for an older one keeps this one. */
  readonly generation: number;
  readonly stopFillId: string | null;
  readonly stopOccurredAt: string | null;
  readonly reason: string;
  readonly requestedAt: number;
}

interface IntentRow {
  request_id: string;
  strategy_id: string;
  sequence: number;
  kind: string;
  client_order_id: string | null;
  market_id: string | null;
  intent_json: string;
  emitted_at: number;
  state: IntentState;
  simulate_request_id: string | null;
  simulate_attempt: number;
  command_endpoint: string | null;
  command_path: string | null;
  command_body: Buffer | null;
  command_sha256: string | null;
  send_attempts: number;
  context_json: string | null;
  order_id: string | null;
  replaces_order_id: string | null;
  outcome_json: string | null;
  resolution_attempts: number;
  next_resolution_at: number | null;
  fill_reported: number;
  created_at: number;
  updated_at: number;
}

interface InternalCommandRow {
  request_id: string;
  purpose: string;
  command_endpoint: string;
  command_path: string;
  command_body: Buffer;
  command_sha256: string;
  state: InternalCommandState;
  outcome_json: string | null;
  created_at: number;
  updated_at: number;
}

interface DeadmanRow {
  armed: number;
  timeout_seconds: number;
  deadline_at: number | null;
  last_request_id: string | null;
  confirmed_at: number | null;
  fired_at: number | null;
}

/** Meta keys the journal writes itself; `writeMeta` never replaces them. */
const RESERVED_META_KEYS: ReadonlySet<string> = new Set(['epoch', 'created_at']);

const EPOCH_PATTERN = /^[A-Za-z0-9_-]{4,16}$/;

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function commandOf(
  endpoint: string | null,
  path: string | null,
  body: Buffer | null,
  sha256: string | null,
): JournaledCommand | null {
  if (endpoint === null || path === null || body === null || sha256 === null) return null;
  return {
    endpoint: endpoint as CommandEndpoint,
    path,
    bodyBytes: new Uint8Array(body),
    bodySha256: sha256,
  };
}

/** Private sequences whose order events the ledger keeps (see `JournalOptions`). */
export const DEFAULT_ORDER_EVENT_WINDOW = 100_000;
/** The ledger is trimmed once per this many events recorded. */
const ORDER_EVENT_TRIM_EVERY = 1_000;

const OPEN_STATES_SQL = OPEN_INTENT_STATES.map((state) => `'${state}'`).join(', ');

/** How many intent records the journal keeps parsed between reads. */
const RECENT_INTENTS = 256;

/** The intents table's columns, in table order. */
const INTENT_COLUMNS = [
  'request_id',
  'strategy_id',
  'sequence',
  'kind',
  'client_order_id',
  'market_id',
  'intent_json',
  'emitted_at',
  'state',
  'simulate_request_id',
  'simulate_attempt',
  'command_endpoint',
  'command_path',
  'command_body',
  'command_sha256',
  'send_attempts',
  'context_json',
  'order_id',
  'replaces_order_id',
  'outcome_json',
  'resolution_attempts',
  'next_resolution_at',
  'fill_reported',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof IntentRow)[];

/** Every statement the journal runs, prepared once when it opens (preparing costs more than running). */
function prepareStatements(database: Database.Database) {
  const prepare = (sql: string) => database.prepare(sql);
  return {
    nextSequence: prepare('SELECT last_sequence FROM strategy_sequences WHERE strategy_id = ?'),
    noteSequence: prepare(
      `INSERT INTO strategy_sequences (strategy_id, last_sequence) VALUES (?, ?)
         ON CONFLICT (strategy_id) DO UPDATE SET last_sequence = MAX(last_sequence, excluded.last_sequence)
         RETURNING last_sequence`,
    ),
    takeInternalSequence: prepare(
      `INSERT INTO internal_sequences (purpose, last_sequence) VALUES (?, 1)
         ON CONFLICT (purpose) DO UPDATE SET last_sequence = last_sequence + 1
         RETURNING last_sequence`,
    ),
    insertIntent: prepare(
      `INSERT INTO intents (request_id, strategy_id, sequence, kind, client_order_id, market_id,
           intent_json, emitted_at, state, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'journaled', ?, ?)
         ON CONFLICT (request_id) DO NOTHING`,
    ),
    // Every column, so a held row (durability none) is written as it is kept.
    insertHeldIntent: prepare(
      `INSERT INTO intents (${INTENT_COLUMNS.join(', ')})
         VALUES (${INTENT_COLUMNS.map(() => '?').join(', ')})`,
    ),
    intent: prepare('SELECT * FROM intents WHERE request_id = ?'),
    deleteIntent: prepare('DELETE FROM intents WHERE request_id = ?'),
    intentByOrderId: prepare(
      `SELECT * FROM intents WHERE order_id = ? AND kind IN ('place', 'amend', 'close_position')
         ORDER BY rowid DESC LIMIT 1`,
    ),
    intentByClientOrderId: prepare(
      `SELECT * FROM intents WHERE client_order_id = ? AND kind IN ('place', 'amend', 'close_position')
         ORDER BY rowid DESC LIMIT 1`,
    ),
    // The states as literals, the partial index's own condition, so SQLite can use the index.
    openIntents: prepare(
      `SELECT * FROM intents WHERE state IN (${OPEN_STATES_SQL}) ORDER BY rowid`,
    ),
    countExhaustedUnknown: prepare(
      `SELECT COUNT(*) AS count FROM intents WHERE state IN (${OPEN_STATES_SQL})
         AND state = 'unknown' AND next_resolution_at IS NULL`,
    ),
    // An open state is counted on the partial index of open intents, not by a table scan.
    countOpenIntents: prepare(
      `SELECT COUNT(*) AS count FROM intents WHERE state IN (${OPEN_STATES_SQL}) AND state = ?`,
    ),
    countIntents: prepare('SELECT COUNT(*) AS count FROM intents WHERE state = ?'),
    // Scans of the partial indexes on these columns, not of the table's wide rows.
    orderIds: prepare('SELECT order_id FROM intents WHERE order_id IS NOT NULL').pluck(),
    clientOrderIds: prepare(
      'SELECT client_order_id FROM intents WHERE client_order_id IS NOT NULL',
    ).pluck(),
    hasCommand: prepare(
      'SELECT command_endpoint IS NOT NULL AS has_command FROM intents WHERE request_id = ?',
    ),
    recordSimulation: prepare(
      `UPDATE intents SET state = 'simulating', simulate_request_id = ?, simulate_attempt = ?,
         updated_at = ? WHERE request_id = ?`,
    ),
    recordCommand: prepare(
      `UPDATE intents SET command_endpoint = ?, command_path = ?, command_body = ?,
         command_sha256 = ?, context_json = ?, updated_at = ? WHERE request_id = ?`,
    ),
    // The command with the step that follows it at once, in one statement (one commit).
    recordCommandSimulating: prepare(
      `UPDATE intents SET command_endpoint = ?, command_path = ?, command_body = ?,
         command_sha256 = ?, context_json = ?, state = 'simulating', simulate_request_id = ?,
         simulate_attempt = ?, updated_at = ? WHERE request_id = ?`,
    ),
    recordCommandSending: prepare(
      `UPDATE intents SET command_endpoint = ?, command_path = ?, command_body = ?,
         command_sha256 = ?, context_json = ?, state = 'sending',
         send_attempts = send_attempts + 1, updated_at = ? WHERE request_id = ?`,
    ),
    recordSendAttempt: prepare(
      `UPDATE intents SET state = CASE WHEN state = 'unknown' THEN 'unknown' ELSE 'sending' END,
         send_attempts = send_attempts + 1, updated_at = ? WHERE request_id = ?`,
    ),
    recordAccepted: prepare(
      `UPDATE intents SET state = 'accepted', order_id = ?,
         replaces_order_id = COALESCE(?, replaces_order_id), outcome_json = ?,
         next_resolution_at = NULL, updated_at = ? WHERE request_id = ?`,
    ),
    recordRejected: prepare(
      `UPDATE intents SET state = 'rejected', outcome_json = ?, next_resolution_at = NULL,
         updated_at = ? WHERE request_id = ?`,
    ),
    recordDenied: prepare(
      `UPDATE intents SET state = 'denied', outcome_json = ?, next_resolution_at = NULL,
         updated_at = ? WHERE request_id = ?`,
    ),
    recordUnknown: prepare(
      `UPDATE intents SET state = 'unknown', outcome_json = ?, next_resolution_at = ?,
         updated_at = ? WHERE request_id = ?`,
    ),
    recordResolutionAttempt: prepare(
      `UPDATE intents SET resolution_attempts = resolution_attempts + 1, next_resolution_at = ?,
         updated_at = ? WHERE request_id = ?`,
    ),
    recordResolved: prepare(
      `UPDATE intents SET state = 'resolved', order_id = ?,
         replaces_order_id = COALESCE(?, replaces_order_id), outcome_json = ?,
         next_resolution_at = NULL, updated_at = ? WHERE request_id = ?`,
    ),
    markFillReported: prepare(
      'UPDATE intents SET fill_reported = 1, updated_at = ? WHERE request_id = ? AND fill_reported = 0',
    ),
    markFillSeen: prepare(
      'INSERT OR IGNORE INTO seen_fills (fill_id, order_id, seen_at) VALUES (?, ?, ?)',
    ),
    hasSeenFill: prepare('SELECT 1 FROM seen_fills WHERE fill_id = ?'),
    recordFill: prepare(
      `INSERT INTO seen_fills (fill_id, order_id, seen_at, sequence, source, fill_json)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (fill_id) DO NOTHING`,
    ),
    fill: prepare('SELECT * FROM seen_fills WHERE fill_id = ?'),
    fillCount: prepare('SELECT COUNT(*) AS count FROM seen_fills').pluck(),
    lastKnownFill: prepare(
      `SELECT fill_id, json_extract(fill_json, '$.occurred_at') AS occurred_at
         FROM seen_fills ORDER BY rowid DESC LIMIT 1`,
    ),
    readCursor: prepare('SELECT last_sequence, last_event_at FROM private_cursor WHERE id = 1'),
    // The stored value is a maximum: an older sequence never moves it back.
    advanceCursor: prepare(
      `INSERT INTO private_cursor (id, last_sequence, last_event_at, updated_at) VALUES (1, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET last_sequence = excluded.last_sequence,
           last_event_at = excluded.last_event_at, updated_at = excluded.updated_at
         WHERE excluded.last_sequence > private_cursor.last_sequence`,
    ),
    recordOrderEvent: prepare(
      `INSERT INTO order_events (sequence, event_id, order_id, from_state, to_state, occurred_at,
           applied_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (sequence) DO UPDATE SET event_id = excluded.event_id,
           order_id = excluded.order_id, from_state = excluded.from_state,
           to_state = excluded.to_state, occurred_at = excluded.occurred_at,
           applied_at = excluded.applied_at`,
    ),
    orderEvents: prepare('SELECT * FROM order_events ORDER BY sequence'),
    trimOrderEvents: prepare('DELETE FROM order_events WHERE sequence <= ?'),
    restartCursor: prepare(
      `INSERT INTO private_cursor (id, last_sequence, last_event_at, updated_at)
         VALUES (1, ?, NULL, ?)
         ON CONFLICT (id) DO UPDATE SET last_sequence = excluded.last_sequence,
           last_event_at = NULL, updated_at = excluded.updated_at`,
    ),
    readFillReadBack: prepare('SELECT * FROM fill_read_back WHERE id = 1'),
    // A read-back already owed keeps its (older) stop: reading down to it covers the new gap too.
    requestFillReadBack: prepare(
      `INSERT INTO fill_read_back (id, generation, stop_fill_id, stop_occurred_at, reason,
           requested_at)
         VALUES (1, 1, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET generation = fill_read_back.generation + 1`,
    ),
    finishFillReadBack: prepare('DELETE FROM fill_read_back WHERE id = 1 AND generation = ?'),
    recordInternalCommand: prepare(
      `INSERT INTO internal_commands (request_id, purpose, command_endpoint, command_path,
           command_body, command_sha256, state, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'sending', ?, ?)`,
    ),
    finishInternalCommand: prepare(
      'UPDATE internal_commands SET state = ?, outcome_json = ?, updated_at = ? WHERE request_id = ?',
    ),
    internalCommand: prepare('SELECT * FROM internal_commands WHERE request_id = ?'),
    internalCommandIds: prepare('SELECT request_id FROM internal_commands ORDER BY rowid').pluck(),
    internalCommandIdsOf: prepare(
      'SELECT request_id FROM internal_commands WHERE purpose = ? ORDER BY rowid',
    ).pluck(),
    abandonInternalCommands: prepare(
      `UPDATE internal_commands SET state = 'abandoned', updated_at = ? WHERE state = 'sending'`,
    ),
    readMeta: prepare('SELECT value FROM meta WHERE key = ?'),
    writeMeta: prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    readDeadman: prepare('SELECT * FROM deadman WHERE id = 1'),
    writeDeadman: prepare(
      `INSERT INTO deadman (id, armed, timeout_seconds, deadline_at, last_request_id,
           confirmed_at, fired_at, updated_at)
         VALUES (1, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET armed = excluded.armed,
           timeout_seconds = excluded.timeout_seconds, deadline_at = excluded.deadline_at,
           last_request_id = excluded.last_request_id, confirmed_at = excluded.confirmed_at,
           fired_at = excluded.fired_at, updated_at = excluded.updated_at`,
    ),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

/** Column values of an intent's row not yet written (durability `none`). */
interface HeldRow {
  /** True: the row itself is not written yet (these are all of its columns). */
  readonly insert: boolean;
  readonly columns: Record<string, unknown>;
}

function intentFromRow(row: IntentRow): IntentRecord {
  return {
    requestId: row.request_id,
    strategyId: row.strategy_id,
    sequence: row.sequence,
    kind: row.kind as IntentRecord['kind'],
    clientOrderId: row.client_order_id,
    marketId: row.market_id,
    intent: JSON.parse(row.intent_json) as StampedIntent,
    state: row.state,
    simulateRequestId: row.simulate_request_id,
    simulateAttempt: row.simulate_attempt,
    command: commandOf(
      row.command_endpoint,
      row.command_path,
      row.command_body,
      row.command_sha256,
    ),
    sendAttempts: row.send_attempts,
    context: row.context_json === null ? {} : (JSON.parse(row.context_json) as IntentContext),
    orderId: row.order_id,
    replacesOrderId: row.replaces_order_id,
    outcome: row.outcome_json === null ? null : (JSON.parse(row.outcome_json) as OutcomeRecord),
    resolutionAttempts: row.resolution_attempts,
    nextResolutionAt: row.next_resolution_at,
    fillReported: row.fill_reported !== 0,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function marketOf(intent: StampedIntent['intent']): string | null {
  return 'marketId' in intent && typeof intent.marketId === 'string' ? intent.marketId : null;
}

export class Journal {
  readonly path: string;
  readonly epoch: string;
  private readonly database: Database.Database;
  private readonly now: () => number;
  private closed = false;
  private readonly sql: Statements;
  /** Order events this process recorded (the ledger is trimmed every so many). */
  private orderEventsRecorded = 0;
  /**
   * The latest committed records of recently read or written intents, oldest first. An intent is
   * read several times between its writes (execution, the command, the outcome), and each write
   * of a cached record stores the record as its row now reads, so the path of an intent reads
   * its row back only when the record fell out of the cache.
   */
  private readonly recentIntents = new Map<string, IntentRecord>();
  /**
   * Committed `last_sequence` values known to this process; never above the stored one, so a
   * sequence at or below it needs no write (the stored value is a maximum).
   */
  private readonly sequences = new Map<string, number>();
  /**
   * The order ids and client order ids in use by intents, once read, kept up to date by this
   * process's writes (the lock is exclusive, so nobody else writes). Null: read again when asked.
   */
  private knownIds: { orderIds: Set<string>; clientOrderIds: Set<string> } | null = null;
  /**
   * One transaction wrapper for every call: better-sqlite3 builds several functions per
   * `transaction()`, which cost as much as the writes of a small transaction.
   */
  private readonly runInTransaction: Database.Transaction<(work: () => unknown) => unknown>;
  /** Durability `none`: row changes are held (see `JournalOptions.durability`). */
  private readonly deferWrites: boolean;
  /**
   * Held column values of intents whose cached record is ahead of its row, by request id; every
   * one of them is in `recentIntents` until written.
   */
  private readonly heldRows = new Map<string, HeldRow>();
  /**
   * Durability `none`: every request id and every sequence of each strategy in the intents
   * table. A `:memory:` journal starts empty, so this process wrote every one of them.
   */
  private readonly journaledRequestIds = new Set<string>();
  private readonly journaledSequences = new Map<string, Set<number>>();
  /** False once an intent was journaled inside a caller's transaction: the sets may be wrong. */
  private holdInserts: boolean;
  /** Held `last_sequence` values (durability `none`). */
  private readonly heldSequences = new Map<string, number>();
  /** Updates of held rows, by their column list. */
  private readonly heldRowStatements = new Map<string, Database.Statement>();
  /** The emulated exits' table (`./exits.ts`). */
  readonly exits: JournalExits;

  private constructor(
    path: string,
    database: Database.Database,
    now: () => number,
    epoch: string,
    deferWrites: boolean,
    private readonly orderEventWindow: number,
    private readonly intentWindow: IntentWindow | null,
  ) {
    this.path = path;
    this.database = database;
    this.now = now;
    this.epoch = epoch;
    this.deferWrites = deferWrites;
    this.holdInserts = deferWrites;
    this.sql = prepareStatements(database);
    this.runInTransaction = database.transaction((work: () => unknown) => work());
    this.exits = new JournalExits(database);
  }

  /**
   * Opens (or creates) the journal at `path`. `:memory:` is allowed for tests of other modules;
   * anything that must survive a restart needs a file.
   */
  static open(path: string, options: JournalOptions): Journal {
    if (options.durability === 'none' && path !== ':memory:') {
      throw new PaperbotError(
        'JOURNAL_UNAVAILABLE',
        `${path}: durability none is for a :memory: journal only`,
      );
    }
    const window = options.orderEventWindow;
    if (window !== undefined && !(Number.isSafeInteger(window) && window > 0)) {
      throw new PaperbotError(
        'INVALID_CONFIG',
        `orderEventWindow is a positive integer, not ${window}`,
      );
    }
    const intentWindow = options.intentWindow;
    if (
      intentWindow !== undefined &&
      (options.durability !== 'none' || !(Number.isSafeInteger(intentWindow) && intentWindow > 0))
    ) {
      throw new PaperbotError(
        'INVALID_CONFIG',
        `intentWindow is a positive integer, for durability none only (got ${intentWindow})`,
      );
    }
    const database = new Database(path, { timeout: 0 });
    try {
      database.pragma('locking_mode = EXCLUSIVE');
      if (path !== ':memory:') {
        const mode = database.pragma('journal_mode = WAL', { simple: true });
        if (mode !== 'wal') {
          throw new PaperbotError('JOURNAL_UNAVAILABLE', `${path}: WAL mode refused (${mode})`);
        }
      }
      const synchronous = { full: 'FULL', normal: 'NORMAL', none: 'OFF' }[
        options.durability ?? 'full'
      ];
      database.pragma(`synchronous = ${synchronous}`);
      database.pragma('foreign_keys = ON');
      const epoch = Journal.migrate(database, options);
      const journal = new Journal(
        path,
        database,
        options.now,
        epoch,
        options.durability === 'none',
        options.orderEventWindow ?? DEFAULT_ORDER_EVENT_WINDOW,
        intentWindow === undefined ? null : new IntentWindow(intentWindow),
      );
      // The lock is exclusive, so whatever is still `sending` was left by an earlier process.
      journal.abandonOpenInternalCommands();
      return journal;
    } catch (error) {
      database.close();
      if ((error as { code?: unknown }).code === 'SQLITE_BUSY') {
        throw new PaperbotError(
          'JOURNAL_LOCKED',
          `${path} is held by another process; one journal serves one bot`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  private static migrate(database: Database.Database, options: JournalOptions): string {
    // BEGIN IMMEDIATE takes the write lock at once, which EXCLUSIVE mode then keeps until close.
    return database
      .transaction(() => {
        const version = database.pragma('user_version', {
          simple: true,
        }) as number;
        if (version > JOURNAL_SCHEMA_VERSION) {
          throw new PaperbotError(
            'JOURNAL_SCHEMA_TOO_NEW',
            `journal schema version ${version} is newer than this paperbot's ${JOURNAL_SCHEMA_VERSION}`,
            { details: { version, supported: JOURNAL_SCHEMA_VERSION } },
          );
        }
        for (let current = version; current < JOURNAL_SCHEMA_VERSION; current++) {
          const migration = migrations[current];
          if (migration === undefined) {
            throw new PaperbotError(
              'JOURNAL_SCHEMA_INVALID',
              `no migration from version ${current}`,
            );
          }
          migration(database);
          database.pragma(`user_version = ${current + 1}`);
        }
        const stored = database.prepare("SELECT value FROM meta WHERE key = 'epoch'").get() as
          { value: string } | undefined;
        if (stored !== undefined) return stored.value;
        const epoch = options.epoch ?? randomBytes(6).toString('hex');
        if (!EPOCH_PATTERN.test(epoch)) {
          throw new PaperbotError('JOURNAL_SCHEMA_INVALID', `epoch ${epoch} is not 4..16 id chars`);
        }
        const insert = database.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
        insert.run('epoch', epoch);
        insert.run('created_at', String(options.now()));
        return epoch;
      })
      .immediate();
  }

  get schemaVersion(): number {
    return this.database.pragma('user_version', { simple: true }) as number;
  }

  close(): void {
    if (this.closed) return;
    try {
      this.writeHeld();
    } finally {
      this.closed = true;
      this.database.close();
    }
  }

  /** The journal as a SQLite database file image (held changes written first). */
  serialize(): Buffer {
    this.writeHeld();
    return this.database.serialize();
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Runs `work` in one transaction: every row it changes lands together or not at all. */
  transaction<T>(work: () => T): T {
    // Nothing is held inside a transaction, so a rollback never meets a held change.
    if (!this.database.inTransaction) this.writeHeld();
    return (this.runInTransaction.immediate as (work: () => T) => T)(work);
  }

  /** Writes every held change (durability `none`), in one transaction. */
  private writeHeld(): void {
    if (this.heldRows.size === 0 && this.heldSequences.size === 0) return;
    this.runInTransaction(() => {
      // In the order the rows were first held: inserted rows get their rowids in journal order.
      for (const [requestId, held] of this.heldRows) this.writeHeldRow(requestId, held);
      this.heldRows.clear();
      for (const [strategyId, sequence] of this.heldSequences) {
        this.writeSequence(strategyId, sequence);
      }
      this.heldSequences.clear();
    });
  }

  /** Writes the held row or columns of one intent (the caller forgets them). */
  private writeHeldRow(requestId: string, held: HeldRow): void {
    if (held.insert) {
      const columns = held.columns;
      this.sql.insertHeldIntent.run(INTENT_COLUMNS.map((column) => columns[column]));
      return;
    }
    const columns = Object.keys(held.columns);
    const key = `${held.insert ? 'insert' : 'update'}:${columns.join(',')}`;
    let statement = this.heldRowStatements.get(key);
    if (statement === undefined) {
      statement = this.database.prepare(
        held.insert
          ? `INSERT INTO intents (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`
          : `UPDATE intents SET ${columns.map((column) => `${column} = ?`).join(', ')}
               WHERE request_id = ?`,
      );
      this.heldRowStatements.set(key, statement);
    }
    const values = Object.values(held.columns);
    const result = held.insert ? statement.run(...values) : statement.run(...values, requestId);
    if (result.changes !== 1) {
      throw new PaperbotError('JOURNAL_INTENT_MISSING', `no journaled intent ${requestId}`);
    }
  }

  // Sequences

  /** The sequence a strategy's next intent should get (1 for a strategy never seen). */
  nextSequence(strategyId: string): number {
    this.writeHeld();
    const row = this.sql.nextSequence.get(strategyId) as { last_sequence: number } | undefined;
    return (row?.last_sequence ?? 0) + 1;
  }

  /** Records that `sequence` was stamped, even for an intent that never reaches the executor. */
  noteSequence(strategyId: string, sequence: number): void {
    if (this.sequenceNoted(strategyId, sequence)) return;
    if (this.holdSequence(strategyId, sequence)) return;
    const stored = this.writeSequence(strategyId, sequence);
    if (!this.database.inTransaction) this.sequences.set(strategyId, stored);
  }

  private sequenceNoted(strategyId: string, sequence: number): boolean {
    const known = this.sequences.get(strategyId);
    return known !== undefined && known >= sequence;
  }

  /** Durability `none`: keeps the sequence to write later; false when it must be written now. */
  private holdSequence(strategyId: string, sequence: number): boolean {
    if (!this.deferWrites || this.database.inTransaction) return false;
    // Not known yet: the stored value decides (it is a maximum).
    if (!this.sequences.has(strategyId)) {
      this.sequences.set(strategyId, this.storedSequence(strategyId));
      if (this.sequenceNoted(strategyId, sequence)) return true;
    }
    this.sequences.set(strategyId, sequence);
    this.heldSequences.set(strategyId, sequence);
    return true;
  }

  private storedSequence(strategyId: string): number {
    const held = this.heldSequences.get(strategyId);
    if (held !== undefined) return held;
    const row = this.sql.nextSequence.get(strategyId) as { last_sequence: number } | undefined;
    return row?.last_sequence ?? 0;
  }

  private writeSequence(strategyId: string, sequence: number): number {
    const row = this.sql.noteSequence.get(strategyId, sequence) as { last_sequence: number };
    return row.last_sequence;
  }

  /** Takes the next sequence of one of the runtime's own purposes (persisted before use). */
  takeInternalSequence(purpose: string): number {
    const row = this.sql.takeInternalSequence.get(purpose) as { last_sequence: number };
    return row.last_sequence;
  }

  // Intents

  /**
   * Journals a stamped intent in state `journaled` and advances its strategy's sequence. An
   * intent already journaled under the same request id is returned unchanged, never replaced.
   */
  recordIntent(stamped: StampedIntent): {
    readonly record: IntentRecord;
    readonly created: boolean;
  } {
    const cached = this.recentIntents.get(stamped.requestId);
    if (cached !== undefined) return { record: cached, created: false };
    const now = this.now();
    const intentJson = JSON.stringify(stamped);
    if (this.holdInserts && this.database.inTransaction) this.holdInserts = false;
    if (this.holdInserts) {
      if (this.journaledRequestIds.has(stamped.requestId)) {
        return { record: this.requireIntent(stamped.requestId), created: false };
      }
      if (this.holdInsert(stamped, intentJson, now)) {
        const record = this.createdRecord(stamped, intentJson, now);
        this.remember(record);
        if (this.intentWindow?.noteIntent(record.requestId) === true) this.sweepIntents();
        return { record, created: true };
      }
      // Refused by the row (a sequence taken twice, say): that refusal has to happen now.
      this.writeHeld();
    }
    const insert = (): boolean =>
      this.sql.insertIntent.run(
        stamped.requestId,
        stamped.strategyId,
        stamped.sequence,
        stamped.intent.kind,
        stamped.clientOrderId,
        marketOf(stamped.intent),
        intentJson,
        stamped.emittedAt,
        now,
        now,
      ).changes === 1;
    // The sequence is usually noted already (the kernel notes it before the gate): then the
    // insert is the only write and needs no transaction of its own.
    let storedSequence: number | null = null;
    let created: boolean;
    if (this.sequenceNoted(stamped.strategyId, stamped.sequence)) {
      created = insert();
    } else if (this.deferWrites && !this.database.inTransaction) {
      created = insert();
      if (created) this.holdSequence(stamped.strategyId, stamped.sequence);
    } else {
      created = this.transaction(() => {
        if (!insert()) return false;
        storedSequence = this.writeSequence(stamped.strategyId, stamped.sequence);
        return true;
      });
    }
    if (!created) return { record: this.requireIntent(stamped.requestId), created: false };
    const record = this.createdRecord(stamped, intentJson, now);
    // Inside a caller's transaction the row may yet be rolled back: only committed rows are kept.
    if (this.database.inTransaction) {
      this.knownIds = null;
    } else {
      this.remember(record);
      if (storedSequence !== null) this.sequences.set(stamped.strategyId, storedSequence);
      if (record.clientOrderId !== null) this.knownIds?.clientOrderIds.add(record.clientOrderId);
      if (this.holdInserts) this.noteJournaled(stamped);
      if (this.intentWindow?.noteIntent(record.requestId) === true) this.sweepIntents();
    }
    return { record, created: true };
  }

  /** Deletes the settled intents the window lets go (`intent-window.ts`), held rows written first. */
  private sweepIntents(): void {
    const window = this.intentWindow;
    if (window === null || this.database.inTransaction) return;
    this.writeHeld();
    const leaving = window.sweep((requestId) => {
      const cached = this.recentIntents.get(requestId);
      if (cached !== undefined) return cached;
      const row = this.sql.intent.get(requestId) as IntentRow | undefined;
      return row === undefined ? undefined : intentFromRow(row);
    });
    if (leaving.length === 0) return;
    this.transaction(() => {
      for (const record of leaving) this.sql.deleteIntent.run(record.requestId);
    });
    for (const record of leaving) {
      this.recentIntents.delete(record.requestId);
      this.journaledRequestIds.delete(record.requestId);
      this.journaledSequences.get(record.strategyId)?.delete(record.sequence);
    }
    // Read again from the rows when next asked.
    this.knownIds = null;
  }

  /**
   * Durability `none`: holds the new row, unless the table would refuse it (then false). The
   * checks are the table's own: a new request id, a new sequence, integers where it wants them.
   */
  private holdInsert(stamped: StampedIntent, intentJson: string, now: number): boolean {
    const sequences = this.journaledSequences.get(stamped.strategyId);
    if (
      sequences?.has(stamped.sequence) === true ||
      !Number.isSafeInteger(stamped.sequence) ||
      !Number.isSafeInteger(stamped.emittedAt) ||
      !Number.isSafeInteger(now) ||
      typeof stamped.requestId !== 'string' ||
      typeof stamped.strategyId !== 'string' ||
      typeof stamped.intent.kind !== 'string' ||
      (stamped.clientOrderId !== null && typeof stamped.clientOrderId !== 'string')
    ) {
      return false;
    }
    this.heldRows.set(stamped.requestId, {
      insert: true,
      columns: {
        request_id: stamped.requestId,
        strategy_id: stamped.strategyId,
        sequence: stamped.sequence,
        kind: stamped.intent.kind,
        client_order_id: stamped.clientOrderId,
        market_id: marketOf(stamped.intent),
        intent_json: intentJson,
        emitted_at: stamped.emittedAt,
        state: 'journaled',
        // The column defaults, written out.
        simulate_request_id: null,
        simulate_attempt: 0,
        command_endpoint: null,
        command_path: null,
        command_body: null,
        command_sha256: null,
        send_attempts: 0,
        context_json: null,
        order_id: null,
        replaces_order_id: null,
        outcome_json: null,
        resolution_attempts: 0,
        next_resolution_at: null,
        fill_reported: 0,
        created_at: now,
        updated_at: now,
      } satisfies IntentRow,
    });
    this.noteJournaled(stamped);
    if (!this.sequenceNoted(stamped.strategyId, stamped.sequence)) {
      this.holdSequence(stamped.strategyId, stamped.sequence);
    }
    if (stamped.clientOrderId !== null) this.knownIds?.clientOrderIds.add(stamped.clientOrderId);
    return true;
  }

  private noteJournaled(stamped: StampedIntent): void {
    this.journaledRequestIds.add(stamped.requestId);
    let sequences = this.journaledSequences.get(stamped.strategyId);
    if (sequences === undefined) {
      sequences = new Set();
      this.journaledSequences.set(stamped.strategyId, sequences);
    }
    sequences.add(stamped.sequence);
  }

  /** The record of a new intent exactly as its inserted row reads (column defaults included). */
  private createdRecord(stamped: StampedIntent, intentJson: string, now: number): IntentRecord {
    const record: IntentRecord = {
      requestId: stamped.requestId,
      strategyId: stamped.strategyId,
      sequence: stamped.sequence,
      kind: stamped.intent.kind,
      clientOrderId: stamped.clientOrderId,
      marketId: marketOf(stamped.intent),
      intent: JSON.parse(intentJson) as StampedIntent,
      state: 'journaled',
      simulateRequestId: null,
      simulateAttempt: 0,
      command: null,
      sendAttempts: 0,
      context: {},
      orderId: null,
      replacesOrderId: null,
      outcome: null,
      resolutionAttempts: 0,
      nextResolutionAt: null,
      fillReported: false,
      createdAt: now,
      updatedAt: now,
    };
    return record;
  }

  getIntent(requestId: string): IntentRecord | undefined {
    const cached = this.recentIntents.get(requestId);
    if (cached !== undefined) return cached;
    const row = this.sql.intent.get(requestId) as IntentRow | undefined;
    if (row === undefined) return undefined;
    const record = intentFromRow(row);
    // Read inside a transaction, a row may yet be rolled back: only committed rows are kept.
    if (!this.database.inTransaction) this.remember(record);
    return record;
  }

  /** Keeps a committed record for the next read of it, as the newest. */
  private remember(record: IntentRecord): void {
    this.recentIntents.delete(record.requestId);
    if (this.recentIntents.size >= RECENT_INTENTS) {
      const oldest = this.recentIntents.keys().next();
      if (oldest.done !== true) {
        // A held row leaves the cache only written, with every other held change at once.
        if (this.heldRows.has(oldest.value)) this.writeHeld();
        this.recentIntents.delete(oldest.value);
      }
    }
    this.recentIntents.set(record.requestId, record);
  }

  requireIntent(requestId: string): IntentRecord {
    const record = this.getIntent(requestId);
    if (record === undefined) {
      throw new PaperbotError('JOURNAL_INTENT_MISSING', `no journaled intent ${requestId}`);
    }
    return record;
  }

  /**
   * The intent that created the venue order with this id (a placement, a close, or an
   * amendment's replacement). Cancels keep their target in the context, not here.
   */
  intentByOrderId(orderId: string): IntentRecord | undefined {
    this.writeHeld();
    const row = this.sql.intentByOrderId.get(orderId) as IntentRow | undefined;
    return row === undefined ? undefined : intentFromRow(row);
  }

  /** The intent that created the order with this (runtime) client order id. */
  intentByClientOrderId(clientOrderId: string): IntentRecord | undefined {
    this.writeHeld();
    const row = this.sql.intentByClientOrderId.get(clientOrderId) as IntentRow | undefined;
    return row === undefined ? undefined : intentFromRow(row);
  }

  /** Intents the venue may still act on: journaled, simulating, sending or unknown. */
  openIntents(): IntentRecord[] {
    this.writeHeld();
    return (this.sql.openIntents.all() as IntentRow[]).map(intentFromRow);
  }

  /** Unknown intents whose automatic resolution attempts are exhausted. */
  countExhaustedUnknown(): number {
    this.writeHeld();
    return (this.sql.countExhaustedUnknown.get() as { count: number }).count;
  }

  countIntents(state: IntentState): number {
    this.writeHeld();
    const statement = OPEN_INTENT_STATES.includes(state)
      ? this.sql.countOpenIntents
      : this.sql.countIntents;
    return (statement.get(state) as { count: number }).count;
  }

  /**
   * The order ids and client order ids in use by intents. The sets are the journal's own and
   * follow its later writes: read them at once, do not keep or change them.
   */
  knownOrderIds(): {
    readonly orderIds: ReadonlySet<string>;
    readonly clientOrderIds: ReadonlySet<string>;
  } {
    if (this.knownIds === null) {
      this.writeHeld();
      this.knownIds = {
        orderIds: new Set(this.sql.orderIds.all() as string[]),
        clientOrderIds: new Set(this.sql.clientOrderIds.all() as string[]),
      };
    }
    return this.knownIds;
  }

  /**
   * Runs one update of an intent's row (its parameters end with `updated_at` and the request id)
   * and keeps the record as the row now reads: `next` derives it from the cached one. Without
   * a cached record, or inside a caller's transaction, the record is read back when next needed.
   *
   * Durability `none`: when `columns` gives the values the statement would write (null when the
   * write could fail, which must then happen now), they are held instead of written.
   */
  private updateIntent(
    requestId: string,
    statement: Database.Statement,
    values: readonly unknown[],
    next: (current: IntentRecord, updatedAt: number) => IntentRecord,
    columns?: (current: IntentRecord) => Record<string, unknown> | null,
  ): IntentRecord | undefined {
    const current = this.recentIntents.get(requestId);
    if (
      this.deferWrites &&
      columns !== undefined &&
      current !== undefined &&
      !this.database.inTransaction
    ) {
      const held = columns(current);
      const now = this.now();
      // A time that is no integer is refused by the row: that refusal has to happen now.
      if (held !== null && Number.isSafeInteger(now)) {
        const heldRow = this.heldRows.get(requestId);
        if (heldRow === undefined) {
          this.heldRows.set(requestId, { insert: false, columns: { ...held, updated_at: now } });
        } else {
          Object.assign(heldRow.columns, held);
          heldRow.columns.updated_at = now;
        }
        const record = next(current, now);
        this.remember(record);
        return record;
      }
    }
    // The row is written in order: what was held first.
    if (this.heldRows.has(requestId)) this.writeHeld();
    this.recentIntents.delete(requestId);
    const now = this.now();
    const result = statement.run(...values, now, requestId);
    if (result.changes !== 1) {
      throw new PaperbotError('JOURNAL_INTENT_MISSING', `no journaled intent ${requestId}`);
    }
    if (current === undefined || this.database.inTransaction) return undefined;
    const record = next(current, now);
    this.remember(record);
    return record;
  }

  /** Records a simulation attempt (its own request id) before it is sent. */
  recordSimulation(requestId: string, simulateRequestId: string, attempt: number): void {
    this.updateIntent(
      requestId,
      this.sql.recordSimulation,
      [simulateRequestId, attempt],
      (current, updatedAt) => ({
        ...current,
        state: 'simulating',
        simulateRequestId,
        simulateAttempt: attempt,
        updatedAt,
      }),
      () =>
        Number.isSafeInteger(attempt)
          ? {
              state: 'simulating',
              simulate_request_id: simulateRequestId,
              simulate_attempt: attempt,
            }
          : null,
    );
  }

  /**
   * Writes the command's exact bytes (and what they were built from) before anything is sent.
   * Refuses to replace bytes already journaled: an intent has one command for life.
   */
  recordCommand(requestId: string, command: JournaledCommand, context: IntentContext = {}): void {
    this.writeCommand(requestId, command, context, null);
  }

  /**
   * `recordCommand` and `recordSimulation` of the first simulation in one statement: the live
   * path commits (and, at durability `full`, syncs) once before the simulation goes out.
   */
  recordCommandAndSimulation(
    requestId: string,
    command: JournaledCommand,
    context: IntentContext,
    simulateRequestId: string,
    attempt: number,
  ): void {
    this.writeCommand(requestId, command, context, { simulateRequestId, attempt });
  }

  /**
   * `recordCommand` and the first `recordSendAttempt` in one statement, for a command sent
   * without a simulation: the bytes and `sending` are durable together before the request leaves.
   */
  recordCommandAndSendAttempt(
    requestId: string,
    command: JournaledCommand,
    context: IntentContext = {},
  ): void {
    this.writeCommand(requestId, command, context, 'sending');
  }

  private writeCommand(
    requestId: string,
    command: JournaledCommand,
    context: IntentContext,
    then: { readonly simulateRequestId: string; readonly attempt: number } | 'sending' | null,
  ): void {
    const cached = this.recentIntents.get(requestId);
    let hasCommand: boolean;
    if (cached !== undefined) {
      hasCommand = cached.command !== null;
    } else {
      const existing = this.sql.hasCommand.get(requestId) as { has_command: number } | undefined;
      if (existing === undefined) {
        throw new PaperbotError('JOURNAL_INTENT_MISSING', `no journaled intent ${requestId}`);
      }
      hasCommand = existing.has_command !== 0;
    }
    if (hasCommand) {
      throw new PaperbotError(
        'JOURNAL_COMMAND_EXISTS',
        `intent ${requestId} already has journaled bytes; they are never replaced`,
      );
    }
    const body = toBuffer(command.bodyBytes);
    const contextJson = JSON.stringify(context);
    // One copy of the bytes, as a read of the row would give: the caller's stay the caller's.
    let copy: Uint8Array | undefined;
    const values: unknown[] = [
      command.endpoint,
      command.path,
      body,
      command.bodySha256,
      contextJson,
    ];
    let statement = this.sql.recordCommand;
    if (then === 'sending') {
      statement = this.sql.recordCommandSending;
    } else if (then !== null) {
      statement = this.sql.recordCommandSimulating;
      values.push(then.simulateRequestId, then.attempt);
    }
    this.updateIntent(
      requestId,
      statement,
      values,
      (current, updatedAt) => ({
        ...current,
        command: {
          endpoint: command.endpoint,
          path: command.path,
          bodyBytes: (copy ??= Uint8Array.from(command.bodyBytes)),
          bodySha256: command.bodySha256,
        },
        context: JSON.parse(contextJson) as IntentContext,
        ...(then === 'sending'
          ? { state: 'sending' as const, sendAttempts: current.sendAttempts + 1 }
          : then === null
            ? {}
            : {
                state: 'simulating' as const,
                simulateRequestId: then.simulateRequestId,
                simulateAttempt: then.attempt,
              }),
        updatedAt,
      }),
      (current) => {
        // An attempt that is no integer is refused by the row: that refusal has to happen now.
        if (then !== null && then !== 'sending' && !Number.isSafeInteger(then.attempt)) return null;
        return {
          command_endpoint: command.endpoint,
          command_path: command.path,
          // Written later: the copy, as the bytes are now.
          command_body: toBuffer((copy ??= Uint8Array.from(command.bodyBytes))),
          command_sha256: command.bodySha256,
          context_json: contextJson,
          ...(then === 'sending'
            ? { state: 'sending', send_attempts: current.sendAttempts + 1 }
            : then === null
              ? {}
              : {
                  state: 'simulating',
                  simulate_request_id: then.simulateRequestId,
                  simulate_attempt: then.attempt,
                }),
        };
      },
    );
  }

  /**
   * Counts a send of the journaled bytes. The first send moves the intent to `sending`; a resend
   * of an unknown intent leaves it `unknown` until the answer is in.
   */
  recordSendAttempt(requestId: string): void {
    this.updateIntent(
      requestId,
      this.sql.recordSendAttempt,
      [],
      (current, updatedAt) => ({
        ...current,
        state: current.state === 'unknown' ? 'unknown' : 'sending',
        sendAttempts: current.sendAttempts + 1,
        updatedAt,
      }),
      // Without journaled bytes the row refuses the state: that refusal has to happen now.
      (current) =>
        current.command === null
          ? null
          : {
              state: current.state === 'unknown' ? 'unknown' : 'sending',
              send_attempts: current.sendAttempts + 1,
            },
    );
  }

  recordAccepted(
    requestId: string,
    orderId: string | null,
    outcome: OutcomeRecord,
    replacesOrderId: string | null = null,
  ): void {
    this.recordSettled(requestId, 'accepted', this.sql.recordAccepted, orderId, outcome, {
      replacesOrderId,
    });
  }

  recordRejected(requestId: string, outcome: OutcomeRecord): void {
    this.recordOutcome(requestId, 'rejected', this.sql.recordRejected, outcome);
  }

  recordDenied(requestId: string, outcome: OutcomeRecord): void {
    this.recordOutcome(requestId, 'denied', this.sql.recordDenied, outcome);
  }

  /** The outcome is unknown; `nextResolutionAt` null means automatic attempts are exhausted. */
  recordUnknown(requestId: string, outcome: OutcomeRecord, nextResolutionAt: number | null): void {
    this.recordOutcome(requestId, 'unknown', this.sql.recordUnknown, outcome, nextResolutionAt);
  }

  private recordOutcome(
    requestId: string,
    state: 'rejected' | 'denied' | 'unknown',
    statement: Database.Statement,
    outcome: OutcomeRecord,
    nextResolutionAt: number | null = null,
  ): void {
    const outcomeJson = JSON.stringify(outcome);
    this.updateIntent(
      requestId,
      statement,
      state === 'unknown' ? [outcomeJson, nextResolutionAt] : [outcomeJson],
      (current, updatedAt) => ({
        ...current,
        state,
        outcome: JSON.parse(outcomeJson) as OutcomeRecord,
        nextResolutionAt,
        updatedAt,
      }),
      state === 'unknown'
        ? undefined
        : () => ({ state, outcome_json: outcomeJson, next_resolution_at: null }),
    );
  }

  /** One more resolution attempt failed to settle the intent. */
  recordResolutionAttempt(requestId: string, nextResolutionAt: number | null): void {
    this.updateIntent(
      requestId,
      this.sql.recordResolutionAttempt,
      [nextResolutionAt],
      (current, updatedAt) => ({
        ...current,
        resolutionAttempts: current.resolutionAttempts + 1,
        nextResolutionAt,
        updatedAt,
      }),
    );
  }

  /** An unknown intent is settled. */
  recordResolved(
    requestId: string,
    resolution: 'accepted' | 'rejected',
    orderId: string | null,
    outcome: OutcomeRecord,
    replacesOrderId: string | null = null,
  ): void {
    this.recordSettled(
      requestId,
      'resolved',
      this.sql.recordResolved,
      resolution === 'accepted' ? orderId : null,
      { ...outcome, resolution },
      { replacesOrderId },
    );
  }

  /** Accepted or resolved: the state, the order the intent made, and the outcome. */
  private recordSettled(
    requestId: string,
    state: 'accepted' | 'resolved',
    statement: Database.Statement,
    orderId: string | null,
    outcome: OutcomeRecord,
    links: { readonly replacesOrderId: string | null },
  ): void {
    const outcomeJson = JSON.stringify(outcome);
    const previousOrderId = this.recentIntents.get(requestId)?.orderId;
    const record = this.updateIntent(
      requestId,
      statement,
      [orderId, links.replacesOrderId, outcomeJson],
      (current, updatedAt) => ({
        ...current,
        state,
        orderId,
        replacesOrderId: links.replacesOrderId ?? current.replacesOrderId,
        outcome: JSON.parse(outcomeJson) as OutcomeRecord,
        nextResolutionAt: null,
        updatedAt,
      }),
      (current) => ({
        state,
        order_id: orderId,
        replaces_order_id: links.replacesOrderId ?? current.replacesOrderId,
        outcome_json: outcomeJson,
        next_resolution_at: null,
      }),
    );
    // The known order ids follow the write while the row's earlier order id is known not to
    // leave the set (it was none, or the same); otherwise they are read again when next asked.
    if (record !== undefined && (previousOrderId === null || previousOrderId === orderId)) {
      if (orderId !== null) this.knownIds?.orderIds.add(orderId);
    } else {
      this.knownIds = null;
    }
  }

  /** Marks the intent's fill reported; false when it already was (report once). */
  markFillReported(requestId: string): boolean {
    const current = this.recentIntents.get(requestId);
    if (current !== undefined && current.fillReported) return false;
    if (current !== undefined && this.deferWrites && !this.database.inTransaction) {
      return (
        this.updateIntent(
          requestId,
          this.sql.markFillReported,
          [],
          (record, updatedAt) => ({ ...record, fillReported: true, updatedAt }),
          () => ({ fill_reported: 1 }),
        ) !== undefined
      );
    }
    if (this.heldRows.has(requestId)) this.writeHeld();
    this.recentIntents.delete(requestId);
    const now = this.now();
    const changed = this.sql.markFillReported.run(now, requestId).changes === 1;
    if (current !== undefined && !this.database.inTransaction) {
      this.remember(changed ? { ...current, fillReported: true, updatedAt: now } : current);
    }
    return changed;
  }

  // Fills

  /** Records a fill id; true the first time it is seen, by this process or an earlier one. */
  markFillSeen(fillId: string, orderId: string | null): boolean {
    const result = this.sql.markFillSeen.run(fillId, orderId, this.now());
    return result.changes === 1;
  }

  hasSeenFill(fillId: string): boolean {
    return this.sql.hasSeenFill.get(fillId) !== undefined;
  }

  /**
   * Records a venue fill, keyed by `fill_id`, and, when a private event delivered it, its
   * sequence as the highest applied, in one transaction: a crash keeps both or neither. True
   * the first time the fill is seen, by this process or an earlier one.
   */
  recordFill(
    fill: Fill,
    delivery: { readonly sequence: number | null; readonly source: 'stream' | 'rest' },
    eventAt: string | null = null,
  ): boolean {
    const insert = () =>
      this.sql.recordFill.run(
        fill.fill_id,
        fill.order_id,
        this.now(),
        delivery.sequence,
        delivery.source,
        JSON.stringify(fill),
      ).changes === 1;
    const sequence = delivery.sequence;
    // One statement needs no transaction of its own (nor the flush of held rows one implies).
    if (sequence === null) return insert();
    return this.transaction(() => {
      const inserted = insert();
      this.writeCursor(sequence, eventAt ?? fill.occurred_at);
      return inserted;
    });
  }

  fill(fillId: string): FillRecord | undefined {
    const row = this.sql.fill.get(fillId) as
      | {
          fill_id: string;
          order_id: string | null;
          seen_at: number;
          sequence: number | null;
          source: 'stream' | 'rest' | null;
          fill_json: string | null;
        }
      | undefined;
    if (row === undefined) return undefined;
    return {
      fillId: row.fill_id,
      orderId: row.order_id,
      sequence: row.sequence,
      source: row.source,
      fill: row.fill_json === null ? null : (JSON.parse(row.fill_json) as Fill),
      seenAt: row.seen_at,
    };
  }

  /** How many fills the journal holds. */
  fillCount(): number {
    return this.sql.fillCount.get() as number;
  }

  /**
   * Records an order state event as applied, with its sequence as the highest applied, in one
   * transaction. False when that sequence was applied before (by this process or an earlier one):
   * the caller then ignores the event.
   */
  recordOrderEvent(event: OrderStatusEvent): boolean {
    const applied = this.applyOrderEvent(event);
    if (applied) this.noteOrderEvent(event);
    return applied;
  }

  /**
   * With an intent window: an order event the runtime has applied, for a venue whose events
   * are not journaled (a replay's, whose tracker takes them straight from the venue). An order
   * that reached a terminal status lets its intents leave the window. Without a window, nothing.
   */
  noteOrderEvent(event: OrderStatusEvent): void {
    if (this.intentWindow !== null && TERMINAL_ORDER_STATUSES.has(event.data.to_state)) {
      this.intentWindow.noteOrderClosed(event.data.entity_id);
    }
  }

  private applyOrderEvent(event: OrderStatusEvent): boolean {
    return this.transaction(() => {
      const cursor = this.privateCursor();
      if (cursor !== null && event.sequence <= cursor.lastSequence) {
        return false;
      }
      // A row of the same sequence is one from before the counter started over: replaced.
      this.sql.recordOrderEvent.run(
        event.sequence,
        event.event_id,
        event.data.entity_id,
        event.data.from_state,
        event.data.to_state,
        event.occurred_at,
        this.now(),
      );
      this.writeCursor(event.sequence, event.occurred_at);
      this.orderEventsRecorded += 1;
      if (this.orderEventsRecorded % ORDER_EVENT_TRIM_EVERY === 0) {
        this.sql.trimOrderEvents.run(event.sequence - this.orderEventWindow);
      }
      return true;
    });
  }

  /** Every order state event applied, in sequence order. */
  orderEvents(): OrderEventRecord[] {
    return (
      this.sql.orderEvents.all() as {
        sequence: number;
        event_id: string;
        order_id: string;
        from_state: string | null;
        to_state: string;
        occurred_at: string;
        applied_at: number;
      }[]
    ).map((row) => ({
      sequence: row.sequence,
      eventId: row.event_id,
      orderId: row.order_id,
      fromState: row.from_state,
      toState: row.to_state,
      occurredAt: row.occurred_at,
      appliedAt: row.applied_at,
    }));
  }

  // The private sequence

  /** The highest private sequence applied; null when none was (a new or a schema-1 journal). */
  privateCursor(): PrivateCursor | null {
    const row = this.sql.readCursor.get() as
      { last_sequence: number; last_event_at: string | null } | undefined;
    return row === undefined
      ? null
      : { lastSequence: row.last_sequence, lastEventAt: row.last_event_at };
  }

  /** Notes a private event that changed nothing here as applied (the stored value is a maximum). */
  advancePrivateSequence(sequence: number, eventAt: string | null): void {
    this.transaction(() => this.writeCursor(sequence, eventAt));
  }

  /**
   * The venue's counter went backwards (a reset account): the highest sequence applied starts
   * over at `sequence`, so the events that follow are applied, not taken for ones seen before.
   */
  restartPrivateSequence(sequence: number): void {
    if (!Number.isSafeInteger(sequence) || sequence < 0) {
      throw new PaperbotError('JOURNAL_SEQUENCE_INVALID', `a private sequence is ${sequence}`);
    }
    this.sql.restartCursor.run(sequence, this.now());
  }

  private writeCursor(sequence: number, eventAt: string | null): void {
    if (!Number.isSafeInteger(sequence) || sequence < 0) {
      throw new PaperbotError('JOURNAL_SEQUENCE_INVALID', `a private sequence is ${sequence}`);
    }
    this.sql.advanceCursor.run(sequence, eventAt, this.now());
  }

  // Fill read-back

  /**
   * Notes that fills may be missing (the event log did not reach back): a read-back of
   * GET /v1/fills is owed, down to the newest fill known now (or, knowing none, to the time of
   * the last event applied). Kept until `finishFillReadBack`, across restarts.
   */
  requestFillReadBack(reason: string): FillReadBackRecord {
    return this.transaction(() => {
      const last = this.sql.lastKnownFill.get() as
        { fill_id: string; occurred_at: string | null } | undefined;
      const stopOccurredAt = last?.occurred_at ?? this.privateCursor()?.lastEventAt ?? null;
      this.sql.requestFillReadBack.run(last?.fill_id ?? null, stopOccurredAt, reason, this.now());
      return this.pendingFillReadBack() as FillReadBackRecord;
    });
  }

  pendingFillReadBack(): FillReadBackRecord | null {
    const row = this.sql.readFillReadBack.get() as
      | {
          generation: number;
          stop_fill_id: string | null;
          stop_occurred_at: string | null;
          reason: string;
          requested_at: number;
        }
      | undefined;
    if (row === undefined) return null;
    return {
      generation: row.generation,
      stopFillId: row.stop_fill_id,
      stopOccurredAt: row.stop_occurred_at,
      reason: row.reason,
      requestedAt: row.requested_at,
    };
  }

  /** The read-back of `generation` is done; false when a newer request is still owed. */
  finishFillReadBack(generation: number): boolean {
    return this.sql.finishFillReadBack.run(generation).changes === 1;
  }

  // The runtime's own commands

  /** Journals one of the runtime's own commands in state `sending`, before it is sent. */
  recordInternalCommand(purpose: string, requestId: string, command: JournaledCommand): void {
    const now = this.now();
    this.sql.recordInternalCommand.run(
      requestId,
      purpose,
      command.endpoint,
      command.path,
      toBuffer(command.bodyBytes),
      command.bodySha256,
      now,
      now,
    );
  }

  finishInternalCommand(
    requestId: string,
    state: Exclude<InternalCommandState, 'sending'>,
    outcome: Readonly<Record<string, unknown>>,
  ): void {
    this.sql.finishInternalCommand.run(state, JSON.stringify(outcome), this.now(), requestId);
  }

  getInternalCommand(requestId: string): InternalCommandRecord | undefined {
    const row = this.sql.internalCommand.get(requestId) as InternalCommandRow | undefined;
    if (row === undefined) return undefined;
    return {
      requestId: row.request_id,
      purpose: row.purpose,
      command: commandOf(
        row.command_endpoint,
        row.command_path,
        row.command_body,
        row.command_sha256,
      ) as JournaledCommand,
      state: row.state,
      outcome: row.outcome_json === null ? null : JSON.parse(row.outcome_json),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  internalCommands(purpose?: string): InternalCommandRecord[] {
    const requestIds = (
      purpose === undefined
        ? this.sql.internalCommandIds.all()
        : this.sql.internalCommandIdsOf.all(purpose)
    ) as string[];
    return requestIds.map(
      (requestId) => this.getInternalCommand(requestId) as InternalCommandRecord,
    );
  }

  /**
   * Internal commands a previous process left in `sending` are superseded, not resent: a later
   * heartbeat replaces an old one and the next reconciliation re-checks orphan orders.
   */
  abandonOpenInternalCommands(): number {
    return this.sql.abandonInternalCommands.run(this.now()).changes;
  }

  // Runtime values kept across restarts

  /** A value the runtime stored under `key` (the gate's loss tracking, say); null when none. */
  readMeta(key: string): string | null {
    const row = this.sql.readMeta.get(key) as { value: string } | undefined;
    return row?.value ?? null;
  }

  /** Stores `value` under `key`. The journal's own keys (`epoch`, `created_at`) are refused. */
  writeMeta(key: string, value: string): void {
    if (RESERVED_META_KEYS.has(key)) {
      throw new PaperbotError('JOURNAL_META_RESERVED', `meta key ${key} belongs to the journal`);
    }
    this.sql.writeMeta.run(key, value);
  }

  // Dead-man state

  readDeadman(): DeadmanRecord | null {
    const row = this.sql.readDeadman.get() as DeadmanRow | undefined;
    if (row === undefined) return null;
    return {
      armed: row.armed !== 0,
      timeoutSeconds: row.timeout_seconds,
      deadlineAt: row.deadline_at,
      lastRequestId: row.last_request_id,
      confirmedAt: row.confirmed_at,
      firedAt: row.fired_at,
    };
  }

  writeDeadman(record: DeadmanRecord): void {
    this.sql.writeDeadman.run(
      record.armed ? 1 : 0,
      record.timeoutSeconds,
      record.deadlineAt,
      record.lastRequestId,
      record.confirmedAt,
      record.firedAt,
      this.now(),
    );
  }
}
