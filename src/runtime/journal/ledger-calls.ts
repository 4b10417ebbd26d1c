/**
 * The calls both journals answer from the same SQLite rows: the private sequence and the fills'
 * read-back (`JournalPrivateStream`), the runtime's own sequences and commands and the dead-man
 * state (`JournalRuntimeState`). `Journal` keeps those rows in its file; `ReplayJournal` in a
 * SQLite journal in memory, beside the intents it holds itself.
 */
import type { JournalPrivateStream } from './journal-private-stream.ts';
import type { JournalRuntimeState } from './journal-runtime-state.ts';
import type {
  DeadmanRecord,
  FillReadBackRecord,
  JournaledCommand,
  PrivateCursor,
} from './records.ts';
import type { InternalCommandState } from './schema.ts';

export abstract class LedgerCalls {
  protected abstract readonly privateStream: JournalPrivateStream;
  protected abstract readonly runtimeState: JournalRuntimeState;

  /** Takes the next sequence of one of the runtime's own purposes (persisted before use). */
  takeInternalSequence(purpose: string): number {
    return this.runtimeState.takeInternalSequence(purpose);
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
