/**
 * Recovery of intents whose outcome is unknown (design rules 4 and 5): one resolution attempt
 * reads the request's status by its id (GET /v1/requests/{id}), then the order under the
 * intent's client order id, and, when the service never saw the request, resends the journaled
 * bytes under the same id. A failed attempt is scheduled again (`ResolutionTimers`) until the
 * attempts are spent. At start and each reconciliation, `settleOpenIntents` settles what an
 * earlier process left open. An intent never gets a second id and never becomes a second order.
 */
import type { Clock } from '../../core/clock.ts';
import type { MutationStatus } from '../../protocol/index.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { IntentRecord, JournaledCommand } from '../journal/records.ts';
import type { PreparedCommand } from '../venue.ts';
import { errorCode, errorMessage } from './classify.ts';
import type { ExecutorConfig } from './executor-config.ts';
import type { Logger } from '../../core/logger.ts';
import { createsOrder, denial, type IntentOutcomes, isActive } from './outcomes.ts';
import type { ResolutionTimers } from './resolution-timers.ts';
import type { Submission } from './submission.ts';
import type { OrderTracker } from './tracker.ts';
import type { VenueCalls } from './venue-calls.ts';

/** What a settlement of open journal entries found (start-up and each reconciliation). */
export interface SettlementReport {
  /** Intents a previous process journaled but never sent: ended denied. */
  readonly abandoned: readonly string[];
  /** Intents settled by this pass. */
  readonly resolved: readonly string[];
  /** Intents still unknown after it. */
  readonly unresolved: readonly string[];
}

function errorObject(value: unknown): { code: string; message: string } | null {
  if (typeof value !== 'object' || value === null) return null;
  const code = (value as { code?: unknown }).code;
  if (typeof code !== 'string') return null;
  const message = (value as { message?: unknown }).message;
  return { code, message: typeof message === 'string' ? message : code };
}

export class Recovery {
  constructor(
    private readonly calls: VenueCalls,
    private readonly journal: IntentJournal,
    private readonly tracker: OrderTracker,
    private readonly submission: Submission,
    private readonly outcomes: IntentOutcomes,
    private readonly timers: ResolutionTimers,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly config: ExecutorConfig,
  ) {}

  /**
   * Settles what the journal holds open and this process is not working on: intents a previous
   * process journaled but never sent end denied; intents left `sending` or `unknown` get one
   * resolution attempt now (even when their automatic attempts are exhausted). The caller holds
   * the executor's lane.
   */
  async settleOpenIntents(): Promise<SettlementReport> {
    const abandoned: string[] = [];
    const resolved: string[] = [];
    const unresolved: string[] = [];
    const active = this.outcomes.active;
    for (const record of this.journal.openIntents()) {
      const requestId = record.requestId;
      if (active.has(requestId) && record.state !== 'unknown') continue;
      if (record.state === 'journaled' || record.state === 'simulating') {
        this.outcomes.finishDenied(
          record,
          denial(
            'abandoned_at_restart',
            'intents are not sent after the process that took them stopped',
            `state ${record.state}, emitted at ${record.intent.emittedAt}`,
            'the intent was journaled but its command was never sent; it was dropped',
          ),
        );
        abandoned.push(requestId);
        continue;
      }
      this.timers.clear(requestId);
      active.add(requestId);
      const settled = await this.resolveOnce(requestId, true);
      (settled ? resolved : unresolved).push(requestId);
    }
    this.outcomes.publishCounts();
    return { abandoned, resolved, unresolved };
  }

  /**
   * One resolution attempt. True when the intent is settled (accepted or rejected).
   * `forced`: an attempt asked for by settlement, made even when automatic ones are exhausted.
   */
  async resolveOnce(requestId: string, forced: boolean): Promise<boolean> {
    const record = this.journal.getIntent(requestId);
    if (record === undefined || (record.state !== 'unknown' && record.state !== 'sending')) {
      return true;
    }
    if (!forced && record.state === 'unknown' && record.nextResolutionAt === null) return false;
    const command = record.command;
    if (command === null) return false;
    const venue = this.calls.venue;
    let status: MutationStatus | null = null;
    try {
      status = await this.calls.call(() => venue.getRequest(requestId));
    } catch (error) {
      if (errorCode(error) !== 'ORDER_NOT_FOUND') {
        return this.failed(record, `request status unreadable: ${errorCode(error)}`);
      }
    }
    if (status !== null) {
      if (status.state === 'PENDING') {
        return this.failed(record, 'the venue is still processing the request');
      }
      return this.settleFromStatus(record, status);
    }
    // The service does not know the request id. An order under the intent's client order id
    // would still mean it landed (the record may be missing); otherwise it never arrived.
    if (record.clientOrderId !== null && record.kind !== 'amend') {
      try {
        const order = await this.calls.call(() =>
          venue.getOrderByClientId(record.clientOrderId as string),
        );
        this.outcomes.linkAndApply(record, order);
        this.outcomes.finish(record, { status: 'accepted', orderId: order.order_id }, true);
        return true;
      } catch (error) {
        if (errorCode(error) !== 'ORDER_NOT_FOUND') {
          return this.failed(record, `order read failed: ${errorCode(error)}`);
        }
      }
    }
    return this.resend(record, command);
  }

  private settleFromStatus(record: IntentRecord, status: MutationStatus): boolean {
    const result = status.result;
    const failure = errorObject(result?.error);
    if (failure !== null) {
      this.outcomes.finish(
        record,
        { status: 'rejected', code: failure.code, message: failure.message },
        true,
      );
      return true;
    }
    const orderId = typeof result?.order_id === 'string' ? result.order_id : null;
    if (orderId !== null && record.clientOrderId !== null && createsOrder(record)) {
      this.tracker.linkOrder(orderId, {
        clientOrderId: record.clientOrderId,
        requestId: record.requestId,
      });
    }
    if (orderId !== null) this.tracker.refreshOrder(orderId);
    this.outcomes.finish(
      record,
      {
        status: 'accepted',
        orderId: createsOrder(record)
          ? orderId
          : record.kind === 'cancel'
            ? (orderId ?? record.context.targetOrderId ?? null)
            : null,
      },
      true,
    );
    return true;
  }

  /** Resends the journaled bytes under the same request id (interface Errors, rule 5). */
  private async resend(record: IntentRecord, command: JournaledCommand): Promise<boolean> {
    const exposes = record.kind === 'place' || record.kind === 'amend';
    const maxAge = this.config.resendMaxAgeMs;
    if (exposes && maxAge !== null && this.clock.now() - record.intent.emittedAt > maxAge) {
      this.outcomes.finish(
        record,
        {
          status: 'rejected',
          code: 'NEVER_RECEIVED',
          message: `the venue never received the request and it is older than ${maxAge} ms; it is not sent late`,
        },
        true,
      );
      return true;
    }
    if (command.endpoint === 'amendOrder') {
      const changed = await this.amendTargetChanged(record);
      if (changed === null) return this.failed(record, 'the amended order is unreadable');
      if (changed !== false) {
        this.outcomes.finish(
          record,
          {
            status: 'rejected',
            code: 'AMEND_TARGET_CHANGED',
            message: `the venue never received the amendment and its order changed since (${changed}); the replacement was dropped`,
          },
          true,
        );
        return true;
      }
    }
    let prepared: PreparedCommand;
    try {
      prepared = this.calls.venue.restore(command.endpoint, command.path, command.bodyBytes);
    } catch (error) {
      this.logger.error('journaled command cannot be restored; the intent stays unknown', {
        requestId: record.requestId,
        code: errorCode(error),
      });
      return this.failed(record, `journaled command unusable: ${errorMessage(error)}`, true);
    }
    if (prepared.requestId !== record.requestId || prepared.bodySha256 !== command.bodySha256) {
      this.logger.error('journaled command does not match its intent; never sent', {
        requestId: record.requestId,
        restoredRequestId: prepared.requestId,
      });
      return this.failed(record, 'journaled bytes do not match the intent', true);
    }
    this.logger.info('the venue never received the request; resending the journaled bytes', {
      requestId: record.requestId,
      endpoint: command.endpoint,
      bodySha256: command.bodySha256,
    });
    const finish = await this.submission.send(record, prepared, undefined);
    const current = this.journal.requireIntent(record.requestId);
    if (finish.status === 'unknown') {
      return this.failed(current, finish.reason);
    }
    this.outcomes.finish(current, finish, true);
    return true;
  }

  /** False when unchanged, a description when changed, null when unreadable. */
  private async amendTargetChanged(record: IntentRecord): Promise<string | false | null> {
    const targetOrderId = record.context.targetOrderId;
    if (targetOrderId === undefined) return false;
    try {
      const order = await this.calls.call(() => this.calls.venue.getOrder(targetOrderId));
      this.tracker.applyOrder(order, 'read');
      if (!isActive(order)) return `it is ${order.status}`;
      if (order.filled_quantity !== record.context.checkedFilledQuantity) {
        return `filled ${order.filled_quantity}, was ${record.context.checkedFilledQuantity}`;
      }
      return false;
    } catch (error) {
      if (errorCode(error) === 'ORDER_NOT_FOUND') return 'it no longer exists';
      return null;
    }
  }

  /** Counts a failed attempt and schedules the next; false (not settled). */
  private failed(record: IntentRecord, reason: string, giveUp = false): boolean {
    const attempts = record.resolutionAttempts + 1;
    const nextAt = giveUp ? null : this.timers.nextAt(attempts);
    if (record.state === 'sending') {
      // Left in flight by an earlier process: this process reports it unknown once.
      this.journal.recordUnknown(
        record.requestId,
        { status: 'unknown', code: 'IN_FLIGHT_AT_RESTART', reason },
        nextAt,
      );
      this.outcomes.emit({ status: 'unknown', intent: record.intent, reason });
    }
    this.journal.recordResolutionAttempt(record.requestId, nextAt);
    if (nextAt === null) {
      this.logger.error('unknown intent not resolved; left to reconciliation', {
        requestId: record.requestId,
        attempts,
        reason,
      });
    } else {
      this.timers.schedule(record.requestId, nextAt);
    }
    this.outcomes.publishCounts();
    return false;
  }
}
