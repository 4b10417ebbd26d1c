/**
 * The executor: turns gate-approved intents into venue commands and sees each one to its end.
 *
 * - Journal first (design rule 6): an intent is journaled when it is submitted, and the exact
 *   bytes of its command before the first byte is sent.
 * - Strictly serial: one command (or resolution, or reconciliation) at a time for the whole
 *   account. Cancel-all, margin and the dead-man deadline are account-wide, so per-market lanes
 *   would let a cancel-all overtake a placement it was meant to remove, and a replay would depend
 *   on interleavings. Rate limits, not the lane, bound throughput.
 * - Place, amend and close are simulated first, each simulation with its own request id
 *   (`<request_id>:s<attempt>`); only `decision: READY` goes on.
 * - Every intent ends Denied (local), Rejected (the venue said no), Accepted, or Unknown (design
 *   rule 4). Unknown is resolved by GET /v1/requests/{id} and the order reads, and, when the
 *   service never saw the request, by resending the journaled bytes under the same id (rule 5).
 *   An intent never gets a second id and never becomes a second order.
 */
import { BehaviorSubject, type Observable, Subject, type Subscription } from 'rxjs';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { type Decimal, parseDecimal, toWire, ZERO } from '../../core/decimal.ts';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import { roundQuantity } from '../../core/grid.ts';
import {
  type CancelAllResponse,
  isFailedOrderCommand,
  type MutationStatus,
  type Order,
  type OrderRequestInput,
  type Position,
  type ResponseOf,
  TERMINAL_ORDER_STATUSES,
} from '../../protocol/index.ts';
import type {
  AmendIntent,
  CancelAllIntent,
  CancelIntent,
  ClosePositionIntent,
  Denial,
  IntentOutcome,
  PlaceIntent,
  StampedIntent,
} from '../intents.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type {
  IntentContext,
  IntentRecord,
  JournaledCommand,
  OutcomeRecord,
} from '../journal/records.ts';
import type { CommandEndpoint, ExecutionVenue, PreparedCommand, VenueCommandOf } from '../venue.ts';
import { backoffDelay, classifyFailure } from './classify.ts';
import { DeadlineQueue, withDeadline } from './deadline.ts';
import { SerialLane } from './lane.ts';
import { boundedIssues, reasonsText } from './rejection-reasons.ts';
import { type Logger as ExecutionLogger, silentLogger } from '../../core/logger.ts';
import type { OrderTracker, TrackedOrder } from './tracker.ts';

/** An intent outcome as the executor emits it; `note` says what the executor adjusted. */
export type ExecutionOutcome = IntentOutcome & { readonly note?: string };

export interface ExecutorConfig {
  /** Leverage of a placement whose intent names none. */
  readonly defaultLeverage: number;
  readonly defaultMarginMode: 'cross' | 'isolated';
  /** Slippage bound of market orders and closes whose intent names none. */
  readonly defaultMaxSlippagePercent: string;
  readonly simulate: {
    readonly place: boolean;
    readonly amend: boolean;
    readonly closePosition: boolean;
  };
  /** Simulations tried (each with a new simulation id) while the answer is unknown. */
  readonly simulationAttempts: number;
  /** Automatic resolution attempts of an unknown intent before it is left to reconciliation. */
  readonly resolutionAttempts: number;
  readonly resolutionBaseDelayMs: number;
  readonly resolutionMaxDelayMs: number;
  /**
   * A placement or amendment the venue never saw is resent only while younger than this
   * (since it was emitted); older ones end rejected rather than reaching the market late.
   * Cancels and closes are always resent. Null: always resend.
   */
  readonly resendMaxAgeMs: number | null;
  /** Stop waiting for one venue call after this long (the outcome is then unknown). */
  readonly callTimeoutMs: number | null;
  /** The quantity step of a market, to size a close's simulation; null when unknown. */
  readonly quantityStep: (marketId: string) => string | null;
}

export const defaultExecutorConfig: ExecutorConfig = Object.freeze({
  defaultLeverage: 1,
  defaultMarginMode: 'isolated',
  defaultMaxSlippagePercent: '0.5',
  simulate: Object.freeze({ place: true, amend: true, closePosition: true }),
  simulationAttempts: 2,
  resolutionAttempts: 6,
  resolutionBaseDelayMs: 500,
  resolutionMaxDelayMs: 30_000,
  resendMaxAgeMs: 300_000,
  callTimeoutMs: 30_000,
  quantityStep: () => null,
});

export interface ExecutorOptions {
  readonly venue: ExecutionVenue;
  readonly journal: IntentJournal;
  readonly tracker: OrderTracker;
  readonly clock: Clock;
  /**
   * While false, placements and amendments are denied (fail closed); cancels, cancel-all and
   * closes still go out. Wire it to `tradingPermit(reconciler.ready$, deadman.mayTrade$)`.
   */
  readonly permit$: Observable<boolean>;
  readonly logger?: ExecutionLogger | undefined;
  readonly config?: Partial<ExecutorConfig> | undefined;
}

/** What a settlement of open journal entries found (start-up and each reconciliation). */
export interface SettlementReport {
  /** Intents a previous process journaled but never sent: ended denied. */
  readonly abandoned: readonly string[];
  /** Intents settled by this pass. */
  readonly resolved: readonly string[];
  /** Intents still unknown after it. */
  readonly unresolved: readonly string[];
}

/** A placement's commands, prepared before its intent is journaled (`Executor.submit`). */
interface ReadyPlacement {
  readonly body: OrderRequestInput;
  readonly prepared: PreparedCommand<'placeOrder'>;
  readonly simulation: PreparedCommand<'simulateOrder'>;
}

/** An intent's command, prepared and not journaled yet: it is journaled with the step after it. */
interface PendingCommand {
  readonly prepared: PreparedCommand;
  readonly context: IntentContext;
}

/** What became of a simulation attempt: READY, the intent finished, or try again. */
type SimulationVerdict = 'ready' | 'finished' | 'again';

type Finish =
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
function createsOrder(record: IntentRecord): boolean {
  return record.command !== null && ORDER_CREATING_ENDPOINTS.has(record.command.endpoint);
}

/** An accepted end, its note only when there is one. */
function acceptedFinish(orderId: string | null, note: string | undefined): Finish {
  return note === undefined
    ? { status: 'accepted', orderId }
    : { status: 'accepted', orderId, note };
}

/** What a step that ends at once returns. */
const DONE: Promise<void> = Promise.resolve();

function denial(rule: string, limit: string, observed: string, message: string): Denial {
  return Object.freeze({ rule, limit, observed, message });
}

function isActive(order: Order): boolean {
  return !TERMINAL_ORDER_STATUSES.has(order.status);
}

function codeOf(error: unknown): string {
  return isPaperbotError(error) ? error.code : 'UNEXPECTED_ERROR';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function errorObject(value: unknown): { code: string; message: string } | null {
  if (typeof value !== 'object' || value === null) return null;
  const code = (value as { code?: unknown }).code;
  if (typeof code !== 'string') return null;
  const message = (value as { message?: unknown }).message;
  return { code, message: typeof message === 'string' ? message : code };
}

export class Executor {
  readonly outcomes$: Observable<ExecutionOutcome>;
  /** Unknown intents whose automatic resolution gave up: the kernel should reduce or halt. */
  readonly unresolvedCount$: Observable<number>;
  /** Every intent whose outcome is currently unknown. */
  readonly unknownCount$: Observable<number>;

  private readonly venue: ExecutionVenue;
  private readonly journal: IntentJournal;
  private readonly tracker: OrderTracker;
  private readonly clock: Clock;
  private readonly logger: ExecutionLogger;
  private readonly config: ExecutorConfig;
  private readonly lane = new SerialLane();
  /** The deadline of every venue call (`callTimeoutMs`): one timer for them all. */
  private readonly deadlines: DeadlineQueue | null;
  private readonly outcomeSubject = new Subject<ExecutionOutcome>();
  private readonly unresolvedSubject: BehaviorSubject<number>;
  private readonly unknownSubject: BehaviorSubject<number>;
  /** Request ids this process is working on (queued, running, or awaiting resolution). */
  private readonly active = new Set<string>();
  private readonly resolutionTimers = new Map<string, TimerHandle>();
  private readonly subscriptions: Subscription[] = [];
  private permitted = false;
  private stopped = false;

  constructor(options: ExecutorOptions) {
    this.venue = options.venue;
    this.journal = options.journal;
    this.tracker = options.tracker;
    this.clock = options.clock;
    this.logger = options.logger ?? silentLogger;
    this.config = {
      ...defaultExecutorConfig,
      ...options.config,
      simulate: {
        ...defaultExecutorConfig.simulate,
        ...options.config?.simulate,
      },
    };
    if (!Number.isInteger(this.config.simulationAttempts) || this.config.simulationAttempts < 1) {
      throw new PaperbotError('INVALID_CONFIG', 'simulationAttempts must be an integer >= 1');
    }
    if (!Number.isInteger(this.config.resolutionAttempts) || this.config.resolutionAttempts < 1) {
      throw new PaperbotError('INVALID_CONFIG', 'resolutionAttempts must be an integer >= 1');
    }
    this.deadlines =
      this.config.callTimeoutMs === null
        ? null
        : new DeadlineQueue(this.clock, this.config.callTimeoutMs);
    this.outcomes$ = this.outcomeSubject.asObservable();
    this.unresolvedSubject = new BehaviorSubject(this.journal.countExhaustedUnknown());
    this.unknownSubject = new BehaviorSubject(this.journal.countIntents('unknown'));
    this.unresolvedCount$ = this.unresolvedSubject.asObservable();
    this.unknownCount$ = this.unknownSubject.asObservable();
    this.subscriptions.push(
      options.permit$.subscribe((value) => {
        this.permitted = value;
      }),
      this.tracker.orders$.subscribe((tracked) => this.onOrder(tracked)),
    );
  }

  /**
   * Takes a gate-approved intent: journals it at once, then queues it. An intent whose request
   * id is already journaled is ignored (it has, or had, its one command already).
   */
  submit(stamped: StampedIntent): void {
    if (this.stopped) {
      this.logger.warn('intent arrived after the executor stopped; not journaled', {
        requestId: stamped.requestId,
      });
      return;
    }
    // An idle lane runs the intent at once: a placement's commands are then prepared first, and
    // its bytes and first simulation journaled with the intent (one commit before it goes out).
    const ready = this.lane.size === 0 ? this.readyPlacement(stamped) : null;
    const { created, record } = this.journal.recordIntent(
      stamped,
      ready === null
        ? undefined
        : {
            command: ready.prepared,
            context: {},
            step: { simulateRequestId: ready.simulation.requestId, attempt: 1 },
          },
    );
    if (!created) {
      this.logger.warn('intent already journaled; never executed twice', {
        requestId: stamped.requestId,
      });
      return;
    }
    this.active.add(stamped.requestId);
    this.lane.post(
      () => this.execute(record, ready),
      (error: unknown) => this.onTaskFailure(stamped.requestId, error),
    );
  }

  /**
   * A simulated placement the executor may send now, its commands prepared; null otherwise (it
   * then takes the ordinary path, which prepares, and denies what cannot be prepared, itself).
   */
  private readyPlacement(stamped: StampedIntent): ReadyPlacement | null {
    const intent = stamped.intent;
    if (intent.kind !== 'place' || !this.config.simulate.place || !this.permitted) return null;
    try {
      const body = this.placeBody(stamped, intent);
      return {
        body,
        prepared: this.venue.prepare({ endpoint: 'placeOrder', body }),
        simulation: this.venue.prepare({
          endpoint: 'simulateOrder',
          body: { ...body, request_id: `${stamped.requestId}:s1` },
        }),
      };
    } catch {
      return null;
    }
  }

  /** Submits every intent of `intents$`. */
  connect(intents$: Observable<StampedIntent>): Subscription {
    return intents$.subscribe((stamped) => this.submit(stamped));
  }

  /** Resolves once no intent, resolution or exclusive task is queued or running. */
  idle(): Promise<void> {
    return this.lane.idle();
  }

  /** Runs `work` in the lane: no command is started or in flight while it runs. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.lane.run(work, true);
  }

  /**
   * Settles what the journal holds open and this process is not working on: intents a previous
   * process journaled but never sent end denied; intents left `sending` or `unknown` get one
   * resolution attempt now (even when their automatic attempts are exhausted).
   */
  settleOpenIntents(): Promise<SettlementReport> {
    return this.exclusive(() => this.settleOpenIntentsExclusive());
  }

  /** `settleOpenIntents` for a caller already inside `exclusive`. */
  async settleOpenIntentsExclusive(): Promise<SettlementReport> {
    const abandoned: string[] = [];
    const resolved: string[] = [];
    const unresolved: string[] = [];
    for (const record of this.journal.openIntents()) {
      const requestId = record.requestId;
      if (this.active.has(requestId) && record.state !== 'unknown') continue;
      if (record.state === 'journaled' || record.state === 'simulating') {
        this.finishDenied(
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
      this.clearResolutionTimer(requestId);
      this.active.add(requestId);
      const settled = await this.resolveOnce(requestId, true);
      (settled ? resolved : unresolved).push(requestId);
    }
    this.publishCounts();
    return { abandoned, resolved, unresolved };
  }

  /** Stops timers and refuses new work; journaled state stays for the next process. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.resolutionTimers.values()) this.clock.clearTimeout(timer);
    this.resolutionTimers.clear();
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
    this.lane.close();
  }

  // Execution of one intent

  /**
   * `record` is the one `submit` journaled, passed on rather than read again: while the intent
   * is active nothing else moves it out of `journaled` before this runs. Not `async`: it hands
   * on the promise of the step it picks (one promise less per intent); the lane takes a throw.
   */
  private execute(record: IntentRecord, ready: ReadyPlacement | null = null): Promise<void> {
    // With `ready`, the command and its first simulation were journaled with the intent.
    if (record.state !== (ready === null ? 'journaled' : 'simulating')) return DONE;
    const intent = record.intent.intent;
    const createsExposure = intent.kind === 'place' || intent.kind === 'amend';
    if (createsExposure && !this.permitted) {
      this.finishDenied(
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

  /** Written out per type, not with spreads: a spread of a literal costs a copy per field. */
  private placeBody(
    record: Pick<IntentRecord, 'requestId' | 'clientOrderId'>,
    intent: PlaceIntent,
  ): OrderRequestInput {
    const requestId = record.requestId;
    const clientOrderId = record.clientOrderId ?? requestId;
    const leverage = intent.leverage ?? this.config.defaultLeverage;
    const timeInForce = intent.timeInForce ?? 'GTC';
    const postOnly = intent.postOnly ?? false;
    const reduceOnly = intent.reduceOnly ?? false;
    const marginMode = intent.marginMode ?? this.config.defaultMarginMode;
    if (intent.type === 'limit') {
      return {
        request_id: requestId,
        client_order_id: clientOrderId,
        market_id: intent.marketId,
        side: intent.side,
        type: intent.type,
        quantity: intent.quantity,
        leverage,
        price: intent.price ?? null,
        time_in_force: timeInForce,
        post_only: postOnly,
        reduce_only: reduceOnly,
        margin_mode: marginMode,
      };
    }
    // A market order (the intent's type is checked at the strategy boundary).
    return {
      request_id: requestId,
      client_order_id: clientOrderId,
      market_id: intent.marketId,
      side: intent.side,
      type: intent.type,
      quantity: intent.quantity,
      leverage,
      max_slippage_percent: intent.maxSlippagePercent ?? this.config.defaultMaxSlippagePercent,
      time_in_force: timeInForce,
      post_only: postOnly,
      reduce_only: reduceOnly,
      margin_mode: marginMode,
    };
  }

  /** Simulates (unless configured off), then sends: the bytes are journaled before either. */
  private async executePlace(
    record: IntentRecord,
    intent: PlaceIntent,
    ready: ReadyPlacement | null,
  ): Promise<void> {
    const body = ready?.body ?? this.placeBody(record, intent);
    const prepared =
      ready?.prepared ??
      this.prepareOrDeny(record, {
        endpoint: 'placeOrder',
        body,
      });
    if (prepared === null) return;
    const command: PendingCommand = { prepared, context: {} };
    if (this.config.simulate.place) {
      if (!(await this.simulate(record, body, command, ready?.simulation))) return;
      await this.sendFirst(record, prepared);
      return;
    }
    await this.sendFirst(record, prepared, undefined, command);
  }

  /** The order an intent names, or null once the intent is denied (`unknown_order`, `rule`). */
  private async findOrderOrDeny(
    record: IntentRecord,
    clientOrderId: string,
    rule: string,
  ): Promise<Awaited<ReturnType<Executor['findOrder']>>> {
    const target = await this.findOrder(clientOrderId);
    if (target === null) {
      this.finishDenied(
        record,
        denial(
          'unknown_order',
          rule,
          clientOrderId,
          'no order with this client order id is known to the runtime or the venue',
        ),
      );
    }
    return target;
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
    const target = await this.findOrderOrDeny(
      record,
      intent.clientOrderId,
      'a cancel names an order the runtime tracks',
    );
    if (target === null) return;
    await this.cancelTarget(record, target);
  }

  private cancelTarget(
    record: IntentRecord,
    target: { readonly orderId: string; readonly order: Order | null },
  ): Promise<void> {
    if (target.order !== null && !isActive(target.order)) {
      this.finishDenied(
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
    const prepared = this.prepareOrDeny(record, {
      endpoint: 'cancelOrder',
      params: { order_id: target.orderId },
      body: { request_id: record.requestId },
    });
    if (prepared === null) return DONE;
    return this.sendFirst(record, prepared, undefined, {
      prepared,
      context: { targetOrderId: target.orderId },
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
    await this.sendFirst(record, prepared, undefined, { prepared, context: {} });
  }

  /**
   * Practice amends by cancel, confirm, new order. The target is read first: a cancellation can
   * race a fill, so the replacement is sized from the filled quantity read just before sending.
   * `intent.quantity` is the order's new total size; the replacement gets that less what already
   * filled. When nothing would be left, the replacement is dropped and the rest cancelled.
   */
  private async executeAmend(record: IntentRecord, intent: AmendIntent): Promise<void> {
    const target = await this.findOrderOrDeny(
      record,
      intent.clientOrderId,
      'an amendment names an order the runtime tracks',
    );
    if (target === null) return;
    let order: Order;
    try {
      order = await this.call(() => this.venue.getOrder(target.orderId));
      this.tracker.applyOrder(order, 'read');
    } catch (error) {
      this.finishRejectedLocally(
        record,
        codeOf(error),
        `the order to amend could not be read: ${messageOf(error)}`,
      );
      return;
    }
    const filled = parseDecimal(order.filled_quantity);
    if (!isActive(order)) {
      this.finishDenied(
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
      this.finishRejectedLocally(record, 'AMEND_UNSIZED', 'the order has no quantity to amend');
      return;
    }
    const remaining = parseDecimal(totalText).minus(filled);
    const context: IntentContext = {
      targetOrderId: order.order_id,
      checkedFilledQuantity: order.filled_quantity,
    };
    if (remaining.lte(ZERO)) {
      // Already filled to the new size: replacing would add exposure the strategy did not ask for.
      const prepared = this.prepareOrDeny(record, {
        endpoint: 'cancelOrder',
        params: { order_id: order.order_id },
        body: { request_id: record.requestId },
      });
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
      const simulation: OrderRequestInput = {
        request_id: record.requestId,
        client_order_id: record.clientOrderId ?? record.requestId,
        market_id: order.market_id,
        side: order.side === 'sell' ? 'sell' : 'buy',
        type: order.type === 'market' ? 'market' : 'limit',
        quantity: toWire(remaining),
        leverage: original?.leverage ?? this.config.defaultLeverage,
        ...(price === null ? {} : { price }),
        ...(order.type === 'market'
          ? {
              max_slippage_percent:
                original?.maxSlippagePercent ?? this.config.defaultMaxSlippagePercent,
            }
          : {}),
        time_in_force: order.time_in_force === 'IOC' ? 'IOC' : 'GTC',
        post_only: order.post_only,
        reduce_only: order.reduce_only,
        margin_mode: original?.marginMode ?? this.config.defaultMarginMode,
      };
      if (!(await this.simulate(record, simulation, command))) return;
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
      const positions = await this.call(() => this.venue.listPositions());
      position = positions.find(
        (candidate) =>
          candidate.market_id === intent.marketId && !parseDecimal(candidate.quantity).eq(ZERO),
      );
    } catch (error) {
      this.finishRejectedLocally(
        record,
        codeOf(error),
        `positions could not be read: ${messageOf(error)}`,
      );
      return;
    }
    if (position === undefined) {
      this.finishDenied(
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
      const quantity = this.closeQuantity(position, quantityPercent);
      if (quantity !== null) {
        const leverage = Number.parseInt(position.leverage ?? '', 10);
        const simulation: OrderRequestInput = {
          request_id: record.requestId,
          client_order_id: record.clientOrderId ?? record.requestId,
          market_id: position.market_id,
          side: position.side === 'short' ? 'buy' : 'sell',
          type: 'market',
          quantity: toWire(quantity),
          leverage:
            Number.isInteger(leverage) && leverage >= 1 && leverage <= 200
              ? leverage
              : this.config.defaultLeverage,
          reduce_only: true,
          margin_mode: position.margin_mode === 'cross' ? 'cross' : 'isolated',
          max_slippage_percent: maxSlippagePercent,
          ...(position.position_id.length >= 8 && position.position_id.length <= 200
            ? { position_id: position.position_id }
            : {}),
        };
        if (!(await this.simulate(record, simulation, command))) return;
        command = undefined;
      }
    }
    await this.sendFirst(record, prepared, undefined, command);
  }

  private closeQuantity(position: Position, percent: string): Decimal | null {
    let quantity = parseDecimal(position.quantity).abs().times(parseDecimal(percent)).div(100);
    const step = this.config.quantityStep(position.market_id);
    if (step !== null) quantity = roundQuantity(quantity, parseDecimal(step));
    return quantity.gt(ZERO) ? quantity : null;
  }

  // Simulation

  /**
   * True when the venue answered READY; otherwise the intent is finished rejected. `command`, the
   * intent's own command, is journaled with the first attempt (one commit before it goes out),
   * unless `journaledFirst`, that attempt, was journaled with the intent already (`submit`).
   */
  private async simulate(
    record: IntentRecord,
    body: OrderRequestInput,
    command: PendingCommand,
    journaledFirst?: PreparedCommand<'simulateOrder'>,
  ): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const simulation = this.startSimulation(
        record,
        body,
        command,
        attempt,
        attempt === 1 ? journaledFirst : undefined,
      );
      if (simulation === null) return false;
      let verdict: SimulationVerdict;
      try {
        verdict = this.simulationAnswered(record, await this.sendCommand(simulation));
      } catch (error) {
        verdict = this.simulationFailed(record, simulation, error, attempt);
      }
      if (verdict !== 'again') return verdict === 'ready';
    }
  }

  /**
   * A simulation attempt's command, journaled (with the intent's own command on the first
   * attempt), or null once the intent is finished (it could not be prepared). `journaledFirst`:
   * the first attempt, prepared and journaled with the intent already (`submit`).
   */
  private startSimulation(
    record: IntentRecord,
    body: OrderRequestInput,
    command: PendingCommand,
    attempt: number,
    journaledFirst: PreparedCommand<'simulateOrder'> | undefined,
  ): PreparedCommand<'simulateOrder'> | null {
    if (journaledFirst !== undefined) return journaledFirst;
    const simulateRequestId = `${record.requestId}:s${attempt}`;
    let prepared: PreparedCommand<'simulateOrder'>;
    try {
      prepared = this.venue.prepare({
        endpoint: 'simulateOrder',
        body: { ...body, request_id: simulateRequestId },
      });
    } catch (error) {
      this.finishRejectedLocally(record, codeOf(error), messageOf(error));
      return null;
    }
    if (attempt === 1) {
      this.journal.recordCommandWithStep(record.requestId, command.prepared, command.context, {
        simulateRequestId,
        attempt,
      });
    } else {
      this.journal.recordSimulation(record.requestId, simulateRequestId, attempt);
    }
    return prepared;
  }

  /** The venue's answer to a simulation: READY goes on; any other decision finishes the intent. */
  private simulationAnswered(
    record: IntentRecord,
    result: ResponseOf<'simulateOrder'>,
  ): SimulationVerdict {
    if (result.decision === 'READY') return 'ready';
    // The venue's reasons go into the message (logs, the strategy) and, bounded, the issues.
    const reasons = reasonsText(result.issues);
    this.finish(record, {
      status: 'rejected',
      code: 'SIMULATION_NOT_READY',
      message: `simulation decided ${result.decision}${reasons === '' ? '' : `: ${reasons}`}; nothing was placed`,
      issues: boundedIssues(result.issues),
    });
    return 'finished';
  }

  /**
   * A simulation without an answer: refused finishes the intent; unknown simulates again with a
   * new id, until `simulationAttempts` are spent (a simulation creates nothing, so an
   * unanswered one can end the intent safely).
   */
  private simulationFailed(
    record: IntentRecord,
    simulation: PreparedCommand<'simulateOrder'>,
    error: unknown,
    attempt: number,
  ): SimulationVerdict {
    const failure = classifyFailure(error);
    if (failure.kind === 'rejected') {
      this.finish(record, {
        status: 'rejected',
        code: failure.code,
        message: `simulation refused: ${failure.message}`,
        ...(failure.issues === undefined ? {} : { issues: failure.issues }),
      });
      return 'finished';
    }
    this.logger.warn('simulation answer unknown; simulating again with a new id', {
      requestId: record.requestId,
      simulateRequestId: simulation.requestId,
      code: failure.code,
    });
    if (attempt < this.config.simulationAttempts) return 'again';
    this.finish(record, {
      status: 'rejected',
      code: failure.code,
      message: `simulation gave no answer after ${this.config.simulationAttempts} attempts; nothing was placed`,
    });
    return 'finished';
  }

  // Sending and outcomes

  private prepareOrDeny<E extends CommandEndpoint>(
    record: IntentRecord,
    command: VenueCommandOf<E>,
  ): PreparedCommand<E> | null {
    try {
      return this.venue.prepare(command);
    } catch (error) {
      const issues =
        isPaperbotError(error) && Array.isArray(error.details.issues) ? error.details.issues : [];
      this.finishDenied(
        record,
        denial(
          'command_invalid',
          `the ${command.endpoint} body contract`,
          issues.length === 0 ? messageOf(error) : JSON.stringify(issues),
          `the command could not be built: ${messageOf(error)}`,
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
    this.finish(journaled, await this.send(journaled, prepared, note, false));
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
   * attempt, unless the caller journaled it already).
   */
  private async send(
    record: IntentRecord,
    prepared: PreparedCommand,
    note: string | undefined,
    countAttempt = true,
  ): Promise<Finish> {
    const requestId = record.requestId;
    if (countAttempt) this.journal.recordSendAttempt(requestId);
    let response: unknown;
    try {
      response = await this.sendCommand(prepared);
    } catch (error) {
      return this.failed(requestId, prepared, error);
    }
    // Outside the try: a fault in taking the answer is the task's, not the command's. Only an
    // amendment's answer waits for a read; the others are taken at once.
    const endpoint = prepared.endpoint;
    return endpoint === 'amendOrder'
      ? this.acceptedAmend(record, response as Order, note)
      : this.accepted(record, endpoint, response, note);
  }

  /** How a command the venue did not accept ended: rejected, or unknown. */
  private failed(requestId: string, prepared: PreparedCommand, error: unknown): Finish {
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
  private accepted(
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
        const notes = [note, failures].filter((text) => text !== undefined).join('; ');
        return {
          status: 'accepted',
          orderId: null,
          ...(notes ? { note: notes } : {}),
        };
      }
      default:
        return acceptedFinish(null, note);
    }
  }

  /** An amendment's answer: the replacement applied, then the replaced order's last fill checked. */
  private async acceptedAmend(
    record: IntentRecord,
    order: Order,
    note: string | undefined,
  ): Promise<Finish> {
    this.linkAndApply(record, order);
    const raced = await this.checkAmendRace(record);
    const notes = [note, raced].filter((text) => text !== undefined).join('; ');
    return {
      status: 'accepted',
      orderId: order.order_id,
      ...(notes ? { note: notes } : {}),
    };
  }

  private linkAndApply(record: IntentRecord, order: Order): void {
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
      const old = await this.call(() => this.venue.getOrder(targetOrderId));
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
      return `the replaced order could not be read back (${codeOf(error)}); its final fill is not checked`;
    }
  }

  /**
   * Records and emits how an intent ended. `resolving`: the intent's outcome was unknown (to this
   * process or an earlier one), so a settled end is reported as `resolved`.
   */
  private finish(record: IntentRecord, finish: Finish, resolving = false): void {
    const requestId = record.requestId;
    const intent = record.intent;
    if (finish.status === 'unknown') {
      const nextAt = this.nextResolutionAt(record.resolutionAttempts);
      const outcome: OutcomeRecord = {
        status: 'unknown',
        code: finish.code,
        reason: finish.reason,
      };
      this.journal.recordUnknown(requestId, outcome, nextAt);
      if (nextAt !== null) this.scheduleResolution(requestId, nextAt);
      this.publishCounts();
      this.logger.warn('intent outcome unknown; resolving by its request id', {
        requestId,
        reason: finish.reason,
      });
      this.emit({ status: 'unknown', intent, reason: finish.reason });
      return;
    }
    this.clearResolutionTimer(requestId);
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
  private finishRejectedLocally(record: IntentRecord, code: string, message: string): void {
    this.finish(record, { status: 'rejected', code, message });
  }

  private finishDenied(record: IntentRecord, reason: Denial): void {
    this.clearResolutionTimer(record.requestId);
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

  private emit(outcome: ExecutionOutcome): void {
    this.outcomeSubject.next(Object.freeze(outcome));
  }

  private onOrder(tracked: TrackedOrder): void {
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

  // Resolution of unknown intents

  private nextResolutionAt(attemptsSoFar: number): number | null {
    if (attemptsSoFar >= this.config.resolutionAttempts) return null;
    return (
      this.clock.now() +
      backoffDelay(
        attemptsSoFar,
        this.config.resolutionBaseDelayMs,
        this.config.resolutionMaxDelayMs,
      )
    );
  }

  private scheduleResolution(requestId: string, at: number): void {
    this.clearResolutionTimer(requestId);
    if (this.stopped) return;
    const timer = this.clock.setTimeout(
      () => {
        this.resolutionTimers.delete(requestId);
        void this.lane
          .run(() => this.resolveOnce(requestId, false), true)
          .catch((error: unknown) => this.onTaskFailure(requestId, error));
      },
      Math.max(0, at - this.clock.now()),
    );
    this.resolutionTimers.set(requestId, timer);
  }

  private clearResolutionTimer(requestId: string): void {
    const timer = this.resolutionTimers.get(requestId);
    if (timer !== undefined) this.clock.clearTimeout(timer);
    this.resolutionTimers.delete(requestId);
  }

  /**
   * One resolution attempt. True when the intent is settled (accepted or rejected).
   * `forced`: an attempt asked for by settlement, made even when automatic ones are exhausted.
   */
  private async resolveOnce(requestId: string, forced: boolean): Promise<boolean> {
    const record = this.journal.getIntent(requestId);
    if (record === undefined || (record.state !== 'unknown' && record.state !== 'sending')) {
      return true;
    }
    if (!forced && record.state === 'unknown' && record.nextResolutionAt === null) return false;
    const command = record.command;
    if (command === null) return false;
    let status: MutationStatus | null = null;
    try {
      status = await this.call(() => this.venue.getRequest(requestId));
    } catch (error) {
      if (codeOf(error) !== 'ORDER_NOT_FOUND') {
        return this.resolutionFailed(record, `request status unreadable: ${codeOf(error)}`);
      }
    }
    if (status !== null) {
      if (status.state === 'PENDING') {
        return this.resolutionFailed(record, 'the venue is still processing the request');
      }
      return this.settleFromStatus(record, status);
    }
    // The service does not know the request id. An order under the intent's client order id
    // would still mean it landed (the record may be missing); otherwise it never arrived.
    if (record.clientOrderId !== null && record.kind !== 'amend') {
      try {
        const order = await this.call(() =>
          this.venue.getOrderByClientId(record.clientOrderId as string),
        );
        this.linkAndApply(record, order);
        this.finish(record, { status: 'accepted', orderId: order.order_id }, true);
        return true;
      } catch (error) {
        if (codeOf(error) !== 'ORDER_NOT_FOUND') {
          return this.resolutionFailed(record, `order read failed: ${codeOf(error)}`);
        }
      }
    }
    return this.resend(record, command);
  }

  private settleFromStatus(record: IntentRecord, status: MutationStatus): boolean {
    const result = status.result;
    const failure = errorObject(result?.error);
    if (failure !== null) {
      this.finish(
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
    this.finish(
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
    const now = this.clock.now();
    const exposes = record.kind === 'place' || record.kind === 'amend';
    const maxAge = this.config.resendMaxAgeMs;
    if (exposes && maxAge !== null && now - record.intent.emittedAt > maxAge) {
      this.finish(
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
      if (changed === null) return this.resolutionFailed(record, 'the amended order is unreadable');
      if (changed !== false) {
        this.finish(
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
      prepared = this.venue.restore(command.endpoint, command.path, command.bodyBytes);
    } catch (error) {
      this.logger.error('journaled command cannot be restored; the intent stays unknown', {
        requestId: record.requestId,
        code: codeOf(error),
      });
      return this.resolutionFailed(record, `journaled command unusable: ${messageOf(error)}`, true);
    }
    if (prepared.requestId !== record.requestId || prepared.bodySha256 !== command.bodySha256) {
      this.logger.error('journaled command does not match its intent; never sent', {
        requestId: record.requestId,
        restoredRequestId: prepared.requestId,
      });
      return this.resolutionFailed(record, 'journaled bytes do not match the intent', true);
    }
    this.logger.info('the venue never received the request; resending the journaled bytes', {
      requestId: record.requestId,
      endpoint: command.endpoint,
      bodySha256: command.bodySha256,
    });
    const finish = await this.send(record, prepared, undefined);
    const current = this.journal.requireIntent(record.requestId);
    if (finish.status === 'unknown') {
      return this.resolutionFailed(current, finish.reason);
    }
    this.finish(current, finish, true);
    return true;
  }

  /** False when unchanged, a description when changed, null when unreadable. */
  private async amendTargetChanged(record: IntentRecord): Promise<string | false | null> {
    const targetOrderId = record.context.targetOrderId;
    if (targetOrderId === undefined) return false;
    try {
      const order = await this.call(() => this.venue.getOrder(targetOrderId));
      this.tracker.applyOrder(order, 'read');
      if (!isActive(order)) return `it is ${order.status}`;
      if (order.filled_quantity !== record.context.checkedFilledQuantity) {
        return `filled ${order.filled_quantity}, was ${record.context.checkedFilledQuantity}`;
      }
      return false;
    } catch (error) {
      if (codeOf(error) === 'ORDER_NOT_FOUND') return 'it no longer exists';
      return null;
    }
  }

  /** Counts a failed attempt and schedules the next; false (not settled). */
  private resolutionFailed(record: IntentRecord, reason: string, giveUp = false): boolean {
    const attempts = record.resolutionAttempts + 1;
    const nextAt = giveUp ? null : this.nextResolutionAt(attempts);
    if (record.state === 'sending') {
      // Left in flight by an earlier process: this process reports it unknown once.
      this.journal.recordUnknown(
        record.requestId,
        { status: 'unknown', code: 'IN_FLIGHT_AT_RESTART', reason },
        nextAt,
      );
      this.emit({ status: 'unknown', intent: record.intent, reason });
    }
    this.journal.recordResolutionAttempt(record.requestId, nextAt);
    if (nextAt === null) {
      this.logger.error('unknown intent not resolved; left to reconciliation', {
        requestId: record.requestId,
        attempts,
        reason,
      });
    } else {
      this.scheduleResolution(record.requestId, nextAt);
    }
    this.publishCounts();
    return false;
  }

  // Order lookups

  /** The venue order behind a runtime client order id: tracker, then journal, then venue. */
  private async findOrder(clientOrderId: string): Promise<{
    readonly orderId: string;
    readonly order: Order | null;
  } | null> {
    const tracked = this.tracker.orderByClientOrderId(clientOrderId);
    if (tracked !== undefined) return { orderId: tracked.order.order_id, order: tracked.order };
    const record = this.journal.intentByClientOrderId(clientOrderId);
    if (record?.orderId) return { orderId: record.orderId, order: null };
    if (record?.kind === 'amend') return null;
    try {
      const order = await this.call(() => this.venue.getOrderByClientId(clientOrderId));
      this.tracker.applyOrder(order, 'read');
      return { orderId: order.order_id, order };
    } catch (error) {
      if (codeOf(error) !== 'ORDER_NOT_FOUND') {
        this.logger.warn('order lookup by client order id failed', {
          clientOrderId,
          code: codeOf(error),
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

  // Plumbing

  private call<T>(work: () => Promise<T>): Promise<T> {
    return this.deadlines === null
      ? withDeadline(this.clock, null, work)
      : this.deadlines.run(work);
  }

  /** Sends once, with a signal when the venue's transport stops on one. */
  private sendCommand<E extends CommandEndpoint>(
    prepared: PreparedCommand<E>,
  ): Promise<ResponseOf<E>> {
    const abortable = this.venue.abortable === true;
    if (this.deadlines === null) {
      return withDeadline(this.clock, null, (signal) => this.venue.send(prepared, signal), {
        abortable,
      });
    }
    return this.deadlines.run((signal) => this.venue.send(prepared, signal), abortable);
  }

  private publishCounts(): void {
    if (!this.journal.isOpen) return;
    const unresolved = this.journal.countExhaustedUnknown();
    const unknown = this.journal.countIntents('unknown');
    if (unresolved !== this.unresolvedSubject.value) this.unresolvedSubject.next(unresolved);
    if (unknown !== this.unknownSubject.value) this.unknownSubject.next(unknown);
  }

  /**
   * An intent still queued when the executor stopped never ran, so nothing was sent for it: it is
   * denied now, as the next start would, and the journal holds no intent left to settle.
   */
  private dropUnsent(requestId: string): void {
    if (!this.journal.isOpen) return;
    const record = this.journal.requireIntent(requestId);
    if (record.state !== 'journaled') return;
    this.finishDenied(
      record,
      denial(
        'stopped_before_sent',
        'intents queued when the runtime stops are not sent',
        `state ${record.state}, emitted at ${record.intent.emittedAt}`,
        'the runtime stopped before the command was sent; it was dropped',
      ),
    );
  }

  private onTaskFailure(requestId: string, error: unknown): void {
    if (this.stopped) {
      if (codeOf(error) === 'LANE_CLOSED') this.dropUnsent(requestId);
      return;
    }
    this.logger.error('executor task failed; the journal keeps the intent for recovery', {
      requestId,
      code: codeOf(error),
      message: messageOf(error),
    });
  }
}
