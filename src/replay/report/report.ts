/**
 * The backtest report: statistics, trades and the equity curve as one plain JSON structure with
 * a stable, versioned schema (docs/backtesting.md, "The JSON report"). Money and prices are
 * decimal strings; times are epoch milliseconds with an RFC 3339 copy where people read them.
 *
 * Identical input gives byte-identical output: nothing here reads a clock, keys are written in a
 * fixed order (parameters sorted by name), and every number is formatted by fixed rules.
 */
import { isoTimestamp } from '../../core/clock.ts';
import { Big, type Decimal, toFixedPlaces, toWire } from '../../core/decimal.ts';
import { checkReportInput, type ReportInput } from './input.ts';
import type { RoundTrip } from './round-trips.ts';
import {
  type BacktestStatistics,
  computeStatistics,
  drawdownSeries,
  parseSamples,
  type StatisticsOptions,
} from './statistics.ts';

export const REPORT_SCHEMA = 'paperbot.backtest-report';
export const REPORT_SCHEMA_VERSION = 1;
/** Decimal places of ratios (return, Sharpe, drawdown, win rate, exposure, turnover). */
export const RATIO_PLACES = 6;
/** Decimal places kept for quotients of money or prices (averages), trailing zeros removed. */
export const QUOTIENT_PLACES = 12;

export type ParameterValue = string | number | boolean | null;

export interface ReportTrade {
  readonly market_id: string;
  readonly direction: 'long' | 'short';
  readonly opened_at_ms: number;
  readonly opened_at: string;
  readonly closed_at_ms: number | null;
  readonly closed_at: string | null;
  readonly opened_quantity: string;
  readonly closed_quantity: string;
  readonly entry_price: string;
  readonly exit_price: string | null;
  readonly gross_pnl: string;
  readonly fees: string;
  readonly net_pnl: string;
  readonly fill_ids: readonly string[];
}

export interface ReportEquityPoint {
  readonly t: number;
  readonly equity: string;
  readonly drawdown: string;
}

export interface ReportSummary {
  readonly starting_balance: string;
  readonly ending_equity: string;
  readonly net_pnl: string;
  readonly gross_pnl: string;
  readonly fees: string;
  readonly return: string;
  readonly sharpe: string | null;
  readonly sharpe_period_ms: number;
  readonly sharpe_periods: number;
  readonly sharpe_annualization: string;
  readonly max_drawdown: string;
  readonly max_drawdown_amount: string;
  readonly max_drawdown_peak_at_ms: number | null;
  readonly max_drawdown_trough_at_ms: number | null;
  readonly trades: number;
  readonly winning_trades: number;
  readonly losing_trades: number;
  readonly open_trades: number;
  readonly win_rate: string | null;
  readonly realized_pnl: string;
  readonly average_trade_pnl: string | null;
  readonly fills: number;
  readonly traded_notional: string;
  readonly average_equity: string;
  readonly exposure: string | null;
  readonly turnover: string | null;
}

export interface BacktestReport {
  readonly schema: typeof REPORT_SCHEMA;
  readonly schema_version: typeof REPORT_SCHEMA_VERSION;
  readonly metadata: {
    readonly strategy: string | null;
    readonly parameters: Readonly<Record<string, ParameterValue>>;
    readonly data: readonly string[];
    readonly run_at: string | null;
  };
  readonly currency: string;
  readonly range: {
    readonly start_ms: number;
    readonly end_ms: number;
    readonly start: string;
    readonly end: string;
    readonly duration_ms: number;
  };
  readonly summary: ReportSummary;
  readonly trades: readonly ReportTrade[];
  readonly equity: readonly ReportEquityPoint[];
}

export interface ReportOptions extends StatisticsOptions {
  /** Leave the equity curve out of the report (the summary is unchanged). Default: included. */
  readonly omitEquity?: boolean;
}

export function ratio(value: Decimal): string {
  return toFixedPlaces(value, RATIO_PLACES);
}

export function quotient(value: Decimal): string {
  return toWire(value.round(QUOTIENT_PLACES, Big.roundHalfEven));
}

function ratioOrNull(value: Decimal | null): string | null {
  return value === null ? null : ratio(value);
}

function isoOrNull(t: number | null): string | null {
  return t === null ? null : isoTimestamp(t);
}

function reportTrade(trip: RoundTrip): ReportTrade {
  return {
    market_id: trip.marketId,
    direction: trip.direction,
    opened_at_ms: trip.openedAt,
    opened_at: isoTimestamp(trip.openedAt),
    closed_at_ms: trip.closedAt,
    closed_at: isoOrNull(trip.closedAt),
    opened_quantity: toWire(trip.openedQuantity),
    closed_quantity: toWire(trip.closedQuantity),
    entry_price: quotient(trip.entryPrice),
    exit_price: trip.exitPrice === null ? null : quotient(trip.exitPrice),
    gross_pnl: toWire(trip.grossPnl),
    fees: quotient(trip.fees),
    net_pnl: quotient(trip.netPnl),
    fill_ids: trip.fillIds,
  };
}

export function reportSummary(statistics: BacktestStatistics): ReportSummary {
  return {
    starting_balance: toWire(statistics.startingBalance),
    ending_equity: toWire(statistics.endingEquity),
    net_pnl: toWire(statistics.netPnl),
    gross_pnl: toWire(statistics.grossPnl),
    fees: toWire(statistics.fees),
    return: ratio(statistics.returnFraction),
    sharpe: ratioOrNull(statistics.sharpe.ratio),
    sharpe_period_ms: statistics.sharpe.periodMs,
    sharpe_periods: statistics.sharpe.periods,
    sharpe_annualization: ratio(statistics.sharpe.annualization),
    max_drawdown: ratio(statistics.drawdown.fraction),
    max_drawdown_amount: toWire(statistics.drawdown.amount),
    max_drawdown_peak_at_ms: statistics.drawdown.peakAt,
    max_drawdown_trough_at_ms: statistics.drawdown.troughAt,
    trades: statistics.trades,
    winning_trades: statistics.winningTrades,
    losing_trades: statistics.losingTrades,
    open_trades: statistics.openTrades,
    win_rate: ratioOrNull(statistics.winRate),
    realized_pnl: quotient(statistics.realizedPnl),
    average_trade_pnl:
      statistics.averageTradePnl === null ? null : quotient(statistics.averageTradePnl),
    fills: statistics.fills,
    traded_notional: toWire(statistics.tradedNotional),
    average_equity: quotient(statistics.averageEquity),
    exposure: ratioOrNull(statistics.exposure),
    turnover: ratioOrNull(statistics.turnover),
  };
}

function sortedParameters(
  parameters: Readonly<Record<string, ParameterValue>> | undefined,
): Record<string, ParameterValue> {
  const sorted: Record<string, ParameterValue> = {};
  for (const name of Object.keys(parameters ?? {}).sort()) sorted[name] = parameters![name]!;
  return sorted;
}

/** Checks the input (every problem at once), computes the statistics and builds the report. */
export function buildReport(input: ReportInput, options: ReportOptions = {}): BacktestReport {
  checkReportInput(input);
  const statistics = computeStatistics(input, options);
  const samples = parseSamples(input.equity);
  const drawdowns = options.omitEquity ? [] : drawdownSeries(statistics.startingBalance, samples);
  return {
    schema: REPORT_SCHEMA,
    schema_version: REPORT_SCHEMA_VERSION,
    metadata: {
      strategy: input.metadata?.strategy ?? null,
      parameters: sortedParameters(input.metadata?.parameters),
      data: [...(input.metadata?.data ?? [])],
      run_at: input.metadata?.runAt ?? null,
    },
    currency: input.currency,
    range: {
      start_ms: input.startMs,
      end_ms: input.endMs,
      start: isoTimestamp(input.startMs),
      end: isoTimestamp(input.endMs),
      duration_ms: input.endMs - input.startMs,
    },
    summary: reportSummary(statistics),
    trades: statistics.roundTrips.map(reportTrade),
    equity: options.omitEquity
      ? []
      : samples.map((sample, index) => ({
          t: sample.t,
          equity: toWire(sample.equity),
          drawdown: ratio(drawdowns[index]!),
        })),
  };
}

/** The report as `--json` prints it: two-space indentation and a final newline. */
export function reportToJson(report: BacktestReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
