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
 * This class opens the file and hands each call to the part that owns it: `JournalIntents`
 * (sequences, intents, outcomes), `JournalPrivateStream` (fills, order events, the private
 * sequence, the fills' read-back), `JournalRuntimeState` (the runtime's own commands, meta
 * values, the dead-man state), `JournalExits` and `JournalRetention`.
 *
 * A replay does not need any of that crash safety: it uses `ReplayJournal`
 * (`replay-journal.ts`), behind the same `IntentJournal` interface.
 */
import Database from 'better-sqlite3';
import { PaperbotError } from '../../core/errors.ts';
import { JournalExits } from './exits.ts';
import type { IntentJournal } from './intent-journal.ts';
import { JournalIntents, WAL_AUTOCHECKPOINT_PAGES } from './journal-intents.ts';
import { DEFAULT_ORDER_EVENT_WINDOW, JournalPrivateStream } from './journal-private-stream.ts';
import { JournalRuntimeState } from './journal-runtime-state.ts';
import { LedgerCalls } from './ledger-calls.ts';
import type {
  FillReadBackRecord,
  FillRecord,
  IntentRecord,
  InternalCommandRecord,
  OrderEventRecord,
  PrivateCursor,
} from './records.ts';
import { migrate } from './schema.ts';
import { JournalRetention, type PruneStep, type RetentionPolicy } from './retention.ts';
import { prepareStatements, type Statements } from './statements.ts';

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

export class Journal extends LedgerCalls implements IntentJournal {
  readonly path: string;
  readonly epoch: string;
  private readonly database: Database.Database;
  private readonly now: () => number;
  private closed = false;
  /** Shared by the parts, which look each statement up when they run it. */
  private readonly sql: Statements;
  /**
   * One transaction wrapper for every call: better-sqlite3 builds several functions per
   * `transaction()`, which cost as much as the writes of a small transaction.
   */
  private readonly runInTransaction: Database.Transaction<(work: () => unknown) => unknown>;
  private readonly intents: JournalIntents;
  /** Fills, order events, the private sequence and the read-back (`ReplayJournal`'s too). */
  readonly privateStream: JournalPrivateStream;
  /** The runtime's own sequences, commands, meta values, dead-man state (`ReplayJournal`'s too). */
  readonly runtimeState: JournalRuntimeState;
  /** The emulated exits' table (`./exits.ts`). */
  readonly exits: JournalExits;
  /** Retention and maintenance (`./retention.ts`): old settled rows leave, space comes back. */
  readonly retention: JournalRetention;

  private constructor(
    path: string,
    database: Database.Database,
    now: () => number,
    epoch: string,
    orderEventWindow: number,
  ) {
    super();
    this.path = path;
    this.database = database;
    this.now = now;
    this.epoch = epoch;
    this.sql = prepareStatements(database);
    this.runInTransaction = database.transaction((work: () => unknown) => work());
    const store = {
      path,
      database,
      sql: this.sql,
      now,
      transaction: <T>(work: () => T): T => this.transaction(work),
    };
    this.intents = new JournalIntents(store);
    this.privateStream = new JournalPrivateStream(store, orderEventWindow);
    this.runtimeState = new JournalRuntimeState(store);
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
      journal.runtimeState.abandonOpenInternalCommands();
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

  /**
   * One retention step (`./retention.ts`): at most `policy.batchRows` rows per table older than
   * the window leave, in one short transaction. An intent whose order `isLiveOrder` names stays.
   */
  pruneStep(policy: RetentionPolicy, isLiveOrder: (orderId: string) => boolean): PruneStep {
    const step = this.retention.step(policy, this.now(), isLiveOrder);
    this.intents.forget(step.prunedRequestIds);
    return step;
  }

  // Sequences and intents (`JournalIntents`)

  nextSequence(strategyId: string): number {
    return this.intents.nextSequence(strategyId);
  }

  noteSequence(...call: Parameters<JournalIntents['noteSequence']>): void {
    this.intents.noteSequence(...call);
  }

  recordIntent(...call: Parameters<JournalIntents['recordIntent']>): {
    readonly record: IntentRecord;
    readonly created: boolean;
  } {
    return this.intents.recordIntent(...call);
  }

  getIntent(...call: Parameters<JournalIntents['getIntent']>): IntentRecord | undefined {
    return this.intents.getIntent(...call);
  }

  requireIntent(...call: Parameters<JournalIntents['requireIntent']>): IntentRecord {
    return this.intents.requireIntent(...call);
  }

  intentByOrderId(
    ...call: Parameters<JournalIntents['intentByOrderId']>
  ): IntentRecord | undefined {
    return this.intents.intentByOrderId(...call);
  }

  intentByClientOrderId(
    ...call: Parameters<JournalIntents['intentByClientOrderId']>
  ): IntentRecord | undefined {
    return this.intents.intentByClientOrderId(...call);
  }

  openIntents(...call: Parameters<JournalIntents['openIntents']>): IntentRecord[] {
    return this.intents.openIntents(...call);
  }

  countExhaustedUnknown(...call: Parameters<JournalIntents['countExhaustedUnknown']>): number {
    return this.intents.countExhaustedUnknown(...call);
  }

  countIntents(...call: Parameters<JournalIntents['countIntents']>): number {
    return this.intents.countIntents(...call);
  }

  knownOrderIds(...call: Parameters<JournalIntents['knownOrderIds']>): {
    readonly orderIds: ReadonlySet<string>;
    readonly clientOrderIds: ReadonlySet<string>;
  } {
    return this.intents.knownOrderIds(...call);
  }

  isKnownOrder(...call: Parameters<JournalIntents['isKnownOrder']>): boolean {
    return this.intents.isKnownOrder(...call);
  }

  recordSimulation(...call: Parameters<JournalIntents['recordSimulation']>): void {
    this.intents.recordSimulation(...call);
  }

  recordCommand(...call: Parameters<JournalIntents['recordCommand']>): void {
    this.intents.recordCommand(...call);
  }

  recordCommandWithStep(...call: Parameters<JournalIntents['recordCommandWithStep']>): void {
    this.intents.recordCommandWithStep(...call);
  }

  recordSendAttempt(...call: Parameters<JournalIntents['recordSendAttempt']>): void {
    this.intents.recordSendAttempt(...call);
  }

  recordAccepted(...call: Parameters<JournalIntents['recordAccepted']>): void {
    this.intents.recordAccepted(...call);
  }

  recordRejected(...call: Parameters<JournalIntents['recordRejected']>): void {
    this.intents.recordRejected(...call);
  }

  recordDenied(...call: Parameters<JournalIntents['recordDenied']>): void {
    this.intents.recordDenied(...call);
  }

  recordUnknown(...call: Parameters<JournalIntents['recordUnknown']>): void {
    this.intents.recordUnknown(...call);
  }

  recordResolutionAttempt(...call: Parameters<JournalIntents['recordResolutionAttempt']>): void {
    this.intents.recordResolutionAttempt(...call);
  }

  recordResolved(...call: Parameters<JournalIntents['recordResolved']>): void {
    this.intents.recordResolved(...call);
  }

  markFillReported(...call: Parameters<JournalIntents['markFillReported']>): boolean {
    return this.intents.markFillReported(...call);
  }

  // Fills, order events, the private sequence, the read-back (`JournalPrivateStream`)

  markFillSeen(...call: Parameters<JournalPrivateStream['markFillSeen']>): boolean {
    return this.privateStream.markFillSeen(...call);
  }

  hasSeenFill(...call: Parameters<JournalPrivateStream['hasSeenFill']>): boolean {
    return this.privateStream.hasSeenFill(...call);
  }

  recordFill(...call: Parameters<JournalPrivateStream['recordFill']>): boolean {
    return this.privateStream.recordFill(...call);
  }

  fill(...call: Parameters<JournalPrivateStream['fill']>): FillRecord | undefined {
    return this.privateStream.fill(...call);
  }

  fillCount(...call: Parameters<JournalPrivateStream['fillCount']>): number {
    return this.privateStream.fillCount(...call);
  }

  recordOrderEvent(...call: Parameters<JournalPrivateStream['recordOrderEvent']>): boolean {
    return this.privateStream.recordOrderEvent(...call);
  }

  orderEvents(...call: Parameters<JournalPrivateStream['orderEvents']>): OrderEventRecord[] {
    return this.privateStream.orderEvents(...call);
  }

  advancePrivateSequence(
    ...call: Parameters<JournalPrivateStream['advancePrivateSequence']>
  ): void {
    this.privateStream.advancePrivateSequence(...call);
  }

  /** The highest private sequence applied; null when none was. */
  privateCursor(): PrivateCursor | null {
    return this.privateStream.privateCursor();
  }

  /** The venue's counter went backwards (a reset account): the highest applied starts over. */
  restartPrivateSequence(sequence: number): void {
    this.privateStream.restartPrivateSequence(sequence);
  }

  /** Notes that fills may be missing: a read-back of GET /v1/fills is owed. */
  requestFillReadBack(reason: string): FillReadBackRecord {
    return this.privateStream.requestFillReadBack(reason);
  }

  pendingFillReadBack(): FillReadBackRecord | null {
    return this.privateStream.pendingFillReadBack();
  }

  /** The read-back of `generation` is done; false when a newer request is still owed. */
  finishFillReadBack(generation: number): boolean {
    return this.privateStream.finishFillReadBack(generation);
  }

  // The runtime's own commands, meta values and the dead-man state (`JournalRuntimeState`)

  getInternalCommand(
    ...call: Parameters<JournalRuntimeState['getInternalCommand']>
  ): InternalCommandRecord | undefined {
    return this.runtimeState.getInternalCommand(...call);
  }

  internalCommands(
    ...call: Parameters<JournalRuntimeState['internalCommands']>
  ): InternalCommandRecord[] {
    return this.runtimeState.internalCommands(...call);
  }

  abandonOpenInternalCommands(
    ...call: Parameters<JournalRuntimeState['abandonOpenInternalCommands']>
  ): number {
    return this.runtimeState.abandonOpenInternalCommands(...call);
  }

  readMeta(...call: Parameters<JournalRuntimeState['readMeta']>): string | null {
    return this.runtimeState.readMeta(...call);
  }

  writeMeta(...call: Parameters<JournalRuntimeState['writeMeta']>): void {
    this.runtimeState.writeMeta(...call);
  }
}
