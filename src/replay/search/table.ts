/**
 * The search's results: a terminal table (best first, by the in-sample metric; the held-out
 * metric beside it for the top runs) with a closing line comparing the two, and the rows of
 * the sweep comparison page (sortable by any column there), the held-out metric as a column.
 */
import { isoTimestamp } from '../../core/clock.ts';
import { percentText, ratioText } from '../report/format.ts';
import type { SweepReportInput } from '../report/sweep-html.ts';
import { formatTable } from '../../core/text-table.ts';
import type { SearchOutcome } from './search.ts';
import type { SearchDimension } from './space.ts';

function scoreText(score: number | null): string {
  return score === null ? 'n/a' : score.toFixed(4);
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function formatSearchTable(
  outcome: SearchOutcome,
  dimensions: readonly SearchDimension[],
): string {
  const names = dimensions.map((dimension) => dimension.name);
  const halving = outcome.method === 'halving';
  const headers = [
    'rank',
    ...names,
    `${outcome.metric} in-sample`,
    `${outcome.metric} held-out`,
    'net_pnl',
    'return',
    'sharpe',
    'max_drawdown',
    'trades',
    ...(halving ? ['rung'] : []),
    'status',
  ];
  const rows = outcome.rows.map((row, rank) => {
    const figures = row.inSample.status === 'ok' ? row.inSample.value : null;
    return [
      String(rank + 1),
      ...names.map((name) => row.cell.raw[name] ?? ''),
      scoreText(row.score),
      row.heldOut === null ? '' : scoreText(row.heldOutScore),
      figures?.net_pnl ?? '',
      figures === null ? '' : percentText(figures.return),
      figures === null ? '' : ratioText(figures.sharpe),
      figures === null ? '' : percentText(figures.max_drawdown),
      figures === null ? '' : String(figures.trades),
      ...(halving ? [String(row.rung)] : []),
      row.inSample.status === 'ok'
        ? 'ok'
        : `error ${row.inSample.error.code}: ${row.inSample.error.message}`,
    ];
  });
  const top = outcome.rows.filter((row) => row.heldOut !== null);
  const inSampleMean = mean(top.flatMap((row) => (row.score === null ? [] : [row.score])));
  const heldOutMean = mean(
    top.flatMap((row) => (row.heldOutScore === null ? [] : [row.heldOutScore])),
  );
  const lines = [
    `search: ${outcome.method}, ${outcome.runs} runs in-sample + ${outcome.heldOutRuns} held-out, metric ${outcome.metric}`,
    `in-sample ${isoTimestamp(outcome.inSample.fromMs)} to ${isoTimestamp(outcome.inSample.toMs)}, held out ${isoTimestamp(outcome.heldOut.fromMs)} to ${isoTimestamp(outcome.heldOut.toMs)}`,
    formatTable(headers, rows),
    `top ${top.length}: mean ${outcome.metric} ${scoreText(inSampleMean)} in-sample, ${scoreText(heldOutMean)} held-out`,
  ];
  return lines.join('\n');
}

export function searchReportInput(
  outcome: SearchOutcome,
  dimensions: readonly SearchDimension[],
): SweepReportInput {
  const heldOutColumn = `held-out ${outcome.metric}`;
  return {
    title: `Search (${outcome.method}, ${outcome.metric}): ${dimensions.map((dimension) => dimension.name).join(' × ')}`,
    axes: [...dimensions.map((dimension) => dimension.name), heldOutColumn],
    rows: outcome.rows.map((row) => ({
      parameters: {
        ...row.cell.raw,
        [heldOutColumn]: row.heldOut === null ? '' : scoreText(row.heldOutScore),
      },
      figures: row.inSample.status === 'ok' ? row.inSample.value : null,
      error:
        row.inSample.status === 'ok'
          ? null
          : `${row.inSample.error.code}: ${row.inSample.error.message}`,
    })),
  };
}
