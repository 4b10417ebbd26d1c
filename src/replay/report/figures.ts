/**
 * The report's headline figures as people read them, one list for the terminal summary and the
 * HTML page, so both show the same text for the same figure (`format.ts`).
 */
import { durationText, percentText, ratioText, sharpeText } from './format.ts';
import type { BacktestReport, ReportGroup, ReportIntents } from './report.ts';
import type { ExitReason } from './round-trips.ts';

export interface Figure {
  readonly label: string;
  readonly text: string;
  /** What the figure is, for a tooltip. */
  readonly help: string;
}

export function summaryFigures(report: BacktestReport): Figure[] {
  const summary = report.summary;
  const money = (value: string | null) => (value === null ? 'n/a' : `${value} ${report.currency}`);
  return [
    {
      label: 'Starting balance',
      text: money(summary.starting_balance),
      help: 'Equity at the start.',
    },
    { label: 'Ending equity', text: money(summary.ending_equity), help: 'The last equity sample.' },
    {
      label: 'Net PnL',
      text: money(summary.net_pnl),
      help: 'Ending equity minus starting balance (fees included).',
    },
    {
      label: 'Gross PnL',
      text: `${money(summary.gross_pnl)} = realized ${summary.realized_gross_pnl} + unrealized ${summary.unrealized_pnl}${/^-?0(?:\.0*)?$/.test(summary.funding) ? '' : ` + funding ${summary.funding}`}${/^-?0(?:\.0*)?$/.test(summary.gross_pnl_other) ? '' : ` + other ${summary.gross_pnl_other}`}`,
      help: 'Net PnL plus fees. Realized: the sum of the trade rows’ gross PnL; unrealized: the open trades marked at the end of the data; funding: what positions received (negative: paid) at funding times; other: what the trades do not explain (a liquidation’s loss beyond its margin).',
    },
    { label: 'Fees', text: money(summary.fees), help: 'Sum of fill fees (negative: rebates).' },
    {
      label: 'Funding',
      text: money(summary.funding),
      help: 'Funding received (negative: paid) by positions at funding times, apart from fees; per market and per trade in their tables.',
    },
    { label: 'Return', text: percentText(summary.return), help: 'Net PnL / starting balance.' },
    {
      label: 'Sharpe',
      text: sharpeText(summary.sharpe, summary.sharpe_annualized, summary.sharpe_period_ms),
      help: `Mean / standard deviation of ${summary.sharpe_periods} per-period returns, no risk-free rate; annualized only for runs of 30 days or more.`,
    },
    {
      label: 'Sortino',
      text: sharpeText(summary.sortino, summary.sortino_annualized, summary.sharpe_period_ms),
      help: 'Mean / downside deviation of the same per-period returns.',
    },
    {
      label: 'Max drawdown',
      text: `${percentText(summary.max_drawdown)} (${money(summary.max_drawdown_amount)})`,
      help: 'Largest fall from a running peak, as a share of it (and its largest amount).',
    },
    {
      label: 'Trades',
      text: `${summary.trades} closed (${summary.winning_trades} won, ${summary.losing_trades} lost), ${summary.open_trades} open`,
      help: 'Round trips, flat to flat.',
    },
    {
      label: 'Win rate',
      text: percentText(summary.win_rate),
      help: 'Closed trips with net PnL > 0 / closed trips.',
    },
    {
      label: 'Average trade PnL',
      text: money(summary.average_trade_pnl),
      help: 'Net PnL of closed trips / their number.',
    },
    {
      label: 'Average trade duration',
      text: durationText(summary.average_trade_duration_ms),
      help: 'Time from opening to closing, over closed trips.',
    },
    { label: 'Fills', text: String(summary.fills), help: 'Number of fills.' },
    {
      label: 'Traded notional',
      text: money(summary.traded_notional),
      help: 'Sum of price × quantity over fills.',
    },
    {
      label: 'Exposure',
      text: percentText(summary.exposure),
      help: 'Share of time with any position open.',
    },
    {
      label: 'Turnover',
      text: ratioText(summary.turnover),
      help: 'Traded notional / time-weighted average equity.',
    },
  ];
}

/** Column heads and cells of a per-market or per-strategy row. */
export const GROUP_HEADS = [
  'Fills',
  'Traded notional',
  'Fees',
  'Trades',
  'Won',
  'Lost',
  'Open',
  'Win rate',
  'Realized PnL',
] as const;

export function groupCells(group: ReportGroup): string[] {
  return [
    String(group.fills),
    group.traded_notional,
    group.fees,
    String(group.trades),
    String(group.winning_trades),
    String(group.losing_trades),
    String(group.open_trades),
    percentText(group.win_rate),
    group.realized_pnl,
  ];
}

/** Strategies that did not run, as one sentence each. */
export function skippedStrategyNotes(report: BacktestReport): string[] {
  return [
    ...report.strategies
      .filter((strategy) => strategy.status === 'skipped')
      .map(
        (strategy) =>
          `Strategy ${strategy.strategy_id} (${strategy.name}) was skipped: the data has no ${strategy.missing_markets.join(', ')}.`,
      ),
    // --allow-damaged: what of the data was not replayed, or not as its manifest claims.
    ...(report.data_damage ?? []).map((line) => `Damaged data: ${line}`),
    ...(report.fill_models === undefined
      ? []
      : [
          `Fill model: ${Object.entries(report.fill_models)
            .map(([market, model]) => `${market} ${model}`)
            .join(', ')}.`,
        ]),
    ...(report.untraded_orders === undefined ? [] : [untradedNote(report.untraded_orders)]),
  ];
}

/** Orders that found nothing to trade against, as one sentence (summary and warning). */
export function untradedNote(untraded: {
  readonly count: number;
  readonly markets: readonly string[];
}): string {
  return `${untraded.count} ${untraded.count === 1 ? 'order' : 'orders'} found nothing to trade against (${untraded.markets.join(', ')}): no recorded liquidity when they reached the venue, or no trade after them.`;
}

/** How a trade's exit reason reads in a table. */
export function exitReasonText(reason: ExitReason): string {
  switch (reason) {
    case 'take_profit':
      return 'take-profit';
    case 'trailing':
      return 'trailing stop';
    case 'bracket_stop_loss':
      return 'bracket stop-loss';
    case 'bracket_take_profit':
      return 'bracket take-profit';
    case 'end_of_data':
      return 'open at end of data';
    default:
      return reason;
  }
}

/**
 * The intents as lines that add up: where they came from (strategies, the runtime's releases)
 * and how each was answered, each intent once.
 */
export function intentLines(intents: ReportIntents): string[] {
  const released = intents.released;
  const fromStrategies = Object.values(intents.from_strategies).reduce((a, b) => a + b, 0);
  const releasedTotal = Object.values(released).reduce((a, b) => a + b, 0);
  const kinds = Object.entries(intents.from_strategies)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  const releases = [
    ['bracket entries', released.bracket_entry],
    ['bracket stop-loss legs', released.bracket_stop_loss],
    ['bracket take-profit legs', released.bracket_take_profit],
    ['stops', released.stop],
    ['take-profits', released.take_profit],
    ['trailing stops', released.trailing],
  ]
    .filter(([, count]) => count !== 0)
    .map(([name, count]) => `${String(name)} ${String(count)}`)
    .join(', ');
  const outcomes = intents.outcomes;
  return [
    `intents ${intents.total} = ${fromStrategies} from strategies${kinds === '' ? '' : ` (${kinds})`} + ${releasedTotal} released by the runtime${releases === '' ? '' : ` (${releases})`}`,
    `answered: accepted ${outcomes.accepted}, denied ${outcomes.denied}, rejected ${outcomes.rejected}, unknown ${outcomes.unknown}, held as emulated exits ${outcomes.held}, unanswered at the end ${outcomes.unanswered}`,
  ];
}
