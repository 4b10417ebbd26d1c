/**
 * The private stream in the SQLite journal (`journal.ts`): the venue's fills keyed by
 * `fill_id`, the order events ledger, the highest private sequence applied (written with the
 * fill or event it applies, in one transaction) and the read-back of fills owed after a gap.
 */
import { PaperbotError } from '../../core/errors.ts';
import type { Fill, OrderStatusEvent } from '../../protocol/index.ts';
import type { FillReadBackRecord, FillRecord, OrderEventRecord, PrivateCursor } from './records.ts';
import {
  type FillReadBackRow,
  fillFromRow,
  fillReadBackFromRow,
  type FillRow,
  orderEventFromRow,
  type OrderEventRow,
} from './rows.ts';
import type { JournalStore, Statements } from './statements.ts';

/** Private sequences whose order events the ledger keeps (see `JournalOptions`). */
export const DEFAULT_ORDER_EVENT_WINDOW = 100_000;
/** The ledger is trimmed once per this many events recorded. */
const ORDER_EVENT_TRIM_EVERY = 1_000;

export class JournalPrivateStream {
  private readonly sql: Statements;
  private readonly now: () => number;
  private readonly transaction: JournalStore['transaction'];
  /** Order events this process recorded (the ledger is trimmed every so many). */
  private orderEventsRecorded = 0;

  /** @internal */
  constructor(
    store: JournalStore,
    private readonly orderEventWindow: number,
  ) {
    this.sql = store.sql;
    this.now = store.now;
    this.transaction = store.transaction;
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
}
