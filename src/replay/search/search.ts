/**
 * `paperbot backtest --search`: a budget of backtest runs spent on a sampled parameter space,
 * ranked by a metric on the in-sample period, with the best re-run on a held-out period to show
 * how much of the in-sample figure was fit to noise.
 *
 * The recording's time range is split: the first `1 - holdout` of it is in-sample, the rest
 * held out. Two methods:
 *
 * - `random`: `budget` distinct candidates from the seed, each run on the whole in-sample period;
 * - `halving` (successive halving): more candidates, first run on a short slice of the
 *   in-sample period; the better half goes on to a slice twice as long, and so on until the
 *   survivors run on all of it. Rungs are sized so the runs add up to at most `budget`.
 *
 * No optimisation library is used: the maintained-looking npm packages (fmin, optimization-js)
 * take a synchronous objective, and a backtest is asynchronous and runs on worker threads
 * (docs/backtesting.md, "Searching parameters"). The top `HELD_OUT_RUNS` by in-sample score are
 * run on the held-out period; those runs are on top of the budget. Runs go through the same
 * `evaluate` a sweep uses (the worker pool, or a queue), so results are the sweep's figures.
 */
import { PaperbotError } from '../../core/errors.ts';
import type { SweepCellFigures } from '../report/sweep-html.ts';
import type { Coerce, GridCell } from '../sweep/grid.ts';
import type { SweepResult } from '../sweep/pool.ts';
import { compareScores, objectiveOf, type SearchMetric } from './objective.ts';
import { sampleCandidates } from './random.ts';
import type { SearchDimension } from './space.ts';

export const SEARCH_METHODS = ['random', 'halving'] as const;
export type SearchMethod = (typeof SEARCH_METHODS)[number];

export const HELD_OUT_RUNS = 5;

export interface TimeWindow {
  readonly fromMs: number;
  readonly toMs: number;
}

/** Runs cells over a window; results in cell order (the sweep pool's contract). */
export type Evaluate = (
  cells: readonly GridCell[],
  window: TimeWindow,
) => Promise<readonly SweepResult<SweepCellFigures>[]>;

export interface SearchOptions {
  readonly dimensions: readonly SearchDimension[];
  readonly budget: number;
  readonly method: SearchMethod;
  readonly metric: SearchMetric;
  /** Fraction of the time range held out, at its end (0 < holdout < 1). */
  readonly holdout: number;
  readonly seed: string | number;
  readonly range: { readonly firstT: number; readonly lastT: number };
  readonly coerce?: Coerce;
  readonly evaluate: Evaluate;
}

export interface SearchRow {
  readonly cell: GridCell;
  readonly inSample: SweepResult<SweepCellFigures>;
  readonly score: number | null;
  /** The last rung the candidate reached (halving; 0 for random search). */
  readonly rung: number;
  readonly heldOut: SweepResult<SweepCellFigures> | null;
  readonly heldOutScore: number | null;
}

export interface SearchOutcome {
  readonly method: SearchMethod;
  readonly metric: SearchMetric;
  readonly inSample: TimeWindow;
  readonly heldOut: TimeWindow;
  /** Runs spent on the in-sample period (at most the budget). */
  readonly runs: number;
  readonly heldOutRuns: number;
  /** Best first, by the score on the longest in-sample slice each candidate ran. */
  readonly rows: readonly SearchRow[];
}

export function splitRange(
  range: { readonly firstT: number; readonly lastT: number },
  holdout: number,
): { inSample: TimeWindow; heldOut: TimeWindow } {
  if (!(holdout > 0 && holdout < 1)) {
    throw new PaperbotError('INVALID_ARGUMENT', '--holdout must be a fraction between 0 and 1');
  }
  const end = range.lastT + 1;
  const split = range.firstT + Math.round((end - range.firstT) * (1 - holdout));
  if (split <= range.firstT || split >= end) {
    throw new PaperbotError('INVALID_ARGUMENT', 'the recording is too short to hold a period out');
  }
  return { inSample: { fromMs: range.firstT, toMs: split }, heldOut: { fromMs: split, toMs: end } };
}

function scored(result: SweepResult<SweepCellFigures>, metric: SearchMetric): number | null {
  return result.status === 'ok' ? objectiveOf(result.value, metric) : null;
}

/** Rung sizes for successive halving within `budget` runs: n, n/2, ..., ending at 1 or 2. */
export function halvingRungs(budget: number): number[] {
  for (let first = budget; first >= 1; first--) {
    const rungs: number[] = [];
    for (let size = first; size >= 1; size = Math.floor(size / 2)) {
      rungs.push(size);
      if (size <= 2) break;
    }
    if (rungs.reduce((sum, size) => sum + size, 0) <= budget) return rungs;
  }
  return [1];
}

export async function runSearch(options: SearchOptions): Promise<SearchOutcome> {
  if (!Number.isInteger(options.budget) || options.budget < 1) {
    throw new PaperbotError('INVALID_ARGUMENT', '--budget must be a positive integer');
  }
  const { inSample, heldOut } = splitRange(options.range, options.holdout);
  const latest = new Map<number, { result: SweepResult<SweepCellFigures>; rung: number }>();
  let runs = 0;
  let candidates: GridCell[];
  if (options.method === 'random') {
    candidates = sampleCandidates(options.dimensions, options.budget, options.seed, options.coerce);
    const results = await options.evaluate(candidates, inSample);
    runs += candidates.length;
    results.forEach((result, index) => latest.set(candidates[index]!.index, { result, rung: 0 }));
  } else {
    const rungs = halvingRungs(options.budget);
    candidates = sampleCandidates(options.dimensions, rungs[0]!, options.seed, options.coerce);
    let alive = candidates;
    for (let rung = 0; rung < rungs.length && alive.length > 0; rung++) {
      // Rung r of R runs on the first 1/2^(R-1-r) of the in-sample period; the last on all.
      const share = 1 / 2 ** (rungs.length - 1 - rung);
      const window = {
        fromMs: inSample.fromMs,
        toMs: inSample.fromMs + Math.max(1, Math.round((inSample.toMs - inSample.fromMs) * share)),
      };
      const results = await options.evaluate(alive, window);
      runs += alive.length;
      results.forEach((result, index) => latest.set(alive[index]!.index, { result, rung }));
      const next = rungs[rung + 1];
      if (next === undefined) break;
      alive = alive
        .map((cell, index) => ({
          cell,
          index: cell.index,
          score: scored(results[index]!, options.metric),
        }))
        .sort(compareScores)
        .slice(0, next)
        .map((entry) => entry.cell)
        .sort((a, b) => a.index - b.index);
    }
  }
  const ranked = candidates
    .map((cell) => {
      const entry = latest.get(cell.index)!;
      return { cell, index: cell.index, entry, score: scored(entry.result, options.metric) };
    })
    // Candidates that reached a later rung rank above those dropped earlier.
    .sort((a, b) => b.entry.rung - a.entry.rung || compareScores(a, b));
  const best = ranked.filter((row) => row.entry.result.status === 'ok').slice(0, HELD_OUT_RUNS);
  const heldOutResults =
    best.length === 0
      ? []
      : await options.evaluate(
          best.map((row) => row.cell),
          heldOut,
        );
  const heldOutOf = new Map(best.map((row, index) => [row.cell.index, heldOutResults[index]!]));
  return {
    method: options.method,
    metric: options.metric,
    inSample,
    heldOut,
    runs,
    heldOutRuns: best.length,
    rows: ranked.map((row) => {
      const held = heldOutOf.get(row.cell.index) ?? null;
      return {
        cell: row.cell,
        inSample: row.entry.result,
        score: row.score,
        rung: row.entry.rung,
        heldOut: held,
        heldOutScore: held === null ? null : scored(held, options.metric),
      };
    }),
  };
}
