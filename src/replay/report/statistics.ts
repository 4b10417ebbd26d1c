/**
 * The backtest's statistics, computed from a `ReportInput` with decimals (big.js) throughout, so
 * the same input gives the same digits on every machine. Definitions (docs/backtesting.md,
 * "Statistics", says the same in prose):
 *
 * - Equity E(t) is a step function: the starting balance E0 until the first sample, then each
 *   sample until the next.
 * - net PnL = last equity sample − E0; fees = Σ fill fees; gross PnL = net PnL + fees;
 *   return = net PnL / E0.
 * - Sharpe and Sortino: E is read at t = start + j·P (P the period, one minute by default) for
 *   every whole period in [start, end]; r_j = E(t_j)/E(t_{j−1}) − 1. Sharpe = mean(r)/stdev(r)
 *   per period, with stdev the sample standard deviation (n − 1) and no risk-free rate; Sortino =
 *   mean(r)/√(Σ min(r_j, 0)²/n). Both are per period P, not annualized. The annualized copies
 *   (× √(Y/P), Y a 365-day year) are given only when the run spans at least
 *   `MIN_ANNUALIZED_RUN_MS` (30 days): a shorter run says nothing about a year. Null with fewer
 *   than two returns, a zero deviation (constant equity; no losing period for Sortino) or equity
 *   at or below zero at a period start.
 * - Drawdown at sample i = (peak_i − E_i)/peak_i with peak_i = max(E0, E_1..E_i); the maximum
 *   drawdown is the largest, as a fraction (0 when equity never falls). The amount (peak − E in
 *   money) is reported separately, and its maximum may fall elsewhere.
 * - Trades are round trips (`round-trips.ts`); win rate = closed trips with net PnL > 0 / closed
 *   trips, null without closed trips.
 * - Exposure = time in [start, end] during which any market's position is non-zero, divided by
 *   end − start; null when the range is empty.
 * - Turnover = traded notional (Σ price × quantity of fills) / time-weighted average equity over
 *   [start, end]; null when that average is not positive.
 */
import { Big, type Decimal, parseDecimal, sumDecimals, ZERO } from '../../core/decimal.ts';
import { divide } from '../../runtime/decimal-division.ts';
import type { EquitySample, ReportInput } from './input.ts';
import { positionsFromFills, type RoundTrip, reconstructRoundTrips } from './round-trips.ts';

export const DEFAULT_SHARPE_PERIOD_MS = 60_000;
export const YEAR_MS = 365 * 24 * 60 * 60 * 1000;
/** Runs shorter than this get no annualized Sharpe or Sortino. */
export const MIN_ANNUALIZED_RUN_MS = 30 * 24 * 60 * 60 * 1000;

export interface StatisticsOptions {
  /** The Sharpe ratio's period P in milliseconds (default one minute). */
  readonly sharpePeriodMs?: number;
}

export interface Drawdown {
  /** Largest drawdown as a fraction of the running peak. */
  readonly fraction: Decimal;
  /** Largest drawdown in money (peak − equity). */
  readonly amount: Decimal;
  /**
   * Where the largest fractional drawdown started (the peak's time, `startMs` for the starting
   * balance) and bottomed out; both null when equity never fell.
   */
  readonly peakAt: number | null;
  readonly troughAt: number | null;
}

export interface SharpeResult {
  /** Sharpe ratio per period (not annualized). */
  readonly ratio: Decimal | null;
  /** Sortino ratio per period (not annualized). */
  readonly sortino: Decimal | null;
  readonly periodMs: number;
  /** Number of per-period returns used. */
  readonly periods: number;
  /** √(Y/P), the factor that would annualize the per-period ratios. */
  readonly annualization: Decimal;
  /** The ratios × `annualization`; null when the run is shorter than `MIN_ANNUALIZED_RUN_MS`. */
  readonly annualizedRatio: Decimal | null;
  readonly annualizedSortino: Decimal | null;
}

export interface BacktestStatistics {
  readonly startingBalance: Decimal;
  readonly endingEquity: Decimal;
  readonly netPnl: Decimal;
  readonly grossPnl: Decimal;
  readonly fees: Decimal;
  readonly returnFraction: Decimal;
  readonly sharpe: SharpeResult;
  readonly drawdown: Drawdown;
  /** Closed round trips. */
  readonly trades: number;
  readonly winningTrades: number;
  readonly losingTrades: number;
  readonly openTrades: number;
  readonly winRate: Decimal | null;
  /** Σ net PnL of closed round trips. */
  readonly realizedPnl: Decimal;
  readonly averageTradePnl: Decimal | null;
  readonly fills: number;
  readonly tradedNotional: Decimal;
  readonly averageEquity: Decimal;
  readonly exposure: Decimal | null;
  readonly turnover: Decimal | null;
  readonly roundTrips: readonly RoundTrip[];
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
