/**
 * The checks of an order request against the markets, the route and the account, in a fixed
 * order, each a named step of `prepare`: what the request asks (market, type, leverage,
 * quantity, price, slippage, margin mode, position), how it is priced (reference price, the
 * price margin is reserved at, notional), and what it may do (minimums, key limits, capital).
 * A placement turns the problems into one refusal; a simulation lists them all.
 *
 * `prepare` runs for every order and its result is read at once: the outcome and the prepared
 * order are one reused object each (read before the next call).
 */
import {
  type ErrorCode,
  type OrderRequest,
  practiceUnsupportedError,
  practiceUnsupportedField,
  type ServiceIssue,
  toDecimalString,
} from '../../protocol/index.ts';
import type { Accounting } from './accounting.ts';
import { type EngineContext, empty } from './context.ts';
import { bodyIssue, ExchangeError, invalidRequest } from './errors.ts';
import { divideRounded, MONEY_ONE, MONEY_SCALE, parseScaled, type UnitGrid } from './fixed.ts';
import { type BookSide, BUY, SELL } from './order-book.ts';
import { type AccountState, type MarketRuntime, type PositionState, ROUTE_ID } from './state.ts';
import { formatMoney } from './wire.ts';

/** Limits a key may carry (RISK_LIMIT_EXCEEDED when an order breaks one). */
export interface KeyRiskLimits {
  readonly maxOrderNotional?: string | null;
  readonly maxOpenOrders?: number | null;
}

export interface Problem {
  readonly code: ErrorCode;
  readonly message: string;
  readonly field: string | null;
  readonly issue?: ServiceIssue;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Filled in place by `prepare` (one per exchange: read before the next call). */
export interface PreparedOrder {
  market: MarketRuntime;
  side: BookSide;
  type: 'market' | 'limit';
  steps: number;
  priceTicks: number | null;
  timeInForce: 'GTC' | 'IOC';
  postOnly: boolean;
  reduceOnly: boolean;
  positionId: string | null;
  leverage: number;
  marginMode: 'cross' | 'isolated';
  maxSlippagePercent: bigint | null;
  /** The price shown as `reference_price`: the limit price, or the best opposite price. */
  referenceTicks: number;
  /** The price margin is reserved at: the limit price, or a market order's slippage bound. */
  marginTicks: number;
  requiredMargin: bigint;
  maximumSteps: number;
}

/** The outcome of `prepare`, reused likewise (its `problems` too). */
export interface Preparation {
  readonly problems: Problem[];
  prepared: PreparedOrder | null;
}

const ONE_HUNDRED_PERCENT = 100n * MONEY_ONE;
const MAXIMUM_SLIPPAGE_PERCENT = 2n * MONEY_ONE;

/** A request's decimal as text (requests may carry numbers where the wire allows them). */
export function textOf(value: number | string): string {
  return typeof value === 'number' ? toDecimalString(value) : value;
}

/** `value` in units of `grid`, or null (with its problem) when it is not a positive multiple. */
function positiveMultiple(
  problems: Problem[],
  field: 'quantity' | 'price',
  value: number | string,
  grid: UnitGrid,
  gridName: 'quantity_step' | 'price_tick',
): number | null {
  const units = grid.unitsOf(textOf(value));
  if (units !== null && units > 0) return units;
  addInvalid(
    problems,
    field,
    'multiple_of',
    `${field} must be a positive multiple of ${gridName} ${grid.text}`,
  );
  return null;
}

function addInvalid(problems: Problem[], field: string, type: string, message: string): void {
  problems.push({
    code: 'INVALID_REQUEST',
    message,
    field,
    issue: bodyIssue(field, type, message),
  });
}

/** The worst price a market order may reach: reference ± max_slippage_percent, on the grid. */
export function slippageBound(
  side: BookSide,
  slippagePercent: bigint,
  referenceTicks: number,
): number {
  const reference = BigInt(referenceTicks);
  if (side === BUY) {
    return Number(
      divideRounded(
        reference * (ONE_HUNDRED_PERCENT + slippagePercent),
        ONE_HUNDRED_PERCENT,
        'down',
      ),
    );
  }
  return Math.max(
    1,
    Number(
      divideRounded(reference * (ONE_HUNDRED_PERCENT - slippagePercent), ONE_HUNDRED_PERCENT, 'up'),
    ),
  );
}

/** The error a placement with these problems is refused with (the first decides the code). */
export function refusalOf(problems: readonly Problem[]): ExchangeError {
  const first = problems[0];
  if (first === undefined)
    return invalidRequest([bodyIssue('type', 'value_error', 'invalid order')]);
  if (first.code === 'INVALID_REQUEST') {
    return invalidRequest(
      problems.flatMap((problem) =>
        problem.code === 'INVALID_REQUEST' && problem.issue ? [problem.issue] : [],
      ),
    );
  }
  return new ExchangeError(first.code, first.message, first.details ?? {});
}

export class OrderPlacement {
  private readonly preparation: Preparation = { problems: [], prepared: null };
  private preparedOrder: PreparedOrder | null = null;

  constructor(
    private readonly context: EngineContext,
    private readonly accounting: Accounting,
  ) {}

  /** Every check of an order request against markets and the account, in a fixed order. */
  prepare(
    account: AccountState,
    request: OrderRequest,
    limits: KeyRiskLimits | undefined,
    simulation: boolean,
    replacing: boolean,
  ): Preparation {
    const preparation = this.preparation;
    const problems = preparation.problems;
    empty(problems);
    preparation.prepared = null;
    // What the request asks.
    if (!this.checkSupported(problems, request) && !simulation) return preparation;
    const market = this.resolveMarket(problems, request.market_id);
    if (market === null) return preparation;
    this.checkRoute(problems);
    if (request.type !== 'market' && request.type !== 'limit') return preparation;
    const type = request.type;
    const side: BookSide = request.side === 'buy' ? BUY : SELL;
    const reduceOnly = request.reduce_only === true;
    const postOnly = request.post_only === true;
    const timeInForce = request.time_in_force === 'IOC' ? 'IOC' : 'GTC';
    const marginMode = request.margin_mode === 'cross' ? 'cross' : 'isolated';
    if (!replacing) this.checkClientOrderId(problems, account, request.client_order_id);
    const leverage = request.leverage;
    this.checkLeverage(problems, market, leverage);
    const steps = this.parseQuantity(problems, market, request.quantity);
    const priceTicks =
      type === 'limit' ? this.parseLimitPrice(problems, market, request.price) : null;
    const slippage =
      type === 'market' ? this.parseSlippage(problems, request.max_slippage_percent) : null;
    this.checkMarginModeSupported(problems, market, marginMode);
    this.checkPositionTarget(problems, account, market, request.position_id);
    const position = account.positions.get(market);
    if (!reduceOnly) this.checkMarginModeInUse(problems, account, market, position, marginMode);
    if (steps === null || (type === 'limit' && priceTicks === null)) return preparation;
    if (type === 'market' && slippage === null) return preparation;
    // How it is priced.
    const opposite = side === BUY ? market.book.bestAsk() : market.book.bestBid();
    const referenceTicks = type === 'limit' ? priceTicks! : (opposite ?? market.markTicks);
    const marginTicks =
      type === 'limit' ? priceTicks! : slippageBound(side, slippage!, referenceTicks);
    const notional = market.notional(referenceTicks, steps);
    // What it may do.
    if (!reduceOnly) this.checkMinimums(problems, market, steps, notional);
    const reducible =
      position !== undefined && position.direction !== (side === BUY ? 1 : -1) ? position.steps : 0;
    if (simulation) {
      this.addSimulationHints(problems, market, side, priceTicks, reduceOnly, postOnly, reducible);
    }
    const openingSteps = reduceOnly ? 0 : Math.max(0, steps - reducible);
    const requiredMargin = this.accounting.marginFor(market, marginTicks, openingSteps, leverage);
    if (limits !== undefined) this.checkKeyLimits(problems, account, limits, notional);
    const available = this.accounting.available(account);
    this.checkCapital(problems, requiredMargin, available);
    // How much the account could afford is shown by a simulation only.
    let affordable = 0;
    if (simulation && !reduceOnly) {
      const perStep = this.accounting.marginFor(market, marginTicks, 1, leverage);
      affordable = perStep === 0n ? 0 : Number(available / perStep);
    }
    const prepared = this.reusablePrepared(market);
    prepared.market = market;
    prepared.side = side;
    prepared.type = type;
    prepared.steps = steps;
    prepared.priceTicks = priceTicks;
    prepared.timeInForce = timeInForce;
    prepared.postOnly = postOnly;
    prepared.reduceOnly = reduceOnly;
    prepared.positionId = request.position_id ?? null;
    prepared.leverage = leverage;
    prepared.marginMode = marginMode;
    prepared.maxSlippagePercent = slippage;
    prepared.referenceTicks = referenceTicks;
    prepared.marginTicks = marginTicks;
    prepared.requiredMargin = requiredMargin;
    prepared.maximumSteps = reducible + affordable;
    preparation.prepared = prepared;
    return preparation;
  }

  /** The one `PreparedOrder` of this exchange, made on first use; `prepare` fills every field. */
  private reusablePrepared(market: MarketRuntime): PreparedOrder {
    this.preparedOrder ??= {
      market,
      side: BUY,
      type: 'limit',
      steps: 0,
      priceTicks: null,
      timeInForce: 'GTC',
      postOnly: false,
      reduceOnly: false,
      positionId: null,
      leverage: 1,
      marginMode: 'isolated',
      maxSlippagePercent: null,
      referenceTicks: 0,
      marginTicks: 0,
      requiredMargin: 0n,
      maximumSteps: 0,
    };
    return this.preparedOrder;
  }

  // ---------------------------------------------------------------- what the request asks

  /** False when the request uses a feature Practice does not support. */
  private checkSupported(problems: Problem[], request: OrderRequest): boolean {
    const unsupported = practiceUnsupportedField(request);
    if (unsupported === null) return true;
    const error = practiceUnsupportedError(unsupported);
    problems.push({
      code: 'UNSUPPORTED_ORDER',
      message: error.message,
      field: unsupported,
      details: error.details,
    });
    return false;
  }

  private resolveMarket(problems: Problem[], marketId: string): MarketRuntime | null {
    const market = this.context.marketsById.get(marketId);
    if (market !== undefined) return market;
    problems.push({
      code: 'UNKNOWN_MARKET',
      message: `market ${marketId} does not exist`,
      field: 'market_id',
      details: { market_id: marketId },
    });
    return null;
  }

  private checkRoute(problems: Problem[]): void {
    const health = this.context.routeHealth;
    if (health === 'ready') return;
    problems.push({
      code: 'ROUTE_NOT_READY',
      message: `route ${ROUTE_ID} is ${health}`,
      field: null,
      details: { route_id: ROUTE_ID, health },
    });
  }

  private checkClientOrderId(
    problems: Problem[],
    account: AccountState,
    clientOrderId: string,
  ): void {
    if (
      account.orders.byClientId.has(clientOrderId) ||
      this.context.releasedOrderByClientId(account, clientOrderId) !== undefined
    ) {
      addInvalid(
        problems,
        'client_order_id',
        'value_error',
        `client_order_id ${clientOrderId} was already used by this account`,
      );
    }
  }

  private checkLeverage(problems: Problem[], market: MarketRuntime, leverage: number): void {
    const maximumLeverage = market.config.maximum_leverage;
    if (!Number.isInteger(leverage) || leverage < 1 || leverage > maximumLeverage) {
      addInvalid(
        problems,
        'leverage',
        'less_than_equal',
        `leverage must be an integer from 1 to the market maximum ${maximumLeverage}`,
      );
    }
  }

  /** The quantity in steps, or null (with its problem) when it is not a positive multiple. */
  private parseQuantity(
    problems: Problem[],
    market: MarketRuntime,
    quantity: number | string,
  ): number | null {
    return positiveMultiple(problems, 'quantity', quantity, market.step, 'quantity_step');
  }

  /** A limit order's price in ticks, or null (with its problem) when missing or off the grid. */
  private parseLimitPrice(
    problems: Problem[],
    market: MarketRuntime,
    price: number | string | null | undefined,
  ): number | null {
    if (price === undefined || price === null) {
      addInvalid(problems, 'price', 'missing', 'price is required for limit orders');
      return null;
    }
    return positiveMultiple(problems, 'price', price, market.tick, 'price_tick');
  }

  /** A market order's max_slippage_percent (scaled), or null (with its problem). */
  private parseSlippage(
    problems: Problem[],
    text: number | string | null | undefined,
  ): bigint | null {
    const slippage =
      text === undefined || text === null ? null : parseScaled(textOf(text), MONEY_SCALE);
    if (slippage !== null && slippage > 0n && slippage <= MAXIMUM_SLIPPAGE_PERCENT) return slippage;
    addInvalid(
      problems,
      'max_slippage_percent',
      'value_error',
      'market orders need max_slippage_percent above 0 and at most 2',
    );
    return null;
  }

  private checkMarginModeSupported(
    problems: Problem[],
    market: MarketRuntime,
    marginMode: 'cross' | 'isolated',
  ): void {
    if (market.marginModes.has(marginMode)) return;
    problems.push({
      code: 'UNSUPPORTED_ORDER',
      message: `market ${market.id} supports margin modes ${[...market.marginModes].join(', ')}`,
      field: 'margin_mode',
      details: { field: 'margin_mode' },
    });
  }

  private checkPositionTarget(
    problems: Problem[],
    account: AccountState,
    market: MarketRuntime,
    positionId: string | null | undefined,
  ): void {
    if (positionId === undefined || positionId === null) return;
    const target = account.positionsById.get(positionId);
    if (target !== undefined && target.market === market) return;
    problems.push({
      code: 'POSITION_NOT_FOUND',
      message: `position ${positionId} not found in market ${market.id}`,
      field: 'position_id',
      details: { position_id: positionId },
    });
  }

  /** One margin mode per market and account: its position's, or its opening orders'. */
  private checkMarginModeInUse(
    problems: Problem[],
    account: AccountState,
    market: MarketRuntime,
    position: PositionState | undefined,
    marginMode: 'cross' | 'isolated',
  ): void {
    let inUse: string | null = null;
    if (position !== undefined && position.marginMode !== marginMode) inUse = position.marginMode;
    if (inUse === null) {
      const counts = account.openingOrders[market.ordinal];
      const other = marginMode === 'cross' ? 'isolated' : 'cross';
      if (counts !== undefined && counts[other] > 0) inUse = other;
    }
    if (inUse === null) return;
    problems.push({
      code: 'MARGIN_MODE_IN_USE',
      message: `market ${market.id} is already traded with margin mode ${inUse} on this account`,
      field: 'margin_mode',
      details: { market_id: market.id, margin_mode: inUse },
    });
  }

  // ---------------------------------------------------------------- what it may do

  private checkMinimums(
    problems: Problem[],
    market: MarketRuntime,
    steps: number,
    notional: bigint,
  ): void {
    if (market.minimumQuantitySteps !== null && steps < market.minimumQuantitySteps) {
      addInvalid(
        problems,
        'quantity',
        'greater_than_equal',
        `quantity is below the market's minimum_quantity ${market.config.minimum_quantity}`,
      );
    }
    if (market.minimumNotional !== null && notional < market.minimumNotional) {
      addInvalid(
        problems,
        'quantity',
        'greater_than_equal',
        `order notional ${formatMoney(notional)} is below the market's minimum_notional ${market.config.minimum_notional}`,
      );
    }
  }

  /** What would refuse the order once submitted, shown by a simulation beforehand. */
  private addSimulationHints(
    problems: Problem[],
    market: MarketRuntime,
    side: BookSide,
    priceTicks: number | null,
    reduceOnly: boolean,
    postOnly: boolean,
    reducible: number,
  ): void {
    if (reduceOnly && reducible === 0) {
      problems.push({
        code: 'UNSUPPORTED_ORDER',
        message: 'reduce_only order has no opposite position to reduce',
        field: 'reduce_only',
      });
    }
    if (postOnly && priceTicks !== null && market.book.wouldCross(side, priceTicks)) {
      problems.push({
        code: 'UNSUPPORTED_ORDER',
        message: 'post_only order would take liquidity and would be rejected',
        field: 'post_only',
      });
    }
  }

  private checkKeyLimits(
    problems: Problem[],
    account: AccountState,
    limits: KeyRiskLimits,
    notional: bigint,
  ): void {
    const maxOpenOrders = limits.maxOpenOrders;
    if (maxOpenOrders !== undefined && maxOpenOrders !== null) {
      if (account.activeOrders.size >= maxOpenOrders) {
        problems.push({
          code: 'RISK_LIMIT_EXCEEDED',
          message: `the key allows at most ${maxOpenOrders} open orders`,
          field: null,
          details: { limit: 'max_open_orders', value: maxOpenOrders },
        });
      }
    }
    const maxOrderNotional = limits.maxOrderNotional;
    if (maxOrderNotional !== undefined && maxOrderNotional !== null) {
      const maximum = parseScaled(maxOrderNotional, MONEY_SCALE);
      if (maximum !== null && notional > maximum) {
        problems.push({
          code: 'RISK_LIMIT_EXCEEDED',
          message: `order notional ${formatMoney(notional)} exceeds the key's limit ${maxOrderNotional}`,
          field: 'quantity',
          details: { limit: 'max_order_notional', value: maxOrderNotional },
        });
      }
    }
  }

  private checkCapital(problems: Problem[], requiredMargin: bigint, available: bigint): void {
    if (requiredMargin <= available) return;
    problems.push({
      code: 'INSUFFICIENT_READY_CAPITAL',
      message: `required margin ${formatMoney(requiredMargin)} exceeds available ${formatMoney(available)}`,
      field: 'quantity',
      details: {
        required_margin: formatMoney(requiredMargin),
        available: formatMoney(available),
      },
    });
  }
}
