/**
 * A time series kept in a bounded number of buckets, for charts and excursions: each bucket
 * holds its first and last time and its lowest, highest and last value. Buckets are aligned to
 * multiples of their width in epoch time (whole seconds at least, the charts' time unit); when
 * a new bucket would exceed the capacity, the width doubles and neighbours merge. Memory stays
 * at `capacity` buckets however long the run, and the same samples give the same buckets.
 *
 * Values are decimal strings, kept as given: numbers only order them (min and max pick one of
 * the strings), so no figure passes through binary floating point.
 */

/** Powers of ten a double holds exactly (10^22 is the last). */
const EXACT_POWERS_OF_TEN = Array.from({ length: 23 }, (_, exponent) => 10 ** exponent);
/** Digits of a mantissa a double holds exactly (below 2^53). */
const EXACT_DIGITS = 15;

/**
 * `Number(text)` for the decimal strings of prices and equities, a few times faster: digits and
 * at most one point, optionally after a minus. Up to 15 digits, the digits as an integer and a
 * power of ten are both exact, so their quotient is the correctly rounded value, which is what
 * `Number` returns (Clinger's fast path); any other text goes to `Number`.
 */
export function decimalNumber(text: string): number {
  const length = text.length;
  let index = text.charCodeAt(0) === 45 /* - */ ? 1 : 0;
  const sign = index === 1 ? -1 : 1;
  if (length - index > EXACT_DIGITS + 1 || length === index) return Number(text);
  let mantissa = 0;
  let digits = 0;
  let point = -1;
  for (; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 48 && code <= 57) {
      mantissa = mantissa * 10 + (code - 48);
      digits++;
    } else if (code === 46 /* . */ && point < 0) {
      point = digits;
    } else {
      return Number(text);
    }
  }
  // "5." and ".5" read as numbers; "." alone does not.
  if (digits === 0 || digits > EXACT_DIGITS) return Number(text);
  const value = point < 0 ? mantissa : mantissa / EXACT_POWERS_OF_TEN[digits - point]!;
  return sign * value;
}

/** Buckets per series unless told otherwise: a chart a few hundred pixels wide shows them all. */
export const DEFAULT_SERIES_CAPACITY = 600;
const MIN_WIDTH_MS = 1_000;

export interface SeriesPoint {
  /** Time of the bucket's first and last sample (epoch ms). */
  readonly first: number;
  readonly last: number;
  readonly low: string;
  readonly high: string;
  readonly close: string;
  readonly count: number;
}

/** Buckets a series has room for at first; the columns double up to the capacity. */
const INITIAL_BUCKETS = 16;

/**
 * The buckets are columns (typed arrays of their times and values, arrays of their strings), not
 * an object each: a run adds a bucket per width to every series, and columns leave no garbage
 * behind and give the garbage collector nothing to copy but a few arrays.
 */
export class BucketedSeries {
  private length = 0;
  private keys = new Float64Array(INITIAL_BUCKETS);
  private firsts = new Float64Array(INITIAL_BUCKETS);
  private lasts = new Float64Array(INITIAL_BUCKETS);
  private lowValues = new Float64Array(INITIAL_BUCKETS);
  private highValues = new Float64Array(INITIAL_BUCKETS);
  private counts = new Float64Array(INITIAL_BUCKETS);
  private readonly lows: string[] = [];
  private readonly highs: string[] = [];
  private readonly closes: string[] = [];
  private widthMs = MIN_WIDTH_MS;

  constructor(private readonly capacity = DEFAULT_SERIES_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 2) {
      throw new RangeError('a bucketed series needs a capacity of at least 2');
    }
  }

  get bucketWidthMs(): number {
    return this.widthMs;
  }

  get size(): number {
    return this.length;
  }

  /**
   * Adds a sample; samples come in time order (a later one at an earlier time joins the last
   * bucket). `numeric`: `decimalNumber(value)`, when the caller has it already.
   */
  add(t: number, value: string, numeric?: number): void {
    let key = Math.floor(t / this.widthMs);
    let tail = this.length - 1;
    if (tail >= 0 && key > this.keys[tail]! && this.length >= this.capacity) {
      this.widen();
      key = Math.floor(t / this.widthMs);
      tail = this.length - 1;
    }
    if (tail >= 0 && key <= this.keys[tail]!) {
      this.lasts[tail] = Math.max(this.lasts[tail]!, t);
      this.counts[tail]!++;
      // The close again (a flat equity, a position that did not move): within low and high.
      if (value === this.closes[tail]) return;
      this.closes[tail] = value;
      const number = numeric ?? decimalNumber(value);
      if (number < this.lowValues[tail]!) {
        this.lows[tail] = value;
        this.lowValues[tail] = number;
      }
      if (number > this.highValues[tail]!) {
        this.highs[tail] = value;
        this.highValues[tail] = number;
      }
      return;
    }
    const number = numeric ?? decimalNumber(value);
    const index = this.length;
    if (index === this.keys.length) this.grow();
    this.keys[index] = key;
    this.firsts[index] = t;
    this.lasts[index] = t;
    this.lows[index] = value;
    this.lowValues[index] = number;
    this.highs[index] = value;
    this.highValues[index] = number;
    this.closes[index] = value;
    this.counts[index] = 1;
    this.length = index + 1;
  }

  points(): SeriesPoint[] {
    const points: SeriesPoint[] = [];
    for (let index = 0; index < this.length; index++) {
      points.push({
        first: this.firsts[index]!,
        last: this.lasts[index]!,
        low: this.lows[index]!,
        high: this.highs[index]!,
        close: this.closes[index]!,
        count: this.counts[index]!,
      });
    }
    return points;
  }

  /** Room for twice the buckets, up to the capacity. */
  private grow(): void {
    const size = Math.min(this.capacity, this.keys.length * 2);
    const larger = (column: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
      const copy = new Float64Array(size);
      copy.set(column);
      return copy;
    };
    this.keys = larger(this.keys);
    this.firsts = larger(this.firsts);
    this.lasts = larger(this.lasts);
    this.lowValues = larger(this.lowValues);
    this.highValues = larger(this.highValues);
    this.counts = larger(this.counts);
  }

  /** Doubles the width until the buckets fit in half the capacity, merging neighbours in place. */
  private widen(): void {
    const { keys, firsts, lasts, lowValues, highValues, counts, lows, highs, closes } = this;
    while (this.length >= this.capacity) {
      this.widthMs *= 2;
      let kept = 0;
      for (let index = 0; index < this.length; index++) {
        const key = Math.floor(keys[index]! / 2);
        const tail = kept - 1;
        if (tail < 0 || keys[tail] !== key) {
          keys[kept] = key;
          firsts[kept] = firsts[index]!;
          lasts[kept] = lasts[index]!;
          lows[kept] = lows[index]!;
          lowValues[kept] = lowValues[index]!;
          highs[kept] = highs[index]!;
          highValues[kept] = highValues[index]!;
          closes[kept] = closes[index]!;
          counts[kept] = counts[index]!;
          kept++;
          continue;
        }
        lasts[tail] = lasts[index]!;
        closes[tail] = closes[index]!;
        counts[tail]! += counts[index]!;
        if (lowValues[index]! < lowValues[tail]!) {
          lows[tail] = lows[index]!;
          lowValues[tail] = lowValues[index]!;
        }
        if (highValues[index]! > highValues[tail]!) {
          highs[tail] = highs[index]!;
          highValues[tail] = highValues[index]!;
        }
      }
      this.length = kept;
      // The strings of merged buckets are dropped, not kept alive past their bucket.
      lows.length = kept;
      highs.length = kept;
      closes.length = kept;
    }
  }
}

/** A series of the given samples (in time order). */
export function bucketed(
  samples: Iterable<{ readonly t: number; readonly value: string }>,
  capacity = DEFAULT_SERIES_CAPACITY,
): SeriesPoint[] {
  const series = new BucketedSeries(capacity);
  for (const sample of samples) series.add(sample.t, sample.value);
  return series.points();
}
