/**
 * Submission: one intent from the lane to the venue. It builds the intent's command (finding
 * the order a cancel or an amendment names, the position a close names), journals its bytes
 * before the first byte is sent (design rule 6), simulates what can be simulated, and sends it
 * once; the answer goes to `IntentOutcomes`. Placements and amendments are denied while trading
 * is not permitted (fail closed).
 */
import { parseDecimal, toWire, ZERO } from '../../core/decimal.ts';
import { isPaperbotError } from '../../core/errors.ts';
import type { Order, OrderRequestInput, Position } from '../../protocol/index.ts';
import type {
  AmendIntent,
  CancelAllIntent,
  CancelIntent,
  ClosePositionIntent,
  PlaceIntent,
  StampedIntent,
} from '../intents.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { IntentContext, IntentRecord } from '../journal/records.ts';
import type { CommandEndpoint, PreparedCommand, VenueCommandOf } from '../venue.ts';
import { errorCode, errorMessage } from './classify.ts';
import {
  amendSimulationBody,
  closeQuantity,
  closeSimulationBody,
  placeBody,
} from './command-bodies.ts';
import type { ExecutorConfig } from './executor-config.ts';
import type { Logger } from '../../core/logger.ts';
import { denial, type Finish, type IntentOutcomes, isActive } from './outcomes.ts';
import { NO_CONTEXT, type PendingCommand, type Simulation } from './simulation.ts';
import type { OrderTracker } from './tracker.ts';
import type { VenueCalls } from './venue-calls.ts';

/** A placement's commands, prepared before its intent is journaled (`Executor.submit`). */
export interface ReadyPlacement {
  readonly body: OrderRequestInput;
  readonly prepared: PreparedCommand<'placeOrder'>;
  readonly simulation: PreparedCommand<'simulateOrder'>;
}

/** The venue order an intent names, and the order itself when it was at hand. */
interface TargetOrder {
  readonly orderId: string;
  readonly order: Order | null;
}

/** What a step that ends at once returns. */
const DONE: Promise<void> = Promise.resolve();

/** The rule an `unknown_order` denial names, by the kind of intent that named the order. */
const UNKNOWN_ORDER_RULES = {
  cancel: 'a cancel names an order the runtime tracks',
  amend: 'an amendment names an order the runtime tracks',
} as const;

export class Submission {
  /** Whether placements and amendments may go out (`ExecutorOptions.permit$`). */
  permitted = false;

  constructor(
    private readonly calls: VenueCalls,
    private readonly journal: IntentJournal,
    private readonly tracker: OrderTracker,
    private readonly simulation: Simulation,
    private readonly outcomes: IntentOutcomes,
    private readonly logger: Logger,
    private readonly config: ExecutorConfig,
  ) {}

  /**
   * A simulated placement the executor may send now, its commands prepared; null otherwise (it
   * then takes the ordinary path, which prepares, and denies what cannot be prepared, itself).
   */
  readyPlacement(stamped: StampedIntent): ReadyPlacement | null {
    const intent = stamped.intent;
    if (intent.kind !== 'place' || !this.config.simulate.place || !this.permitted) return null;
    try {
      const requestId = stamped.requestId;
      const clientOrderId = stamped.clientOrderId ?? requestId;
      const body = placeBody(this.config, requestId, clientOrderId, intent);
      const venue = this.calls.venue;
      // The simulation is the placement's body under its own request id (built once).
      return {
        body,
        prepared: venue.prepare({ endpoint: 'placeOrder', body }),
        simulation: venue.prepare({
          endpoint: 'simulateOrder',
          body: { ...body, request_id: `${requestId}:s1` },
        }),
      };
    } catch {
      return null;
    }
  }

  /**
   * `record` is the one `submit` journaled, passed on rather than read again: while the intent
   * is active nothing else moves it out of `journaled` before this runs. Not `async`: it hands
   * on the promise of the step it picks (one promise less per intent); the lane takes a throw.
   */
  execute(record: IntentRecord, ready: ReadyPlacement | null): Promise<void> {
    // With `ready`, the command and its first simulation were journaled with the intent.
    if (record.state !== (ready === null ? 'journaled' : 'simulating')) return DONE;
    const intent = record.intent.intent;
    const createsExposure = intent.kind === 'place' || intent.kind === 'amend';
    if (createsExposure && !this.permitted) {
      this.outcomes.finishDenied(
        record,
        denial(
          'execution_not_ready',
          'reconciled and protected by an armed dead-man deadline',
          'not ready',
          'orders are not placed until reconciliation succeeds and the dead-man switch is armed',
        ),
      );
      return DONE;
    }
    switch (intent.kind) {
      case 'place':
        return this.executePlace(record, intent, ready);
      case 'cancel':
        return this.executeCancel(record, intent);
      case 'cancel_all':
        return this.executeCancelAll(record, intent);
      case 'amend':
        return this.executeAmend(record, intent);
      case 'close_position':
        return this.executeClose(record, intent);
    }
    // Every kind is handled above; a kind this runtime does not know does nothing.
    return DONE;
  }

  /** Simulates (unless configured off), then sends: the bytes are journaled before either. */
  private async executePlace(
    record: IntentRecord,
    intent: PlaceIntent,
    ready: ReadyPlacement | null,
  ): Promise<void> {
    const body =
      ready?.body ??
      placeBody(this.config, record.requestId, record.clientOrderId ?? record.requestId, intent);
    const prepared =
      ready?.prepared ??
      this.prepareOrDeny(record, {
        endpoint: 'placeOrder',
        body,
      });
    if (prepared === null) return;
    const command: PendingCommand = { prepared, context: NO_CONTEXT };
    if (this.config.simulate.place) {
      if (!(await this.simulation.simulate(record, body, command, ready?.simulation))) return;
      await this.sendFirst(record, prepared);
      return;
    }
    await this.sendFirst(record, prepared, undefined, command);
  }

  /** Not `async`: a tracked order is cancelled with no step of its own (one promise less). */
  private executeCancel(record: IntentRecord, intent: CancelIntent): Promise<void> {
    // A tracked order is found at once (`findOrder`'s first answer), without a wait for it.
    const tracked = this.tracker.orderByClientOrderId(intent.clientOrderId);
    if (tracked !== undefined) {
      return this.cancelTarget(record, { orderId: tracked.order.order_id, order: tracked.order });
    }
    return this.cancelUntracked(record, intent);
  }

  private async cancelUntracked(record: IntentRecord, intent: CancelIntent): Promise<void> {
    const target = await this.findOrderOrDeny(record, intent);
    if (target === null) return;
    await this.cancelTarget(record, target);
  }

  private cancelTarget(record: IntentRecord, target: TargetOrder): Promise<void> {
    if (target.order !== null && !isActive(target.order)) {
      this.outcomes.finishDenied(
        record,
        denial(
          'order_not_active',
          'a cancel names an active order',
          target.order.status,
          `order ${target.orderId} is already ${target.order.status}`,
        ),
      );
      return DONE;
    }
    const prepared = this.prepareCancel(record, target.orderId);
    if (prepared === null) return DONE;
    return this.sendFirst(record, prepared, undefined, {
      prepared,
      context: { targetOrderId: target.orderId },
    });
  }

  private prepareCancel(
    record: IntentRecord,
    orderId: string,
  ): PreparedCommand<'cancelOrder'> | null {
    return this.prepareOrDeny(record, {
      endpoint: 'cancelOrder',
      params: { order_id: orderId },
      body: { request_id: record.requestId },
    });
  }

  private async executeCancelAll(record: IntentRecord, intent: CancelAllIntent): Promise<void> {
    const prepared = this.prepareOrDeny(record, {
      endpoint: 'cancelAllOrders',
      body: {
        request_id: record.requestId,
        ...(intent.marketId === undefined ? {} : { market_id: intent.marketId }),
      },
    });
    if (prepared === null) return;
    await this.sendFirst(record, prepared, undefined, { prepared, context: NO_CONTEXT });
  }

  /**
   * Practice amends by cancel, confirm, new order. The target is read first: a cancellation can
   * race a fill, so the replacement is sized from the filled quantity read just before sending.
   * `intent.quantity` is the order's new total size; the replacement gets that less what already
   * filled. When nothing would be left, the replacement is dropped and the rest cancelled.
   */
  private async executeAmend(record: IntentRecord, intent: AmendIntent): Promise<void> {
    const target = await this.findOrderOrDeny(record, intent);
    if (target === null) return;
    let order: Order;
    try {
      order = await this.calls.call(() => this.calls.venue.getOrder(target.orderId));
      this.tracker.applyOrder(order, 'read');
    } catch (error) {
      this.outcomes.finishRejectedLocally(
        record,
        errorCode(error),
        `the order to amend could not be read: ${errorMessage(error)}`,
      );
      return;
    }
    const filled = parseDecimal(order.filled_quantity);
    if (!isActive(order)) {
      this.outcomes.finishDenied(
        record,
        denial(
          'amend_target_terminal',
          'an amendment replaces an active order',
          `${order.status}, filled ${order.filled_quantity}`,
          order.status === 'FILLED'
            ? `order ${order.order_id} filled before it could be replaced; the replacement was dropped`
            : `order ${order.order_id} is already ${order.status}; the replacement was dropped`,
        ),
      );
      return;
    }
    const totalText = intent.quantity ?? order.quantity;
    if (totalText === null) {
      this.outcomes.finishRejectedLocally(
        record,
        'AMEND_UNSIZED',
        'the order has no quantity to amend',
      );
      return;
    }
    const remaining = parseDecimal(totalText).minus(filled);
    const context: IntentContext = {
      targetOrderId: order.order_id,
      checkedFilledQuantity: order.filled_quantity,
    };
    if (remaining.lte(ZERO)) {
      // Already filled to the new size: replacing would add exposure the strategy did not ask for.
      const prepared = this.prepareCancel(record, order.order_id);
      if (prepared === null) return;
      await this.sendFirst(
        record,
        prepared,
        `order ${order.order_id} had filled ${order.filled_quantity} of the new size ${totalText}; the replacement was dropped and the rest cancelled`,
        { prepared, context },
      );
      return;
    }
    const price = order.type === 'limit' ? (intent.price ?? order.price) : null;
    const prepared = this.prepareOrDeny(record, {
      endpoint: 'amendOrder',
      params: { order_id: order.order_id },
      body: {
        request_id: record.requestId,
        quantity: toWire(remaining),
        ...(price === null ? {} : { price }),
      },
    });
    if (prepared === null) return;
    let command: PendingCommand | undefined = { prepared, context };
    if (this.config.simulate.amend) {
      const original = this.originalPlacement(intent.clientOrderId);
      const body = amendSimulationBody(this.config, record, order, remaining, price, original);
      if (!(await this.simulation.simulate(record, body, command))) return;
      command = undefined;
    }
    const note = filled.gt(ZERO)
      ? `order ${order.order_id} had filled ${order.filled_quantity}; the replacement was sized to ${toWire(remaining)}`
      : undefined;
    await this.sendFirst(record, prepared, note, command);
  }

  private async executeClose(record: IntentRecord, intent: ClosePositionIntent): Promise<void> {
    let position: Position | undefined;
    try {
      const positions = await this.calls.call(() => this.calls.venue.listPositions());
      position = positions.find(
        (candidate) =>
          candidate.market_id === intent.marketId && !parseDecimal(candidate.quantity).eq(ZERO),
      );
    } catch (error) {
      this.outcomes.finishRejectedLocally(
        record,
        errorCode(error),
        `positions could not be read: ${errorMessage(error)}`,
      );
      return;
    }
    if (position === undefined) {
      this.outcomes.finishDenied(
        record,
        denial(
          'no_position',
          'a close names a market with an open position',
          intent.marketId,
          `there is no open position on ${intent.marketId}`,
        ),
      );
      return;
    }
    const quantityPercent = intent.quantityPercent ?? '100';
    const maxSlippagePercent = intent.maxSlippagePercent ?? this.config.defaultMaxSlippagePercent;
    const prepared = this.prepareOrDeny(record, {
      endpoint: 'closePosition',
      params: { position_id: position.position_id },
      body: {
        request_id: record.requestId,
        client_order_id: record.clientOrderId ?? record.requestId,
        quantity_percent: quantityPercent,
        max_slippage_percent: maxSlippagePercent,
      },
    });
    if (prepared === null) return;
    let command: PendingCommand | undefined = {
      prepared,
      context: { positionId: position.position_id },
    };
    if (this.config.simulate.closePosition) {
      const quantity = closeQuantity(this.config, position, quantityPercent);
      if (quantity !== null) {
        const body = closeSimulationBody(
          this.config,
          record,
          position,
          quantity,
          maxSlippagePercent,
        );
        if (!(await this.simulation.simulate(record, body, command))) return;
        command = undefined;
      }
    }
    await this.sendFirst(record, prepared, undefined, command);
  }

  // Sending

  private prepareOrDeny<E extends CommandEndpoint>(
    record: IntentRecord,
    command: VenueCommandOf<E>,
  ): PreparedCommand<E> | null {
    try {
      return this.calls.venue.prepare(command);
    } catch (error) {
      const issues =
        isPaperbotError(error) && Array.isArray(error.details.issues) ? error.details.issues : [];
      this.outcomes.finishDenied(
        record,
        denial(
          'command_invalid',
          `the ${command.endpoint} body contract`,
          issues.length === 0 ? errorMessage(error) : JSON.stringify(issues),
          `the command could not be built: ${errorMessage(error)}`,
        ),
      );
      return null;
    }
  }

  /**
   * Sends an intent's command the first time. `command`: not journaled yet (no simulation went
   * first); the bytes and the send attempt are then journaled together, in one commit.
   */
  private async sendFirst(
    record: IntentRecord,
    prepared: PreparedCommand,
    note?: string,
    command?: PendingCommand,
  ): Promise<void> {
    const journaled = this.startSend(record, command);
    this.outcomes.finish(journaled, await this.send(journaled, prepared, note, false));
  }

  /**
   * Journals the first send of an intent's command (with the bytes when `command` was not
   * journaled yet) and returns the record as read before that attempt: with the command and its
   * context as journaled; sending changes neither.
   */
  private startSend(record: IntentRecord, command: PendingCommand | undefined): IntentRecord {
    if (command !== undefined) {
      this.journal.recordCommandWithStep(
        record.requestId,
        command.prepared,
        command.context,
        'sending',
      );
      return this.journal.requireIntent(record.requestId);
    }
    const journaled = this.journal.requireIntent(record.requestId);
    this.journal.recordSendAttempt(record.requestId);
    return journaled;
  }

  /**
   * Sends the journaled bytes once and says how it ended (nothing is recorded here but the
   * attempt, unless the caller journaled it already). Recovery resends through it too.
   */
  async send(
    record: IntentRecord,
    prepared: PreparedCommand,
    note: string | undefined,
    countAttempt = true,
  ): Promise<Finish> {
    const requestId = record.requestId;
    if (countAttempt) this.journal.recordSendAttempt(requestId);
    let response: unknown;
    try {
      response = await this.calls.send(prepared);
    } catch (error) {
      return this.outcomes.failed(requestId, prepared, error);
    }
    // Outside the try: a fault in taking the answer is the task's, not the command's. Only an
    // amendment's answer waits for a read; the others are taken at once.
    const endpoint = prepared.endpoint;
    return endpoint === 'amendOrder'
      ? this.outcomes.acceptedAmend(record, response as Order, note)
      : this.outcomes.accepted(record, endpoint, response, note);
  }

  // Order lookups

  /** The order a cancel or an amendment names, or null once the intent is denied (`unknown_order`). */
  private async findOrderOrDeny(
    record: IntentRecord,
    intent: CancelIntent | AmendIntent,
  ): Promise<TargetOrder | null> {
    const target = await this.findOrder(intent.clientOrderId);
    if (target === null) {
      this.outcomes.finishDenied(
        record,
        denial(
          'unknown_order',
          UNKNOWN_ORDER_RULES[intent.kind],
          intent.clientOrderId,
          'no order with this client order id is known to the runtime or the venue',
        ),
      );
    }
    return target;
  }

  /** The venue order behind a runtime client order id: tracker, then journal, then venue. */
  private async findOrder(clientOrderId: string): Promise<TargetOrder | null> {
    const tracked = this.tracker.orderByClientOrderId(clientOrderId);
    if (tracked !== undefined) return { orderId: tracked.order.order_id, order: tracked.order };
    const record = this.journal.intentByClientOrderId(clientOrderId);
    if (record?.orderId) return { orderId: record.orderId, order: null };
    if (record?.kind === 'amend') return null;
    try {
      const order = await this.calls.call(() => this.calls.venue.getOrderByClientId(clientOrderId));
      this.tracker.applyOrder(order, 'read');
      return { orderId: order.order_id, order };
    } catch (error) {
      if (errorCode(error) !== 'ORDER_NOT_FOUND') {
        this.logger.warn('order lookup by client order id failed', {
          clientOrderId,
          code: errorCode(error),
        });
      }
      return null;
    }
  }

  private originalPlacement(clientOrderId: string): PlaceIntent | null {
    let record = this.journal.intentByClientOrderId(clientOrderId);
    // An amendment of an amendment: follow the chain back to the placement.
    for (let depth = 0; record !== undefined && depth < 100; depth++) {
      const intent = record.intent.intent;
      if (intent.kind === 'place') return intent;
      if (intent.kind !== 'amend') return null;
      record = this.journal.intentByClientOrderId(intent.clientOrderId);
    }
    return null;
  }
}
