/** A duration given on the command line (`--duration 1h30m`), refused with the option's name. */
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
