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
 *
 * A replay does not need any of that crash safety: it uses `ReplayJournal`
 * (`replay-journal.ts`), behind the same `IntentJournal` interface.
 */
import Database from 'better-sqlite3';
import { PaperbotError } from '../../core/errors.ts';
import type { Fill, OrderStatusEvent } from '../../protocol/index.ts';
import type { StampedIntent } from '../intents.ts';
import { JournalExits } from './exits.ts';
import type { CommandStep, FirstCommand, IntentJournal } from './intent-journal.ts';
import {
  type DeadmanRecord,
  type FillReadBackRecord,
  type FillRecord,
  type IntentContext,
  type IntentRecord,
  type InternalCommandRecord,
  type JournaledCommand,
  marketOf,
  newIntentRecord,
  type OrderEventRecord,
  type OutcomeRecord,
  type PrivateCursor,
} from './records.ts';
import {
  DeadmanRow,
  deadmanFromRow,
  type FillReadBackRow,
  fillFromRow,
  fillReadBackFromRow,
  type FillRow,
  IntentRow,
  intentFromRow,
  InternalCommandRow,
  internalCommandFromRow,
  orderEventFromRow,
  type OrderEventRow,
  toBuffer,
} from './rows.ts';
import {
  type IntentState,
  type InternalCommandState,
  migrate,
  OPEN_INTENT_STATES,
} from './schema.ts';
import { JournalRetention, type PruneStep, type RetentionPolicy } from './retention.ts';
import { prepareStatements, type Statements } from './statements.ts';

/** What `writeCommand` records in the same statement as the bytes: nothing, or the next step. */
type CommandNextStep = CommandStep | null;

export interface JournalOptions {
  /** Epoch milliseconds for row timestamps; pass the runtime's clock. */
  readonly now: () => number;
  /** The epoch of a new journal; random by default. Ignored when the file already has one. */
  readonly epoch?: string;
  /**
   * `full` (default): every commit reaches the disk before the command is sent, surviving a
   * power loss. `normal`: commits survive a crash of the process but not of the machine; for
   * tests and replays, where the venue is simulated too.
   */
  readonly durability?: 'full' | 'normal';
  /**
   * The order event ledger keeps the events of this many latest private sequences (default
   * 100 000); older rows are deleted as new ones come. The highest sequence applied, which is
   * what applies each event once, is kept whatever the window.
   */
  readonly orderEventWindow?: number;
}

/**
 * `record` with a command just written and the step written with it, as the row now reads. The
 * bytes are copied, as a read of the row would give: the caller's bytes stay the caller's.
 */
function withCommand(
  record: IntentRecord,
  command: JournaledCommand,
  context: IntentContext,
  then: CommandNextStep,
): IntentRecord {
  const journaled = {
    ...record,
    command: {
      endpoint: command.endpoint,
      path: command.path,
      bodyBytes: new Uint8Array(command.bodyBytes),
      bodySha256: command.bodySha256,
    },
    context,
  };
  if (then === null) return journaled;
  if (then === 'sending') {
    return { ...journaled, state: 'sending', sendAttempts: record.sendAttempts + 1 };
  }
  return {
    ...journaled,
    state: 'simulating',
    simulateRequestId: then.simulateRequestId,
    simulateAttempt: then.attempt,
  };
}

/** Meta keys the journal writes itself; `writeMeta` never replaces them. */
const RESERVED_META_KEYS: ReadonlySet<string> = new Set(['epoch', 'created_at']);

/** Private sequences whose order events the ledger keeps (see `JournalOptions`). */
export const DEFAULT_ORDER_EVENT_WINDOW = 100_000;
/** The ledger is trimmed once per this many events recorded. */
const ORDER_EVENT_TRIM_EVERY = 1_000;

/**
 * Intents settled between two checkpoints of the WAL. A checkpoint copies the WAL back into the
 * file and syncs both, at `normal` too: run when an intent has just settled, it stays out of the
 * writes ahead of a send (the tick-to-place path).
 */
export const CHECKPOINT_EVERY_SETTLED = 64;
/**
 * SQLite's own checkpoint (pages in the WAL) is a backstop only: it runs inside whichever commit
 * crosses it, a placement's write-ahead included.
 */
const WAL_AUTOCHECKPOINT_PAGES = 4_000;

/** How many intent records the journal keeps parsed between reads. */
const RECENT_INTENTS = 256;

export class Journal implements IntentJournal {
  readonly path: string;
  readonly epoch: string;
  private readonly database: Database.Database;
  private readonly now: () => number;
  private closed = false;
  private readonly sql: Statements;
  /** Order events this process recorded (the ledger is trimmed every so many). */
  private orderEventsRecorded = 0;
  /** Intents settled since the last checkpoint (`CHECKPOINT_EVERY_SETTLED`). */
  private settledSinceCheckpoint = 0;
  /**
   * The latest committed records of recently read or written intents, oldest first. An intent is
   * read several times between its writes (execution, the command, the outcome), and each write
   * of a cached record stores the record as its row now reads, so the path of an intent reads
   * its row back only when the record fell out of the cache.
   */
  private readonly recentIntents = new Map<string, IntentRecord>();
  /**
   * Committed last sequences known to this process (noted, or carried by a journaled intent);
   * never above what `nextSequence` reads, so a sequence at or below it needs no write.
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
  /** The emulated exits' table (`./exits.ts`). */
  readonly exits: JournalExits;
  /** Retention and maintenance (`./retention.ts`): old settled rows leave, space comes back. */
  readonly retention: JournalRetention;

  private constructor(
    path: string,
    database: Database.Database,
    now: () => number,
    epoch: string,
    private readonly orderEventWindow: number,
  ) {
    this.path = path;
    this.database = database;
    this.now = now;
    this.epoch = epoch;
    this.sql = prepareStatements(database);
    this.runInTransaction = database.transaction((work: () => unknown) => work());
    this.exits = new JournalExits(database);
    this.retention = new JournalRetention(database, path, epoch);
  }

  /**
   * Opens (or creates) the journal at `path`. `:memory:` is allowed for tests of other modules;
   * anything that must survive a restart needs a file.
   */
  static open(path: string, options: JournalOptions): Journal {
    const window = options.orderEventWindow;
    if (window !== undefined && !(Number.isSafeInteger(window) && window > 0)) {
      throw new PaperbotError(
        'INVALID_CONFIG',
        `orderEventWindow is a positive integer, not ${window}`,
      );
    }
    const database = new Database(path, { timeout: 0 });
    try {
      database.pragma('locking_mode = EXCLUSIVE');
      // A new journal gives pages freed by retention back in small steps (`incremental_vacuum`);
      // the mode can only be chosen before the first table (and the WAL header) exists.
      if ((database.pragma('user_version', { simple: true }) as number) === 0) {
        database.pragma('auto_vacuum = INCREMENTAL');
      }
      if (path !== ':memory:') {
        const mode = database.pragma('journal_mode = WAL', { simple: true });
        if (mode !== 'wal') {
          throw new PaperbotError('JOURNAL_UNAVAILABLE', `${path}: WAL mode refused (${mode})`);
        }
      }
      const synchronous = { full: 'FULL', normal: 'NORMAL' }[options.durability ?? 'full'];
      database.pragma(`synchronous = ${synchronous}`);
      database.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      database.pragma('foreign_keys = ON');
      const epoch = migrate(database, options);
      const journal = new Journal(
        path,
        database,
        options.now,
        epoch,
        options.orderEventWindow ?? DEFAULT_ORDER_EVENT_WINDOW,
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

  get schemaVersion(): number {
    return this.database.pragma('user_version', { simple: true }) as number;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.retention.flushManifest();
    this.database.close();
  }

  /** The journal as a SQLite database file image. */
  serialize(): Buffer {
    return this.database.serialize();
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
  nextSequence(strategyId: string): number {
    const row = this.sql.nextSequence.get(strategyId, strategyId) as
      { last_sequence: number } | undefined;
    return (row?.last_sequence ?? 0) + 1;
  }

  /** Records that `sequence` was stamped, even for an intent that never reaches the executor. */
  noteSequence(strategyId: string, sequence: number): void {
    if (this.sequenceNoted(strategyId, sequence)) return;
    const row = this.sql.noteSequence.get(strategyId, sequence) as { last_sequence: number };
    if (!this.database.inTransaction) this.sequences.set(strategyId, row.last_sequence);
  }

  private sequenceNoted(strategyId: string, sequence: number): boolean {
    const known = this.sequences.get(strategyId);
    return known !== undefined && known >= sequence;
  }

  /** Takes the next sequence of one of the runtime's own purposes (persisted before use). */
  takeInternalSequence(purpose: string): number {
    const row = this.sql.takeInternalSequence.get(purpose) as { last_sequence: number };
    return row.last_sequence;
  }

  // Intents

  /**
   * Journals a stamped intent in state `journaled` and advances its strategy's sequence (the
   * row carries it: `nextSequence` reads the highest). An intent already journaled under the
   * same request id is returned unchanged, never replaced. With `first`, the command's bytes and
   * the step after them go into the same row: one statement, one commit (one sync at `full`)
   * before the first byte is sent.
   */
  recordIntent(
    stamped: StampedIntent,
    first?: FirstCommand,
  ): {
    readonly record: IntentRecord;
    readonly created: boolean;
  } {
    const cached = this.recentIntents.get(stamped.requestId);
    if (cached !== undefined) return { record: cached, created: false };
    const now = this.now();
    const intentJson = JSON.stringify(stamped);
    const market = marketOf(stamped.intent);
    let created: boolean;
    let contextJson: string | null = null;
    if (first === undefined) {
      created =
        this.sql.insertIntent.run(
          stamped.requestId,
          stamped.strategyId,
          stamped.sequence,
          stamped.intent.kind,
          stamped.clientOrderId,
          market,
          intentJson,
          stamped.emittedAt,
          now,
          now,
        ).changes === 1;
    } else {
      const { command, step } = first;
      const simulation = step === 'sending' ? null : step;
      contextJson = JSON.stringify(first.context);
      created =
        this.sql.insertIntentWithCommand.run(
          stamped.requestId,
          stamped.strategyId,
          stamped.sequence,
          stamped.intent.kind,
          stamped.clientOrderId,
          market,
          intentJson,
          stamped.emittedAt,
          simulation === null ? 'sending' : 'simulating',
          simulation?.simulateRequestId ?? null,
          simulation?.attempt ?? 0,
          command.endpoint,
          command.path,
          toBuffer(command.bodyBytes),
          command.bodySha256,
          simulation === null ? 1 : 0,
          contextJson,
          now,
          now,
        ).changes === 1;
    }
    if (!created) return { record: this.requireIntent(stamped.requestId), created: false };
    // The record exactly as its inserted row reads (column defaults included).
    let record = newIntentRecord(stamped, JSON.parse(intentJson) as StampedIntent, now);
    if (first !== undefined) {
      record = withCommand(record, first.command, JSON.parse(contextJson as string), first.step);
    }
    // Inside a caller's transaction the row may yet be rolled back: only committed rows are kept.
    if (this.database.inTransaction) {
      this.knownIds = null;
    } else {
      this.remember(record);
      if (!this.sequenceNoted(stamped.strategyId, stamped.sequence)) {
        this.sequences.set(stamped.strategyId, stamped.sequence);
      }
      if (record.clientOrderId !== null) this.knownIds?.clientOrderIds.add(record.clientOrderId);
    }
    return { record, created: true };
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
    const row = this.sql.intentByOrderId.get(orderId) as IntentRow | undefined;
    return row === undefined ? undefined : intentFromRow(row);
  }

  /** The intent that created the order with this (runtime) client order id. */
  intentByClientOrderId(clientOrderId: string): IntentRecord | undefined {
    const row = this.sql.intentByClientOrderId.get(clientOrderId) as IntentRow | undefined;
    return row === undefined ? undefined : intentFromRow(row);
  }

  /**
   * Intents the venue may still act on: journaled, simulating, sending or unknown. Read back to
   * recover, perhaps from an earlier process's rows: each row is checked against its schema.
   */
  openIntents(): IntentRecord[] {
    return (this.sql.openIntents.all() as unknown[]).map((row) =>
      intentFromRow(IntentRow.parse(row)),
    );
  }

  /** Unknown intents whose automatic resolution attempts are exhausted. */
  countExhaustedUnknown(): number {
    return (this.sql.countExhaustedUnknown.get() as { count: number }).count;
  }

  countIntents(state: IntentState): number {
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
      this.knownIds = {
        orderIds: new Set(this.sql.orderIds.all() as string[]),
        clientOrderIds: new Set(this.sql.clientOrderIds.all() as string[]),
      };
    }
    return this.knownIds;
  }

  /**
   * Whether an order is one of ours: an intent made it, or used its client order id. One index
   * probe each, whatever the history (the reconciler asks per venue order it does not track).
   */
  isKnownOrder(orderId: string, clientOrderId: string | null): boolean {
    if (this.knownIds !== null) {
      return (
        this.knownIds.orderIds.has(orderId) ||
        (clientOrderId !== null && this.knownIds.clientOrderIds.has(clientOrderId))
      );
    }
    if (this.sql.knowsOrderId.get(orderId) !== undefined) return true;
    return clientOrderId !== null && this.sql.knowsClientOrderId.get(clientOrderId) !== undefined;
  }

  /**
   * One retention step (`./retention.ts`): at most `policy.batchRows` rows per table older than
   * the window leave, in one short transaction. An intent whose order `isLiveOrder` names stays.
   */
  pruneStep(policy: RetentionPolicy, isLiveOrder: (orderId: string) => boolean): PruneStep {
    const step = this.retention.step(policy, this.now(), isLiveOrder);
    if (step.prunedRequestIds.length > 0) {
      for (const requestId of step.prunedRequestIds) this.recentIntents.delete(requestId);
      this.knownIds = null;
    }
    return step;
  }

  /**
   * Runs one update of an intent's row (its parameters end with `updated_at` and the request id)
   * and keeps the record as the row now reads: `next` derives it from the cached one. Without
   * a cached record, or inside a caller's transaction, the record is read back when next needed.
   */
  private updateIntent(
    requestId: string,
    statement: Database.Statement,
    values: readonly unknown[],
    next: (current: IntentRecord, updatedAt: number) => IntentRecord,
  ): IntentRecord | undefined {
    const current = this.recentIntents.get(requestId);
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
   * The bytes and the step after them in one statement: the live path commits (and, at `full`,
   * syncs) once before the simulation, or the unsimulated command, goes out.
   */
  recordCommandWithStep(
    requestId: string,
    command: JournaledCommand,
    context: IntentContext,
    step: CommandStep,
  ): void {
    this.writeCommand(requestId, command, context, step);
  }

  private writeCommand(
    requestId: string,
    command: JournaledCommand,
    context: IntentContext,
    then: CommandNextStep,
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
    this.updateIntent(requestId, statement, values, (current, updatedAt) => ({
      ...withCommand(current, command, JSON.parse(contextJson) as IntentContext, then),
      updatedAt,
    }));
  }

  /**
   * Counts a send of the journaled bytes. The first send moves the intent to `sending`; a resend
   * of an unknown intent leaves it `unknown` until the answer is in.
   */
  recordSendAttempt(requestId: string): void {
    this.updateIntent(requestId, this.sql.recordSendAttempt, [], (current, updatedAt) => ({
      ...current,
      state: current.state === 'unknown' ? 'unknown' : 'sending',
      sendAttempts: current.sendAttempts + 1,
      updatedAt,
    }));
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
    );
    if (state !== 'unknown') this.settled();
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
    );
    // The known order ids follow the write while the row's earlier order id is known not to
    // leave the set (it was none, or the same); otherwise they are read again when next asked.
    if (record !== undefined && (previousOrderId === null || previousOrderId === orderId)) {
      if (orderId !== null) this.knownIds?.orderIds.add(orderId);
    } else {
      this.knownIds = null;
    }
    this.settled();
  }

  /** Counts a settled intent; every so many, checkpoints the WAL (`CHECKPOINT_EVERY_SETTLED`). */
  private settled(): void {
    if (this.path === ':memory:' || this.database.inTransaction) return;
    this.settledSinceCheckpoint += 1;
    if (this.settledSinceCheckpoint < CHECKPOINT_EVERY_SETTLED) return;
    this.settledSinceCheckpoint = 0;
    // PASSIVE: copies what it can and returns; nothing else holds the file (the lock is ours).
    this.database.pragma('wal_checkpoint(PASSIVE)');
  }

  /** Marks the intent's fill reported; false when it already was (report once). */
  markFillReported(requestId: string): boolean {
    const current = this.recentIntents.get(requestId);
    if (current !== undefined && current.fillReported) return false;
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
    // One statement needs no transaction of its own.
    if (sequence === null) return insert();
    return this.transaction(() => {
      const inserted = insert();
      this.writeCursor(sequence, eventAt ?? fill.occurred_at);
      return inserted;
    });
  }

  fill(fillId: string): FillRecord | undefined {
    const row = this.sql.fill.get(fillId) as FillRow | undefined;
    return row === undefined ? undefined : fillFromRow(row);
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
    return (this.sql.orderEvents.all() as OrderEventRow[]).map(orderEventFromRow);
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
    const row = this.sql.readFillReadBack.get() as FillReadBackRow | undefined;
    return row === undefined ? null : fillReadBackFromRow(row);
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

  /** One of the runtime's own commands, read back (perhaps from an earlier process's row). */
  getInternalCommand(requestId: string): InternalCommandRecord | undefined {
    const row = this.sql.internalCommand.get(requestId);
    return row === undefined ? undefined : internalCommandFromRow(InternalCommandRow.parse(row));
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

  /** The dead-man state as last written, read back at start (perhaps an earlier process's). */
  readDeadman(): DeadmanRecord | null {
    const row = this.sql.readDeadman.get();
    return row === undefined ? null : deadmanFromRow(DeadmanRow.parse(row));
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
