/**
 * The robustness report in one run: walk-forward over the search space; then, with the last
 * fold's best parameters (the choice a trader would take forward), the look-ahead check (whose
 * run on all the data is also the baseline backtest), the bootstrap of that run's trades and
 * the sensitivity heatmap over the first two dimensions. Backtests go through the injected
 * `evaluate` (sweep cells: the pool or the queue) and `lookahead` (runs on cut data).
 */
import { PaperbotError } from '../../core/errors.ts';
import { bootstrapTrades } from './bootstrap.ts';
import type { LookaheadCellResult } from './lookahead-cell.ts';
import { checkLookahead } from './lookahead.ts';
import { ROBUSTNESS_FORMAT, type RobustnessReport } from './report.ts';
import { runSensitivity } from './sensitivity.ts';
import { runWalkForward, type WalkForwardOptions } from './walk-forward.ts';

/** The walk-forward's options (the search it runs, the folds, the data), then the other checks'. */
export interface RobustnessOptions extends WalkForwardOptions {
  readonly iterations: number;
  readonly ruin: number;
  readonly cuts: number;
  readonly radius: number;
  readonly data: readonly string[];
  /** Runs with `parameters` on the data before each cut (null: all of it), in order. */
  readonly lookahead: (
    parameters: Readonly<Record<string, unknown>>,
    cuts: readonly (number | null)[],
  ) => Promise<readonly LookaheadCellResult[]>;
}

export async function runRobustness(options: RobustnessOptions): Promise<RobustnessReport> {
  const walkForward = await runWalkForward(options);
  const chosen = [...walkForward.folds].reverse().find((fold) => fold.parameters !== null);
  if (chosen?.parameters == null) {
    throw new PaperbotError(
      'ROBUSTNESS_NO_RUN',
      `no walk-forward fold ran: ${walkForward.folds.map((fold) => fold.error).join('; ')}`,
    );
  }
  const best = chosen.parameters;
  let baseline: LookaheadCellResult | null = null;
  const lookahead = await checkLookahead(options.range, options.cuts, async (cuts) => {
    const runs = await options.lookahead(best, cuts);
    baseline = runs[0]!;
    return runs;
  });
  const full = baseline as LookaheadCellResult | null;
  if (full === null) throw new PaperbotError('ROBUSTNESS_NO_RUN', 'the baseline run did not run');
  const bootstrap = bootstrapTrades({
    tradePnls: full.tradePnls,
    startingBalance: full.startingBalance,
    iterations: options.iterations,
    ruin: options.ruin,
    seed: options.seed,
  });
  const [rows, columns] = options.dimensions;
  const sensitivity =
    rows === undefined || columns === undefined
      ? null
      : await runSensitivity({
          dimensions: [rows, columns],
          best,
          radius: options.radius,
          metric: options.metric,
          window: { fromMs: options.range.firstT, toMs: options.range.lastT + 1 },
          ...(options.coerce === undefined ? {} : { coerce: options.coerce }),
          evaluate: options.evaluate,
        });
  return {
    format: ROBUSTNESS_FORMAT,
    strategy: full.strategy,
    seed: options.seed,
    data: [...options.data],
    currency: full.currency,
    range: { first_t: options.range.firstT, last_t: options.range.lastT },
    best,
    walk_forward: walkForward,
    bootstrap,
    sensitivity,
    lookahead,
  };
}
