/**
 * The run broken down by market and by strategy: fills, notional, fees and the round trips of
 * each group's own fills (`round-trips.ts`), in decimals. A strategy's trips are rebuilt from its
 * fills alone, so two strategies on one market each see their own trades; a market's trips are
 * the account's.
 */
import { Big, type Decimal, parseDecimal, sumDecimals, ZERO } from '../../core/decimal.ts';
import type { Fill } from '../../protocol/index.ts';
import { reconstructRoundTrips } from './round-trips.ts';

export interface GroupFigures {
  readonly fills: number;
  readonly tradedNotional: Decimal;
  readonly fees: Decimal;
  /** Closed round trips and how they ended. */
  readonly trades: number;
  readonly winningTrades: number;
  readonly losingTrades: number;
  readonly openTrades: number;
  readonly winRate: Decimal | null;
  /** Σ net PnL of closed round trips (fees included). */
  readonly realizedPnl: Decimal;
}

export function groupFigures(fills: readonly Fill[]): GroupFigures {
  const trips = reconstructRoundTrips(fills);
  const closed = trips.filter((trip) => trip.closedAt !== null);
  const winningTrades = closed.filter((trip) => trip.netPnl.gt(0)).length;
  return {
    fills: fills.length,
    tradedNotional: sumDecimals(
      fills.map((fill) => parseDecimal(fill.price).times(parseDecimal(fill.quantity))),
    ),
    fees: sumDecimals(fills.map((fill) => parseDecimal(fill.fee))),
    trades: closed.length,
    winningTrades,
    losingTrades: closed.filter((trip) => trip.netPnl.lt(0)).length,
    openTrades: trips.length - closed.length,
    winRate: closed.length > 0 ? new Big(winningTrades).div(closed.length) : null,
    realizedPnl: closed.reduce((sum, trip) => sum.plus(trip.netPnl), ZERO),
  };
}

/** Fills grouped by a key, groups in the order of `keys` then of first appearance. */
export function groupFills(
  fills: readonly Fill[],
  keyOf: (fill: Fill) => string | undefined,
  keys: readonly string[] = [],
): Map<string, Fill[]> {
  const groups = new Map<string, Fill[]>(keys.map((key) => [key, []]));
  for (const fill of fills) {
    const key = keyOf(fill);
    if (key === undefined) continue;
    let group = groups.get(key);
    if (group === undefined) {
      group = [];
      groups.set(key, group);
    }
    group.push(fill);
  }
  return groups;
}
