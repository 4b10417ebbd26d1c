/**
 * Monte Carlo bootstrap of a backtest's trade sequence: the closed trades' net PnLs drawn with
 * replacement, as many as there were, in a seeded order, `iterations` times. Each draw is a
 * sequence the strategy could have met had its trades come in another order and mix; its final
 * PnL and its deepest drawdown (from the running peak of starting balance plus PnL) make the
 * distributions. Ruin is a draw whose equity fell to `1 - ruin` of the starting balance or
 * below at any point.
 *
 * Draws are independent: a strategy whose trades depend on each other (martingales, streaks)
 * is shown a wider or narrower spread than it has (docs/backtesting.md, "Robustness report").
 */
import { PaperbotError } from '../../core/errors.ts';
import { seededRandom } from '../search/random.ts';

export interface BootstrapOptions {
  /** Net PnL of each closed trade, in the order they opened. */
  readonly tradePnls: readonly number[];
  readonly startingBalance: number;
  readonly iterations: number;
  /** Fraction of the starting balance whose loss counts as ruin (0 < ruin <= 1). */
  readonly ruin: number;
  readonly seed: string | number;
}

export const PERCENTILES = [5, 25, 50, 75, 95] as const;

export interface Distribution {
  readonly mean: number;
  /** Percentile (nearest rank) to value. */
  readonly percentiles: Readonly<Record<`p${(typeof PERCENTILES)[number]}`, number>>;
  /** The central 95 % of the draws: 2.5th and 97.5th percentiles. */
  readonly confidence_interval: readonly [number, number];
  /** A histogram of the draws: `bins` equal-width bins from `low` to `high`. */
  readonly histogram: { readonly low: number; readonly high: number; readonly counts: number[] };
}

export interface BootstrapOutcome {
  readonly iterations: number;
  readonly trades: number;
  readonly seed: string | number;
  /** The backtest's own figures, from the trades in their real order. */
  readonly actual: { readonly final_pnl: number; readonly max_drawdown: number };
  readonly final_pnl: Distribution;
  /** Maximum drawdown as a fraction of the running peak (0.1 = 10 %). */
  readonly max_drawdown: Distribution;
  readonly ruin: { readonly threshold: number; readonly probability: number };
}

const HISTOGRAM_BINS = 20;

function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const low = sorted[0]!;
  const high = sorted[sorted.length - 1]!;
  const counts = new Array<number>(HISTOGRAM_BINS).fill(0);
  const width = (high - low) / HISTOGRAM_BINS;
  for (const value of sorted) {
    const bin = width === 0 ? 0 : Math.min(HISTOGRAM_BINS - 1, Math.floor((value - low) / width));
    counts[bin]!++;
  }
  return {
    mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
    percentiles: {
      p5: percentile(sorted, 5),
      p25: percentile(sorted, 25),
      p50: percentile(sorted, 50),
      p75: percentile(sorted, 75),
      p95: percentile(sorted, 95),
    },
    confidence_interval: [percentile(sorted, 2.5), percentile(sorted, 97.5)],
    histogram: { low, high, counts },
  };
}

/** Final PnL, deepest drawdown (fraction of the peak) and whether the path was ruined. */
function walk(
  pnls: readonly number[],
  startingBalance: number,
  ruinLevel: number,
): { final: number; drawdown: number; ruined: boolean } {
  let equity = startingBalance;
  let peak = startingBalance;
  let drawdown = 0;
  let ruined = false;
  for (const pnl of pnls) {
    equity += pnl;
    peak = Math.max(peak, equity);
    if (peak > 0) drawdown = Math.max(drawdown, (peak - equity) / peak);
    if (equity <= ruinLevel) ruined = true;
  }
  return { final: equity - startingBalance, drawdown, ruined };
}

export function bootstrapTrades(options: BootstrapOptions): BootstrapOutcome {
  const { tradePnls, iterations } = options;
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > 1_000_000) {
    throw new PaperbotError('INVALID_ARGUMENT', '--bootstrap must be an integer from 1 to 1000000');
  }
  if (!(options.ruin > 0 && options.ruin <= 1)) {
    throw new PaperbotError('INVALID_ARGUMENT', '--ruin must be a fraction above 0, at most 1');
  }
  if (tradePnls.length === 0) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      'the backtest closed no trades: there is no trade sequence to bootstrap',
    );
  }
  const ruinLevel = options.startingBalance * (1 - options.ruin);
  const random = seededRandom(`bootstrap:${String(options.seed)}`);
  const finals: number[] = [];
  const drawdowns: number[] = [];
  let ruined = 0;
  const draw = new Array<number>(tradePnls.length);
  for (let iteration = 0; iteration < iterations; iteration++) {
    for (let index = 0; index < tradePnls.length; index++) {
      draw[index] = tradePnls[Math.floor(random() * tradePnls.length)]!;
    }
    const path = walk(draw, options.startingBalance, ruinLevel);
    finals.push(path.final);
    drawdowns.push(path.drawdown);
    if (path.ruined) ruined++;
  }
  const actual = walk(tradePnls, options.startingBalance, ruinLevel);
  return {
    iterations,
    trades: tradePnls.length,
    seed: options.seed,
    actual: { final_pnl: actual.final, max_drawdown: actual.drawdown },
    final_pnl: distribution(finals),
    max_drawdown: distribution(drawdowns),
    ruin: { threshold: options.ruin, probability: ruined / iterations },
  };
}
