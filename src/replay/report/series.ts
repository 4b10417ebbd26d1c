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

interface Bucket {
  key: number;
  first: number;
  last: number;
  low: string;
  lowValue: number;
  high: string;
  highValue: number;
  close: string;
  count: number;
}

export class BucketedSeries {
  private readonly buckets: Bucket[] = [];
  /**
   * Buckets merged away by `widen`, reused for the next ones: a long run makes a new bucket
   * every width, and would otherwise leave one behind as garbage each time. At most `capacity`.
   */
  private readonly spare: Bucket[] = [];
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
    return this.buckets.length;
  }

  /**
   * Adds a sample; samples come in time order (a later one at an earlier time joins the last
   * bucket). `numeric`: `decimalNumber(value)`, when the caller has it already.
   */
  add(t: number, value: string, numeric?: number): void {
    const buckets = this.buckets;
    let key = Math.floor(t / this.widthMs);
    let tail = buckets.length === 0 ? undefined : buckets[buckets.length - 1]!;
    if (tail !== undefined && key > tail.key && buckets.length >= this.capacity) {
      this.widen();
      key = Math.floor(t / this.widthMs);
      tail = buckets[buckets.length - 1]!;
    }
    if (tail !== undefined && key <= tail.key) {
      tail.last = Math.max(tail.last, t);
      tail.count++;
      // The close again (a flat equity, a position that did not move): within low and high.
      if (value === tail.close) return;
      tail.close = value;
      const number = numeric ?? decimalNumber(value);
      if (number < tail.lowValue) {
        tail.low = value;
        tail.lowValue = number;
      }
      if (number > tail.highValue) {
        tail.high = value;
        tail.highValue = number;
      }
      return;
    }
    const number = numeric ?? decimalNumber(value);
    const bucket = this.spare.pop();
    if (bucket === undefined) {
      buckets.push({
        key,
        first: t,
        last: t,
        low: value,
        lowValue: number,
        high: value,
        highValue: number,
        close: value,
        count: 1,
      });
      return;
    }
    bucket.key = key;
    bucket.first = t;
    bucket.last = t;
    bucket.low = value;
    bucket.lowValue = number;
    bucket.high = value;
    bucket.highValue = number;
    bucket.close = value;
    bucket.count = 1;
    buckets.push(bucket);
  }

  points(): SeriesPoint[] {
    return this.buckets.map((bucket) => ({
      first: bucket.first,
      last: bucket.last,
      low: bucket.low,
      high: bucket.high,
      close: bucket.close,
      count: bucket.count,
    }));
  }

  /** Doubles the width until the buckets fit in half the capacity, merging neighbours in place. */
  private widen(): void {
    const buckets = this.buckets;
    while (buckets.length >= this.capacity) {
      this.widthMs *= 2;
      let kept = 0;
      for (let index = 0; index < buckets.length; index++) {
        const bucket = buckets[index]!;
        const key = Math.floor(bucket.key / 2);
        const tail = kept === 0 ? undefined : buckets[kept - 1]!;
        if (tail === undefined || tail.key !== key) {
          bucket.key = key;
          buckets[kept++] = bucket;
          continue;
        }
        tail.last = bucket.last;
        tail.close = bucket.close;
        tail.count += bucket.count;
        if (bucket.lowValue < tail.lowValue) {
          tail.low = bucket.low;
          tail.lowValue = bucket.lowValue;
        }
        if (bucket.highValue > tail.highValue) {
          tail.high = bucket.high;
          tail.highValue = bucket.highValue;
        }
        this.spare.push(bucket);
      }
      buckets.length = kept;
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
