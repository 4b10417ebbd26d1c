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
import type { Fill } from '../../protocol/index.ts';
import { type GroupFigures, groupFigures, groupFills } from './breakdown.ts';
import { excursionOf } from './excursions.ts';
import { checkReportInput, fillTime, type ReportInput } from './input.ts';
import { fillsInTimeOrder, positionsFromFills, type RoundTrip } from './round-trips.ts';
import { bucketed, type SeriesPoint } from './series.ts';
import {
  type BacktestStatistics,
  computeStatistics,
  drawdownSeries,
  parseSamples,
  type StatisticsOptions,
} from './statistics.ts';

export const REPORT_SCHEMA = 'paperbot.backtest-report';
export const REPORT_SCHEMA_VERSION = 2;
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
  /** Closed (or end of run, for an open trip) minus opened. */
  readonly duration_ms: number;
  /** Maximum adverse and favourable excursion, fractions of the entry price (`excursions.ts`). */
  readonly mae: string;
  readonly mfe: string;
  readonly fill_ids: readonly string[];
}

export interface ReportFill {
  readonly t: number;
  readonly occurred_at: string;
  readonly fill_id: string;
  readonly order_id: string | null;
  readonly strategy_id: string | null;
  readonly market_id: string;
  readonly side: string;
  readonly quantity: string;
  readonly price: string;
  readonly fee: string;
  readonly is_maker: boolean;
}

/** Figures of one market's or one strategy's own fills (`breakdown.ts`). */
export interface ReportGroup {
  readonly fills: number;
  readonly traded_notional: string;
  readonly fees: string;
  readonly trades: number;
  readonly winning_trades: number;
  readonly losing_trades: number;
  readonly open_trades: number;
  readonly win_rate: string | null;
  readonly realized_pnl: string;
}

export interface ReportMarket extends ReportGroup {
  readonly market_id: string;
  /** Signed position at the end (long positive). */
  readonly final_position: string;
}

export interface ReportStrategy extends ReportGroup {
  readonly strategy_id: string;
  readonly name: string;
  readonly markets: readonly string[];
  /** `skipped`: its markets are missing from the data and `--skip-missing-markets` was given. */
  readonly status: 'ran' | 'skipped';
  readonly missing_markets: readonly string[];
}

/** [epoch ms, value] */
export type ChartPoint = readonly [number, string];

export interface MarketChart {
  readonly market_id: string;
  readonly price: readonly ChartPoint[];
  readonly buy_fills: readonly ChartPoint[];
  readonly sell_fills: readonly ChartPoint[];
  readonly buy_orders: readonly ChartPoint[];
  readonly sell_orders: readonly ChartPoint[];
  readonly position: readonly ChartPoint[];
}

/**
 * What the HTML charts draw: bounded series (`series.ts`), one point per bucket, the first at
 * the run's start and the last at its end.
 */
export interface ReportCharts {
  readonly equity: readonly ChartPoint[];
  /** The deepest drawdown of each bucket, a fraction. */
  readonly drawdown: readonly ChartPoint[];
  readonly markets: readonly MarketChart[];
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
  /** Per period (`sharpe_period_ms`), not annualized. */
  readonly sharpe: string | null;
  readonly sortino: string | null;
  readonly sharpe_period_ms: number;
  readonly sharpe_periods: number;
  /** Null unless the run spans at least 30 days. */
  readonly sharpe_annualized: string | null;
  readonly sortino_annualized: string | null;
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
  readonly average_trade_duration_ms: number | null;
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
  readonly markets: readonly ReportMarket[];
  readonly strategies: readonly ReportStrategy[];
  readonly trades: readonly ReportTrade[];
  readonly fills: readonly ReportFill[];
  readonly charts: ReportCharts;
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

function reportTrade(trip: RoundTrip, prices: readonly SeriesPoint[], endMs: number): ReportTrade {
  const excursion = excursionOf(trip, prices, endMs);
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
    duration_ms: (trip.closedAt ?? endMs) - trip.openedAt,
    mae: ratio(excursion.adverse),
    mfe: ratio(excursion.favourable),
    fill_ids: trip.fillIds,
  };
}

function reportGroup(figures: GroupFigures): ReportGroup {
  return {
    fills: figures.fills,
    traded_notional: toWire(figures.tradedNotional),
    fees: toWire(figures.fees),
    trades: figures.trades,
    winning_trades: figures.winningTrades,
    losing_trades: figures.losingTrades,
    open_trades: figures.openTrades,
    win_rate: ratioOrNull(figures.winRate),
    realized_pnl: quotient(figures.realizedPnl),
  };
}

function marketIdsOf(input: ReportInput): string[] {
  const ids = new Set<string>(input.marketSeries?.keys() ?? []);
  for (const fill of input.fills) ids.add(fill.market_id);
  return [...ids].sort();
}

function reportMarkets(input: ReportInput, ordered: readonly Fill[]): ReportMarket[] {
  const groups = groupFills(ordered, (fill) => fill.market_id, marketIdsOf(input));
  const positions = new Map<string, string>();
  for (const sample of positionsFromFills(ordered)) {
    positions.set(sample.marketId, toWire(sample.quantity));
  }
  return [...groups.entries()].map(([marketId, fills]) => ({
    market_id: marketId,
    ...reportGroup(groupFigures(fills)),
    final_position: positions.get(marketId) ?? '0',
  }));
}

function reportStrategies(input: ReportInput, ordered: readonly Fill[]): ReportStrategy[] {
  const entries = input.strategies ?? [];
  const strategyOf = input.fillStrategies;
  const groups = groupFills(
    ordered,
    (fill) => strategyOf?.get(fill.fill_id),
    entries.map((entry) => entry.id),
  );
  return [...groups.entries()].map(([id, fills]) => {
    const entry = entries.find((candidate) => candidate.id === id);
    return {
      strategy_id: id,
      name: entry?.name ?? id,
      markets: [...(entry?.markets ?? [])],
      status: entry !== undefined && entry.missingMarkets.length > 0 ? 'skipped' : 'ran',
      missing_markets: [...(entry?.missingMarkets ?? [])],
      ...reportGroup(groupFigures(fills)),
    };
  });
}

function reportFill(fill: Fill, strategyId: string | undefined): ReportFill {
  return {
    t: fillTime(fill),
    occurred_at: fill.occurred_at,
    fill_id: fill.fill_id,
    order_id: fill.order_id,
    strategy_id: strategyId ?? null,
    market_id: fill.market_id,
    side: fill.side,
    quantity: fill.quantity,
    price: fill.price,
    fee: fill.fee,
    is_maker: fill.is_maker,
  };
}

/** One point per bucket: the first at its first sample (the run's start), the others at their last. */
function chartLine(
  points: readonly SeriesPoint[],
  pick: (point: SeriesPoint) => string,
): ChartPoint[] {
  return points.map((point, index) => [index === 0 ? point.first : point.last, pick(point)]);
}

function reportCharts(
  input: ReportInput,
  ordered: readonly Fill[],
  marketIds: readonly string[],
  equityPoints: readonly { t: number; equity: string; drawdown: string }[],
): ReportCharts {
  const start = { t: input.startMs, equity: input.startingBalance, drawdown: '0' };
  const curve = [start, ...equityPoints];
  const equity = bucketed(curve.map((point) => ({ t: point.t, value: point.equity })));
  const drawdown = bucketed(curve.map((point) => ({ t: point.t, value: point.drawdown })));
  const equityLine = chartLine(equity, (point) => point.close);
  const positions = positionsFromFills(ordered);
  const markets = marketIds.map((marketId): MarketChart => {
    const series = input.marketSeries?.get(marketId);
    const own = ordered.filter((fill) => fill.market_id === marketId);
    const sideFills = (side: string) =>
      chartLine(
        bucketed(
          own
            .filter((fill) => fill.side === side)
            .map((fill) => ({ t: fillTime(fill), value: fill.price })),
        ),
        (point) => point.close,
      );
    // The time axis is one slot per point, so the position is read on the equity chart's
    // (regular) times: a step then spans as wide as the time it held.
    const held = positions.filter((sample) => sample.marketId === marketId);
    let cursor = 0;
    let current = '0';
    const position = equityLine.map(([t]): ChartPoint => {
      while (cursor < held.length && held[cursor]!.t <= t)
        current = toWire(held[cursor++]!.quantity);
      return [t, current];
    });
    return {
      market_id: marketId,
      price: chartLine(series?.price ?? [], (point) => point.close),
      buy_fills: sideFills('buy'),
      sell_fills: sideFills('sell'),
      buy_orders: chartLine(series?.buyOrders ?? [], (point) => point.close),
      sell_orders: chartLine(series?.sellOrders ?? [], (point) => point.close),
      position,
    };
  });
  return {
    equity: equityLine,
    drawdown: chartLine(drawdown, (point) => point.high),
    markets,
  };
}

function averageDuration(trips: readonly RoundTrip[]): number | null {
  const closed = trips.filter((trip) => trip.closedAt !== null);
  if (closed.length === 0) return null;
  const total = closed.reduce((sum, trip) => sum + (trip.closedAt! - trip.openedAt), 0);
  return Math.round(total / closed.length);
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
    sortino: ratioOrNull(statistics.sharpe.sortino),
    sharpe_period_ms: statistics.sharpe.periodMs,
    sharpe_periods: statistics.sharpe.periods,
    sharpe_annualized: ratioOrNull(statistics.sharpe.annualizedRatio),
    sortino_annualized: ratioOrNull(statistics.sharpe.annualizedSortino),
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
    average_trade_duration_ms: averageDuration(statistics.roundTrips),
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
  const drawdowns = drawdownSeries(statistics.startingBalance, samples);
  const equityPoints = samples.map((sample, index) => ({
    t: sample.t,
    equity: toWire(sample.equity),
    drawdown: ratio(drawdowns[index]!),
  }));
  const ordered = fillsInTimeOrder(input.fills);
  const marketIds = marketIdsOf(input);
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
    markets: reportMarkets(input, ordered),
    strategies: reportStrategies(input, ordered),
    trades: statistics.roundTrips.map((trip) =>
      reportTrade(trip, input.marketSeries?.get(trip.marketId)?.price ?? [], input.endMs),
    ),
    fills: ordered.map((fill) => reportFill(fill, input.fillStrategies?.get(fill.fill_id))),
    charts: reportCharts(input, ordered, marketIds, equityPoints),
    equity: options.omitEquity ? [] : equityPoints,
  };
}

/** The report as `--json` prints it: two-space indentation and a final newline. */
export function reportToJson(report: BacktestReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
