/**
 * The backtest summary as `paperbot backtest` prints it on a terminal: the headline figures of
 * the report in the same words and number format as the HTML page (`report/figures.ts`), the
 * per-strategy and per-market tables, then why intents did or did not trade. Everything comes
 * from the report and the run's counters, so it is as deterministic as they are.
 */
import {
  GROUP_HEADS,
  groupCells,
  intentLines,
  skippedStrategyNotes,
  summaryFigures,
} from '../report/figures.ts';
import { durationText } from '../report/format.ts';
import { formatTable } from '../../core/text-table.ts';
import type { BacktestResult } from './runner.ts';

export function formatBacktestSummary(result: BacktestResult): string {
  const report = result.report;
  const rows: [string, string][] = [
    ['strategy', report.metadata.strategy ?? 'n/a'],
    ['data', report.metadata.data.join(', ')],
    [
      'range',
      `${report.range.start} to ${report.range.end} (${durationText(report.range.duration_ms)})`,
    ],
    ['events replayed', String(result.records)],
    ...summaryFigures(report).map((figure): [string, string] => [figure.label, figure.text]),
  ];
  const strategies = report.strategies.map((strategy) => [
    strategy.strategy_id,
    strategy.status,
    ...groupCells(strategy),
  ]);
  const markets = report.markets.map((market) => [
    market.market_id,
    ...groupCells(market),
    market.final_position,
  ]);
  const counters = result.counters;
  // Every intent once: from strategies plus the runtime's releases, and how each was answered.
  const intents =
    report.intents === null
      ? `intents ${counters.intents}: accepted ${counters.accepted}, denied ${counters.denied}, rejected ${counters.rejected}, unknown ${counters.unknown}`
      : intentLines(report.intents).join('\n');
  const reasons = Object.entries(result.outcomes)
    .filter(([key]) => key.startsWith('denied:') || key.startsWith('rejected:'))
    .map(([key, count]) => `  ${key} ${count}`);
  return [
    formatTable(['backtest', ''], rows, { align: ['left', 'left'] }),
    '',
    ...(strategies.length > 0
      ? [formatTable(['strategy', 'status', ...GROUP_HEADS], strategies), '']
      : []),
    ...(markets.length > 0
      ? [formatTable(['market', ...GROUP_HEADS, 'Final position'], markets), '']
      : []),
    ...skippedStrategyNotes(report),
    intents,
    ...reasons,
    '',
  ].join('\n');
}
