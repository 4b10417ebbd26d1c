/** Reading the command line's options: durations, and passing on the options that were given. */
import { parseDurationText, looksLikeDuration } from '../core/duration.ts';
import { PaperbotError } from '../core/errors.ts';

/** `1h30m`, `10m`, `45s`, `250ms` in milliseconds; a bare number is milliseconds. */
export function parseDuration(text: string, option = 'duration'): number {
  const trimmed = text.trim();
  const bare = /^\d+$/.test(trimmed);
  if (!bare && !looksLikeDuration(trimmed)) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `--${option} ${JSON.stringify(text)}: write a duration such as 10m, 1h30m, 45s or 250ms`,
    );
  }
  const total = bare ? Number(trimmed) : parseDurationText(trimmed);
  if (total === null || !Number.isSafeInteger(total) || total <= 0) {
    throw new PaperbotError('INVALID_ARGUMENT', `--${option} must be above zero`);
  }
  return total;
}

/** The options among `keys` that were given, so that an absent option stays absent (not `undefined`). */
export function givenOptions<T extends object, K extends keyof T>(
  options: T,
  keys: readonly K[],
): { [P in K]?: Exclude<T[P], undefined> } {
  const given: { [P in K]?: T[P] } = {};
  for (const key of keys) {
    if (options[key] !== undefined) given[key] = options[key];
  }
  return given as { [P in K]?: Exclude<T[P], undefined> };
}

function rangeText(minimum: number, maximum: number | undefined): string {
  if (maximum !== undefined) return `must be an integer from ${minimum} to ${maximum}`;
  return minimum === 1 ? 'must be a positive integer' : `must be an integer of at least ${minimum}`;
}

/** A whole-number option (at least 1 unless told), refused with its name when out of range. */
export function integerOption(
  text: string,
  name: string,
  range: { readonly minimum?: number; readonly maximum?: number } = {},
): number {
  const minimum = range.minimum ?? 1;
  const value = Number(text);
  if (
    !/^\d+$/.test(text) ||
    value < minimum ||
    (range.maximum !== undefined && value > range.maximum)
  ) {
    throw new PaperbotError('INVALID_ARGUMENT', `--${name} ${rangeText(minimum, range.maximum)}`);
  }
  return value;
}
