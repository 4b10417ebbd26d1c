/**
 * What the risk gate looks at: a plain, immutable snapshot of the markets, the account and the
 * gate's own state at one instant. The evaluation reads nothing else, so the same snapshot gives
 * the same decision live and in replay.
 *
 * The builders at the end convert wire resources (the protocol's Market, Position and Order, by
 * the fields they share) into the view's shapes; decimals are parsed once, there.
 */
import { type Decimal, parseDecimal, parseDecimalKept, ZERO } from '../../core/decimal.ts';
import type { Side } from '../intents.ts';
import type { Scaled } from '../../core/scaled.ts';

export type TradingState = 'ACTIVE' | 'REDUCING' | 'HALTED';
export type MarketDataStatus = 'live' | 'stale' | 'unavailable';

export interface RiskMarketView {
  readonly marketId: string;
  /** `null` when the market does not publish one: limit prices then cannot be rounded. */
  readonly priceTick: Decimal | null;
  /** `null` when the market does not publish one: quantities then cannot be rounded. */
  readonly quantityStep: Decimal | null;
  readonly minimumQuantity: Decimal | null;
  readonly minimumNotional: Decimal | null;
  readonly maximumLeverage: number | null;
  readonly markPrice: Decimal | null;
  readonly dataStatus: MarketDataStatus;
  /** Epoch milliseconds of the market data the view holds. */
  readonly observedAt: number;
}

export interface RiskPositionView {
  readonly marketId: string;
  /** Signed net quantity: positive long, negative short. */
  readonly quantity: Decimal;
  /** Prices the position for gross exposure when the market has no mark. */
  readonly entryPrice: Decimal | null;
}

export interface RiskOpenOrderView {
  readonly clientOrderId: string | null;
  readonly marketId: string;
  readonly side: Side;
  /** `null` for a market order still in flight. */
  readonly price: Decimal | null;
  /** Quantity not yet filled. */
  readonly remainingQuantity: Decimal;
  readonly reduceOnly: boolean;
}

export interface RiskView {
  /** Epoch milliseconds on the runtime's clock. */
  readonly now: number;
  readonly tradingState: TradingState;
  /** Whether the execution route is ready and accepts orders. */
  readonly routeReady: boolean;
  /** Markets by market id. */
  readonly markets: Readonly<Record<string, RiskMarketView>>;
  /** Net positions by market id; a missing market means no position. */
  readonly positions: Readonly<Record<string, RiskPositionView>>;
  /** The account's active orders, every market. */
  readonly openOrders: readonly RiskOpenOrderView[];
  /**
   * `openOrders` summed by market, when the snapshot keeps the sums as orders change
   * (`./order-sums.ts`); absent, the gate sums `openOrders` itself. Must equal their sums.
   */
  readonly orderSums?: OrderSums | undefined;
  /** Account equity in the settlement asset; `null` while unknown. */
  readonly equity: Decimal | null;
  /** Epoch milliseconds of recent order commands (place, amend, close), oldest first. */
  readonly recentOrderTimes: readonly number[];
}

/** The part of a RiskView that the stateful gate does not supply itself. */
export type RiskSnapshot = Omit<RiskView, 'now' | 'tradingState' | 'recentOrderTimes'>;

export function lookup<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function optionalDecimal(text: string | null | undefined): Decimal | null {
  return text === null || text === undefined ? null : parseDecimal(text);
}

/**
 * Open orders' amounts, parsed once per text: each order update makes a new view, and a
 * quoting strategy's orders come back at a few prices and sizes (the values are never changed
 * in place). The kept decimals are shared with the rest of the runtime (`parseDecimalKept`).
 */
export function orderAmount(text: string): Decimal {
  return parseDecimalKept(text);
}

/** The wire Market's fields the gate uses (protocol `Market` is assignable to it). */
export interface MarketFields {
  readonly market_id: string;
  readonly price_tick: string | null;
  readonly quantity_step: string | null;
  readonly minimum_quantity: string | null;
  readonly minimum_notional: string | null;
  readonly maximum_leverage: number | null;
  readonly mark_price: string | null;
  readonly data_status: string;
  readonly observed_at: string;
}

export function riskMarketFromWire(market: MarketFields): RiskMarketView {
  return {
    marketId: market.market_id,
    priceTick: optionalDecimal(market.price_tick),
    quantityStep: optionalDecimal(market.quantity_step),
    minimumQuantity: optionalDecimal(market.minimum_quantity),
    minimumNotional: optionalDecimal(market.minimum_notional),
    maximumLeverage: market.maximum_leverage,
    markPrice: optionalDecimal(market.mark_price),
    dataStatus: dataStatusOf(market.data_status),
    observedAt: Date.parse(market.observed_at),
  };
}

/** An unrecognised status is treated as unavailable: the gate then adds no exposure on it. */
function dataStatusOf(status: string): MarketDataStatus {
  return status === 'live' || status === 'stale' ? status : 'unavailable';
}

/** A ticker's fields the gate uses. */
export interface TickerFields {
  readonly mark_price: string | null;
  readonly data_status: string;
  readonly occurred_at: string;
}

/**
 * `market` with a ticker's mark, data status and time laid over it; the grids and minimums are
 * the same objects, parsed once per market rather than once per ticker.
 */
export function riskMarketWithTicker(market: RiskMarketView, ticker: TickerFields): RiskMarketView {
  return {
    marketId: market.marketId,
    priceTick: market.priceTick,
    quantityStep: market.quantityStep,
    minimumQuantity: market.minimumQuantity,
    minimumNotional: market.minimumNotional,
    maximumLeverage: market.maximumLeverage,
    markPrice: optionalDecimal(ticker.mark_price),
    dataStatus: dataStatusOf(ticker.data_status),
    observedAt: Date.parse(ticker.occurred_at),
  };
}

/** The wire Position's fields the gate uses. */
export interface PositionFields {
  readonly market_id: string;
  readonly side: string;
  readonly quantity: string;
  readonly entry_price: string;
}

/**
 * Net positions by market. The side decides the sign (the interface shows `short` for a short
 * position), whatever the sign of the quantity text; several positions on one market add up.
 */
export function riskPositionsFromWire(
  positions: readonly PositionFields[],
): Record<string, RiskPositionView> {
  const byMarket: Record<string, RiskPositionView> = {};
  for (const position of positions) {
    const size = parseDecimal(position.quantity).abs();
    const signed =
      position.side.toLowerCase() === 'short' || position.side === 'sell' ? size.neg() : size;
    const previous = lookup(byMarket, position.market_id);
    byMarket[position.market_id] = {
      marketId: position.market_id,
      quantity: previous ? previous.quantity.plus(signed) : signed,
      entryPrice: previous?.entryPrice ?? parseDecimal(position.entry_price),
    };
  }
  return byMarket;
}

/** The wire Order's fields the gate uses. */
export interface OrderFields {
  readonly client_order_id: string | null;
  readonly market_id: string;
  readonly side: string | null;
  readonly price: string | null;
  readonly quantity: string | null;
  readonly filled_quantity: string;
  readonly reduce_only: boolean;
  readonly status: string;
}

/** Statuses that may still trade. UNKNOWN counts: until reconciled it may be live. */
const ACTIVE_STATUSES = new Set(['PENDING', 'SUBMITTED', 'OPEN', 'PARTIALLY_FILLED', 'UNKNOWN']);

export function riskOpenOrdersFromWire(orders: readonly OrderFields[]): RiskOpenOrderView[] {
  const open: RiskOpenOrderView[] = [];
  for (const order of orders) {
    const view = openOrderView(order);
    if (view !== null) open.push(view);
  }
  return open;
}

/**
 * The order's view, or null when it no longer counts (an end state, or no side). Built once per
 * order event (the snapshot keeps the views, `../kernel/risk-snapshot.ts`), so nothing is cached
 * here: every event brings a new order object.
 */
export function openOrderView(order: OrderFields): RiskOpenOrderView | null {
  if (!ACTIVE_STATUSES.has(order.status) || (order.side !== 'buy' && order.side !== 'sell')) {
    return null;
  }
  const quantity = order.quantity === null ? ZERO : orderAmount(order.quantity);
  const filled = orderAmount(order.filled_quantity);
  // Nothing filled (most events): the quantity itself, one shared decimal per text.
  const remaining = filled.c[0] === 0 ? quantity : quantity.minus(filled);
  return Object.freeze({
    clientOrderId: order.client_order_id,
    marketId: order.market_id,
    side: order.side,
    price: order.price === null ? null : orderAmount(order.price),
    remainingQuantity: remaining.lt(ZERO) ? ZERO : remaining,
    reduceOnly: order.reduce_only,
  });
}

/** One market's open orders, summed (kept by `order-sums.ts`). Immutable: a change makes a new one. */
export interface MarketOrderSums {
  /** Remaining quantity of resting buys and sells that may add exposure (not reduce-only). */
  readonly addingBuys: Scaled;
  readonly addingSells: Scaled;
  /** Remaining quantity of every resting order on each side (reduce-only included). */
  readonly allBuys: Scaled;
  readonly allSells: Scaled;
  readonly openOrders: number;
  readonly highestOrderPrice: Scaled | null;
}

/** Sums by market id; a market without open orders is absent. */
export type OrderSums = ReadonlyMap<string, MarketOrderSums>;
