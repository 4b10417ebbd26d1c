/**
 * The report's statistics computed over whole lists, as the report did before it was built as
 * the run goes (report schema 2): kept verbatim, out of the package, as the reference the
 * running computation (`src/replay/report/collector.ts`, `running-statistics.ts`) is compared
 * against digit for digit. Definitions: the head of `src/replay/report/statistics.ts`.
 */
import { Big, type Decimal, parseDecimal, sumDecimals, ZERO } from '../../src/core/decimal.ts';
import type { Fill } from '../../src/protocol/index.ts';
import { divide } from '../../src/runtime/decimal-division.ts';
import {
  type BacktestStatistics,
  DEFAULT_SHARPE_PERIOD_MS,
  type Drawdown,
  type EquitySample,
  fillTime,
  fillsInTimeOrder,
  MIN_ANNUALIZED_RUN_MS,
  type ReportInput,
  type RoundTrip,
  RoundTripBook,
  type SharpeResult,
  type StatisticsOptions,
  YEAR_MS,
} from '../../src/replay/report/index.ts';

/** Round trips in the order they opened, with trips still open at the end last in their place. */
export function reconstructRoundTrips(fills: readonly Fill[]): RoundTrip[] {
  const output: RoundTrip[] = [];
  const book = new RoundTripBook((trip) => {
    output[trip.sequence] = trip;
  });
  for (const fill of fillsInTimeOrder(fills)) book.add(fill);
  for (const trip of book.open()) output[trip.sequence] = trip;
  return output;
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

export interface ParsedSample {
  readonly t: number;
  readonly equity: Decimal;
}

export function parseSamples(samples: readonly EquitySample[]): ParsedSample[] {
  return samples.map((sample) => ({
    t: sample.t,
    equity: parseDecimal(sample.equity),
  }));
}

/** E(t): the last sample at or before t, else the starting balance. */
function equityReader(start: Decimal, samples: readonly ParsedSample[]): (t: number) => Decimal {
  let index = -1;
  let lastT = Number.NEGATIVE_INFINITY;
  return (t: number) => {
    // Reads come in increasing t, so one forward pass serves them all.
    if (t < lastT) index = -1;
    lastT = t;
    while (index + 1 < samples.length && samples[index + 1]!.t <= t) index++;
    return index < 0 ? start : samples[index]!.equity;
  };
}

export function maxDrawdown(
  startingBalance: Decimal,
  samples: readonly ParsedSample[],
  startMs: number,
): Drawdown {
  let peak = startingBalance;
  let peakAt = startMs;
  let fraction = ZERO;
  let amount = ZERO;
  let worstPeakAt: number | null = null;
  let troughAt: number | null = null;
  for (const sample of samples) {
    if (sample.equity.gt(peak)) {
      peak = sample.equity;
      peakAt = sample.t;
      continue;
    }
    const drop = peak.minus(sample.equity);
    if (drop.gt(amount)) amount = drop;
    // `divide` is `div` to the digit, in integer arithmetic: one per equity sample, twice.
    const drawdown = divide(drop, peak);
    if (drawdown.gt(fraction)) {
      fraction = drawdown;
      worstPeakAt = peakAt;
      troughAt = sample.t;
    }
  }
  return { fraction, amount, peakAt: worstPeakAt, troughAt };
}

/** Drawdown fraction at each sample (for the chart). */
export function drawdownSeries(
  startingBalance: Decimal,
  samples: readonly ParsedSample[],
): Decimal[] {
  let peak = startingBalance;
  return samples.map((sample) => {
    if (sample.equity.gt(peak)) peak = sample.equity;
    return divide(peak.minus(sample.equity), peak);
  });
}

export function sharpeRatio(
  startingBalance: Decimal,
  samples: readonly ParsedSample[],
  startMs: number,
  endMs: number,
  periodMs: number,
): SharpeResult {
  const annualization = new Big(YEAR_MS).div(periodMs).sqrt();
  const periods = Math.floor((endMs - startMs) / periodMs);
  const none: SharpeResult = {
    ratio: null,
    sortino: null,
    periodMs,
    periods: Math.max(0, periods),
    annualization,
    annualizedRatio: null,
    annualizedSortino: null,
  };
  if (periods < 2) return none;
  const equityAt = equityReader(startingBalance, samples);
  const returns: Decimal[] = [];
  let previous = equityAt(startMs);
  for (let j = 1; j <= periods; j++) {
    const current = equityAt(startMs + j * periodMs);
    if (previous.lte(0)) return none;
    returns.push(current.div(previous).minus(1));
    previous = current;
  }
  const count = new Big(returns.length);
  const mean = sumDecimals(returns).div(count);
  const squares = sumDecimals(returns.map((value) => value.minus(mean).pow(2)));
  const deviation = squares.div(count.minus(1)).sqrt();
  const downside = sumDecimals(returns.map((value) => (value.lt(0) ? value.pow(2) : ZERO)))
    .div(count)
    .sqrt();
  const ratio = deviation.eq(0) ? null : mean.div(deviation);
  const sortino = downside.eq(0) ? null : mean.div(downside);
  const annualize = endMs - startMs >= MIN_ANNUALIZED_RUN_MS;
  return {
    ratio,
    sortino,
    periodMs,
    periods,
    annualization,
    annualizedRatio: annualize && ratio !== null ? ratio.times(annualization) : null,
    annualizedSortino: annualize && sortino !== null ? sortino.times(annualization) : null,
  };
}

/** Time-weighted mean of E(t) over [start, end]; E(start) when the range is empty. */
export function averageEquity(
  startingBalance: Decimal,
  samples: readonly ParsedSample[],
  startMs: number,
  endMs: number,
): Decimal {
  const equityAt = equityReader(startingBalance, samples);
  if (endMs <= startMs) return equityAt(startMs);
  let area = ZERO;
  let cursor = startMs;
  let level = equityAt(startMs);
  for (const sample of samples) {
    if (sample.t <= startMs) continue;
    if (sample.t >= endMs) break;
    area = area.plus(level.times(sample.t - cursor));
    cursor = sample.t;
    level = sample.equity;
  }
  area = area.plus(level.times(endMs - cursor));
  return area.div(endMs - startMs);
}

/** Share of [start, end] with any market's position non-zero; null for an empty range. */
export function exposure(
  positions: readonly {
    readonly t: number;
    readonly marketId: string;
    readonly quantity: Decimal;
  }[],
  startMs: number,
  endMs: number,
): Decimal | null {
  if (endMs <= startMs) return null;
  const open = new Set<string>();
  let exposedMs = 0;
  let cursor = startMs;
  for (const sample of positions) {
    const t = Math.min(Math.max(sample.t, startMs), endMs);
    if (open.size > 0) exposedMs += t - cursor;
    cursor = t;
    if (sample.quantity.eq(0)) open.delete(sample.marketId);
    else open.add(sample.marketId);
  }
  if (open.size > 0) exposedMs += endMs - cursor;
  return new Big(exposedMs).div(endMs - startMs);
}

export function computeStatistics(
  input: ReportInput,
  options: StatisticsOptions = {},
): BacktestStatistics {
  const periodMs = options.sharpePeriodMs ?? DEFAULT_SHARPE_PERIOD_MS;
  const startingBalance = parseDecimal(input.startingBalance);
  const samples = parseSamples(input.equity);
  const endingEquity = samples.at(-1)?.equity ?? startingBalance;
  const netPnl = endingEquity.minus(startingBalance);
  const fees = sumDecimals(input.fills.map((fill) => parseDecimal(fill.fee)));
  const tradedNotional = sumDecimals(
    input.fills.map((fill) => parseDecimal(fill.price).times(parseDecimal(fill.quantity))),
  );
  const roundTrips = reconstructRoundTrips(input.fills);
  const closed = roundTrips.filter((trip) => trip.closedAt !== null);
  const winningTrades = closed.filter((trip) => trip.netPnl.gt(0)).length;
  const losingTrades = closed.filter((trip) => trip.netPnl.lt(0)).length;
  const realizedPnl = sumDecimals(closed.map((trip) => trip.netPnl));
  const positions = input.positions
    ? input.positions.map((sample) => ({
        t: sample.t,
        marketId: sample.marketId,
        quantity: parseDecimal(sample.quantity),
      }))
    : positionsFromFills(input.fills);
  const average = averageEquity(startingBalance, samples, input.startMs, input.endMs);
  return {
    startingBalance,
    endingEquity,
    netPnl,
    grossPnl: netPnl.plus(fees),
    fees,
    returnFraction: netPnl.div(startingBalance),
    sharpe: sharpeRatio(startingBalance, samples, input.startMs, input.endMs, periodMs),
    drawdown: maxDrawdown(startingBalance, samples, input.startMs),
    trades: closed.length,
    winningTrades,
    losingTrades,
    openTrades: roundTrips.length - closed.length,
    winRate: closed.length > 0 ? new Big(winningTrades).div(closed.length) : null,
    realizedPnl,
    averageTradePnl: closed.length > 0 ? realizedPnl.div(closed.length) : null,
    fills: input.fills.length,
    tradedNotional,
    averageEquity: average,
    exposure: exposure(positions, input.startMs, input.endMs),
    turnover: average.gt(0) ? tradedNotional.div(average) : null,
    roundTrips,
  };
}

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
