/**
 * Timestamps of imported rows, to epoch milliseconds (the records' `t`). Integers in seconds,
 * milliseconds, microseconds or nanoseconds, or RFC 3339 text. `auto` picks the unit of an
 * integer by its digit count (10: s, 13: ms, 16: µs, 19: ns, the widths of the current era), so
 * one file that mixes widths is refused instead of guessed.
 */
import { PaperbotError } from '../../core/errors.ts';

export const TIME_UNITS = ['auto', 's', 'ms', 'us', 'ns', 'rfc3339'] as const;
export type TimeUnit = (typeof TIME_UNITS)[number];

const DIVISOR: Record<'s' | 'ms' | 'us' | 'ns', bigint> = {
  s: 1n,
  ms: 1n,
  us: 1_000n,
  ns: 1_000_000n,
};

const BY_DIGITS: Record<number, 's' | 'ms' | 'us' | 'ns'> = {
  10: 's',
  13: 'ms',
  16: 'us',
  19: 'ns',
};

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

export function isTimeUnit(text: string): text is TimeUnit {
  return (TIME_UNITS as readonly string[]).includes(text);
}

/** The epoch milliseconds of `text` (sub-millisecond parts are truncated toward the past). */
export function parseTimestamp(text: string, unit: TimeUnit): number {
  const trimmed = text.trim();
  if (unit === 'rfc3339' || (unit === 'auto' && !/^\d+$/.test(trimmed))) {
    if (!RFC3339.test(trimmed)) throw badTimestamp(text, unit);
    const ms = Date.parse(trimmed.replace(' ', 'T'));
    if (!Number.isFinite(ms)) throw badTimestamp(text, unit);
    return ms;
  }
  if (!/^\d+$/.test(trimmed)) throw badTimestamp(text, unit);
  const resolved = unit === 'auto' ? BY_DIGITS[trimmed.length] : unit;
  if (resolved === undefined) {
    throw new PaperbotError(
      'IMPORT_INVALID_ROW',
      `timestamp ${JSON.stringify(text)} has ${trimmed.length} digits: give its unit (--time-unit s|ms|us|ns)`,
    );
  }
  const value = BigInt(trimmed);
  const ms = resolved === 's' ? value * 1000n : value / DIVISOR[resolved];
  const result = Number(ms);
  if (!Number.isSafeInteger(result)) throw badTimestamp(text, unit);
  return result;
}

function badTimestamp(text: string, unit: TimeUnit): PaperbotError {
  return new PaperbotError(
    'IMPORT_INVALID_ROW',
    `timestamp ${JSON.stringify(text)} is not ${unit === 'auto' ? 'an integer or RFC 3339 text' : unit === 'rfc3339' ? 'RFC 3339 text' : `an integer in ${unit}`}`,
  );
}
