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
  /**
   * The share of each window's quota (0 to 1, rounded down to whole requests) that ordinary
   * requests leave to operator requests, so order flow cannot starve the dead-man refresh or a
   * cancel. Default 0.1: a quota of 60 keeps 6 for operators; one under 10 keeps none.
   */
  readonly operatorShare?: number;
}

/**
 * Who asks: `operator` requests only take risk off (the dead-man deadline, cancels, cancel-all)
 * and may spend the operators' part of the quota; everything else is `ordinary`.
 */
export type RequestPriority = 'operator' | 'ordinary';

/** The endpoints whose requests are `operator` requests. */
export const OPERATOR_ENDPOINTS: ReadonlySet<string> = new Set([
  'setCancelAllAfter',
  'cancelAllOrders',
  'cancelOrder',
]);

/**
 * Waits, on the injected clock, while a key has no quota left in its current window. It
 * trusts the service's numbers; with no numbers yet it lets requests through. Ordinary requests
 * stop short of the operators' share, so operator requests still pass when order flow has spent
 * the rest of the window.
 */
export class ClientRateLimiter {
  private readonly reserve: number;
  private readonly operatorShare: number;

  constructor(
    private readonly tracker: RateLimitTracker,
    private readonly clock: Clock,
    options: RateLimiterOptions = {},
  ) {
    this.reserve = Math.max(0, options.reserve ?? 0);
    const share = options.operatorShare ?? 0.1;
    if (!(share >= 0 && share <= 1)) {
      throw new RangeError(`operatorShare is between 0 and 1, got ${share}`);
    }
    this.operatorShare = share;
  }

  /**
   * Spends one request of the key's quota. Returns undefined when it was spent at once (no wait,
   * no promise), or a promise that settles once the window allowed it.
   */
  acquire(
    keyId: string,
    signal?: AbortSignal,
    priority: RequestPriority = 'ordinary',
  ): Promise<void> | undefined {
    if (this.tryAcquire(keyId, priority)) return undefined;
    return this.waitAndAcquire(keyId, signal, priority);
  }

  private async waitAndAcquire(
    keyId: string,
    signal: AbortSignal | undefined,
    priority: RequestPriority,
  ): Promise<void> {
    // Refused: the window is spent for this priority and resets later (tryAcquire).
    for (;;) {
      const now = this.clock.now();
      await sleep(this.clock, (this.tracker.get(keyId)?.resetAtMs ?? now) - now, signal);
      if (this.tryAcquire(keyId, priority)) return;
    }
  }

  /** Spends one request when the window has room for this priority now. */
  private tryAcquire(keyId: string, priority: RequestPriority): boolean {
    const state = this.tracker.get(keyId);
    if (
      state === null ||
      state.remaining === null ||
      state.remaining > this.floor(state, priority)
    ) {
      this.tracker.spend(keyId);
      return true;
    }
    if (state.resetAtMs === null || state.resetAtMs <= this.clock.now()) {
      this.tracker.refill(keyId);
      this.tracker.spend(keyId);
      return true;
    }
    return false;
  }

  /** Requests this priority leaves unused in the window. */
  private floor(state: RateLimitState, priority: RequestPriority): number {
    if (priority === 'operator' || state.limit === null) return this.reserve;
    return this.reserve + Math.floor(state.limit * this.operatorShare);
  }
}
