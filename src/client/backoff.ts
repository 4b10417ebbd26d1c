/**
 * Waiting: capped, jittered exponential backoff, the Retry-After header, and an abortable sleep
 * on the injected clock. Randomness is injected too, so tests choose the jitter.
 */
import type { Clock } from '../core/clock.ts';
import { VenueError } from './errors.ts';

export interface BackoffPolicy {
  /** The cap of the first retry's delay. */
  readonly initialDelayMs: number;
  /** No delay is longer than this. */
  readonly maxDelayMs: number;
}

/**
 * The delay before retry number `attempt` (0 for the first retry): "equal jitter", half of the
 * capped exponential step fixed and half random, so retries spread out but never hammer at ~0 ms.
 * `random` returns a number in [0, 1).
 */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number): number {
  const exponent = Math.min(Math.max(attempt, 0), 30);
  const step = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** exponent);
  const half = step / 2;
  const jitter = Math.min(Math.max(random(), 0), 1);
  return Math.round(half + half * jitter);
}

const DELTA_SECONDS = /^\d+$/;
// RFC 9110 section 5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms.
const HTTP_DATE =
  /^(?:[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/;

/**
 * The wait a Retry-After value asks for, in milliseconds: delta-seconds, or an HTTP date
 * compared with `serverNowMs` (the local clock corrected by the estimated offset). Null when the
 * value is absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | undefined, serverNowMs: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (DELTA_SECONDS.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : null;
  }
  if (!HTTP_DATE.test(text)) return null;
  // Date.parse reads all three HTTP date forms; it reads no clock.
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - serverNowMs);
}

function abortError(signal: AbortSignal): VenueError {
  return new VenueError('REQUEST_ABORTED', 'the call was aborted by its caller', {
    source: 'local',
    cause: signal.reason,
  });
}

/** Resolves after `delayMs` on `clock`; rejects with REQUEST_ABORTED when `signal` fires. */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(abortError(signal as AbortSignal));
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
