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
import type { Decimal } from '../../core/decimal.ts';
import type { RoundTrip } from './round-trips.ts';

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
