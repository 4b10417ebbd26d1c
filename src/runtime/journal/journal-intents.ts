/**
 * The intents of the SQLite journal (`journal.ts`): the strategies' sequences, each intent's
 * row from its write-ahead to its outcome (the command's bytes, simulations, sends, the
 * settled state), and the parsed records and order ids kept between reads of them.
 */
import type Database from 'better-sqlite3';
import { PaperbotError } from '../../core/errors.ts';
import type { StampedIntent } from '../intents.ts';
import type { CommandStep, FirstCommand } from './intent-journal.ts';
import {
  type IntentContext,
  type IntentRecord,
  type JournaledCommand,
  marketOf,
  newIntentRecord,
  type OutcomeRecord,
} from './records.ts';
import { IntentRow, intentFromRow, toBuffer } from './rows.ts';
import { type IntentState, OPEN_INTENT_STATES } from './schema.ts';
import type { JournalStore, Statements } from './statements.ts';

/** What `writeCommand` records in the same statement as the bytes: nothing, or the next step. */
type CommandNextStep = CommandStep | null;

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
export const WAL_AUTOCHECKPOINT_PAGES = 4_000;

/** How many intent records the journal keeps parsed between reads. */
const RECENT_INTENTS = 256;

export class JournalIntents {
  private readonly path: string;
  private readonly database: Database.Database;
  private readonly sql: Statements;
  private readonly now: () => number;
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

  /** @internal */
  constructor(store: JournalStore) {
    this.path = store.path;
    this.database = store.database;
    this.sql = store.sql;
    this.now = store.now;
  }

  /** Retention removed these intents' rows: their records leave, the order ids are read again. */
  forget(requestIds: readonly string[]): void {
    if (requestIds.length === 0) return;
    for (const requestId of requestIds) this.recentIntents.delete(requestId);
    this.knownIds = null;
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
    // The columns both inserts begin with.
    const columns = [
      stamped.requestId,
      stamped.strategyId,
      stamped.sequence,
      stamped.intent.kind,
      stamped.clientOrderId,
      marketOf(stamped.intent),
      intentJson,
      stamped.emittedAt,
    ];
    let created: boolean;
    let contextJson: string | null = null;
    if (first === undefined) {
      created = this.sql.insertIntent.run(...columns, now, now).changes === 1;
    } else {
      const { command, step } = first;
      const simulation = step === 'sending' ? null : step;
      contextJson = JSON.stringify(first.context);
      created =
        this.sql.insertIntentWithCommand.run(
          ...columns,
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
}
