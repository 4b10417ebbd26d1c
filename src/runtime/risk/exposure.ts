/**
 * The exposure maths of the risk rules: each market's book (its position and its open orders'
 * sums, an amended order left out), whether an order adds or reduces exposure, and the
 * position, notional, gross exposure and account leverage an order could reach if it and every
 * resting order on its side filled.
 */
import { toWire } from '../../core/decimal.ts';
import {
  type Scaled,
  SCALED_ZERO,
  scaledAbs,
  scaledCompare,
  scaledDivide,
  scaledMinus,
  scaledNegate,
  scaledOfKept,
  scaledPlus,
  scaledSign,
  scaledTimes,
  scaledToWire,
} from '../../core/scaled.ts';
import type { Denial } from '../intents.ts';
import type { MarketLimits, RiskConfig } from './config.ts';
import {
  type MarketOrderSums,
  NO_ORDERS,
  type OrderSums,
  removeFromSums,
  sumOrders,
} from './order-sums.ts';
import { deny, type ExposureEffect, limitBelow, type OrderShape, RiskRule } from './rules.ts';
import { lookup, type RiskOpenOrderView, type RiskView } from './view.ts';

/** One market's position and its open orders' sums (an amended order left out). */
export interface MarketBook extends MarketOrderSums {
  readonly position: Scaled;
}

/** A market's book with no open orders. */
function emptyBook(position: Scaled): MarketBook {
  return bookOf(position, NO_ORDERS);
}

/** The open orders' sums by market, an amended order left out. */
export function orderSumsWithout(view: RiskView, replaces: RiskOpenOrderView | null): OrderSums {
  // The snapshot's sums when it keeps them, else summed here; an amended order is taken out of
  // its own market's sums (recounted from scratch only when it held the highest price).
  let sums: OrderSums = view.orderSums ?? sumOrders(view.openOrders, replaces);
  if (view.orderSums && replaces) {
    const own = view.orderSums.get(replaces.marketId);
    if (own) {
      const left = removeFromSums(own, replaces, () =>
        view.openOrders.filter(
          (order) => order !== replaces && order.marketId === replaces.marketId,
        ),
      );
      const copy = new Map(sums);
      if (left) copy.set(replaces.marketId, left);
      else copy.delete(replaces.marketId);
      sums = copy;
    }
  }
  return sums;
}

/** One market's book: its position and its open orders' sums. */
export function marketBook(view: RiskView, sums: OrderSums, marketId: string): MarketBook {
  const held = lookup(view.positions, marketId);
  const position = held ? scaledOfKept(held.quantity) : SCALED_ZERO;
  const market = sums.get(marketId);
  return market ? bookOf(position, market) : emptyBook(position);
}

/** A market's book: its position and the sums of its open orders. */
function bookOf(position: Scaled, market: MarketOrderSums): MarketBook {
  return {
    position,
    addingBuys: market.addingBuys,
    addingSells: market.addingSells,
    allBuys: market.allBuys,
    allSells: market.allSells,
    openOrders: market.openOrders,
    highestOrderPrice: market.highestOrderPrice,
  };
}

/**
 * Every market's book (the markets with a position, then those with open orders only), for the
 * account-wide limits. The order's own market alone is built per intent (`marketBook`).
 */
function marketBooks(view: RiskView, sums: OrderSums): Map<string, MarketBook> {
  const books = new Map<string, MarketBook>();
  for (const marketId of Object.keys(view.positions)) {
    const position = view.positions[marketId];
    if (position) books.set(marketId, emptyBook(scaledOfKept(position.quantity)));
  }
  for (const [marketId, market] of sums) {
    const book = books.get(marketId);
    books.set(marketId, bookOf(book ? book.position : SCALED_ZERO, market));
  }
  return books;
}

/** The largest absolute position the market can reach if every adding order fills. */
function worstCasePosition(book: MarketBook): Scaled {
  const long = scaledAbs(scaledPlus(book.position, book.addingBuys));
  const short = scaledAbs(scaledMinus(book.position, book.addingSells));
  return scaledCompare(long, short) > 0 ? long : short;
}

function referencePrice(view: RiskView, marketId: string, book: MarketBook): Scaled {
  const mark = lookup(view.markets, marketId)?.markPrice;
  if (mark) return scaledOfKept(mark);
  const entry = lookup(view.positions, marketId)?.entryPrice;
  if (entry) return scaledOfKept(entry);
  return book.highestOrderPrice ?? SCALED_ZERO;
}

export function classify(
  order: OrderShape,
  book: MarketBook,
  quantity: Scaled | null,
): ExposureEffect {
  if (order.reduceOnly) return 'reduces_exposure';
  if (!quantity) return 'adds_exposure';
  // What is left of the position once every resting order on this side has filled.
  const left =
    order.side === 'buy'
      ? scaledMinus(scaledNegate(book.position), book.allBuys)
      : scaledMinus(book.position, book.allSells);
  return scaledSign(left) > 0 && scaledCompare(quantity, left) <= 0
    ? 'reduces_exposure'
    : 'adds_exposure';
}

export function checkExposure(
  order: OrderShape,
  view: RiskView,
  config: RiskConfig,
  limits: MarketLimits,
  sums: OrderSums,
  book: MarketBook,
  quantity: Scaled,
  mark: Scaled,
  denials: Denial[],
): void {
  // The position this market reaches, in the order's direction, if this order and every resting
  // order that adds on the same side fill.
  const reached =
    order.side === 'buy'
      ? scaledPlus(scaledPlus(book.position, book.addingBuys), quantity)
      : scaledMinus(scaledMinus(book.position, book.addingSells), quantity);
  const extendsPosition = order.side === 'buy' ? scaledSign(reached) > 0 : scaledSign(reached) < 0;
  const reachedSize = scaledAbs(reached);
  const maximumQuantity = limits.max_position_quantity;
  if (extendsPosition && maximumQuantity && limitBelow(maximumQuantity, reachedSize)) {
    const observed = scaledToWire(reachedSize);
    denials.push(
      deny(
        RiskRule.maxPositionQuantity,
        toWire(maximumQuantity),
        observed,
        `position on ${order.marketId} could reach ${observed}, above the limit ${toWire(maximumQuantity)}`,
      ),
    );
  }
  const maximumNotional = limits.max_position_notional;
  if (extendsPosition && maximumNotional) {
    const reachedNotional = scaledTimes(reachedSize, mark);
    if (limitBelow(maximumNotional, reachedNotional)) {
      const observed = scaledToWire(reachedNotional);
      denials.push(
        deny(
          RiskRule.maxPositionNotional,
          toWire(maximumNotional),
          observed,
          `position notional on ${order.marketId} could reach ${observed}, above the limit ${toWire(maximumNotional)}`,
        ),
      );
    }
  }
  if (!config.max_gross_exposure && !config.max_account_leverage) return;

  let gross = SCALED_ZERO;
  for (const [marketId, other] of marketBooks(view, sums)) {
    if (marketId === order.marketId) continue;
    gross = scaledPlus(
      gross,
      scaledTimes(worstCasePosition(other), referencePrice(view, marketId, other)),
    );
  }
  const after: MarketBook =
    order.side === 'buy'
      ? { ...book, addingBuys: scaledPlus(book.addingBuys, quantity) }
      : { ...book, addingSells: scaledPlus(book.addingSells, quantity) };
  gross = scaledPlus(gross, scaledTimes(worstCasePosition(after), mark));

  const maximumGross = config.max_gross_exposure;
  if (maximumGross && limitBelow(maximumGross, gross)) {
    const observed = scaledToWire(gross);
    denials.push(
      deny(
        RiskRule.maxGrossExposure,
        toWire(maximumGross),
        observed,
        `gross exposure could reach ${observed}, above the limit ${toWire(maximumGross)}`,
      ),
    );
  }
  const maximumLeverage = config.max_account_leverage;
  if (maximumLeverage) {
    const equity = view.equity ? scaledOfKept(view.equity) : null;
    if (!view.equity || !equity || scaledSign(equity) <= 0) {
      denials.push(
        deny(
          RiskRule.maxAccountLeverage,
          toWire(maximumLeverage),
          view.equity ? `equity ${toWire(view.equity)}` : 'equity unknown',
          'account leverage cannot be bounded without a positive equity',
        ),
      );
    } else if (scaledCompare(gross, scaledTimes(scaledOfKept(maximumLeverage), equity)) > 0) {
      const leverage = scaledToWire(scaledDivide(gross, equity, 6, 'up'));
      denials.push(
        deny(
          RiskRule.maxAccountLeverage,
          toWire(maximumLeverage),
          leverage,
          `account leverage could reach ${leverage}, above the limit ${toWire(maximumLeverage)}`,
        ),
      );
    }
  }
}
