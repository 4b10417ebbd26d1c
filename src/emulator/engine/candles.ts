/**
 * Candles aggregated from executions, on integer ticks and steps. Only intervals that saw a
 * trade have a candle (interface: "a market with no trades has no candles"); gaps are not
 * filled with flat candles.
 */

export const CANDLE_INTERVALS = ['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w'] as const;
export type CandleIntervalName = (typeof CANDLE_INTERVALS)[number];

const MINUTE = 60_000;
export const INTERVAL_MS: Readonly<Record<CandleIntervalName, number>> = {
  '1m': MINUTE,
  '5m': 5 * MINUTE,
  '15m': 15 * MINUTE,
  '30m': 30 * MINUTE,
  '1h': 60 * MINUTE,
  '4h': 240 * MINUTE,
  '1d': 1440 * MINUTE,
  '1w': 7 * 1440 * MINUTE,
};

/** 1970-01-05 was a Monday: weekly candles open on Mondays at 00:00 UTC. */
const WEEK_OFFSET_MS = 4 * 1440 * MINUTE;

/** The open time of the candle of `interval` that contains `epochMs`. */
export function candleOpenTime(interval: CandleIntervalName, epochMs: number): number {
  const length = INTERVAL_MS[interval];
  const offset = interval === '1w' ? WEEK_OFFSET_MS : 0;
  return Math.floor((epochMs - offset) / length) * length + offset;
}

export interface CandleBar {
  readonly openTime: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volumeSteps: number;
}

/** The candles of one market and one interval, oldest first, at most `capacity` kept. */
export class CandleSeries {
  private readonly bars: CandleBar[] = [];
  /** The newest bar covers [its open time, this); executions mostly land in it. */
  private currentEnd = Number.NEGATIVE_INFINITY;

  constructor(
    readonly interval: CandleIntervalName,
    private readonly capacity: number,
  ) {}

  record(epochMs: number, priceTicks: number, steps: number): void {
    const current = this.bars[this.bars.length - 1];
    if (current !== undefined && epochMs < this.currentEnd && epochMs >= current.openTime) {
      if (priceTicks > current.high) current.high = priceTicks;
      if (priceTicks < current.low) current.low = priceTicks;
      current.close = priceTicks;
      current.volumeSteps += steps;
      return;
    }
    const openTime = candleOpenTime(this.interval, epochMs);
    if (current !== undefined && current.openTime === openTime) {
      if (priceTicks > current.high) current.high = priceTicks;
      if (priceTicks < current.low) current.low = priceTicks;
      current.close = priceTicks;
      current.volumeSteps += steps;
      return;
    }
    if (current !== undefined && openTime < current.openTime) {
      throw new RangeError('executions must be recorded in time order');
    }
    this.currentEnd = openTime + INTERVAL_MS[this.interval];
    this.bars.push({
      openTime,
      open: priceTicks,
      high: priceTicks,
      low: priceTicks,
      close: priceTicks,
      volumeSteps: steps,
    });
    if (this.bars.length > this.capacity) this.bars.splice(0, this.bars.length - this.capacity);
  }

  /** The newest `limit` candles, oldest first. */
  latest(limit: number): readonly CandleBar[] {
    return this.bars.slice(Math.max(0, this.bars.length - limit));
  }

  get length(): number {
    return this.bars.length;
  }
}

/** All eight intervals of one market. */
export class CandleBook {
  private readonly series: Record<CandleIntervalName, CandleSeries>;

  constructor(capacity: number) {
    this.series = Object.fromEntries(
      CANDLE_INTERVALS.map((interval) => [interval, new CandleSeries(interval, capacity)]),
    ) as Record<CandleIntervalName, CandleSeries>;
  }

  record(epochMs: number, priceTicks: number, steps: number): void {
    for (const interval of CANDLE_INTERVALS)
      this.series[interval].record(epochMs, priceTicks, steps);
  }

  latest(interval: CandleIntervalName, limit: number): readonly CandleBar[] {
    return this.series[interval].latest(limit);
  }
}

/**
 * Traded quantity over a trailing window, bucketed by minute so memory stays bounded however
 * many trades arrive.
 */
export class RollingVolume {
  private readonly buckets: { minute: number; steps: number }[] = [];
  private total = 0;

  constructor(private readonly windowMs: number) {}

  record(epochMs: number, steps: number): void {
    const minute = Math.floor(epochMs / MINUTE);
    const last = this.buckets[this.buckets.length - 1];
    if (last !== undefined && last.minute === minute) last.steps += steps;
    else this.buckets.push({ minute, steps });
    this.total += steps;
  }

  /** Steps traded in the window ending at `epochMs`. */
  totalAt(epochMs: number): number {
    const firstMinute = Math.floor((epochMs - this.windowMs) / MINUTE) + 1;
    let drop = 0;
    while (drop < this.buckets.length && this.buckets[drop]!.minute < firstMinute) {
      this.total -= this.buckets[drop]!.steps;
      drop++;
    }
    if (drop > 0) this.buckets.splice(0, drop);
    return this.total;
  }
}
