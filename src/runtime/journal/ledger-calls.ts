/**
 * The calls both journals answer from the same SQLite rows: the runtime's own sequences and
 * commands and the dead-man state (`JournalRuntimeState`). `Journal` keeps those rows in its
 * file; `ReplayJournal` in a SQLite journal in memory, beside the intents, the private sequence
 * and the owed fill read-back it holds itself (a backtest's order events cost no transaction).
 */
import type { JournalRuntimeState } from './journal-runtime-state.ts';
import type { DeadmanRecord, JournaledCommand } from './records.ts';
import type { InternalCommandState } from './schema.ts';

export abstract class LedgerCalls {
  protected abstract readonly runtimeState: JournalRuntimeState;

  /** Takes the next sequence of one of the runtime's own purposes (persisted before use). */
  takeInternalSequence(purpose: string): number {
    return this.runtimeState.takeInternalSequence(purpose);
  }

  /** Journals one of the runtime's own commands in state `sending`, before it is sent. */
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

  /** The dead-man state as last written (perhaps by an earlier process). */
  readDeadman(): DeadmanRecord | null {
    return this.runtimeState.readDeadman();
  }

  writeDeadman(record: DeadmanRecord): void {
    this.runtimeState.writeDeadman(record);
  }
}
