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
 *
 * A trip remembers why it ended: the exit reason of the fill that brought the position back to
 * zero (`ExitReason`: the strategy's own order, a fired emulated exit or bracket leg, a
 * liquidation); a trip still open has none until the report marks it at the end of the data.
 *
 * `RoundTripBook` takes fills one at a time and hands each trip over as it closes, so a run of
 * any length holds only the trips still open (one per market) and their lots. A trip keeps the
 * ids of its first `TRADE_FILL_IDS` fills and counts the rest. It can also follow the market
 * price while a trip is open (`price`), for its excursions (`excursions.ts`).
 */
import { type Decimal, parseDecimal, ZERO } from '../../core/decimal.ts';
import type { Fill } from '../../protocol/index.ts';
import { fillTime } from './input.ts';

export type TripDirection = 'long' | 'short';

/**
 * Why a trade ended: `signal` (an order of the strategy's own), `stop`, `take_profit` and
 * `trailing` (an emulated exit that fired), `bracket_stop_loss` and `bracket_take_profit` (a
 * bracket's leg that fired), `liquidation` (the venue closed the position), `end_of_data` (still
 * open when the data ended: marked to market, not closed).
 */
export const EXIT_REASONS = [
  'signal',
  'stop',
  'take_profit',
  'trailing',
  'bracket_stop_loss',
  'bracket_take_profit',
  'liquidation',
  'end_of_data',
] as const;
export type ExitReason = (typeof EXIT_REASONS)[number];

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
  /** Funding received (negative: paid) while the trip was open (`RoundTripBook.funding`). */
  readonly funding: Decimal;
  /** grossPnl − fees + funding. */
  readonly netPnl: Decimal;
  /**
   * Fills that took part, in order, the first `TRADE_FILL_IDS` of them; a fill that crossed zero
   * is in two trips.
   */
  readonly fillIds: readonly string[];
  /** How many fills took part (all of them, also those beyond `fillIds`). */
  readonly fillCount: number;
  /** Lowest and highest market price seen while the trip was open (`RoundTripBook.price`). */
  readonly priceLow: string | null;
  readonly priceHigh: string | null;
  /** Order in which the trip opened, from 0 (the order the report lists trades in). */
  readonly sequence: number;
  /** The reason of the fill that closed it; null while it is open. */
  readonly exitReason: ExitReason | null;
  /** What is still held (zero once closed), and its cost: Σ lot price × lot quantity. */
  readonly heldQuantity: Decimal;
  readonly heldCost: Decimal;
}

/** Fill ids a trip keeps; longer trips count the rest (`fillCount`). */
export const TRADE_FILL_IDS = 1_000;

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
  funding: Decimal;
  readonly fillIds: string[];
  fillCount: number;
  priceLow: string | null;
  lowValue: number;
  priceHigh: string | null;
  highValue: number;
  /** Order of opening (trips are listed in the order they opened). */
  readonly slot: number;
  exitReason: ExitReason | null;
}

/** Fills in time order, ties in list order. */
export function fillsInTimeOrder(fills: readonly Fill[]): Fill[] {
  return fills
    .map((fill, index) => ({ fill, index, t: fillTime(fill) }))
    .sort((a, b) => a.t - b.t || a.index - b.index)
    .map((entry) => entry.fill);
}

function finish(trip: OpenTrip, closedAt: number | null): RoundTrip {
  let heldQuantity = ZERO;
  let heldCost = ZERO;
  for (const lot of trip.lots) {
    heldQuantity = heldQuantity.plus(lot.quantity);
    heldCost = heldCost.plus(lot.price.times(lot.quantity));
  }
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
    funding: trip.funding,
    netPnl: trip.grossPnl.minus(trip.fees).plus(trip.funding),
    fillIds: trip.fillIds,
    fillCount: trip.fillCount,
    priceLow: trip.priceLow,
    priceHigh: trip.priceHigh,
    sequence: trip.slot,
    exitReason: closedAt === null ? null : trip.exitReason,
    heldQuantity,
    heldCost,
  };
}

/**
 * The PnL of what a trip still holds, marked at `mark`: (mark − lot price) × lot quantity over
 * its lots, sign-flipped for a short. Zero for a closed trip.
 */
export function unrealizedPnl(trip: RoundTrip, mark: Decimal): Decimal {
  const value = mark.times(trip.heldQuantity).minus(trip.heldCost);
  return trip.direction === 'long' ? value : value.neg();
}

/**
 * Round trips built fill by fill. Fills come in time order (ties in the order given); each trip
 * goes to `onClosed` as it closes; `open()` lists those still open, in the order they opened.
 * Trips are grouped by `keyOf` (the market by default: one trip at a time per key).
 */
export class RoundTripBook {
  private readonly trips = new Map<string, OpenTrip>();
  private opened = 0;

  constructor(private readonly onClosed: (trip: RoundTrip) => void) {}

  /** Trips opened so far. */
  get count(): number {
    return this.opened;
  }

  /** Trips open now (at most one per key). */
  get openCount(): number {
    return this.trips.size;
  }

  add(
    fill: Fill,
    t: number = fillTime(fill),
    key: string = fill.market_id,
    reason: ExitReason = 'signal',
  ): void {
    const quantity = parseDecimal(fill.quantity);
    const price = parseDecimal(fill.price);
    const fee = parseDecimal(fill.fee);
    const direction: TripDirection = fill.side === 'buy' ? 'long' : 'short';
    const trip = this.trips.get(key);
    if (!trip) {
      this.start(key, fill.market_id, direction, t, quantity, price, fee, fill.fill_id);
      return;
    }
    if (trip.direction === direction) {
      trip.lots.push({ quantity, price });
      trip.openedQuantity = trip.openedQuantity.plus(quantity);
      trip.openedNotional = trip.openedNotional.plus(price.times(quantity));
      trip.fees = trip.fees.plus(fee);
      noteFill(trip, fill.fill_id);
      return;
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
    trip.exitReason = reason;
    noteFill(trip, fill.fill_id);
    if (trip.closedQuantity.eq(trip.openedQuantity)) {
      this.trips.delete(key);
      this.onClosed(finish(trip, t));
      const rest = quantity.minus(closing);
      if (rest.gt(0)) {
        this.start(
          key,
          fill.market_id,
          direction,
          t,
          rest,
          price,
          fee.minus(closingFee),
          fill.fill_id,
        );
      }
    }
  }

  /** The market price of `key`'s open trip, if any, at one instant (for its excursions). */
  price(key: string, value: string, numeric: number = Number(value)): void {
    const trip = this.trips.get(key);
    if (trip === undefined) return;
    if (trip.priceLow === null || numeric < trip.lowValue) {
      trip.priceLow = value;
      trip.lowValue = numeric;
    }
    if (trip.priceHigh === null || numeric > trip.highValue) {
      trip.priceHigh = value;
      trip.highValue = numeric;
    }
  }

  /** The trips still open, in the order they opened (not closed: the book goes on). */
  open(): RoundTrip[] {
    return [...this.trips.values()]
      .sort((a, b) => a.slot - b.slot)
      .map((trip) => finish(trip, null));
  }

  /** A funding payment (received; negative: paid) of the trip open under `key`; false if none. */
  funding(key: string, amount: Decimal): boolean {
    const trip = this.trips.get(key);
    if (trip === undefined) return false;
    trip.funding = trip.funding.plus(amount);
    return true;
  }

  private start(
    key: string,
    marketId: string,
    direction: TripDirection,
    t: number,
    quantity: Decimal,
    price: Decimal,
    fee: Decimal,
    fillId: string,
  ): void {
    this.trips.set(key, {
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
      funding: ZERO,
      fillIds: [fillId],
      fillCount: 1,
      priceLow: null,
      lowValue: Number.NaN,
      priceHigh: null,
      highValue: Number.NaN,
      slot: this.opened++,
      exitReason: null,
    });
  }
}

function noteFill(trip: OpenTrip, fillId: string): void {
  trip.fillCount++;
  if (trip.fillIds.length < TRADE_FILL_IDS) trip.fillIds.push(fillId);
}
