/**
 * The backtest report: statistics, trades, fills and charts as one plain JSON structure with a
 * stable, versioned schema (docs/backtesting.md, "The JSON report"), built by `collector.ts`.
 * Money and prices are decimal strings; times are epoch milliseconds with an RFC 3339 copy where
 * people read them.
 *
 * Identical input gives byte-identical output: nothing here reads a clock, keys are written in a
 * fixed order (parameters sorted by name), and every number is formatted by fixed rules.
 *
 * Schema 3 (from 2): the report is bounded. `fills` lists the first and last `lists.limit`
 * fills and `trades` the first `lists.limit` trades (`lists` counts what was left out); the
 * `equity` list is gone (the chart keeps the whole run in buckets, `--csv` every sample); `files`
 * names the CSV files that got every fill, trade and sample; a trade's `fill_ids` holds its
 * first 1,000 and `fill_count` counts them all; MAE and MFE read every market price of the trip.
 *
 * Schema 4 (from 3): a trade says why it ended (`exit_reason`) and whether it is still `open`;
 * an open trade is marked to market at the end of the data (`mark_price`, `unrealized_pnl`, and
 * its `net_pnl` includes it); prices in trades are rounded to the market's tick; the summary
 * splits its gross PnL into `realized_gross_pnl` (the sum of the trades' `gross_pnl`),
 * `unrealized_pnl` (the sum of theirs) and `gross_pnl_other` (anything else: normally zero); and
 * `intents` counts every intent once, by where it came from and how it was answered.
 */
import { Big, type Decimal, toFixedPlaces, toWire } from '../../core/decimal.ts';
import type { ExitReason } from './round-trips.ts';
import type { BacktestStatistics } from './statistics.ts';

export const REPORT_SCHEMA = 'paperbot.backtest-report';
export const REPORT_SCHEMA_VERSION = 4;
/** Decimal places of ratios (return, Sharpe, drawdown, win rate, exposure, turnover). */
export const RATIO_PLACES = 6;
/** Decimal places kept for quotients of money or prices (averages), trailing zeros removed. */
export const QUOTIENT_PLACES = 12;

export type ParameterValue = string | number | boolean | null;

export interface ReportTrade {
  readonly market_id: string;
  readonly direction: 'long' | 'short';
  /** `open`: the position was still held when the data ended (marked to market). */
  readonly status: 'closed' | 'open';
  /** Why it ended (`ExitReason`); `end_of_data` for an open trade. */
  readonly exit_reason: ExitReason;
  readonly opened_at_ms: number;
  readonly opened_at: string;
  readonly closed_at_ms: number | null;
  readonly closed_at: string | null;
  readonly opened_quantity: string;
  readonly closed_quantity: string;
  /** Average prices, rounded to the market's tick (half-even). */
  readonly entry_price: string;
  readonly exit_price: string | null;
  /** Realized PnL before fees (what closed, FIFO lots). */
  readonly gross_pnl: string;
  /** An open trade: the mark at the end of the data; null for a closed one. */
  readonly mark_price: string | null;
  /** An open trade: what it still holds marked at `mark_price`; "0" for a closed one. */
  readonly unrealized_pnl: string;
  readonly fees: string;
  /** Funding received (negative: paid) while the trade was open, apart from fees. */
  readonly funding: string;
  /** gross_pnl + unrealized_pnl − fees + funding. */
  readonly net_pnl: string;
  /** Closed (or end of run, for an open trip) minus opened. */
  readonly duration_ms: number;
  /** Maximum adverse and favourable excursion, fractions of the entry price (`excursions.ts`). */
  readonly mae: string;
  readonly mfe: string;
  /** The first 1,000 fills of the trade (`TRADE_FILL_IDS`); `fill_count` counts them all. */
  readonly fill_ids: readonly string[];
  readonly fill_count: number;
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

/** The round trips' figures, the same for the whole run and for one market or strategy. */
export interface ReportTradeFigures {
  readonly trades: number;
  readonly winning_trades: number;
  readonly losing_trades: number;
  readonly open_trades: number;
  readonly win_rate: string | null;
  readonly realized_pnl: string;
}

/** Figures of one market's or one strategy's own fills (`collector.ts`). */
export interface ReportGroup extends ReportTradeFigures {
  readonly fills: number;
  readonly traded_notional: string;
  readonly fees: string;
}

export interface ReportMarket extends ReportGroup {
  readonly market_id: string;
  /** Signed position at the end (long positive). */
  readonly final_position: string;
  /** Funding received (negative: paid) by the market's positions, apart from `fees`. */
  readonly funding: string;
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

/** What the report lists and what it left out (`collector.ts`). */
export interface ReportLists {
  /** Fills listed at each end, trades listed from the start. */
  readonly limit: number;
  readonly fills: number;
  readonly fills_omitted: number;
  /** Trades opened, closed or not. */
  readonly trades: number;
  readonly trades_omitted: number;
  readonly equity_samples: number;
}

/** The files with every fill, trade and equity sample (`--csv`), or null when none were written. */
export interface ReportFilePaths {
  readonly fills: string;
  readonly trades: string;
  readonly equity: string;
}

/** One equity sample as `equity.csv` has it. */
export interface ReportEquityPoint {
  readonly t: number;
  readonly equity: string;
  readonly drawdown: string;
}

/**
 * Every intent of the run counted once: `total` is `from_strategies` plus `released`, and also
 * the sum of `outcomes`.
 */
export interface ReportIntents {
  readonly total: number;
  /** What the strategies emitted, by intent kind. */
  readonly from_strategies: Readonly<Record<string, number>>;
  /** What the runtime emitted for them: bracket entries and the orders of fired exits. */
  readonly released: {
    readonly bracket_entry: number;
    readonly bracket_stop_loss: number;
    readonly bracket_take_profit: number;
    readonly stop: number;
    readonly take_profit: number;
    readonly trailing: number;
  };
  readonly outcomes: {
    readonly accepted: number;
    readonly denied: number;
    readonly rejected: number;
    /** Never answered for certain (an unknown outcome not resolved by the end). */
    readonly unknown: number;
    /** Held by the runtime as emulated exits (`exit` and `bracket` intents, their cancels). */
    readonly held: number;
    /** Still waiting for an answer when the run stopped. */
    readonly unanswered: number;
  };
}

/** Orders a gap affected: how many, and the first ids. */
export interface ReportGapOrders {
  readonly count: number;
  readonly order_ids: readonly string[];
}

/**
 * A `gap` record of the data and what it did to the run (docs/backtesting.md, "Gaps"). A
 * suspending gap (`book`, `trade`) lasts from `start_ms` to the market's next snapshot
 * (`end_ms`, null when none came); others are listed and affect nothing.
 */
export interface ReportGap {
  readonly market_id: string | null;
  readonly stream: string;
  readonly reason: string;
  readonly start_ms: number;
  readonly end_ms: number | null;
  readonly suspended: boolean;
  readonly restarted_queues: ReportGapOrders;
  readonly unfilled_takers: ReportGapOrders;
}

export interface ReportSummary extends ReportTradeFigures {
  readonly starting_balance: string;
  readonly ending_equity: string;
  readonly net_pnl: string;
  /** Net PnL plus fees: realized_gross_pnl + unrealized_pnl + funding + gross_pnl_other. */
  readonly gross_pnl: string;
  /** The sum of the trades' `gross_pnl` (every trade, open ones' realized part included). */
  readonly realized_gross_pnl: string;
  /** The sum of the open trades' `unrealized_pnl`, marked at the end of the data. */
  readonly unrealized_pnl: string;
  /** Gross PnL the trades do not explain (a liquidation's loss beyond its margin); normally 0. */
  readonly gross_pnl_other: string;
  readonly fees: string;
  /** Funding received (negative: paid) over the run, apart from fees (in net and gross PnL). */
  readonly funding: string;
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
  /** The first `lists.limit` trades, in the order they opened. */
  readonly trades: readonly ReportTrade[];
  /** The first and last `lists.limit` fills, in time order (all of them when few). */
  readonly fills: readonly ReportFill[];
  readonly lists: ReportLists;
  readonly files: ReportFilePaths | null;
  /** Null when the report was built from fills alone (no run to count intents of). */
  readonly intents: ReportIntents | null;
  readonly charts: ReportCharts;
  /**
   * Present only when a session was not what its manifest claims and the run went on with
   * `--allow-damaged`: what was skipped or found damaged, one sentence each.
   */
  readonly data_damage?: readonly string[];
  /** The data's gaps; present only when the run met one. */
  readonly gaps?: readonly ReportGap[];
  /**
   * The fill model of each market (`book` or `taker`, docs/backtesting.md, "Fills without a
   * book"); present only when a market used the taker model.
   */
  readonly fill_models?: Readonly<Record<string, 'book' | 'taker'>>;
  /** Orders that found nothing to trade against; present only when there were some. */
  readonly untraded_orders?: { readonly count: number; readonly markets: readonly string[] };
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

/** The summary's inputs: the statistics, with the trades' average duration. */
export type SummaryInput = Omit<BacktestStatistics, 'roundTrips'> & {
  readonly averageTradeDurationMs: number | null;
  readonly realizedGrossPnl: Decimal;
  readonly unrealizedPnl: Decimal;
  /** Funding received over the run (zero when none was paid). */
  readonly funding?: Decimal;
};

export function reportSummary(statistics: SummaryInput): ReportSummary {
  return {
    starting_balance: toWire(statistics.startingBalance),
    ending_equity: toWire(statistics.endingEquity),
    net_pnl: toWire(statistics.netPnl),
    gross_pnl: toWire(statistics.grossPnl),
    realized_gross_pnl: quotient(statistics.realizedGrossPnl),
    unrealized_pnl: quotient(statistics.unrealizedPnl),
    gross_pnl_other: quotient(
      statistics.grossPnl
        .minus(statistics.realizedGrossPnl)
        .minus(statistics.unrealizedPnl)
        .minus(statistics.funding ?? 0),
    ),
    fees: toWire(statistics.fees),
    funding: toWire(statistics.funding ?? new Big(0)),
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
    average_trade_duration_ms: statistics.averageTradeDurationMs,
    fills: statistics.fills,
    traded_notional: toWire(statistics.tradedNotional),
    average_equity: quotient(statistics.averageEquity),
    exposure: ratioOrNull(statistics.exposure),
    turnover: ratioOrNull(statistics.turnover),
  };
}

/** The report as `--json` prints it: two-space indentation and a final newline. */
export function reportToJson(report: BacktestReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
