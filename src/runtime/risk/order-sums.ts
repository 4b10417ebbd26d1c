/**
 * The open orders' per-market sums the exposure rules read (remaining quantity on each side,
 * the count, the highest price), kept as orders change rather than summed again for every
 * intent: with a few hundred resting orders, summing them all cost more than the rest of the
 * gate. A change costs one market's sums; only removing that market's highest-priced order
 * reads the market's other orders again.
 *
 * The sums are exact (scaled integers), so sums kept this way equal sums taken from scratch,
 * whatever the order of the changes.
 */
import {
  type Scaled,
  SCALED_ZERO,
  scaledCompare,
  scaledMinus,
  scaledOfKept,
  scaledPlus,
} from '../../core/scaled.ts';
import type { Decimal } from '../../core/decimal.ts';
import type { MarketOrderSums, OrderSums, RiskOpenOrderView } from './view.ts';

export type { MarketOrderSums, OrderSums } from './view.ts';

export const NO_ORDERS: MarketOrderSums = Object.freeze({
  addingBuys: SCALED_ZERO,
  addingSells: SCALED_ZERO,
  allBuys: SCALED_ZERO,
  allSells: SCALED_ZERO,
  openOrders: 0,
  highestOrderPrice: null,
});

function sameAmount(a: Decimal | null, b: Decimal | null): boolean {
  return a === b || (a !== null && b !== null && a.eq(b));
}

/**
 * Whether two views of one order count the same in every sum and lookup: an order event that
 * changed only what the views leave out (the status moved on, from submitted to open) changes
 * nothing here.
 */
export function sameTerms(a: RiskOpenOrderView, b: RiskOpenOrderView): boolean {
  return (
    a.marketId === b.marketId &&
    a.side === b.side &&
    a.reduceOnly === b.reduceOnly &&
    a.clientOrderId === b.clientOrderId &&
    sameAmount(a.price, b.price) &&
    sameAmount(a.remainingQuantity, b.remainingQuantity)
  );
}

/** `sums` with `order` added (or taken away, `sign` -1; the highest price is then left as is). */
function withOrder(sums: MarketOrderSums, order: RiskOpenOrderView, sign: 1 | -1): MarketOrderSums {
  const remaining = scaledOfKept(order.remainingQuantity);
  const step = sign === 1 ? scaledPlus : scaledMinus;
  let { addingBuys, addingSells, allBuys, allSells, highestOrderPrice } = sums;
  if (order.side === 'buy') {
    allBuys = step(allBuys, remaining);
    if (!order.reduceOnly) addingBuys = step(addingBuys, remaining);
  } else {
    allSells = step(allSells, remaining);
    if (!order.reduceOnly) addingSells = step(addingSells, remaining);
  }
  if (sign === 1 && order.price) {
    const price = scaledOfKept(order.price);
    if (!highestOrderPrice || scaledCompare(price, highestOrderPrice) > 0) {
      highestOrderPrice = price;
    }
  }
  return {
    addingBuys,
    addingSells,
    allBuys,
    allSells,
    openOrders: sums.openOrders + sign,
    highestOrderPrice,
  };
}

export function addToSums(
  sums: MarketOrderSums | undefined,
  order: RiskOpenOrderView,
): MarketOrderSums {
  return withOrder(sums ?? NO_ORDERS, order, 1);
}

/**
 * `sums` without `order`; `others` are the market's orders left (read only when the order held
 * the highest price). Undefined once no order is left.
 */
export function removeFromSums(
  sums: MarketOrderSums,
  order: RiskOpenOrderView,
  others: () => Iterable<RiskOpenOrderView>,
): MarketOrderSums | undefined {
  if (sums.openOrders <= 1) return undefined;
  const removed = withOrder(sums, order, -1);
  const highest = sums.highestOrderPrice;
  if (!order.price || !highest || scaledCompare(scaledOfKept(order.price), highest) !== 0) {
    return removed;
  }
  let highestOrderPrice: Scaled | null = null;
  for (const other of others()) {
    if (!other.price) continue;
    const price = scaledOfKept(other.price);
    if (!highestOrderPrice || scaledCompare(price, highestOrderPrice) > 0)
      highestOrderPrice = price;
  }
  return { ...removed, highestOrderPrice };
}

/**
 * `sums` with `previous` replaced by `next`, on the same market and at the same price (an order
 * partly filled, or its status moved on): the quantities move, the highest price stays.
 * Undefined when the two differ otherwise.
 */
export function replaceInSums(
  sums: MarketOrderSums,
  previous: RiskOpenOrderView,
  next: RiskOpenOrderView,
): MarketOrderSums | undefined {
  if (previous.marketId !== next.marketId) return undefined;
  const samePrice =
    previous.price === next.price ||
    (previous.price !== null &&
      next.price !== null &&
      scaledCompare(scaledOfKept(previous.price), scaledOfKept(next.price)) === 0);
  if (!samePrice) return undefined;
  return withOrder(withOrder(sums, previous, -1), next, 1);
}

/** The sums of `orders` from scratch, `leftOut` excluded. */
export function sumOrders(
  orders: Iterable<RiskOpenOrderView>,
  leftOut: RiskOpenOrderView | null = null,
): Map<string, MarketOrderSums> {
  const sums = new Map<string, MarketOrderSums>();
  for (const order of orders) {
    if (order === leftOut) continue;
    sums.set(order.marketId, addToSums(sums.get(order.marketId), order));
  }
  return sums;
}

/**
 * Open order views by a key (the venue's order id), with their sums kept as views are set and
 * removed. Views are kept in the order they were first set.
 */
export class OrderSumsKeeper {
  private readonly views = new Map<string, RiskOpenOrderView>();
  private readonly sums = new Map<string, MarketOrderSums>();
  private readonly clientOrderIds = new Map<string | null, number>();

  /**
   * Sets the order's view, or removes it (`null`: the order no longer counts). Returns whether
   * anything changed: a view with the same terms as the one held (`sameTerms`) leaves the held
   * one in place.
   */
  set(key: string, view: RiskOpenOrderView | null): boolean {
    const previous = this.views.get(key);
    if (previous === view || (previous === undefined && view === null)) return false;
    if (previous !== undefined && view !== null && sameTerms(previous, view)) return false;
    // The view is replaced first, so a recount of the highest price no longer sees the old one.
    if (view === null) this.views.delete(key);
    else this.views.set(key, view);
    if (previous !== undefined) this.forgetClientOrderId(previous.clientOrderId);
    if (view !== null) {
      this.clientOrderIds.set(
        view.clientOrderId,
        (this.clientOrderIds.get(view.clientOrderId) ?? 0) + 1,
      );
    }
    if (previous !== undefined && view !== null) {
      // The usual update (status moved on, partly filled) keeps its price: no recount.
      const sums = this.sums.get(previous.marketId);
      const replaced = sums === undefined ? undefined : replaceInSums(sums, previous, view);
      if (replaced !== undefined) {
        this.sums.set(view.marketId, replaced);
        return true;
      }
    }
    if (previous !== undefined) this.take(previous);
    if (view !== null) this.sums.set(view.marketId, addToSums(this.sums.get(view.marketId), view));
    return true;
  }

  hasClientOrderId(clientOrderId: string | null): boolean {
    return this.clientOrderIds.has(clientOrderId);
  }

  get size(): number {
    return this.views.size;
  }

  orders(): IterableIterator<RiskOpenOrderView> {
    return this.views.values();
  }

  /**
   * The sums themselves, read-only and live (no copy): later changes show through, so a reader
   * reads them within its call and keeps nothing of them (the gate, for one intent).
   */
  live(): OrderSums {
    return this.sums;
  }

  private take(view: RiskOpenOrderView): void {
    const sums = this.sums.get(view.marketId);
    if (sums !== undefined) {
      const marketId = view.marketId;
      const left = removeFromSums(sums, view, () => this.ordersOn(marketId));
      if (left === undefined) this.sums.delete(marketId);
      else this.sums.set(marketId, left);
    }
  }

  private forgetClientOrderId(clientOrderId: string | null): void {
    const count = this.clientOrderIds.get(clientOrderId) ?? 0;
    if (count <= 1) this.clientOrderIds.delete(clientOrderId);
    else this.clientOrderIds.set(clientOrderId, count - 1);
  }

  /** The market's orders now held (the one being taken is already out of `views`). */
  private *ordersOn(marketId: string): Generator<RiskOpenOrderView> {
    for (const view of this.views.values()) if (view.marketId === marketId) yield view;
  }
}
