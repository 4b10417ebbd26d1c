/**
 * How people see the report's figures, the same on the terminal and in the HTML page: ratios
 * (return, drawdown, win rate, exposure) as percentages, Sharpe and Sortino as plain numbers with
 * their period, durations in units. The JSON report keeps the underlying decimal strings
 * (fractions), and these functions only shift and round them, in decimal arithmetic.
 */
import { Big } from '../../core/decimal.ts';

/** Decimal places of a percentage; smaller values keep three significant digits. */
const PERCENT_PLACES = 2;

function trimZeros(text: string, minimumPlaces: number): string {
  if (!text.includes('.')) return text;
  let trimmed = text.replace(/0+$/, '');
  const places = trimmed.length - trimmed.indexOf('.') - 1;
  if (places < minimumPlaces) trimmed += '0'.repeat(minimumPlaces - places);
  return trimmed.endsWith('.') ? trimmed.slice(0, -1) : trimmed;
}

/**
 * A fraction as a percentage: `0.1234` is `12.34%`; below 1% three significant digits are kept
 * (`0.000083` is `0.0083%`), so a small drawdown never reads as zero.
 */
export function percentText(fraction: string | null): string {
  if (fraction === null) return 'n/a';
  const value = new Big(fraction).times(100);
  if (value.eq(0)) return '0%';
  const magnitude = value.abs();
  let places = PERCENT_PLACES;
  if (magnitude.lt(1)) {
    // Digits until three significant ones are shown, at most ten places.
    const exponent = Math.floor(Math.log10(Number(magnitude.toExponential(3))));
    places = Math.min(10, Math.max(PERCENT_PLACES, 2 - exponent));
  }
  const text = value.toFixed(places, Big.roundHalfEven);
  return `${trimZeros(text.replace(/^-0(?:\.0*)?$/, '0'), PERCENT_PLACES)}%`;
}

/** A ratio such as Sharpe, to four decimals. */
export function ratioText(value: string | null): string {
  if (value === null) return 'n/a';
  const text = new Big(value).toFixed(4, Big.roundHalfEven);
  return /^-0(?:\.0*)?$/.test(text) ? text.slice(1) : text;
}

/** A duration in the largest units that keep it readable (kept here for the report's callers). */
export { durationText } from '../../core/duration.ts';

/** The Sharpe period in words: `1 min`, `1 h`, `500 ms`. */
export function periodText(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}

/** Sharpe or Sortino as people read it: per period, with the annualized copy when there is one. */
export function sharpeText(
  perPeriod: string | null,
  annualized: string | null,
  periodMs: number,
): string {
  if (perPeriod === null) return 'n/a';
  const base = `${ratioText(perPeriod)} per ${periodText(periodMs)}`;
  return annualized === null ? base : `${base} (${ratioText(annualized)} annualized)`;
}
