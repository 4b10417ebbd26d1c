/**
 * The service's quota headers (RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset), tracked
 * per key, and an optional limiter that keeps the client under the advertised quota by waiting
 * for the window to reset instead of spending requests on 429 answers.
 */
import type { Clock } from '../core/clock.ts';
import { sleep } from './backoff.ts';

/** The key under which requests without a credential (public endpoints) are tracked. */
export const PUBLIC_RATE_LIMIT_KEY = '(public)';

export interface RateLimitState {
  /** The quota of the current window. */
  readonly limit: number | null;
  /** Requests left in the window, as last advertised and then counted down locally. */
  readonly remaining: number | null;
  /** Local clock time at which the window resets. */
  readonly resetAtMs: number | null;
  /** Local clock time of the answer the state comes from. */
  readonly observedAtMs: number;
}

export type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

/** The first value of a header (names are lower case in Node's header objects). */
export function headerValue(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

const NON_NEGATIVE_INTEGER = /^\d+$/;

function readCount(headers: HeaderBag, name: string): number | null {
  const text = headerValue(headers, name)?.trim();
  if (text === undefined || !NON_NEGATIVE_INTEGER.test(text)) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
}

export class RateLimitTracker {
  private readonly states = new Map<string, RateLimitState>();

  /** Records the quota headers of an answer; returns the new state, or null when none was sent. */
  observe(keyId: string, headers: HeaderBag, nowMs: number): RateLimitState | null {
    const limit = readCount(headers, 'ratelimit-limit');
    const remaining = readCount(headers, 'ratelimit-remaining');
    const resetSeconds = readCount(headers, 'ratelimit-reset');
    if (limit === null && remaining === null && resetSeconds === null) return null;
    const state: RateLimitState = {
      limit,
      remaining,
      resetAtMs: resetSeconds === null ? null : nowMs + resetSeconds * 1000,
      observedAtMs: nowMs,
    };
    this.states.set(keyId, state);
    return state;
  }

  get(keyId: string): RateLimitState | null {
    return this.states.get(keyId) ?? null;
  }

  /** Every key's state, keyed by key id (`PUBLIC_RATE_LIMIT_KEY` for public calls). */
  snapshot(): ReadonlyMap<string, RateLimitState> {
    return new Map(this.states);
  }

  /** Counts one request against the key's remaining quota until the next answer says better. */
  spend(keyId: string): void {
    const state = this.states.get(keyId);
    if (state?.remaining == null || state.remaining <= 0) return;
    this.states.set(keyId, { ...state, remaining: state.remaining - 1 });
  }

  /** After a window reset the old numbers are stale: assume the full quota until told more. */
  refill(keyId: string): void {
    const state = this.states.get(keyId);
    if (state === undefined) return;
    this.states.set(keyId, {
      ...state,
      remaining: state.limit,
      resetAtMs: null,
    });
  }
}

export interface RateLimiterOptions {
  /** Requests to leave unused in each window, for other users of the same key. Default 0. */
  readonly reserve?: number;
}

/**
 * Waits, on the injected clock, while a key has no quota left in its current window. It
 * trusts the service's numbers; with no numbers yet it lets requests through.
 */
export class ClientRateLimiter {
  private readonly reserve: number;

  constructor(
    private readonly tracker: RateLimitTracker,
    private readonly clock: Clock,
    options: RateLimiterOptions = {},
  ) {
    this.reserve = Math.max(0, options.reserve ?? 0);
  }

  async acquire(keyId: string, signal?: AbortSignal): Promise<void> {
    for (;;) {
      const state = this.tracker.get(keyId);
      if (state === null || state.remaining === null || state.remaining > this.reserve) break;
      const now = this.clock.now();
      if (state.resetAtMs === null || state.resetAtMs <= now) {
        this.tracker.refill(keyId);
        break;
      }
      await sleep(this.clock, state.resetAtMs - now, signal);
    }
    this.tracker.spend(keyId);
  }
}
