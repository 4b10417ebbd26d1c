/**
 * How an intent ends (design rule 4): the venue's answer to a command taken as accepted,
 * rejected or unknown; each end journaled and delivered to the strategies on `outcomes$`, an
 * unknown one handed to its resolution timer; an order's fill reported once. Also the intents
 * this process is working on (`active`) and the counts of unknown ones.
 */
import { BehaviorSubject, type Observable, Subject } from 'rxjs';
import { parseDecimal, toWire, ZERO } from '../../core/decimal.ts';
import {
  type CancelAllResponse,
  isFailedOrderCommand,
  type Order,
  TERMINAL_ORDER_STATUSES,
} from '../../protocol/index.ts';
import type { Denial, IntentOutcome } from '../intents.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { IntentRecord, OutcomeRecord } from '../journal/records.ts';
import type { CommandEndpoint, PreparedCommand } from '../venue.ts';
import { classifyFailure, errorCode } from './classify.ts';
import type { Logger } from '../../core/logger.ts';
import type { ResolutionTimers } from './resolution-timers.ts';
import type { OrderTracker, TrackedOrder } from './tracker.ts';
import type { VenueCalls } from './venue-calls.ts';

/** An intent outcome as the executor emits it; `note` says what the executor adjusted. */
export type ExecutionOutcome = IntentOutcome & { readonly note?: string };

/** How a command ended, before it is journaled and emitted. */
export type Finish =
  | {
      readonly status: 'accepted';
      readonly orderId: string | null;
      readonly note?: string;
    }
  | {
      readonly status: 'rejected';
      readonly code: string;
      readonly message: string;
      readonly issues?: readonly unknown[];
      readonly note?: string;
    }
  | {
      readonly status: 'unknown';
      readonly code: string;
      readonly reason: string;
    };

const ORDER_CREATING_ENDPOINTS: ReadonlySet<CommandEndpoint> = new Set([
  'placeOrder',
  'amendOrder',
  'closePosition',
]);

/** Whether the intent's journaled command makes a new venue order. */
export function createsOrder(record: IntentRecord): boolean {
  return record.command !== null && ORDER_CREATING_ENDPOINTS.has(record.command.endpoint);
}

/** An accepted end, its note only when there is one. */
function acceptedFinish(orderId: string | null, note: string | undefined): Finish {
  return note === undefined
    ? { status: 'accepted', orderId }
    : { status: 'accepted', orderId, note };
}

/** Notes joined with `; `, undefined when there is none. */
function joinedNote(first: string | undefined, second: string | undefined): { note?: string } {
  const notes = [first, second].filter((text) => text !== undefined).join('; ');
  return notes ? { note: notes } : {};
}

export function denial(rule: string, limit: string, observed: string, message: string): Denial {
  return Object.freeze({ rule, limit, observed, message });
}

export function isActive(order: Order): boolean {
  return !TERMINAL_ORDER_STATUSES.has(order.status);
}

export class IntentOutcomes {
  readonly outcomes$: Observable<ExecutionOutcome>;
  readonly unresolvedCount$: Observable<number>;
  readonly unknownCount$: Observable<number>;
  /** Request ids this process is working on (queued, running, or awaiting resolution). */
  readonly active = new Set<string>();

  private readonly outcomeSubject = new Subject<ExecutionOutcome>();
  private readonly unresolvedSubject: BehaviorSubject<number>;
  private readonly unknownSubject: BehaviorSubject<number>;

  constructor(
    private readonly journal: IntentJournal,
    private readonly tracker: OrderTracker,
    private readonly calls: VenueCalls,
    private readonly timers: ResolutionTimers,
    private readonly logger: Logger,
  ) {
    this.outcomes$ = this.outcomeSubject.asObservable();
    this.unresolvedSubject = new BehaviorSubject(this.journal.countExhaustedUnknown());
    this.unknownSubject = new BehaviorSubject(this.journal.countIntents('unknown'));
    this.unresolvedCount$ = this.unresolvedSubject.asObservable();
    this.unknownCount$ = this.unknownSubject.asObservable();
  }

  // The venue's answer

  /** How a command the venue did not accept ended: rejected, or unknown. */
  failed(requestId: string, prepared: PreparedCommand, error: unknown): Finish {
    const failure = classifyFailure(error);
    if (failure.code === 'IDEMPOTENCY_CONFLICT') {
      this.logger.error(
        'IDEMPOTENCY_CONFLICT: the venue holds other bytes under this request id; this is a bug. The intent stays unknown and is never given a new id',
        {
          requestId,
          endpoint: prepared.endpoint,
          bodySha256: prepared.bodySha256,
        },
      );
    }
    if (failure.kind === 'rejected') {
      return {
        status: 'rejected',
        code: failure.code,
        message: failure.message,
        ...(failure.issues === undefined ? {} : { issues: failure.issues }),
      };
    }
    return {
      status: 'unknown',
      code: failure.code,
      reason: `${failure.code}: ${failure.message}`,
    };
  }

  /** Applies a success response to the tracker and says which order the intent made. */
  accepted(
    record: IntentRecord,
    endpoint: Exclude<CommandEndpoint, 'amendOrder'>,
    response: unknown,
    note: string | undefined,
  ): Finish {
    switch (endpoint) {
      case 'placeOrder':
      case 'closePosition': {
        const order = response as Order;
        this.linkAndApply(record, order);
        return acceptedFinish(order.order_id, note);
      }
      case 'cancelOrder': {
        const order = response as Order;
        this.tracker.applyOrder(order, 'response');
        // An amendment that became a cancel (nothing left to replace) made no order.
        return acceptedFinish(record.kind === 'amend' ? null : order.order_id, note);
      }
      case 'cancelAllOrders': {
        const results = (response as CancelAllResponse).results;
        const failed: string[] = [];
        for (const result of results) {
          if (isFailedOrderCommand(result)) failed.push(result.order_id ?? result.error.code);
          else this.tracker.applyOrder(result, 'response');
        }
        const failures =
          failed.length === 0
            ? undefined
            : `${failed.length} orders were not cancelled: ${failed.join(', ')}`;
        return { status: 'accepted', orderId: null, ...joinedNote(note, failures) };
      }
      default:
        return acceptedFinish(null, note);
    }
  }

  /** An amendment's answer: the replacement applied, then the replaced order's last fill checked. */
  async acceptedAmend(
    record: IntentRecord,
    order: Order,
    note: string | undefined,
  ): Promise<Finish> {
    this.linkAndApply(record, order);
    const raced = await this.checkAmendRace(record);
    return { status: 'accepted', orderId: order.order_id, ...joinedNote(note, raced) };
  }

  /** Links the order to the intent's client order id (when it has one) and applies it. */
  linkAndApply(record: IntentRecord, order: Order): void {
    if (record.clientOrderId !== null) {
      this.tracker.linkOrder(order.order_id, {
        clientOrderId: record.clientOrderId,
        requestId: record.requestId,
      });
    }
    this.tracker.applyOrder(order, 'response');
  }

  /** After a replacement: did the old order fill more between the check and its cancellation? */
  private async checkAmendRace(record: IntentRecord): Promise<string | undefined> {
    const targetOrderId = record.context.targetOrderId;
    const checked = record.context.checkedFilledQuantity;
    if (targetOrderId === undefined || checked === undefined) return undefined;
    try {
      const old = await this.calls.call(() => this.calls.venue.getOrder(targetOrderId));
      this.tracker.applyOrder(old, 'read');
      const extra = parseDecimal(old.filled_quantity).minus(parseDecimal(checked));
      if (extra.lte(ZERO)) return undefined;
      this.logger.warn('the replaced order filled after the check; the replacement is oversized', {
        requestId: record.requestId,
        targetOrderId,
        extraFilled: toWire(extra),
      });
      return `order ${targetOrderId} filled ${toWire(extra)} more before it was cancelled; the replacement may be oversized by that much`;
    } catch (error) {
      return `the replaced order could not be read back (${errorCode(error)}); its final fill is not checked`;
    }
  }

  // The intent's end

  /**
   * Records and emits how an intent ended. `resolving`: the intent's outcome was unknown (to this
   * process or an earlier one), so a settled end is reported as `resolved`.
   */
  finish(record: IntentRecord, finish: Finish, resolving = false): void {
    const requestId = record.requestId;
    const intent = record.intent;
    if (finish.status === 'unknown') {
      const nextAt = this.timers.nextAt(record.resolutionAttempts);
      const outcome: OutcomeRecord = {
        status: 'unknown',
        code: finish.code,
        reason: finish.reason,
      };
      this.journal.recordUnknown(requestId, outcome, nextAt);
      if (nextAt !== null) this.timers.schedule(requestId, nextAt);
      this.publishCounts();
      this.logger.warn('intent outcome unknown; resolving by its request id', {
        requestId,
        reason: finish.reason,
      });
      this.emit({ status: 'unknown', intent, reason: finish.reason });
      return;
    }
    this.timers.clear(requestId);
    this.active.delete(requestId);
    const makesOrder = createsOrder(record);
    const replacement =
      record.command?.endpoint === 'amendOrder' ? (record.context.targetOrderId ?? null) : null;
    if (resolving) {
      const resolution = finish.status;
      const orderId = finish.status === 'accepted' ? finish.orderId : null;
      const outcome: OutcomeRecord = {
        status: 'resolved',
        orderId,
        ...(finish.status === 'rejected' ? { code: finish.code, message: finish.message } : {}),
        ...(finish.note === undefined ? {} : { note: finish.note }),
      };
      this.journal.recordResolved(
        requestId,
        resolution,
        makesOrder ? orderId : null,
        outcome,
        replacement,
      );
      this.publishCounts();
      this.logger.info('unknown intent resolved', {
        requestId,
        resolution,
        orderId,
      });
      this.emit({
        status: 'resolved',
        intent,
        resolution,
        orderId,
        ...(finish.note === undefined ? {} : { note: finish.note }),
      });
    } else if (finish.status === 'accepted') {
      // Written out with and without a note: a spread of a literal costs a copy (every intent).
      const { orderId, note } = finish;
      const outcome: OutcomeRecord =
        note === undefined
          ? { status: 'accepted', orderId }
          : { status: 'accepted', orderId, note };
      this.journal.recordAccepted(requestId, makesOrder ? orderId : null, outcome, replacement);
      this.emit(
        note === undefined
          ? { status: 'accepted', intent, orderId }
          : { status: 'accepted', intent, orderId, note },
      );
    } else {
      const outcome: OutcomeRecord = {
        status: 'rejected',
        code: finish.code,
        message: finish.message,
        ...(finish.issues === undefined ? {} : { issues: finish.issues }),
        ...(finish.note === undefined ? {} : { note: finish.note }),
      };
      this.journal.recordRejected(requestId, outcome);
      this.emit({
        status: 'rejected',
        intent,
        code: finish.code,
        message: finish.message,
        ...(finish.issues === undefined ? {} : { issues: finish.issues }),
        ...(finish.note === undefined ? {} : { note: finish.note }),
      });
    }
    if (finish.status === 'accepted' && makesOrder && finish.orderId !== null) {
      const known = this.tracker.order(finish.orderId);
      if (known !== undefined) this.onOrder(known);
    }
  }

  /** A local refusal after the gate (the venue was never asked, or only simulated). */
  finishRejectedLocally(record: IntentRecord, code: string, message: string): void {
    this.finish(record, { status: 'rejected', code, message });
  }

  finishDenied(record: IntentRecord, reason: Denial): void {
    this.timers.clear(record.requestId);
    this.active.delete(record.requestId);
    this.journal.recordDenied(record.requestId, {
      status: 'denied',
      denials: [reason],
      message: reason.message,
    });
    this.logger.info('intent denied by the executor', {
      requestId: record.requestId,
      rule: reason.rule,
      message: reason.message,
    });
    this.emit({ status: 'denied', intent: record.intent, denials: [reason] });
  }

  emit(outcome: ExecutionOutcome): void {
    this.outcomeSubject.next(Object.freeze(outcome));
  }

  /** Reports an intent's order filled, once (the journal remembers it was reported). */
  onOrder(tracked: TrackedOrder): void {
    const order = tracked.order;
    if (order.status !== 'FILLED' || !this.journal.isOpen) return;
    const record = this.journal.intentByOrderId(order.order_id);
    if (record === undefined || !this.journal.markFillReported(record.requestId)) return;
    this.emit({
      status: 'filled',
      intent: record.intent,
      orderId: order.order_id,
      filledQuantity: order.filled_quantity,
      averagePrice: order.average_fill_price,
    });
  }

  /** Publishes the counts of unknown intents, and of those whose automatic attempts are spent. */
  publishCounts(): void {
    if (!this.journal.isOpen) return;
    const unresolved = this.journal.countExhaustedUnknown();
    const unknown = this.journal.countIntents('unknown');
    if (unresolved !== this.unresolvedSubject.value) this.unresolvedSubject.next(unresolved);
    if (unknown !== this.unknownSubject.value) this.unknownSubject.next(unknown);
  }
}
