/**
 * Per-key request quota: fixed windows aligned to multiples of the window length on the
 * injected clock (window n covers [n * windowMs, (n + 1) * windowMs)). A fixed window is
 * simple to explain and to test: every client of a key sees the same reset instant, and
 * `RateLimit-Reset` is exact. Its known weakness, a burst of twice the quota across a window
 * edge, does not matter for a local emulator.
 */
export interface RateLimitSettings {
  /** Requests allowed per key and window. */
  readonly quota: number;
  readonly windowMs: number;
}

export const DEFAULT_RATE_LIMIT: RateLimitSettings = {
  quota: 1200,
  windowMs: 60_000,
};

export interface RateLimitDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Whole seconds until the window resets (at least 1 while inside a window). */
  readonly resetSeconds: number;
}

interface WindowCount {
  window: number;
  used: number;
}

export function checkRateLimitSettings(settings: RateLimitSettings): RateLimitSettings {
  if (!Number.isSafeInteger(settings.quota) || settings.quota < 1) {
    throw new RangeError('rate limit quota must be a positive integer');
  }
  if (!Number.isSafeInteger(settings.windowMs) || settings.windowMs < 1) {
    throw new RangeError('rate limit window must be a positive integer of milliseconds');
  }
  return { quota: settings.quota, windowMs: settings.windowMs };
}

export class RateLimiter {
  #settings: RateLimitSettings;
  readonly #counts = new Map<string, WindowCount>();
  #lastSweepWindow = -1;

  constructor(settings: RateLimitSettings = DEFAULT_RATE_LIMIT) {
    this.#settings = checkRateLimitSettings(settings);
  }

  get settings(): RateLimitSettings {
    return this.#settings;
  }

  /** Changes quota and window from now on; counts start over. */
  configure(settings: RateLimitSettings): void {
    this.#settings = checkRateLimitSettings(settings);
    this.#counts.clear();
  }

  /** Counts one request of `keyId` at `now` (refused requests count too, as on most services). */
  take(keyId: string, now: number): RateLimitDecision {
    const { quota, windowMs } = this.#settings;
    const window = Math.floor(now / windowMs);
    this.#sweep(window);
    let count = this.#counts.get(keyId);
    if (count === undefined || count.window !== window) {
      count = { window, used: 0 };
      this.#counts.set(keyId, count);
    }
    count.used += 1;
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000));
    return {
      allowed: count.used <= quota,
      limit: quota,
      remaining: Math.max(0, quota - count.used),
      resetSeconds,
    };
  }

  // Forgets keys idle since an earlier window, once per window.
  #sweep(window: number): void {
    if (window === this.#lastSweepWindow) return;
    this.#lastSweepWindow = window;
    for (const [keyId, count] of this.#counts) {
      if (count.window < window) this.#counts.delete(keyId);
    }
  }
}
