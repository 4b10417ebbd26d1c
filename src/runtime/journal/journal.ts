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
import type { StampedIntent } from '../intents.ts';
import type { CommandEndpoint } from '../venue.ts';
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
   * replays and tests, where the venue is simulated too.
   */
  readonly durability?: 'full' | 'normal';
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

const OPEN_STATES_SQL = OPEN_INTENT_STATES.map((state) => `'${state}'`).join(', ');

/** How many intent records the journal keeps parsed between reads. */
const RECENT_INTENTS = 256;

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
  // Preparing a statement costs more than running it; every query here is a fixed text.
  private readonly statements = new Map<string, Database.Statement>();
  /**
   * One transaction wrapper for every call: better-sqlite3 builds several functions per
   * `transaction()`, which cost as much as the writes of a small transaction.
   */
  /**
   * The latest committed records of recently read or written intents, newest last: an intent is
   * read several times between its writes (execution, the command, the outcome).
   */
  private readonly recentIntents = new Map<string, IntentRecord>();
  private readonly runInTransaction: Database.Transaction<(work: () => unknown) => unknown>;

  private constructor(path: string, database: Database.Database, now: () => number, epoch: string) {
    this.path = path;
    this.database = database;
    this.now = now;
    this.epoch = epoch;
    this.runInTransaction = database.transaction((work: () => unknown) => work());
  }

  /**
   * Opens (or creates) the journal at `path`. `:memory:` is allowed for tests of other modules;
   * anything that must survive a restart needs a file.
   */
  static open(path: string, options: JournalOptions): Journal {
    const database = new Database(path, { timeout: 0 });
    try {
      database.pragma('locking_mode = EXCLUSIVE');
      if (path !== ':memory:') {
        const mode = database.pragma('journal_mode = WAL', { simple: true });
        if (mode !== 'wal') {
          throw new PaperbotError('JOURNAL_UNAVAILABLE', `${path}: WAL mode refused (${mode})`);
        }
      }
      database.pragma(`synchronous = ${options.durability === 'normal' ? 'NORMAL' : 'FULL'}`);
      database.pragma('foreign_keys = ON');
      const epoch = Journal.migrate(database, options);
      const journal = new Journal(path, database, options.now, epoch);
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
    this.closed = true;
    this.database.close();
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Runs `work` in one transaction: every row it changes lands together or not at all. */
  transaction<T>(work: () => T): T {
    return (this.runInTransaction.immediate as (work: () => T) => T)(work);
  }

  // Sequences

  /** The sequence a strategy's next intent should get (1 for a strategy never seen). */
  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  nextSequence(strategyId: string): number {
    const row = this.statement(
      'SELECT last_sequence FROM strategy_sequences WHERE strategy_id = ?',
    ).get(strategyId) as { last_sequence: number } | undefined;
    return (row?.last_sequence ?? 0) + 1;
  }

  /** Records that `sequence` was stamped, even for an intent that never reaches the executor. */
  noteSequence(strategyId: string, sequence: number): void {
    this.statement(
      `INSERT INTO strategy_sequences (strategy_id, last_sequence) VALUES (?, ?)
         ON CONFLICT (strategy_id) DO UPDATE SET last_sequence = MAX(last_sequence, excluded.last_sequence)`,
    ).run(strategyId, sequence);
  }

  /** Takes the next sequence of one of the runtime's own purposes (persisted before use). */
  takeInternalSequence(purpose: string): number {
    const row = this.statement(
      `INSERT INTO internal_sequences (purpose, last_sequence) VALUES (?, 1)
         ON CONFLICT (purpose) DO UPDATE SET last_sequence = last_sequence + 1
         RETURNING last_sequence`,
    ).get(purpose) as { last_sequence: number };
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
    const result = this.transaction(() => {
      const existing = this.getIntent(stamped.requestId);
      if (existing !== undefined) return { record: existing, created: false };
      const now = this.now();
      // The row exactly as inserted (column defaults included), so it need not be read back.
      const row: IntentRow = {
        request_id: stamped.requestId,
        strategy_id: stamped.strategyId,
        sequence: stamped.sequence,
        kind: stamped.intent.kind,
        client_order_id: stamped.clientOrderId,
        market_id: marketOf(stamped.intent),
        intent_json: JSON.stringify(stamped),
        emitted_at: stamped.emittedAt,
        state: 'journaled',
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
      };
      this.statement(
        `INSERT INTO intents (request_id, strategy_id, sequence, kind, client_order_id, market_id,
             intent_json, emitted_at, state, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'journaled', ?, ?)`,
      ).run(
        row.request_id,
        row.strategy_id,
        row.sequence,
        row.kind,
        row.client_order_id,
        row.market_id,
        row.intent_json,
        row.emitted_at,
        now,
        now,
      );
      this.noteSequence(stamped.strategyId, stamped.sequence);
      return { record: intentFromRow(row), created: true };
    });
    // Inside a caller's transaction the row may yet be rolled back: only committed rows are kept.
    if (result.created && !this.database.inTransaction) this.remember(result.record);
    return result;
  }

  getIntent(requestId: string): IntentRecord | undefined {
    const cached = this.recentIntents.get(requestId);
    if (cached !== undefined) return cached;
    const row = this.statement('SELECT * FROM intents WHERE request_id = ?').get(requestId) as
      IntentRow | undefined;
    if (row === undefined) return undefined;
    const record = intentFromRow(row);
    // Read inside a transaction, a row may yet be rolled back: only committed rows are kept.
    if (!this.database.inTransaction) this.remember(record);
    return record;
  }

  /** Keeps a committed record for the next read of it; every write of its row forgets it. */
  private remember(record: IntentRecord): void {
    if (this.recentIntents.size >= RECENT_INTENTS) {
      const oldest = this.recentIntents.keys().next();
      if (oldest.done !== true) this.recentIntents.delete(oldest.value);
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
    const row = this.statement(
      `SELECT * FROM intents WHERE order_id = ? AND kind IN ('place', 'amend', 'close_position')
         ORDER BY rowid DESC LIMIT 1`,
    ).get(orderId) as IntentRow | undefined;
    return row === undefined ? undefined : intentFromRow(row);
  }

  /** The intent that created the order with this (runtime) client order id. */
  intentByClientOrderId(clientOrderId: string): IntentRecord | undefined {
    const row = this.statement(
      `SELECT * FROM intents WHERE client_order_id = ? AND kind IN ('place', 'amend', 'close_position')
         ORDER BY rowid DESC LIMIT 1`,
    ).get(clientOrderId) as IntentRow | undefined;
    return row === undefined ? undefined : intentFromRow(row);
  }

  /** Intents the venue may still act on: journaled, simulating, sending or unknown. */
  openIntents(): IntentRecord[] {
    // The states as literals, the partial index's own condition, so SQLite can use the index.
    const rows = this.statement(
      `SELECT * FROM intents WHERE state IN (${OPEN_STATES_SQL}) ORDER BY rowid`,
    ).all() as IntentRow[];
    return rows.map(intentFromRow);
  }

  /** Unknown intents whose automatic resolution attempts are exhausted. */
  countExhaustedUnknown(): number {
    const row = this.statement(
      `SELECT COUNT(*) AS count FROM intents WHERE state IN (${OPEN_STATES_SQL})
         AND state = 'unknown' AND next_resolution_at IS NULL`,
    ).get() as { count: number };
    return row.count;
  }

  countIntents(state: IntentState): number {
    // An open state is counted on the partial index of open intents, not by a table scan.
    const sql = OPEN_INTENT_STATES.includes(state)
      ? `SELECT COUNT(*) AS count FROM intents WHERE state IN (${OPEN_STATES_SQL}) AND state = ?`
      : 'SELECT COUNT(*) AS count FROM intents WHERE state = ?';
    const row = this.statement(sql).get(state) as { count: number };
    return row.count;
  }

  /** Intents whose venue orders the runtime knows: the order ids and client order ids in use. */
  knownOrderIds(): {
    readonly orderIds: Set<string>;
    readonly clientOrderIds: Set<string>;
  } {
    // Two scans of the partial indexes on these columns, not of the table's wide rows.
    const orderIds = new Set(
      this.statement('SELECT order_id FROM intents WHERE order_id IS NOT NULL')
        .pluck()
        .all() as string[],
    );
    const clientOrderIds = new Set(
      this.statement('SELECT client_order_id FROM intents WHERE client_order_id IS NOT NULL')
        .pluck()
        .all() as string[],
    );
    return { orderIds, clientOrderIds };
  }

  private update(requestId: string, assignments: string, ...values: unknown[]): void {
    this.recentIntents.delete(requestId);
    const result = this.statement(
      `UPDATE intents SET ${assignments}, updated_at = ? WHERE request_id = ?`,
    ).run(...values, this.now(), requestId);
    if (result.changes !== 1) {
      throw new PaperbotError('JOURNAL_INTENT_MISSING', `no journaled intent ${requestId}`);
    }
  }

  /** Records a simulation attempt (its own request id) before it is sent. */
  recordSimulation(requestId: string, simulateRequestId: string, attempt: number): void {
    this.update(
      requestId,
      "state = 'simulating', simulate_request_id = ?, simulate_attempt = ?",
      simulateRequestId,
      attempt,
    );
  }

  /**
   * Writes the command's exact bytes (and what they were built from) before anything is sent.
   * Refuses to replace bytes already journaled: an intent has one command for life.
   */
  recordCommand(requestId: string, command: JournaledCommand, context: IntentContext = {}): void {
    this.transaction(() => {
      const existing = this.statement(
        'SELECT command_endpoint IS NOT NULL AS has_command FROM intents WHERE request_id = ?',
      ).get(requestId) as { has_command: number } | undefined;
      if (existing === undefined) {
        throw new PaperbotError('JOURNAL_INTENT_MISSING', `no journaled intent ${requestId}`);
      }
      if (existing.has_command !== 0) {
        throw new PaperbotError(
          'JOURNAL_COMMAND_EXISTS',
          `intent ${requestId} already has journaled bytes; they are never replaced`,
        );
      }
      this.update(
        requestId,
        `command_endpoint = ?, command_path = ?, command_body = ?, command_sha256 = ?,
         context_json = ?`,
        command.endpoint,
        command.path,
        toBuffer(command.bodyBytes),
        command.bodySha256,
        JSON.stringify(context),
      );
    });
  }

  /**
   * Counts a send of the journaled bytes. The first send moves the intent to `sending`; a resend
   * of an unknown intent leaves it `unknown` until the answer is in.
   */
  recordSendAttempt(requestId: string): void {
    this.update(
      requestId,
      "state = CASE WHEN state = 'unknown' THEN 'unknown' ELSE 'sending' END, send_attempts = send_attempts + 1",
    );
  }

  recordAccepted(
    requestId: string,
    orderId: string | null,
    outcome: OutcomeRecord,
    replacesOrderId: string | null = null,
  ): void {
    this.update(
      requestId,
      `state = 'accepted', order_id = ?, replaces_order_id = COALESCE(?, replaces_order_id),
       outcome_json = ?, next_resolution_at = NULL`,
      orderId,
      replacesOrderId,
      JSON.stringify(outcome),
    );
  }

  recordRejected(requestId: string, outcome: OutcomeRecord): void {
    this.update(
      requestId,
      "state = 'rejected', outcome_json = ?, next_resolution_at = NULL",
      JSON.stringify(outcome),
    );
  }

  recordDenied(requestId: string, outcome: OutcomeRecord): void {
    this.update(
      requestId,
      "state = 'denied', outcome_json = ?, next_resolution_at = NULL",
      JSON.stringify(outcome),
    );
  }

  /** The outcome is unknown; `nextResolutionAt` null means automatic attempts are exhausted. */
  recordUnknown(requestId: string, outcome: OutcomeRecord, nextResolutionAt: number | null): void {
    this.update(
      requestId,
      "state = 'unknown', outcome_json = ?, next_resolution_at = ?",
      JSON.stringify(outcome),
      nextResolutionAt,
    );
  }

  /** One more resolution attempt failed to settle the intent. */
  recordResolutionAttempt(requestId: string, nextResolutionAt: number | null): void {
    this.update(
      requestId,
      'resolution_attempts = resolution_attempts + 1, next_resolution_at = ?',
      nextResolutionAt,
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
    this.update(
      requestId,
      `state = 'resolved', order_id = ?, replaces_order_id = COALESCE(?, replaces_order_id),
       outcome_json = ?, next_resolution_at = NULL`,
      resolution === 'accepted' ? orderId : null,
      replacesOrderId,
      JSON.stringify({ ...outcome, resolution }),
    );
  }

  /** Marks the intent's fill reported; false when it already was (report once). */
  markFillReported(requestId: string): boolean {
    this.recentIntents.delete(requestId);
    const result = this.statement(
      'UPDATE intents SET fill_reported = 1, updated_at = ? WHERE request_id = ? AND fill_reported = 0',
    ).run(this.now(), requestId);
    return result.changes === 1;
  }

  // Fills

  /** Records a fill id; true the first time it is seen, by this process or an earlier one. */
  markFillSeen(fillId: string, orderId: string | null): boolean {
    const result = this.statement(
      'INSERT OR IGNORE INTO seen_fills (fill_id, order_id, seen_at) VALUES (?, ?, ?)',
    ).run(fillId, orderId, this.now());
    return result.changes === 1;
  }

  hasSeenFill(fillId: string): boolean {
    return this.statement('SELECT 1 FROM seen_fills WHERE fill_id = ?').get(fillId) !== undefined;
  }

  // The runtime's own commands

  /** Journals one of the runtime's own commands in state `sending`, before it is sent. */
  recordInternalCommand(purpose: string, requestId: string, command: JournaledCommand): void {
    const now = this.now();
    this.statement(
      `INSERT INTO internal_commands (request_id, purpose, command_endpoint, command_path,
           command_body, command_sha256, state, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'sending', ?, ?)`,
    ).run(
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
    this.statement(
      'UPDATE internal_commands SET state = ?, outcome_json = ?, updated_at = ? WHERE request_id = ?',
    ).run(state, JSON.stringify(outcome), this.now(), requestId);
  }

  getInternalCommand(requestId: string): InternalCommandRecord | undefined {
    const row = this.statement('SELECT * FROM internal_commands WHERE request_id = ?').get(
      requestId,
    ) as InternalCommandRow | undefined;
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
    const rows = (
      purpose === undefined
        ? this.statement('SELECT request_id FROM internal_commands ORDER BY rowid').all()
        : this.statement(
            'SELECT request_id FROM internal_commands WHERE purpose = ? ORDER BY rowid',
          ).all(purpose)
    ) as { request_id: string }[];
    return rows.map((row) => this.getInternalCommand(row.request_id) as InternalCommandRecord);
  }

  /**
   * Internal commands a previous process left in `sending` are superseded, not resent: a later
   * heartbeat replaces an old one and the next reconciliation re-checks orphan orders.
   */
  abandonOpenInternalCommands(): number {
    return this.statement(
      `UPDATE internal_commands SET state = 'abandoned', updated_at = ? WHERE state = 'sending'`,
    ).run(this.now()).changes;
  }

  // Runtime values kept across restarts

  /** A value the runtime stored under `key` (the gate's loss tracking, say); null when none. */
  readMeta(key: string): string | null {
    const row = this.statement('SELECT value FROM meta WHERE key = ?').get(key) as
      { value: string } | undefined;
    return row?.value ?? null;
  }

  /** Stores `value` under `key`. The journal's own keys (`epoch`, `created_at`) are refused. */
  writeMeta(key: string, value: string): void {
    if (RESERVED_META_KEYS.has(key)) {
      throw new PaperbotError('JOURNAL_META_RESERVED', `meta key ${key} belongs to the journal`);
    }
    this.statement(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ).run(key, value);
  }

  // Dead-man state

  readDeadman(): DeadmanRecord | null {
    const row = this.statement('SELECT * FROM deadman WHERE id = 1').get() as
      DeadmanRow | undefined;
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
    this.statement(
      `INSERT INTO deadman (id, armed, timeout_seconds, deadline_at, last_request_id,
           confirmed_at, fired_at, updated_at)
         VALUES (1, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET armed = excluded.armed,
           timeout_seconds = excluded.timeout_seconds, deadline_at = excluded.deadline_at,
           last_request_id = excluded.last_request_id, confirmed_at = excluded.confirmed_at,
           fired_at = excluded.fired_at, updated_at = excluded.updated_at`,
    ).run(
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
