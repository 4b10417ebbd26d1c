/**
 * The journal as the runtime uses it (kernel, executor, tracker, reconciler, dead-man): one
 * interface, two journals behind it. `Journal` (`journal.ts`) is the live one, a SQLite file
 * that survives a crash; `ReplayJournal` (`replay-journal.ts`) is a replay's, which holds its
 * intents in memory. Both answer every call alike (`test/runtime/journal/replay-journal.property.test.ts`),
 * so runtime code never learns which one it has.
 */
import type { Fill, OrderStatusEvent } from '../../protocol/index.ts';
import type { StampedIntent } from '../intents.ts';
import type { JournalExits } from './exits.ts';
import type {
  DeadmanRecord,
  FillReadBackRecord,
  IntentContext,
  IntentRecord,
  JournaledCommand,
  OutcomeRecord,
  PrivateCursor,
} from './records.ts';
import type { IntentState, InternalCommandState } from './schema.ts';

/** The step journaled in the same write as a command's bytes: its first simulation or send. */
export type CommandStep =
  { readonly simulateRequestId: string; readonly attempt: number } | 'sending';

/**
 * A command journaled in the same write as its intent, with the step after it: the executor's
 * placement that runs at once (`Executor.submit`) is one commit before its simulation goes out.
 */
export interface FirstCommand {
  readonly command: JournaledCommand;
  readonly context: IntentContext;
  readonly step: CommandStep;
}

export interface IntentJournal {
  /** Part of every id the runtime makes; fixed when the journal is created. */
  readonly epoch: string;
  readonly isOpen: boolean;
  /** The emulated exits' table (`./exits.ts`). */
  readonly exits: JournalExits;
  close(): void;

  // Sequences

  /** The sequence a strategy's next intent should get (1 for a strategy never seen). */
  nextSequence(strategyId: string): number;
  /** Records that `sequence` was stamped, even for an intent that never reaches the executor. */
  noteSequence(strategyId: string, sequence: number): void;
  /** Takes the next sequence of one of the runtime's own purposes (persisted before use). */
  takeInternalSequence(purpose: string): number;

  // Intents

  /**
   * Journals a stamped intent in state `journaled` and advances its strategy's sequence. An
   * intent already journaled under the same request id is returned unchanged, never replaced.
   * With `first`, the intent's command and its next step are journaled in the same write (as
   * `recordCommandWithStep` would, after it).
   */
  recordIntent(
    stamped: StampedIntent,
    first?: FirstCommand,
  ): {
    readonly record: IntentRecord;
    readonly created: boolean;
  };
  getIntent(requestId: string): IntentRecord | undefined;
  /** `getIntent`, refused (`JOURNAL_INTENT_MISSING`) when there is none. */
  requireIntent(requestId: string): IntentRecord;
  /** The latest intent (placement, amendment, close) that made the venue order with this id. */
  intentByOrderId(orderId: string): IntentRecord | undefined;
  /** The latest intent (placement, amendment, close) that used this client order id. */
  intentByClientOrderId(clientOrderId: string): IntentRecord | undefined;
  /** Intents the venue may still act on (journaled, simulating, sending, unknown), oldest first. */
  openIntents(): IntentRecord[];
  /** Unknown intents whose automatic resolution attempts are exhausted. */
  countExhaustedUnknown(): number;
  countIntents(state: IntentState): number;
  /**
   * The order ids and client order ids in use by intents. The sets are the journal's own and
   * follow its later writes: read them at once, do not keep or change them.
   */
  knownOrderIds(): {
    readonly orderIds: ReadonlySet<string>;
    readonly clientOrderIds: ReadonlySet<string>;
  };

  /** Whether an intent made this order or used this client order id (an indexed lookup). */
  isKnownOrder(orderId: string, clientOrderId: string | null): boolean;

  /** Records a simulation attempt (its own request id) before it is sent. */
  recordSimulation(requestId: string, simulateRequestId: string, attempt: number): void;
  /**
   * Keeps the command's exact bytes (and what they were built from) before anything is sent.
   * Refuses to replace bytes already journaled (`JOURNAL_COMMAND_EXISTS`).
   */
  recordCommand(requestId: string, command: JournaledCommand, context?: IntentContext): void;
  /**
   * `recordCommand` and the step after it (the first simulation, or the first send when nothing
   * is simulated) as one write: one commit, and one sync at durability `full`.
   */
  recordCommandWithStep(
    requestId: string,
    command: JournaledCommand,
    context: IntentContext,
    step: CommandStep,
  ): void;
  /** Counts a send: the first moves the intent to `sending`; an unknown one stays `unknown`. */
  recordSendAttempt(requestId: string): void;
  recordAccepted(
    requestId: string,
    orderId: string | null,
    outcome: OutcomeRecord,
    replacesOrderId?: string | null,
  ): void;
  recordRejected(requestId: string, outcome: OutcomeRecord): void;
  recordDenied(requestId: string, outcome: OutcomeRecord): void;
  /** The outcome is unknown; `nextResolutionAt` null means automatic attempts are exhausted. */
  recordUnknown(requestId: string, outcome: OutcomeRecord, nextResolutionAt: number | null): void;
  /** One more resolution attempt failed to settle the intent. */
  recordResolutionAttempt(requestId: string, nextResolutionAt: number | null): void;
  /** An unknown intent is settled. */
  recordResolved(
    requestId: string,
    resolution: 'accepted' | 'rejected',
    orderId: string | null,
    outcome: OutcomeRecord,
    replacesOrderId?: string | null,
  ): void;
  /** Marks the intent's fill reported; false when it already was (report once). */
  markFillReported(requestId: string): boolean;

  // Fills and order events, applied once by sequence and by `fill_id`

  /** Records a venue fill and its sequence as the highest applied; true the first time. */
  recordFill(
    fill: Fill,
    delivery: { readonly sequence: number | null; readonly source: 'stream' | 'rest' },
    eventAt?: string | null,
  ): boolean;
  /** How many fills the journal holds. */
  fillCount(): number;
  /** Records an order state event as applied; false when its sequence was applied before. */
  recordOrderEvent(event: OrderStatusEvent): boolean;
  /** The highest private sequence applied; null when none was. */
  privateCursor(): PrivateCursor | null;
  /** The venue's counter went backwards (a reset account): the highest applied starts over. */
  restartPrivateSequence(sequence: number): void;
  /** Notes that fills may be missing: a read-back of GET /v1/fills is owed. */
  requestFillReadBack(reason: string): FillReadBackRecord;
  pendingFillReadBack(): FillReadBackRecord | null;
  /** The read-back of `generation` is done; false when a newer request is still owed. */
  finishFillReadBack(generation: number): boolean;

  // The runtime's own commands, values kept across restarts, the dead-man state

  /** Journals one of the runtime's own commands in state `sending`, before it is sent. */
  recordInternalCommand(purpose: string, requestId: string, command: JournaledCommand): void;
  finishInternalCommand(
    requestId: string,
    state: Exclude<InternalCommandState, 'sending'>,
    outcome: Readonly<Record<string, unknown>>,
  ): void;
  /** A value the runtime stored under `key`; null when none. */
  readMeta(key: string): string | null;
  /** Stores `value` under `key`. The journal's own keys (`epoch`, `created_at`) are refused. */
  writeMeta(key: string, value: string): void;
  readDeadman(): DeadmanRecord | null;
  writeDeadman(record: DeadmanRecord): void;
}
