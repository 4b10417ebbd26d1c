/**
 * Market trading rules as decimals, and the tick and step arithmetic strategies need to put
 * prices and quantities on the market's grid before they become intent strings.
 */
import { type Decimal, maxDecimal, parseDecimal, ZERO } from '../../core/decimal.ts';
import { priceRoundingDirection } from '../../core/grid.ts';
import { divide, roundToIncrement } from '../decimal-division.ts';
import type { Market } from '../../protocol/index.ts';
import type { Side } from '../intents.ts';
import type { MarketInfo } from './types.ts';

function optionalDecimal(text: string | null): Decimal | null {
  return text === null ? null : parseDecimal(text);
}

export function marketInfoOf(market: Market): MarketInfo {
  const tick = optionalDecimal(market.price_tick);
  const step = optionalDecimal(market.quantity_step);
  return Object.freeze({
    marketId: market.market_id,
    displayName: market.display_name,
    baseAsset: market.base_asset,
    quoteAsset: market.quote_asset,
    status: market.status,
    routeId: market.preferred_route_id,
    // A zero increment would make every grid computation divide by zero; treat it as absent.
    priceTick: tick !== null && tick.gt(ZERO) ? tick : null,
    quantityStep: step !== null && step.gt(ZERO) ? step : null,
    minimumQuantity: optionalDecimal(market.minimum_quantity),
    minimumNotional: optionalDecimal(market.minimum_notional),
    maximumLeverage: market.maximum_leverage,
    marginModes: Object.freeze([...(market.margin_modes ?? [])]),
    orderTypes: Object.freeze([...(market.order_types ?? [])]),
  });
}

/** A price on the tick grid, rounded in the order owner's favour (buy down, sell up). */
export function priceOnTick(market: MarketInfo, price: Decimal, side: Side): Decimal {
  return market.priceTick === null
    ? price
    : roundToIncrement(price, market.priceTick, priceRoundingDirection(side));
}

/** A price on the tick grid, rounded to the nearest tick (for references, not orders). */
export function nearestTick(market: MarketInfo, price: Decimal): Decimal {
  return market.priceTick === null ? price : roundToIncrement(price, market.priceTick, 'nearest');
}

/** `price` moved by a whole number of ticks (negative moves down); the price itself as is. */
export function offsetByTicks(market: MarketInfo, price: Decimal, ticks: number): Decimal {
  if (!Number.isSafeInteger(ticks)) throw new RangeError(`ticks must be an integer: ${ticks}`);
  return market.priceTick === null ? price : price.plus(market.priceTick.times(ticks));
}

/** A quantity on the step grid, rounded down (never trade more than asked). */
export function quantityOnStep(market: MarketInfo, quantity: Decimal): Decimal {
  return market.quantityStep === null
    ? quantity
    : roundToIncrement(quantity, market.quantityStep, 'down');
}

/** True when the quantity meets the minimum quantity and, at `price`, the minimum notional. */
export function meetsMinimums(
  market: MarketInfo,
  quantity: Decimal,
  price: Decimal | null,
): boolean {
  if (quantity.lte(ZERO)) return false;
  if (market.minimumQuantity !== null && quantity.lt(market.minimumQuantity)) return false;
  if (market.minimumNotional !== null && price !== null) {
    return quantity.times(price).gte(market.minimumNotional);
  }
  return true;
}

/**
 * The smallest quantity on the step grid that meets the market's minimums at `price`: the
 * default order size of the example strategies.
 */
export function smallestOrderQuantity(market: MarketInfo, price: Decimal | null): Decimal {
  // A strategy asks on every requote, at a mark that drifts: the answer changes only when the
  // mark crosses a step of the notional minimum. It never grows with the price (the division
  // and both roundings are monotone), so every price between two that gave the same quantity
  // gives it too: one range per market answers most calls with two comparisons.
  if (price === null || price.lte(ZERO)) return computeSmallestOrderQuantity(market, price);
  const range = smallestByPrice.get(market);
  if (range !== undefined && price.gte(range.low) && price.lte(range.high)) return range.quantity;
  const quantity = computeSmallestOrderQuantity(market, price);
  if (range !== undefined && range.quantity.eq(quantity)) {
    if (price.lt(range.low)) range.low = price;
    else range.high = price;
  } else {
    smallestByPrice.set(market, { low: price, high: price, quantity });
  }
  return quantity;
}

/** Per market, positive prices from `low` to `high` (both asked) that gave `quantity`. */
const smallestByPrice = new WeakMap<
  MarketInfo,
  { low: Decimal; high: Decimal; readonly quantity: Decimal }
>();

function computeSmallestOrderQuantity(market: MarketInfo, price: Decimal | null): Decimal {
  let quantity = market.minimumQuantity ?? market.quantityStep ?? ZERO;
  if (market.minimumNotional !== null && price !== null && price.gt(ZERO)) {
    quantity = maxDecimal(quantity, divide(market.minimumNotional, price));
  }
  if (market.quantityStep !== null) {
    quantity = maxDecimal(
      roundToIncrement(quantity, market.quantityStep, 'up'),
      market.quantityStep,
    );
  }
  return quantity;
}
