/**
 * Walk-forward analysis: the data's time range cut into `folds` out-of-sample periods of equal
 * length at its end part, each preceded by its in-sample period. In each fold the search
 * (src/replay/search) ranks candidates in-sample and the best is run on the out-of-sample
 * period that follows; the out-of-sample runs stitched end to end are the equity a trader who
 * re-optimised at each step would have seen, drawn against the in-sample equity of the same
 * choices.
 *
 * - `rolling`: each in-sample period has the same length and moves forward with its fold;
 * - `anchored`: each in-sample period starts at the start of the data and grows.
 */
import { PaperbotError } from '../../core/errors.ts';
import type { ChartPoint } from '../report/report.ts';
import type { Coerce } from '../sweep/grid.ts';
import { objectiveOf, type SearchMetric } from '../search/objective.ts';
import { type Evaluate, runSearch, type SearchMethod, type TimeWindow } from '../search/search.ts';
import type { SearchDimension } from '../search/space.ts';

export const WALK_FORWARD_MODES = ['rolling', 'anchored'] as const;
export type WalkForwardMode = (typeof WALK_FORWARD_MODES)[number];

export interface WalkForwardOptions {
  readonly dimensions: readonly SearchDimension[];
  readonly budget: number;
  readonly method: SearchMethod;
  readonly metric: SearchMetric;
  readonly folds: number;
  readonly mode: WalkForwardMode;
  /** Share of each rolling fold's span that is in-sample (0 < share < 1). */
  readonly inSampleShare: number;
  readonly seed: string | number;
  readonly range: { readonly firstT: number; readonly lastT: number };
  readonly coerce?: Coerce;
  readonly evaluate: Evaluate;
}

export interface WalkForwardFold {
  readonly fold: number;
  readonly inSample: TimeWindow;
  readonly outOfSample: TimeWindow;
  /** The best in-sample candidate's parameters (null when no candidate ran). */
  readonly parameters: Readonly<Record<string, unknown>> | null;
  readonly inSampleScore: number | null;
  readonly outOfSampleScore: number | null;
  readonly inSampleNetPnl: string | null;
  readonly outOfSampleNetPnl: string | null;
  readonly error: string | null;
}

export interface WalkForwardOutcome {
  readonly mode: WalkForwardMode;
  readonly metric: SearchMetric;
  readonly folds: readonly WalkForwardFold[];
  /**
   * The out-of-sample runs' PnL, each continuing from where the previous one ended, as
   * [fold + share of its window elapsed, PnL].
   */
  readonly outOfSampleEquity: readonly (readonly [number, number])[];
  /** The in-sample runs of the same choices, stitched the same way (x over their windows). */
  readonly inSampleEquity: readonly (readonly [number, number])[];
  /** Out-of-sample net PnL per hour over in-sample net PnL per hour (null without both). */
  readonly efficiency: number | null;
}

/** The folds' windows: out-of-sample periods of equal length tiling the end of the range. */
export function walkForwardWindows(
  range: { readonly firstT: number; readonly lastT: number },
  folds: number,
  mode: WalkForwardMode,
  inSampleShare: number,
): { inSample: TimeWindow; outOfSample: TimeWindow }[] {
  if (!Number.isInteger(folds) || folds < 1 || folds > 100) {
    throw new PaperbotError('INVALID_ARGUMENT', '--folds must be an integer from 1 to 100');
  }
  if (!(inSampleShare > 0 && inSampleShare < 1)) {
    throw new PaperbotError('INVALID_ARGUMENT', '--in-sample must be a fraction between 0 and 1');
  }
  const end = range.lastT + 1;
  const span = end - range.firstT;
  // Rolling: folds + k equal steps where the in-sample period is k steps long.
  const steps = inSampleShare / (1 - inSampleShare);
  const step = Math.floor(span / (folds + steps));
  if (step < 1) throw new PaperbotError('INVALID_ARGUMENT', 'the recording is too short to fold');
  const inSampleLength = end - range.firstT - folds * step;
  return Array.from({ length: folds }, (_, fold) => {
    const split = end - (folds - fold) * step;
    const from = mode === 'anchored' ? range.firstT : split - inSampleLength;
    return {
      inSample: { fromMs: from, toMs: split },
      outOfSample: { fromMs: split, toMs: fold === folds - 1 ? end : split + step },
    };
  });
}

/**
 * Chains equity curves fold after fold: x is the fold's number plus the share of its window
 * elapsed (rolling in-sample windows overlap in time), y the PnL carried over from the folds
 * before.
 */
function stitch(
  curves: readonly { window: TimeWindow; fold: number; points: readonly ChartPoint[] }[],
): [number, number][] {
  const stitched: [number, number][] = [];
  let carried = 0;
  for (const { window, fold, points } of curves) {
    if (points.length === 0) continue;
    const base = Number(points[0]![1]);
    const span = Math.max(1, window.toMs - window.fromMs);
    for (const [t, value] of points) {
      const share = Math.min(1, Math.max(0, (t - window.fromMs) / span));
      stitched.push([fold + share, carried + Number(value) - base]);
    }
    carried = stitched[stitched.length - 1]![1];
  }
  return stitched;
}

export async function runWalkForward(options: WalkForwardOptions): Promise<WalkForwardOutcome> {
  const windows = walkForwardWindows(
    options.range,
    options.folds,
    options.mode,
    options.inSampleShare,
  );
  const folds: WalkForwardFold[] = [];
  type Curve = { window: TimeWindow; fold: number; points: readonly ChartPoint[] };
  const inCurves: Curve[] = [];
  const outCurves: Curve[] = [];
  let inPnl = 0;
  let inMs = 0;
  let outPnl = 0;
  let outMs = 0;
  for (const [fold, window] of windows.entries()) {
    const span = window.outOfSample.toMs - window.inSample.fromMs;
    const search = await runSearch({
      dimensions: options.dimensions,
      budget: options.budget,
      method: options.method,
      metric: options.metric,
      holdout: (window.outOfSample.toMs - window.outOfSample.fromMs) / span,
      seed: `${String(options.seed)}:fold${fold}`,
      range: { firstT: window.inSample.fromMs, lastT: window.outOfSample.toMs - 1 },
      ...(options.coerce === undefined ? {} : { coerce: options.coerce }),
      evaluate: options.evaluate,
    });
    const best = search.rows.find((row) => row.heldOut !== null) ?? null;
    const inside = best?.inSample.status === 'ok' ? best.inSample.value : null;
    const outside = best?.heldOut?.status === 'ok' ? best.heldOut.value : null;
    const error =
      best === null
        ? 'no in-sample candidate ran'
        : best.heldOut?.status === 'error'
          ? best.heldOut.error.message
          : null;
    if (inside !== null && outside !== null) {
      inCurves.push({ window: search.inSample, fold, points: inside.equity });
      outCurves.push({ window: search.heldOut, fold, points: outside.equity });
      inPnl += Number(inside.net_pnl);
      inMs += search.inSample.toMs - search.inSample.fromMs;
      outPnl += Number(outside.net_pnl);
      outMs += search.heldOut.toMs - search.heldOut.fromMs;
    }
    folds.push({
      fold,
      inSample: search.inSample,
      outOfSample: search.heldOut,
      parameters: best === null ? null : best.cell.parameters,
      inSampleScore: inside === null ? null : objectiveOf(inside, options.metric),
      outOfSampleScore: outside === null ? null : objectiveOf(outside, options.metric),
      inSampleNetPnl: inside?.net_pnl ?? null,
      outOfSampleNetPnl: outside?.net_pnl ?? null,
      error,
    });
  }
  const inRate = inMs === 0 ? 0 : inPnl / inMs;
  return {
    mode: options.mode,
    metric: options.metric,
    folds,
    outOfSampleEquity: stitch(outCurves),
    inSampleEquity: stitch(inCurves),
    efficiency: outMs === 0 || inRate === 0 ? null : outPnl / outMs / inRate,
  };
}
