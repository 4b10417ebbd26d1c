/**
 * The runtime's own rows in the SQLite journal (`journal.ts`): its commands (heartbeats,
 * reconciliation), the values it keeps across restarts (`meta`) and the dead-man state.
 */
import { PaperbotError } from '../../core/errors.ts';
import type { DeadmanRecord, InternalCommandRecord, JournaledCommand } from './records.ts';
import {
  DeadmanRow,
  deadmanFromRow,
  InternalCommandRow,
  internalCommandFromRow,
  toBuffer,
} from './rows.ts';
import type { InternalCommandState } from './schema.ts';
import type { JournalStore, Statements } from './statements.ts';

/** Meta keys the journal writes itself; `writeMeta` never replaces them. */
const RESERVED_META_KEYS: ReadonlySet<string> = new Set(['epoch', 'created_at']);

export class JournalRuntimeState {
  private readonly sql: Statements;
  private readonly now: () => number;

  /** @internal */
  constructor(store: JournalStore) {
    this.sql = store.sql;
    this.now = store.now;
  }

  // The runtime's own sequences and commands
  /** Takes the next sequence of one of the runtime's own purposes (persisted before use). */
  takeInternalSequence(purpose: string): number {
    const row = this.sql.takeInternalSequence.get(purpose) as { last_sequence: number };
    return row.last_sequence;
  }

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
