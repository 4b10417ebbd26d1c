import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assertClockUsable,
  backoffDelay,
  ClientRateLimiter,
  checkBaseUrl,
  checkWebSocketUrl,
  estimateClockOffset,
  isLoopbackHost,
  parseRetryAfter,
  RateLimitTracker,
  sleep,
  VenueError,
} from '../../src/client/index.ts';
import { VirtualClock } from '../../src/core/clock.ts';
import { track, turn } from './helpers.ts';

/** A limiter's answer that has to wait: a promise, tracked. */
function waiting(wait: Promise<void> | undefined) {
  expect(wait).toBeInstanceOf(Promise);
  return track(wait as Promise<void>);
}

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

describe('backoff', () => {
  it('stays between half and all of the capped exponential step', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 0, max: 60 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (initial, max, attempt, random) => {
          const step = Math.min(max, initial * 2 ** Math.min(attempt, 30));
          const delay = backoffDelay(
            { initialDelayMs: initial, maxDelayMs: max },
            attempt,
            () => random,
          );
          expect(delay).toBeGreaterThanOrEqual(Math.floor(step / 2));
          expect(delay).toBeLessThanOrEqual(Math.ceil(step));
        },
      ),
    );
  });

  it('grows with the attempt until the cap', () => {
    const policy = { initialDelayMs: 100, maxDelayMs: 1_000 };
    const fixed = () => 0.5;
    expect([0, 1, 2, 3, 4, 10].map((attempt) => backoffDelay(policy, attempt, fixed))).toEqual([
      75, 150, 300, 600, 750, 750,
    ]);
  });
});

describe('Retry-After', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('3', 0)).toBe(3_000);
    expect(parseRetryAfter(' 0 ', 0)).toBe(0);
  });

  it('reads an HTTP date against the service time', () => {
    const serverNow = Date.UTC(2025, 0, 1, 0, 0, 0);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:07 GMT', serverNow)).toBe(7_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', serverNow)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, 0)).toBeNull();
    expect(parseRetryAfter('soon', 0)).toBeNull();
    expect(parseRetryAfter('-1', 0)).toBeNull();
  });
});

describe('sleep', () => {
  it('resolves only when the injected clock reaches the delay', async () => {
    const clock = new VirtualClock(0);
    const waiting = track(sleep(clock, 1_000));
    clock.advanceBy(999);
    await turn();
    expect(waiting.settled()).toBe(false);
    clock.advanceBy(1);
    await waiting.promise;
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rejects with REQUEST_ABORTED and clears its timer when aborted', async () => {
    const clock = new VirtualClock(0);
    const controller = new AbortController();
    const waiting = sleep(clock, 1_000, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'REQUEST_ABORTED' });
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('base URL safety', () => {
  it('accepts plain http for loopback hosts only', () => {
    expect(checkBaseUrl('http://127.0.0.1:8787').origin).toBe('http://127.0.0.1:8787');
    expect(checkBaseUrl('http://127.5.6.7').origin).toBe('http://127.5.6.7');
    expect(checkBaseUrl('http://localhost:1').secure).toBe(false);
    expect(checkBaseUrl('http://[::1]:9').origin).toBe('http://[::1]:9');
    expect(codeOf(() => checkBaseUrl('http://10.0.0.1'))).toBe('UNSAFE_URL');
    expect(codeOf(() => checkBaseUrl('http://example.com'))).toBe('UNSAFE_URL');
    expect(codeOf(() => checkBaseUrl('http://128.0.0.1'))).toBe('UNSAFE_URL');
    expect(checkBaseUrl('https://example.com').secure).toBe(true);
  });

  it('refuses user information without repeating it', () => {
    let error: unknown;
    try {
      checkBaseUrl('https://alice:secret@example.com');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(VenueError);
    expect((error as VenueError).code).toBe('UNSAFE_URL');
    expect(JSON.stringify((error as VenueError).details)).not.toContain('secret');
    expect((error as VenueError).message).not.toContain('secret');
  });

  it('refuses other schemes, queries and fragments, and keeps a path prefix', () => {
    expect(codeOf(() => checkBaseUrl('ftp://127.0.0.1'))).toBe('UNSAFE_URL');
    expect(codeOf(() => checkBaseUrl('https://example.com/?a=1'))).toBe('UNSAFE_URL');
    expect(codeOf(() => checkBaseUrl('not a url'))).toBe('UNSAFE_URL');
    expect(checkBaseUrl('https://example.com/api/').pathPrefix).toBe('/api');
    expect(checkBaseUrl('https://example.com').pathPrefix).toBe('');
  });

  it('applies the same rules to the WebSocket URL', () => {
    expect(checkWebSocketUrl('ws://127.0.0.1:1/v1/ws')).toBe('ws://127.0.0.1:1/v1/ws');
    expect(checkWebSocketUrl('wss://example.com/v1/ws')).toBe('wss://example.com/v1/ws');
    expect(codeOf(() => checkWebSocketUrl('ws://example.com/v1/ws'))).toBe('UNSAFE_URL');
    expect(codeOf(() => checkWebSocketUrl('https://example.com/v1/ws'))).toBe('UNSAFE_URL');
  });

  it('knows loopback names', () => {
    expect(isLoopbackHost('LOCALHOST')).toBe(true);
    expect(isLoopbackHost('api.localhost')).toBe(true);
    expect(isLoopbackHost('localhost.example.com')).toBe(false);
    expect(isLoopbackHost('127.0.0.1.example.com')).toBe(false);
  });
});

describe('clock offset', () => {
  it('takes the service reading at the midpoint of the round trip', () => {
    expect(estimateClockOffset(1_000, 1_200, 5_100)).toEqual({
      offsetMs: 4_000,
      roundTripMs: 200,
      measuredAtMs: 1_200,
    });
  });

  it('refuses to sign beyond the limit, and says why', () => {
    const ok = estimateClockOffset(0, 0, 5_000);
    expect(() => assertClockUsable(ok, 5_000)).not.toThrow();
    const behind = estimateClockOffset(0, 0, 5_001);
    let error: VenueError | undefined;
    try {
      assertClockUsable(behind, 5_000);
    } catch (caught) {
      error = caught as VenueError;
    }
    expect(error?.code).toBe('CLOCK_SKEW');
    expect(error?.message).toContain('5001 ms behind');
    expect(error?.details).toMatchObject({
      offsetMs: 5_001,
      maxOffsetMs: 5_000,
    });
    expect(codeOf(() => assertClockUsable(estimateClockOffset(0, 0, -6_000), 5_000))).toBe(
      'CLOCK_SKEW',
    );
  });
});

describe('rate limits', () => {
  it('tracks the quota headers per key', () => {
    const tracker = new RateLimitTracker();
    expect(tracker.observe('key_a', {}, 0)).toBeNull();
    tracker.observe(
      'key_a',
      {
        'ratelimit-limit': '10',
        'ratelimit-remaining': '4',
        'ratelimit-reset': '30',
      },
      1_000,
    );
    tracker.observe('key_b', { 'ratelimit-limit': '5', 'ratelimit-remaining': 'x' }, 2_000);
    expect(tracker.get('key_a')).toEqual({
      limit: 10,
      remaining: 4,
      resetAtMs: 31_000,
      observedAtMs: 1_000,
    });
    expect(tracker.get('key_b')).toEqual({
      limit: 5,
      remaining: null,
      resetAtMs: null,
      observedAtMs: 2_000,
    });
    expect([...tracker.snapshot().keys()]).toEqual(['key_a', 'key_b']);
  });

  it('waits for the window reset when the quota is spent, on the injected clock', async () => {
    const clock = new VirtualClock(0);
    const tracker = new RateLimitTracker();
    const limiter = new ClientRateLimiter(tracker, clock);
    tracker.observe(
      'key',
      {
        'ratelimit-limit': '3',
        'ratelimit-remaining': '2',
        'ratelimit-reset': '10',
      },
      0,
    );
    await limiter.acquire('key');
    await limiter.acquire('key');
    expect(tracker.get('key')?.remaining).toBe(0);
    const third = waiting(limiter.acquire('key'));
    await turn();
    expect(third.settled()).toBe(false);
    clock.advanceTo(9_999);
    await turn();
    expect(third.settled()).toBe(false);
    clock.advanceTo(10_000);
    await third.promise;
    expect(tracker.get('key')?.remaining).toBe(2);
  });

  it('leaves the operators their share: order flow waits, a cancel or dead-man refresh passes', async () => {
    const clock = new VirtualClock(0);
    const tracker = new RateLimitTracker();
    // A quota of 20: ordinary requests leave 2 (a tenth) to operator requests.
    const limiter = new ClientRateLimiter(tracker, clock);
    tracker.observe(
      'key',
      { 'ratelimit-limit': '20', 'ratelimit-remaining': '4', 'ratelimit-reset': '10' },
      0,
    );
    expect(limiter.acquire('key')).toBeUndefined();
    expect(limiter.acquire('key')).toBeUndefined();
    expect(tracker.get('key')?.remaining).toBe(2);
    const order = waiting(limiter.acquire('key'));
    await turn();
    expect(order.settled()).toBe(false);
    // The order flow is held; operator requests spend the share at once.
    expect(limiter.acquire('key', undefined, 'operator')).toBeUndefined();
    expect(limiter.acquire('key', undefined, 'operator')).toBeUndefined();
    expect(tracker.get('key')?.remaining).toBe(0);
    const operator = waiting(limiter.acquire('key', undefined, 'operator'));
    await turn();
    expect(operator.settled()).toBe(false);
    clock.advanceTo(10_000);
    await order.promise;
    await operator.promise;
    expect(tracker.get('key')?.remaining).toBe(18);
  });

  it('keeps no operators share under a quota of 10, nor with operatorShare 0', async () => {
    const clock = new VirtualClock(0);
    const tracker = new RateLimitTracker();
    tracker.observe(
      'small',
      { 'ratelimit-limit': '9', 'ratelimit-remaining': '1', 'ratelimit-reset': '10' },
      0,
    );
    tracker.observe(
      'off',
      { 'ratelimit-limit': '100', 'ratelimit-remaining': '1', 'ratelimit-reset': '10' },
      0,
    );
    expect(new ClientRateLimiter(tracker, clock).acquire('small')).toBeUndefined();
    const off = new ClientRateLimiter(tracker, clock, { operatorShare: 0 });
    expect(off.acquire('off')).toBeUndefined();
    expect(() => new ClientRateLimiter(tracker, clock, { operatorShare: 2 })).toThrow(RangeError);
  });

  it('keeps a reserve when asked', async () => {
    const clock = new VirtualClock(0);
    const tracker = new RateLimitTracker();
    const limiter = new ClientRateLimiter(tracker, clock, { reserve: 2 });
    tracker.observe(
      'key',
      {
        'ratelimit-limit': '10',
        'ratelimit-remaining': '2',
        'ratelimit-reset': '1',
      },
      0,
    );
    const held = waiting(limiter.acquire('key'));
    await turn();
    expect(held.settled()).toBe(false);
    clock.advanceTo(1_000);
    await held.promise;
  });
});
