/**
 * The metric a search optimises, from a cell's figures (`SweepCellFigures`), higher better:
 *
 * - `sharpe`: the report's Sharpe ratio (n/a when the equity never moved: ranks last);
 * - `net_pnl`: net PnL in the account currency;
 * - `return_over_drawdown`: return divided by the maximum drawdown, the drawdown floored at 1%
 *   so a run that never dipped does not divide by zero (it counts as a 1% drawdown).
 */
import type { SweepCellFigures } from '../report/sweep-html.ts';

export const SEARCH_METRICS = ['sharpe', 'net_pnl', 'return_over_drawdown'] as const;
export type SearchMetric = (typeof SEARCH_METRICS)[number];

const DRAWDOWN_FLOOR = 0.01;

export function objectiveOf(figures: SweepCellFigures, metric: SearchMetric): number | null {
  switch (metric) {
    case 'sharpe':
      return figures.sharpe === null ? null : Number(figures.sharpe);
    case 'net_pnl':
      return Number(figures.net_pnl);
    case 'return_over_drawdown':
      return Number(figures.return) / Math.max(DRAWDOWN_FLOOR, Number(figures.max_drawdown));
  }
}

/** Best first; unknown scores last; ties by candidate order, so the ranking is stable. */
export function compareScores(
  a: { readonly score: number | null; readonly index: number },
  b: { readonly score: number | null; readonly index: number },
): number {
  if (a.score === null || b.score === null) {
    if (a.score === b.score) return a.index - b.index;
    return a.score === null ? 1 : -1;
  }
  return b.score - a.score || a.index - b.index;
}
