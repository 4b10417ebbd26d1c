/**
 * The risk rules an order passes besides exposure: the trading state, reduce-only, the market's
 * readiness (enabled, live data, fresh enough, a ready route), size and notional bounds,
 * leverage, open order counts, order rates, the price band and the slippage bound. Each pushes
 * a denial for what fails.
 */
import { type Decimal, toWire } from '../../core/decimal.ts';
import {
  type Scaled,
  scaledAbs,
  scaledCompare,
  scaledDivide,
  scaledMinus,
  scaledOfKept,
  scaledSign,
  scaledTimes,
  scaledToWire,
} from '../../core/scaled.ts';
import type { Denial } from '../intents.ts';
import type { MarketLimits, RiskConfig } from './config.ts';
import type { MarketBook } from './exposure.ts';
import {
  decimalOrNull,
  deny,
  type ExposureEffect,
  haltedDenial,
  HUNDRED,
  type OrderShape,
  outsideRange,
  RiskRule,
  type RiskRuleName,
} from './rules.ts';
import type { RiskMarketView, RiskView } from './view.ts';

/** The interface's own bounds (practice-trading-service.md, Limits). */
const VENUE_MAXIMUM_LEVERAGE = 200;
const MAXIMUM_SLIPPAGE_PERCENT: Scaled = { units: 2n, scale: 0 };
const SECOND_MS = 1000;
const MINUTE_MS = 60_000;

export function checkSlippage(text: string | undefined, denials: Denial[]): void {
  if (text === undefined) return;
  if (outsideRange(decimalOrNull(text), MAXIMUM_SLIPPAGE_PERCENT)) {
    denials.push(
      deny(
        RiskRule.maxSlippagePercent,
        scaledToWire(MAXIMUM_SLIPPAGE_PERCENT),
        text,
        `max slippage percent must be greater than 0 and at most 2, got ${JSON.stringify(text)}`,
      ),
    );
  }
}

function countSince(times: readonly number[], from: number): number {
  let count = 0;
  for (let index = times.length - 1; index >= 0; index--) {
    if (times[index]! > from) count++;
    else break;
  }
  return count;
}

export function checkTradingState(
  order: OrderShape,
  effect: ExposureEffect,
  view: RiskView,
  config: RiskConfig,
  denials: Denial[],
): void {
  if (view.tradingState === 'HALTED') {
    if (!(order.reduceOnly && config.halted_allows_reduce_only)) {
      denials.push(haltedDenial(config, order.reduceOnly));
    }
  } else if (view.tradingState === 'REDUCING' && effect === 'adds_exposure') {
    denials.push(
      deny(
        RiskRule.tradingState,
        'orders that reduce exposure while REDUCING',
        'REDUCING',
        'trading is REDUCING: only reduce-only or position-reducing orders pass',
      ),
    );
  }
}

export function checkReduceOnly(order: OrderShape, book: MarketBook, denials: Denial[]): void {
  const sign = scaledSign(book.position);
  const reducible = order.side === 'buy' ? sign < 0 : sign > 0;
  if (!reducible) {
    denials.push(
      deny(
        RiskRule.reduceOnly,
        order.side === 'buy' ? 'a short position' : 'a long position',
        scaledToWire(book.position),
        `a reduce-only ${order.side} has no ${order.side === 'buy' ? 'short' : 'long'} position to reduce on ${order.marketId}`,
      ),
    );
  }
}

export function checkMarketReadiness(
  order: OrderShape,
  market: RiskMarketView,
  limits: MarketLimits,
  view: RiskView,
  config: RiskConfig,
  denials: Denial[],
): void {
  if (!limits.enabled) {
    denials.push(
      deny(
        RiskRule.marketDisabled,
        'enabled',
        'disabled',
        `market ${order.marketId} is disabled in the risk configuration`,
      ),
    );
  }
  if (market.dataStatus !== 'live') {
    denials.push(
      deny(
        RiskRule.marketData,
        'live',
        market.dataStatus,
        `market data for ${order.marketId} is ${market.dataStatus}: no new exposure`,
      ),
    );
  }
  const maximumAge = config.max_market_data_age_ms;
  if (maximumAge !== null) {
    const age = view.now - market.observedAt;
    if (!(age <= maximumAge)) {
      denials.push(
        deny(
          RiskRule.marketDataAge,
          String(maximumAge),
          Number.isFinite(age) ? String(age) : 'unknown',
          `market data for ${order.marketId} is ${age} ms old: no new exposure`,
        ),
      );
    }
  }
  if (!view.routeReady) {
    denials.push(
      deny(RiskRule.routeReady, 'ready', 'not ready', 'the execution route is not ready'),
    );
  }
}

/**
 * Denies `value` when it is below a market minimum (`below`) or above a configured limit on the
 * market (`above`); nothing when the bound is not set.
 */
function checkBound(
  rule: RiskRuleName,
  bound: Decimal | null,
  breaks: 'below' | 'above',
  what: string,
  value: Scaled,
  marketId: string,
  denials: Denial[],
): void {
  if (!bound) return;
  const comparison = scaledCompare(value, scaledOfKept(bound));
  if (breaks === 'below' ? comparison >= 0 : comparison <= 0) return;
  const observed = scaledToWire(value);
  const limit = toWire(bound);
  denials.push(
    deny(
      rule,
      limit,
      observed,
      breaks === 'below'
        ? `${what} ${observed} is below the market minimum ${limit}`
        : `${what} ${observed} exceeds the limit ${limit} on ${marketId}`,
    ),
  );
}

export function checkSize(
  order: OrderShape,
  market: RiskMarketView,
  limits: MarketLimits,
  quantity: Scaled,
  valuedAt: Scaled | null,
  denials: Denial[],
): void {
  const marketId = order.marketId;
  checkBound(
    RiskRule.minimumQuantity,
    market.minimumQuantity,
    'below',
    'quantity',
    quantity,
    marketId,
    denials,
  );
  checkBound(
    RiskRule.maxOrderQuantity,
    limits.max_order_quantity,
    'above',
    'quantity',
    quantity,
    marketId,
    denials,
  );
  if (!valuedAt) return;
  const notional = scaledTimes(quantity, valuedAt);
  checkBound(
    RiskRule.minimumNotional,
    market.minimumNotional,
    'below',
    'notional',
    notional,
    marketId,
    denials,
  );
  checkBound(
    RiskRule.maxOrderNotional,
    limits.max_order_notional,
    'above',
    'order notional',
    notional,
    marketId,
    denials,
  );
}

export function checkLeverage(
  order: OrderShape,
  market: RiskMarketView,
  limits: MarketLimits,
  denials: Denial[],
): void {
  const leverage = order.leverage ?? 1;
  let cap = VENUE_MAXIMUM_LEVERAGE;
  if (market.maximumLeverage !== null) cap = Math.min(cap, market.maximumLeverage);
  if (limits.max_leverage !== null) cap = Math.min(cap, limits.max_leverage);
  if (!Number.isSafeInteger(leverage) || leverage < 1 || leverage > cap) {
    denials.push(
      deny(
        RiskRule.maxLeverage,
        String(cap),
        String(leverage),
        `leverage must be a whole number from 1 to ${cap} on ${order.marketId}, got ${leverage}`,
      ),
    );
  }
}

export function checkOpenOrders(
  order: OrderShape,
  view: RiskView,
  config: RiskConfig,
  limits: MarketLimits,
  book: MarketBook,
  denials: Denial[],
): void {
  // An amend replaces its order, so the count it leaves behind is the count it found.
  const total = view.openOrders.length + (order.replaces ? 0 : 1);
  if (config.max_open_orders !== null && total > config.max_open_orders) {
    denials.push(
      deny(
        RiskRule.maxOpenOrders,
        String(config.max_open_orders),
        String(total),
        `${total} open orders would exceed the limit ${config.max_open_orders}`,
      ),
    );
  }
  const onMarket = book.openOrders + 1;
  const perMarket = limits.max_open_orders_per_market;
  if (perMarket !== null && onMarket > perMarket) {
    denials.push(
      deny(
        RiskRule.maxOpenOrdersPerMarket,
        String(perMarket),
        String(onMarket),
        `${onMarket} open orders on ${order.marketId} would exceed the limit ${perMarket}`,
      ),
    );
  }
}

export function checkRates(view: RiskView, config: RiskConfig, denials: Denial[]): void {
  checkRate(view, config.max_orders_per_second, SECOND_MS, 'second', denials);
  checkRate(view, config.max_orders_per_minute, MINUTE_MS, 'minute', denials);
}

/** Denies an order command that would make more than `limit` within the last `windowMs`. */
function checkRate(
  view: RiskView,
  limit: number | null,
  windowMs: number,
  window: 'second' | 'minute',
  denials: Denial[],
): void {
  if (limit === null) return;
  const count = countSince(view.recentOrderTimes, view.now - windowMs) + 1;
  if (count <= limit) return;
  denials.push(
    deny(
      window === 'second' ? RiskRule.maxOrdersPerSecond : RiskRule.maxOrdersPerMinute,
      String(limit),
      String(count),
      `${count} order commands within one ${window} would exceed the limit ${limit}`,
    ),
  );
}

export function checkPriceBand(
  order: OrderShape,
  price: Scaled,
  mark: Scaled,
  bandPercent: Scaled,
  denials: Denial[],
): void {
  const distance = scaledTimes(scaledAbs(scaledMinus(price, mark)), HUNDRED);
  if (scaledCompare(distance, scaledTimes(bandPercent, mark)) > 0) {
    const percent = scaledToWire(scaledDivide(distance, mark, 4, 'up'));
    const band = scaledToWire(bandPercent);
    denials.push(
      deny(
        RiskRule.priceBand,
        band,
        percent,
        `price ${scaledToWire(price)} is ${percent}% from the mark ${scaledToWire(mark)} on ${order.marketId}, beyond the band of ${band}%`,
      ),
    );
  }
}
