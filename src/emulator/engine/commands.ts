/**
 * The commands of the exchange: accounts (create, reset), order simulation, placement,
 * amendment (cancel and replace), cancellation, cancel-all, batches and closing a position.
 * Each checks what it can before it changes anything, then runs as one unit of work; the checks
 * of an order are `placement.ts`, its matching `matching.ts`. The cancel-all-after command is
 * `cancel-all-after.ts`. What each command does for its caller is documented on the `Exchange`
 * facade.
 */
import {
  type AmendOrderRequest,
  type BatchOrderResponse,
  type CancelAllResponse,
  type ClosePositionRequest,
  type FailedOrderCommand,
  type Order,
  type OrderRequest,
  practiceUnsupportedError,
  practiceUnsupportedField,
  type SimulationIssue,
  type SimulationResult,
} from '../../protocol/index.ts';
import { type EngineContext, isActive } from './context.ts';
import { bodyIssue, ExchangeError, invalidRequest, isExchangeError } from './errors.ts';
import { divideRounded, MONEY_ONE, MONEY_SCALE, parseScaled } from './fixed.ts';
import type { MatchingEngine } from './matching.ts';
import type { OrderLifecycle } from './order-lifecycle.ts';
import { type KeyRiskLimits, type OrderPlacement, textOf } from './placement.ts';
import type { Reads } from './reads.ts';
import { AccountState, OrderState, ROUTE_ID } from './state.ts';
import { formatMoney, KIND_ACCOUNT, sideText } from './wire.ts';

export interface CreateAccountOptions {
  readonly startingBalance?: string;
}

/** How long a simulation result stays valid (`expires_at`). */
export const SIMULATION_VALIDITY_MS = 5_000;

const ONE_HUNDRED_PERCENT = 100n * MONEY_ONE;

export class Commands {
  constructor(
    private readonly context: EngineContext,
    private readonly lifecycle: OrderLifecycle,
    private readonly placement: OrderPlacement,
    private readonly matching: MatchingEngine,
    private readonly reads: Reads,
  ) {}

  // ---------------------------------------------------------------- accounts

  createAccount(options: CreateAccountOptions = {}): string {
    const context = this.context;
    const balanceText = options.startingBalance ?? context.config.starting_balance;
    const balance = parseScaled(balanceText, MONEY_SCALE);
    if (balance === null || balance < 0n) {
      throw invalidRequest([
        bodyIssue('starting_balance', 'decimal_parsing', 'must be a non-negative decimal string'),
      ]);
    }
    return context.run(() => {
      const ordinal = context.nextIdentifier++;
      const account = new AccountState(
        context.format.uuid(KIND_ACCOUNT, ordinal),
        context.nextAccountOrdinal++,
        balance,
        balance,
        context.clock.now(),
        context.retainedOrders,
      );
      context.accounts.set(account.id, account);
      context.markAccount(account);
      return account.id;
    });
  }

  resetAccount(accountId: string): string {
    const context = this.context;
    const account = context.accountOf(accountId);
    return context.run(() => {
      for (const order of [...account.activeOrders]) {
        this.lifecycle.cancelActive(order, {
          code: 'ACCOUNT_RESET',
          message: 'the account was reset',
        });
      }
      for (const position of [...account.positions.values()]) {
        position.market.positions.delete(position);
        account.positions.delete(position.market);
        account.positionsById.delete(position.id);
        position.closed = true;
        context.closedPositionIds.push(position.id);
      }
      context.clock.clearTimeout(account.cancelAllAfterTimer ?? undefined);
      account.cancelAllAfterTimer = null;
      account.cancelAllAfterDeadline = null;
      account.active = false;
      context.markAccount(account);
      return this.createAccount({ startingBalance: formatMoney(account.startingBalance) });
    });
  }

  // ---------------------------------------------------------------- orders

  simulateOrder(
    accountId: string,
    request: OrderRequest,
    limits?: KeyRiskLimits,
  ): SimulationResult {
    const context = this.context;
    const account = context.accountOf(accountId);
    const marketId = request.market_id;
    if (!context.marketsById.has(marketId)) throw context.unknownMarket(marketId);
    const { problems, prepared } = this.placement.prepare(account, request, limits, true, false);
    const now = context.clock.now();
    const market = context.marketOf(marketId);
    const issues: SimulationIssue[] = problems.map((problem) => ({
      code: problem.code,
      message: problem.message,
      field: problem.field,
    }));
    return {
      market_id: market.id,
      route_id: ROUTE_ID,
      decision: issues.length === 0 ? 'READY' : 'REJECTED',
      required_margin: formatMoney(prepared?.requiredMargin ?? 0n),
      reference_price: market.tick.format(prepared?.referenceTicks ?? market.markTicks),
      maximum_quantity:
        prepared === null ? null : market.step.formatUncached(prepared.maximumSteps),
      issues,
      evaluated_at: context.timestamp(now),
      expires_at: context.timestamp(now + SIMULATION_VALIDITY_MS),
    };
  }

  /** Accepts an order (PENDING, stage QUEUED); it is submitted and matched on the clock. */
  placeOrder(accountId: string, request: OrderRequest, limits?: KeyRiskLimits): Order {
    const context = this.context;
    const account = context.accountOf(accountId);
    context.depth++;
    try {
      return this.reads.orderWire(this.matching.place(account, request, limits, false));
    } finally {
      context.endWork();
    }
  }

  amendOrder(
    accountId: string,
    orderId: string,
    request: AmendOrderRequest,
    limits?: KeyRiskLimits,
  ): Order {
    const context = this.context;
    const account = context.accountOf(accountId);
    const unsupported = practiceUnsupportedField(request);
    if (unsupported !== null) {
      const error = practiceUnsupportedError(unsupported);
      throw new ExchangeError(error.code, error.message, error.details, error.retryable);
    }
    const order = this.reads.orderOf(account, orderId);
    if (!(order instanceof OrderState) || !isActive(order.status)) {
      throw invalidRequest([
        {
          type: 'value_error',
          loc: ['path', 'order_id'],
          msg: `order is ${order.status} and can no longer be amended`,
        },
      ]);
    }
    const market = order.market;
    const totalText =
      request.quantity === undefined || request.quantity === null
        ? market.step.format(order.quantitySteps)
        : textOf(request.quantity);
    const totalSteps = market.step.unitsOf(totalText);
    if (totalSteps === null) {
      throw invalidRequest([
        bodyIssue('quantity', 'multiple_of', `quantity must be a multiple of ${market.step.text}`),
      ]);
    }
    if (order.type === 'market' && request.price !== undefined && request.price !== null) {
      throw invalidRequest([bodyIssue('price', 'value_error', 'a market order has no price')]);
    }
    return context.run(() => {
      this.lifecycle.cancelActive(order, null);
      // The old order is terminal now, so its filled quantity is final.
      const remainingSteps = totalSteps - order.filledSteps;
      if (remainingSteps <= 0) {
        throw invalidRequest([
          bodyIssue(
            'quantity',
            'greater_than',
            `the order already filled ${market.step.format(order.filledSteps)}; the amended quantity must exceed it`,
          ),
        ]);
      }
      const priceText =
        order.type === 'market'
          ? null
          : request.price === undefined || request.price === null
            ? market.tick.format(order.priceTicks!)
            : textOf(request.price);
      const replacement: OrderRequest = {
        request_id: request.request_id,
        client_order_id: order.clientOrderId,
        market_id: market.id,
        side: sideText(order.side),
        type: order.type,
        quantity: market.step.format(remainingSteps),
        leverage: order.leverage,
        price: priceText,
        time_in_force: order.timeInForce,
        post_only: order.postOnly,
        reduce_only: order.reduceOnly,
        position_id: order.positionId,
        margin_mode: order.marginMode,
        max_slippage_percent:
          order.maxSlippagePercent === null ? null : formatMoney(order.maxSlippagePercent),
      };
      return this.reads.orderWire(this.matching.place(account, replacement, limits, true));
    });
  }

  /** Cancels an active order at once; a terminal order is returned unchanged. */
  cancelOrder(accountId: string, orderId: string): Order {
    const account = this.context.accountOf(accountId);
    const order = this.reads.orderOf(account, orderId);
    // A released order is terminal: returned as it is.
    if (!(order instanceof OrderState)) return order;
    return this.context.run(() => {
      if (isActive(order.status)) this.lifecycle.cancelActive(order, null);
      return this.reads.orderWire(order);
    });
  }

  cancelAll(accountId: string, requestId: string, marketId?: string | null): CancelAllResponse {
    const context = this.context;
    const account = context.accountOf(accountId);
    const market = marketId === undefined || marketId === null ? null : context.marketOf(marketId);
    return context.run(() => {
      const results: Order[] = [];
      for (const order of [...account.activeOrders]) {
        if (market !== null && order.market !== market) continue;
        this.lifecycle.cancelActive(order, null);
        results.push(this.reads.orderWire(order));
      }
      return { request_id: requestId, results };
    });
  }

  /** Each item is placed on its own; a failure does not undo the others. */
  placeBatch(
    accountId: string,
    requestId: string,
    orders: readonly OrderRequest[],
    limits?: KeyRiskLimits,
  ): BatchOrderResponse {
    const context = this.context;
    const account = context.accountOf(accountId);
    return context.run(() => {
      const results: (Order | FailedOrderCommand)[] = orders.map((request) => {
        try {
          return this.reads.orderWire(this.matching.place(account, request, limits, false));
        } catch (error) {
          if (!isExchangeError(error)) throw error;
          return {
            error: error.toCommandError(),
            request_id: request.request_id,
            client_order_id: request.client_order_id,
            order_id: null,
          };
        }
      });
      return { request_id: requestId, atomicity: 'non_atomic', results };
    });
  }

  /** A reduce-only market order for `quantity_percent` of the position (rounded down to a step). */
  closePosition(
    accountId: string,
    positionId: string,
    request: ClosePositionRequest,
    limits?: KeyRiskLimits,
  ): Order {
    const context = this.context;
    const account = context.accountOf(accountId);
    const position = account.positionsById.get(positionId);
    if (position === undefined) throw context.positionNotFound(positionId);
    const market = position.market;
    const percent = parseScaled(textOf(request.quantity_percent), MONEY_SCALE);
    if (percent === null || percent <= 0n || percent > ONE_HUNDRED_PERCENT) {
      throw invalidRequest([
        bodyIssue('quantity_percent', 'value_error', 'must be above 0 and at most 100'),
      ]);
    }
    const steps = Number(
      divideRounded(BigInt(position.steps) * percent, ONE_HUNDRED_PERCENT, 'down'),
    );
    if (steps <= 0) {
      throw invalidRequest([
        bodyIssue(
          'quantity_percent',
          'value_error',
          `closes less than one quantity step (${market.step.text}) of the position`,
        ),
      ]);
    }
    const order: OrderRequest = {
      request_id: request.request_id,
      client_order_id: request.client_order_id,
      market_id: market.id,
      side: position.direction === 1 ? 'sell' : 'buy',
      type: 'market',
      quantity: market.step.format(steps),
      leverage: 1,
      time_in_force: 'IOC',
      post_only: false,
      reduce_only: true,
      position_id: position.id,
      margin_mode: position.marginMode,
      max_slippage_percent: textOf(request.max_slippage_percent),
    };
    return context.run(() =>
      this.reads.orderWire(this.matching.place(account, order, limits, false)),
    );
  }
}
