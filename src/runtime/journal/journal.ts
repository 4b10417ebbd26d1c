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
import type { Fill, OrderStatusEvent } from '../../protocol/index.ts';
import type { StampedIntent } from '../intents.ts';
import { JournalExits } from './exits.ts';
import type { CommandStep, FirstCommand, IntentJournal } from './intent-journal.ts';
import { JournalIntents, WAL_AUTOCHECKPOINT_PAGES } from './journal-intents.ts';
import { DEFAULT_ORDER_EVENT_WINDOW, JournalPrivateStream } from './journal-private-stream.ts';
import { JournalRuntimeState } from './journal-runtime-state.ts';
import type {
  DeadmanRecord,
  FillReadBackRecord,
  FillRecord,
  IntentContext,
  IntentRecord,
  InternalCommandRecord,
  JournaledCommand,
  OrderEventRecord,
  OutcomeRecord,
  PrivateCursor,
} from './records.ts';
import { type IntentState, type InternalCommandState, migrate } from './schema.ts';
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

export class Journal implements IntentJournal {
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
  private readonly privateStream: JournalPrivateStream;
  private readonly runtimeState: JournalRuntimeState;
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

  noteSequence(strategyId: string, sequence: number): void {
    this.intents.noteSequence(strategyId, sequence);
  }

  takeInternalSequence(purpose: string): number {
    return this.intents.takeInternalSequence(purpose);
  }

  recordIntent(
    stamped: StampedIntent,
    first?: FirstCommand,
  ): { readonly record: IntentRecord; readonly created: boolean } {
    return this.intents.recordIntent(stamped, first);
  }

  getIntent(requestId: string): IntentRecord | undefined {
    return this.intents.getIntent(requestId);
  }

  requireIntent(requestId: string): IntentRecord {
    return this.intents.requireIntent(requestId);
  }

  intentByOrderId(orderId: string): IntentRecord | undefined {
    return this.intents.intentByOrderId(orderId);
  }

  intentByClientOrderId(clientOrderId: string): IntentRecord | undefined {
    return this.intents.intentByClientOrderId(clientOrderId);
  }

  openIntents(): IntentRecord[] {
    return this.intents.openIntents();
  }

  countExhaustedUnknown(): number {
    return this.intents.countExhaustedUnknown();
  }

  countIntents(state: IntentState): number {
    return this.intents.countIntents(state);
  }

  knownOrderIds(): {
    readonly orderIds: ReadonlySet<string>;
    readonly clientOrderIds: ReadonlySet<string>;
  } {
    return this.intents.knownOrderIds();
  }

  isKnownOrder(orderId: string, clientOrderId: string | null): boolean {
    return this.intents.isKnownOrder(orderId, clientOrderId);
  }

  recordSimulation(requestId: string, simulateRequestId: string, attempt: number): void {
    this.intents.recordSimulation(requestId, simulateRequestId, attempt);
  }

  recordCommand(requestId: string, command: JournaledCommand, context: IntentContext = {}): void {
    this.intents.recordCommand(requestId, command, context);
  }

  recordCommandWithStep(
    requestId: string,
    command: JournaledCommand,
    context: IntentContext,
    step: CommandStep,
  ): void {
    this.intents.recordCommandWithStep(requestId, command, context, step);
  }

  recordSendAttempt(requestId: string): void {
    this.intents.recordSendAttempt(requestId);
  }

  recordAccepted(
    requestId: string,
    orderId: string | null,
    outcome: OutcomeRecord,
    replacesOrderId: string | null = null,
  ): void {
    this.intents.recordAccepted(requestId, orderId, outcome, replacesOrderId);
  }

  recordRejected(requestId: string, outcome: OutcomeRecord): void {
    this.intents.recordRejected(requestId, outcome);
  }

  recordDenied(requestId: string, outcome: OutcomeRecord): void {
    this.intents.recordDenied(requestId, outcome);
  }

  recordUnknown(requestId: string, outcome: OutcomeRecord, nextResolutionAt: number | null): void {
    this.intents.recordUnknown(requestId, outcome, nextResolutionAt);
  }

  recordResolutionAttempt(requestId: string, nextResolutionAt: number | null): void {
    this.intents.recordResolutionAttempt(requestId, nextResolutionAt);
  }

  recordResolved(
    requestId: string,
    resolution: 'accepted' | 'rejected',
    orderId: string | null,
    outcome: OutcomeRecord,
    replacesOrderId: string | null = null,
  ): void {
    this.intents.recordResolved(requestId, resolution, orderId, outcome, replacesOrderId);
  }

  markFillReported(requestId: string): boolean {
    return this.intents.markFillReported(requestId);
  }

  // Fills, order events, the private sequence, the read-back (`JournalPrivateStream`)

  markFillSeen(fillId: string, orderId: string | null): boolean {
    return this.privateStream.markFillSeen(fillId, orderId);
  }

  hasSeenFill(fillId: string): boolean {
    return this.privateStream.hasSeenFill(fillId);
  }

  recordFill(
    fill: Fill,
    delivery: { readonly sequence: number | null; readonly source: 'stream' | 'rest' },
    eventAt: string | null = null,
  ): boolean {
    return this.privateStream.recordFill(fill, delivery, eventAt);
  }

  fill(fillId: string): FillRecord | undefined {
    return this.privateStream.fill(fillId);
  }

  fillCount(): number {
    return this.privateStream.fillCount();
  }

  recordOrderEvent(event: OrderStatusEvent): boolean {
    return this.privateStream.recordOrderEvent(event);
  }

  orderEvents(): OrderEventRecord[] {
    return this.privateStream.orderEvents();
  }

  privateCursor(): PrivateCursor | null {
    return this.privateStream.privateCursor();
  }

  advancePrivateSequence(sequence: number, eventAt: string | null): void {
    this.privateStream.advancePrivateSequence(sequence, eventAt);
  }

  restartPrivateSequence(sequence: number): void {
    this.privateStream.restartPrivateSequence(sequence);
  }

  requestFillReadBack(reason: string): FillReadBackRecord {
    return this.privateStream.requestFillReadBack(reason);
  }

  pendingFillReadBack(): FillReadBackRecord | null {
    return this.privateStream.pendingFillReadBack();
  }

  finishFillReadBack(generation: number): boolean {
    return this.privateStream.finishFillReadBack(generation);
  }

  // The runtime's own commands, meta values and the dead-man state (`JournalRuntimeState`)

  recordInternalCommand(purpose: string, requestId: string, command: JournaledCommand): void {
    this.runtimeState.recordInternalCommand(purpose, requestId, command);
  }

  finishInternalCommand(
    requestId: string,
    state: Exclude<InternalCommandState, 'sending'>,
    outcome: Readonly<Record<string, unknown>>,
  ): void {
    this.runtimeState.finishInternalCommand(requestId, state, outcome);
  }

  getInternalCommand(requestId: string): InternalCommandRecord | undefined {
    return this.runtimeState.getInternalCommand(requestId);
  }

  internalCommands(purpose?: string): InternalCommandRecord[] {
    return this.runtimeState.internalCommands(purpose);
  }

  abandonOpenInternalCommands(): number {
    return this.runtimeState.abandonOpenInternalCommands();
  }

  readMeta(key: string): string | null {
    return this.runtimeState.readMeta(key);
  }

  writeMeta(key: string, value: string): void {
    this.runtimeState.writeMeta(key, value);
  }

  readDeadman(): DeadmanRecord | null {
    return this.runtimeState.readDeadman();
  }

  writeDeadman(record: DeadmanRecord): void {
    this.runtimeState.writeDeadman(record);
  }
}
