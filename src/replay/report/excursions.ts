/**
 * Maximum adverse and favourable excursion of a round trip (MAE, MFE): how far the market price
 * went against and for the trip while it was open, as a fraction of its entry price. Prices are
 * read from the market's bucketed price series (`series.ts`), so the figures hold at that
 * series' resolution: a bucket that overlaps the trip counts whole. The trip's own fill prices
 * count too, so a trip always has its entry and exit.
 *
 * `tripExcursion` is what a report gives since schema 3: the same definition over every market
 * price seen while the trip was open (`RoundTripBook.price`), at full resolution and with no
 * series kept for the whole run.
 */
import { type Decimal, parseDecimal, ZERO } from '../../core/decimal.ts';
import type { RoundTrip } from './round-trips.ts';
import type { SeriesPoint } from './series.ts';

export interface Excursion {
  readonly adverse: Decimal;
  readonly favourable: Decimal;
}

/** MAE and MFE of a trip from its entry, its exit and the market prices it saw while open. */
export function tripExcursion(trip: RoundTrip): Excursion {
  let low = trip.entryPrice;
  let high = trip.entryPrice;
  const extremes = [trip.exitPrice, trip.priceLow, trip.priceHigh];
  for (const value of extremes) {
    if (value === null) continue;
    const price = typeof value === 'string' ? parseDecimal(value) : value;
    if (price.lt(low)) low = price;
    if (price.gt(high)) high = price;
  }
  return fractions(trip, low, high);
}

function fractions(trip: RoundTrip, low: Decimal, high: Decimal): Excursion {
  const entry = trip.entryPrice;
  if (entry.lte(0)) return { adverse: ZERO, favourable: ZERO };
  const down = entry.minus(low).div(entry);
  const up = high.minus(entry).div(entry);
  return trip.direction === 'long'
    ? { adverse: down, favourable: up }
    : { adverse: up, favourable: down };
}

export function excursionOf(
  trip: RoundTrip,
  prices: readonly SeriesPoint[],
  endMs: number,
): Excursion {
  const closedAt = trip.closedAt ?? endMs;
  let low = trip.entryPrice;
  let high = trip.entryPrice;
  if (trip.exitPrice !== null) {
    if (trip.exitPrice.lt(low)) low = trip.exitPrice;
    if (trip.exitPrice.gt(high)) high = trip.exitPrice;
  }
  for (const point of prices) {
    if (point.last < trip.openedAt) continue;
    if (point.first > closedAt) break;
    const pointLow = parseDecimal(point.low);
    const pointHigh = parseDecimal(point.high);
    if (pointLow.lt(low)) low = pointLow;
    if (pointHigh.gt(high)) high = pointHigh;
  }
  return fractions(trip, low, high);
}
