/**
 * Trades as round trips: a trade on a market starts when its position leaves zero and ends when
 * the position is back at zero. Fills are taken in time order (ties in list order).
 *
 * - Adding to the position (same side) adds a lot; reducing it closes the oldest lots first
 *   (FIFO), each closing quantity realizing (exit − entry) × quantity, sign-flipped for shorts.
 * - A fill that crosses zero (long to short in one fill) is split: the part that brings the
 *   position to zero closes the current trip, the rest opens the next one. Its fee is split in
 *   proportion to the quantities (the opening part gets the exact remainder, so fees add up).
 * - A trip still open at the end is listed with `closedAt: null` and not counted as a trade.
 *
 * For a whole round trip the realized PnL does not depend on the lot method (it is sell notional
 * minus buy notional); FIFO only decides how a still-open trip's realized part is counted.
 */
import { type Decimal, parseDecimal, ZERO } from '../../core/decimal.ts';
import type { Fill } from '../../protocol/index.ts';
import { fillTime } from './input.ts';

export type TripDirection = 'long' | 'short';

export interface RoundTrip {
  readonly marketId: string;
  readonly direction: TripDirection;
  readonly openedAt: number;
  readonly closedAt: number | null;
  /** Quantity that opened or added to the position. */
  readonly openedQuantity: Decimal;
  /** Quantity that reduced it. Equal to `openedQuantity` once closed. */
  readonly closedQuantity: Decimal;
  /** Quantity-weighted average price of the opening quantity. */
  readonly entryPrice: Decimal;
  /** Quantity-weighted average price of the closing quantity; null when nothing closed yet. */
  readonly exitPrice: Decimal | null;
  /** Realized PnL before fees (FIFO lots). */
  readonly grossPnl: Decimal;
  /** Fees paid on the trip's share of its fills. */
  readonly fees: Decimal;
  readonly netPnl: Decimal;
  /** Fills that took part, in order; a fill that crossed zero is in two trips. */
  readonly fillIds: readonly string[];
}

interface Lot {
  quantity: Decimal;
  readonly price: Decimal;
}

interface OpenTrip {
  readonly marketId: string;
  readonly direction: TripDirection;
  readonly openedAt: number;
  readonly lots: Lot[];
  openedQuantity: Decimal;
  openedNotional: Decimal;
  closedQuantity: Decimal;
  closedNotional: Decimal;
  grossPnl: Decimal;
  fees: Decimal;
  readonly fillIds: string[];
  /** Where the finished trip goes in the output (trips are listed in the order they opened). */
  readonly slot: number;
}

/** Fills in time order, ties in list order. */
export function fillsInTimeOrder(fills: readonly Fill[]): Fill[] {
  return fills
    .map((fill, index) => ({ fill, index, t: fillTime(fill) }))
    .sort((a, b) => a.t - b.t || a.index - b.index)
    .map((entry) => entry.fill);
}

function finish(trip: OpenTrip, closedAt: number | null): RoundTrip {
  return {
    marketId: trip.marketId,
    direction: trip.direction,
    openedAt: trip.openedAt,
    closedAt,
    openedQuantity: trip.openedQuantity,
    closedQuantity: trip.closedQuantity,
    entryPrice: trip.openedNotional.div(trip.openedQuantity),
    exitPrice: trip.closedQuantity.gt(0) ? trip.closedNotional.div(trip.closedQuantity) : null,
    grossPnl: trip.grossPnl,
    fees: trip.fees,
    netPnl: trip.grossPnl.minus(trip.fees),
    fillIds: trip.fillIds,
  };
}

/** Round trips in the order they opened, with trips still open at the end last in their place. */
export function reconstructRoundTrips(fills: readonly Fill[]): RoundTrip[] {
  const output: (RoundTrip | null)[] = [];
  const open = new Map<string, OpenTrip>();

  const start = (
    marketId: string,
    direction: TripDirection,
    t: number,
    quantity: Decimal,
    price: Decimal,
    fee: Decimal,
    fillId: string,
  ): void => {
    const trip: OpenTrip = {
      marketId,
      direction,
      openedAt: t,
      lots: [{ quantity, price }],
      openedQuantity: quantity,
      openedNotional: price.times(quantity),
      closedQuantity: ZERO,
      closedNotional: ZERO,
      grossPnl: ZERO,
      fees: fee,
      fillIds: [fillId],
      slot: output.length,
    };
    output.push(null);
    open.set(marketId, trip);
  };

  for (const fill of fillsInTimeOrder(fills)) {
    const t = fillTime(fill);
    const quantity = parseDecimal(fill.quantity);
    const price = parseDecimal(fill.price);
    const fee = parseDecimal(fill.fee);
    const direction: TripDirection = fill.side === 'buy' ? 'long' : 'short';
    const trip = open.get(fill.market_id);
    if (!trip) {
      start(fill.market_id, direction, t, quantity, price, fee, fill.fill_id);
      continue;
    }
    if (trip.direction === direction) {
      trip.lots.push({ quantity, price });
      trip.openedQuantity = trip.openedQuantity.plus(quantity);
      trip.openedNotional = trip.openedNotional.plus(price.times(quantity));
      trip.fees = trip.fees.plus(fee);
      trip.fillIds.push(fill.fill_id);
      continue;
    }
    const held = trip.openedQuantity.minus(trip.closedQuantity);
    const closing = quantity.lte(held) ? quantity : held;
    const closingFee = closing.eq(quantity) ? fee : fee.times(closing).div(quantity);
    let remaining = closing;
    const sign = trip.direction === 'long' ? 1 : -1;
    while (remaining.gt(0)) {
      const lot = trip.lots[0]!;
      const matched = lot.quantity.lte(remaining) ? lot.quantity : remaining;
      trip.grossPnl = trip.grossPnl.plus(price.minus(lot.price).times(matched).times(sign));
      lot.quantity = lot.quantity.minus(matched);
      remaining = remaining.minus(matched);
      if (lot.quantity.eq(0)) trip.lots.shift();
    }
    trip.closedQuantity = trip.closedQuantity.plus(closing);
    trip.closedNotional = trip.closedNotional.plus(price.times(closing));
    trip.fees = trip.fees.plus(closingFee);
    trip.fillIds.push(fill.fill_id);
    if (trip.closedQuantity.eq(trip.openedQuantity)) {
      output[trip.slot] = finish(trip, t);
      open.delete(fill.market_id);
      const rest = quantity.minus(closing);
      if (rest.gt(0)) {
        start(fill.market_id, direction, t, rest, price, fee.minus(closingFee), fill.fill_id);
      }
    }
  }
  for (const trip of open.values()) output[trip.slot] = finish(trip, null);
  return output as RoundTrip[];
}

/** Signed position per market after each fill, starting flat (long positive). */
export function positionsFromFills(fills: readonly Fill[]): {
  readonly t: number;
  readonly marketId: string;
  readonly quantity: Decimal;
}[] {
  const positions = new Map<string, Decimal>();
  return fillsInTimeOrder(fills).map((fill) => {
    const quantity = parseDecimal(fill.quantity);
    const before = positions.get(fill.market_id) ?? ZERO;
    const after = fill.side === 'buy' ? before.plus(quantity) : before.minus(quantity);
    positions.set(fill.market_id, after);
    return { t: fillTime(fill), marketId: fill.market_id, quantity: after };
  });
}
