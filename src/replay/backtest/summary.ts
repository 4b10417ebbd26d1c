/**
 * The backtest summary as `paperbot backtest` prints it on a terminal: the headline figures of
 * the report, then why intents did or did not trade. Everything comes from the report and the
 * run's counters, so it is as deterministic as they are.
 */
import { formatTable } from '../report/text-table.ts';
import type { BacktestResult } from './runner.ts';

function orNa(value: string | null): string {
  return value ?? 'n/a';
}

function percent(ratio: string | null): string {
  if (ratio === null) return 'n/a';
  const value = Number(ratio) * 100;
  return `${value.toFixed(2)}%`;
}

export function formatBacktestSummary(result: BacktestResult): string {
  const report = result.report;
  const summary = report.summary;
  const currency = report.currency;
  const rows: [string, string][] = [
    ['strategy', orNa(report.metadata.strategy)],
    ['data', report.metadata.data.join(', ')],
    ['range', `${report.range.start} to ${report.range.end}`],
    ['events replayed', String(result.records)],
    ['starting balance', `${summary.starting_balance} ${currency}`],
    ['ending equity', `${summary.ending_equity} ${currency}`],
    ['net PnL', `${summary.net_pnl} ${currency}`],
    ['gross PnL', `${summary.gross_pnl} ${currency}`],
    ['fees', `${summary.fees} ${currency}`],
    ['return', percent(summary.return)],
    ['Sharpe (annualized)', orNa(summary.sharpe)],
    [
      'max drawdown',
      `${percent(summary.max_drawdown)} (${summary.max_drawdown_amount} ${currency})`,
    ],
    [
      'trades (closed)',
      `${summary.trades} (${summary.winning_trades} won, ${summary.losing_trades} lost, ${summary.open_trades} open)`,
    ],
    ['win rate', percent(summary.win_rate)],
    ['fills', String(summary.fills)],
    ['traded notional', `${summary.traded_notional} ${currency}`],
    ['exposure', percent(summary.exposure)],
    ['turnover', orNa(summary.turnover)],
  ];
  const counters = result.counters;
  const intents = `intents ${counters.intents}: accepted ${counters.accepted}, denied ${counters.denied}, rejected ${counters.rejected}, unknown ${counters.unknown}`;
  const reasons = Object.entries(result.outcomes)
    .filter(([key]) => key.startsWith('denied:') || key.startsWith('rejected:'))
    .map(([key, count]) => `  ${key} ${count}`);
  return [
    formatTable(['backtest', ''], rows, { align: ['left', 'left'] }),
    '',
    intents,
    ...reasons,
    '',
  ].join('\n');
}
