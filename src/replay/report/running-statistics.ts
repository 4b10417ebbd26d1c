/**
 * The equity statistics of `statistics.ts` computed sample by sample, in constant memory: the
 * same definitions, the same decimals, the same digits. Samples come in time order.
 *
 * - Drawdown: the running peak and the largest drop, as `maxDrawdown`.
 * - Sharpe and Sortino: each period boundary t_j = start + j·P is read when the first sample
 *   after it arrives (or at the end), so the returns r_j are those of `sharpeRatio`. Only Σr, Σr²
 *   and Σmin(r, 0)² are kept: with exact sums (big.js adds and multiplies exactly),
 *   Σ(r − m)² = Σr² − 2mΣr + n·m² for the same rounded mean m, so the deviation, and the ratios,
 *   are digit for digit those of the list the batch computation builds.
 * - Average equity: the area under the step function, added interval by interval.
 */
import { Big, type Decimal, ZERO } from '../../core/decimal.ts';
import { divide } from '../../runtime/decimal-division.ts';
import { type Drawdown, MIN_ANNUALIZED_RUN_MS, type SharpeResult, YEAR_MS } from './statistics.ts';

export interface EquityFigures {
  readonly endingEquity: Decimal;
  readonly sharpe: SharpeResult;
  readonly drawdown: Drawdown;
  readonly averageEquity: Decimal;
  readonly samples: number;
}

export class RunningEquityStatistics {
  private samples = 0;
  private level: Decimal;
  private last: Decimal | null = null;
  /** What `add` returned for `last`. */
  private lastDrawdown: Decimal = ZERO;
  // Drawdown.
  private peak: Decimal;
  private peakAt: number;
  private fraction = ZERO;
  private amount = ZERO;
  private worstPeakAt: number | null = null;
  private troughAt: number | null = null;
  // Periods: the next boundary to read and the equity at the previous one.
  private boundary = 0;
  private previous: Decimal | null = null;
  private returns = 0;
  private sum = ZERO;
  private sumSquares = ZERO;
  private downsideSquares = ZERO;
  private nonPositiveStart = false;
  // Average equity.
  private area = ZERO;
  private cursor: number;

  constructor(
    private readonly startingBalance: Decimal,
    private readonly startMs: number,
    private readonly periodMs: number,
  ) {
    this.level = startingBalance;
    this.peak = startingBalance;
    this.peakAt = startMs;
    this.cursor = startMs;
  }

  /** Adds a sample; returns its drawdown (a fraction of the running peak). */
  add(t: number, equity: Decimal): Decimal {
    this.samples++;
    this.readBoundariesBefore(t);
    if (equity === this.last) {
      // The level of the sample before, again (a flat equity): peak, drawdown and the worst
      // drop stand, and its area is added when the level changes or at the end, as one exact
      // product (level × the whole time it held).
      return this.lastDrawdown;
    }
    if (t > this.startMs) {
      this.area = this.area.plus(this.level.times(t - this.cursor));
      this.cursor = t;
    }
    this.level = equity;
    this.last = equity;
    if (equity.gt(this.peak)) {
      this.peak = equity;
      this.peakAt = t;
      this.lastDrawdown = ZERO;
      return ZERO;
    }
    const drop = this.peak.minus(equity);
    if (drop.gt(this.amount)) this.amount = drop;
    const drawdown = divide(drop, this.peak);
    if (drawdown.gt(this.fraction)) {
      this.fraction = drawdown;
      this.worstPeakAt = this.peakAt;
      this.troughAt = t;
    }
    this.lastDrawdown = drawdown;
    return drawdown;
  }

  /** The figures for a run that ended at `endMs` (no sample after it). */
  finish(endMs: number): EquityFigures {
    const periodMs = this.periodMs;
    const periods = Math.floor((endMs - this.startMs) / periodMs);
    while (this.boundary <= periods) this.readBoundary();
    const area = this.area.plus(this.level.times(Math.max(0, endMs - this.cursor)));
    const averageEquity = endMs <= this.startMs ? this.level : area.div(endMs - this.startMs);
    return {
      endingEquity: this.last ?? this.startingBalance,
      sharpe: this.sharpe(periods, endMs),
      drawdown: {
        fraction: this.fraction,
        amount: this.amount,
        peakAt: this.worstPeakAt,
        troughAt: this.troughAt,
      },
      averageEquity,
      samples: this.samples,
    };
  }

  /** Reads every boundary before t at the level that held until now. */
  private readBoundariesBefore(t: number): void {
    while (this.startMs + this.boundary * this.periodMs < t) this.readBoundary();
  }

  private readBoundary(): void {
    const current = this.level;
    const previous = this.previous;
    this.boundary++;
    this.previous = current;
    if (previous === null) return;
    if (previous.lte(0)) {
      this.nonPositiveStart = true;
      return;
    }
    if (this.nonPositiveStart) return;
    const r = current.div(previous).minus(1);
    this.returns++;
    this.sum = this.sum.plus(r);
    const square = r.pow(2);
    this.sumSquares = this.sumSquares.plus(square);
    if (r.lt(0)) this.downsideSquares = this.downsideSquares.plus(square);
  }

  private sharpe(periods: number, endMs: number): SharpeResult {
    const periodMs = this.periodMs;
    const annualization = new Big(YEAR_MS).div(periodMs).sqrt();
    const none: SharpeResult = {
      ratio: null,
      sortino: null,
      periodMs,
      periods: Math.max(0, periods),
      annualization,
      annualizedRatio: null,
      annualizedSortino: null,
    };
    if (periods < 2 || this.nonPositiveStart) return none;
    const count = new Big(this.returns);
    const mean = this.sum.div(count);
    const squares = this.sumSquares
      .minus(mean.times(this.sum).times(2))
      .plus(mean.pow(2).times(count));
    const deviation = squares.div(count.minus(1)).sqrt();
    const downside = this.downsideSquares.div(count).sqrt();
    const ratio = deviation.eq(0) ? null : mean.div(deviation);
    const sortino = downside.eq(0) ? null : mean.div(downside);
    const annualize = endMs - this.startMs >= MIN_ANNUALIZED_RUN_MS;
    return {
      ratio,
      sortino,
      periodMs,
      periods,
      annualization,
      annualizedRatio: annualize && ratio !== null ? ratio.times(annualization) : null,
      annualizedSortino: annualize && sortino !== null ? sortino.times(annualization) : null,
    };
  }
}
