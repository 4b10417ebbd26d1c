/**
 * Durations as people write them (`250ms`, `45s`, `10m`, `1h30m`, `7d`) and as the project
 * prints them (`1h 02m`). The arithmetic is the `parse-duration` package's; this module only
 * narrows what is accepted to whole numbers with the units ms, s, m, h and d, so that config
 * files and options keep meaning the same thing (no `1.5h`, `1 hour` or months).
 */
import parse from 'parse-duration';

/** One or more `<digits><unit>` parts, without spaces or signs. */
const DURATION = /^(?:\d+(?:ms|s|m|h|d))+$/;

/** The accepted forms, for error messages. */
export const DURATION_FORMS =
  'a whole number with ms, s, m, h or d, such as 250ms, 45s, 10m, 1h30m or 7d';

/** Whether a text has the form of a duration (it may still be too large). */
export function looksLikeDuration(text: string): boolean {
  return DURATION.test(text.trim());
}

/** The milliseconds of a duration text; null when it is not one, or beyond a safe integer. */
export function parseDurationText(text: string): number | null {
  const trimmed = text.trim();
  if (!DURATION.test(trimmed)) return null;
  const ms = parse(trimmed);
  return typeof ms === 'number' && Number.isSafeInteger(ms) ? ms : null;
}

/** A duration in the largest two units that keep it readable: `1d 02h`, `1h 02m`, `3m 05s`, `42s`, `850 ms`. */
export function durationText(ms: number | null): string {
  if (ms === null) return 'n/a';
  if (ms < 1_000) return `${ms} ms`;
  const seconds = Math.floor(ms / 1_000);
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3_600);
  const minutes = Math.floor((seconds % 3_600) / 60);
  const rest = seconds % 60;
  const two = (value: number) => String(value).padStart(2, '0');
  if (days > 0) return `${days}d ${two(hours)}h`;
  if (hours > 0) return `${hours}h ${two(minutes)}m`;
  if (minutes > 0) return `${minutes}m ${two(rest)}s`;
  return `${seconds}s`;
}
