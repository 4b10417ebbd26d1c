/**
 * Deadlines of venue calls on virtual time: `withDeadline` (one timer per call) and the
 * executor's `DeadlineQueue` (one timer for all its calls, never early, at most a tick late).
 */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { PaperbotError } from '../../../src/core/errors.ts';
import { DeadlineQueue, withDeadline } from '../../../src/runtime/execution/deadline.ts';

/** A call that answers only when told to. */
function hung<T>(): { promise: Promise<T>; answer: (value: T) => void } {
  let answer: (value: T) => void = () => {};
  const promise = new Promise<T>((resolve) => {
    answer = resolve;
  });
  return { promise, answer };
}

/** The settled state of a promise, read after its reactions ran. */
function watch(promise: Promise<unknown>): { state: string; value?: unknown } {
  const seen: { state: string; value?: unknown } = { state: 'pending' };
  promise.then(
    (value) => Object.assign(seen, { state: 'resolved', value }),
    (error: unknown) => Object.assign(seen, { state: 'rejected', value: error }),
  );
  return seen;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('withDeadline', () => {
  it('gives up after the timeout with REQUEST_TIMEOUT, and aborts an abortable call', async () => {
    const clock = new VirtualClock(0);
    let signal: AbortSignal | undefined;
    const seen = watch(
      withDeadline(
        clock,
        1_000,
        (given) => {
          signal = given;
          return hung<string>().promise;
        },
        { abortable: true },
      ),
    );
    clock.advanceTo(999);
    await turn();
    expect(seen.state).toBe('pending');
    clock.advanceTo(1_000);
    await turn();
    expect(seen.state).toBe('rejected');
    expect((seen.value as PaperbotError).code).toBe('REQUEST_TIMEOUT');
    expect(signal?.aborted).toBe(true);
  });
});

describe('deadline queue', () => {
  it('gives up on a call that starts with the timer exactly at the timeout', async () => {
    const clock = new VirtualClock(0);
    const deadlines = new DeadlineQueue(clock, 8_000);
    let signal: AbortSignal | undefined;
    const seen = watch(
      deadlines.run((given) => {
        signal = given;
        return hung<string>().promise;
      }, true),
    );
    clock.advanceTo(7_999);
    await turn();
    expect(seen.state).toBe('pending');
    clock.advanceTo(8_000);
    await turn();
    expect(seen.state).toBe('rejected');
    expect((seen.value as PaperbotError).code).toBe('REQUEST_TIMEOUT');
    expect(signal?.aborted).toBe(true);
    // Nothing left pending: the timer stopped.
    expect(clock.pendingTimers()).toBe(0);
  });

  it('never gives up early, and at most a tick late, whenever a call starts', async () => {
    for (const startAt of [1, 500, 999, 1_000, 1_001, 2_345]) {
      const clock = new VirtualClock(0);
      const deadlines = new DeadlineQueue(clock, 8_000);
      // An earlier call, answered at once, starts the ticks at 0 and keeps them going.
      const first = hung<string>();
      const answered = deadlines.run(() => first.promise);
      const keeper = watch(deadlines.run(() => hung<string>().promise));
      first.answer('ok');
      await expect(answered).resolves.toBe('ok');
      clock.advanceTo(startAt);
      const seen = watch(deadlines.run(() => hung<string>().promise));
      clock.advanceTo(startAt + 7_999);
      await turn();
      expect(seen.state, `started at ${startAt}`).toBe('pending');
      // Ticks every 1,000 ms: the first one at least 8,000 ms after the start.
      clock.advanceTo(startAt + 8_000 + 999);
      await turn();
      expect(seen.state, `started at ${startAt}`).toBe('rejected');
      expect(keeper.state).toBe('rejected');
    }
  });

  it('keeps one timer for many calls, hands answers and failures through, and stops when idle', async () => {
    const clock = new VirtualClock(0);
    const deadlines = new DeadlineQueue(clock, 30_000);
    const calls = Array.from({ length: 50 }, () => hung<number>());
    const results = calls.map((call) => deadlines.run(() => call.promise));
    expect(clock.pendingTimers()).toBe(1);
    calls.forEach((call, index) => call.answer(index));
    await expect(Promise.all(results)).resolves.toEqual(calls.map((_, index) => index));
    const failure = new PaperbotError('ORDER_NOT_FOUND', 'no such order');
    await expect(deadlines.run(() => Promise.reject(failure))).rejects.toBe(failure);
    await expect(
      deadlines.run(() => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(clock.pendingTimers()).toBe(1);
    // The next tick finds every call answered: the timer stops and the queue empties.
    clock.advanceTo(3_750);
    expect(clock.pendingTimers()).toBe(0);
    expect(deadlines.size).toBe(0);
    // An answer after giving up changes nothing.
    const late = hung<string>();
    const seen = watch(deadlines.run(() => late.promise));
    clock.advanceTo(3_750 + 30_000);
    await turn();
    late.answer('too late');
    await turn();
    expect(seen.state).toBe('rejected');
  });

  it('keeps virtual time whole for a timeout that eight does not divide', async () => {
    const clock = new VirtualClock(0);
    const deadlines = new DeadlineQueue(clock, 100);
    const seen = watch(deadlines.run(() => hung<string>().promise));
    clock.advanceTo(99);
    await turn();
    expect(seen.state).toBe('pending');
    clock.advanceTo(104);
    await turn();
    expect(seen.state).toBe('rejected');
    expect(Number.isInteger(clock.now())).toBe(true);
    expect(clock.nextDueAt()).toBeNull();
  });
});
