import { firstValueFrom, interval, take, timer, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ClockScheduler, isoTimestamp, VirtualClock } from '../../src/core/clock.ts';

describe('VirtualClock', () => {
  it('fires timers in due order, ties in the order they were set, each at its due time', () => {
    const clock = new VirtualClock(1_000);
    const seen: string[] = [];
    clock.setTimeout(() => seen.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => seen.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => seen.push(`c@${clock.now()}`), 20);
    clock.advanceBy(15);
    expect(seen).toEqual(['a@1010']);
    expect(clock.now()).toBe(1_015);
    clock.advanceBy(100);
    expect(seen).toEqual(['a@1010', 'b@1020', 'c@1020']);
    expect(clock.now()).toBe(1_115);
  });

  it('does not fire cleared timers and repeats intervals until cleared', () => {
    const clock = new VirtualClock();
    const fired: number[] = [];
    const cancelled = clock.setTimeout(() => fired.push(-1), 5);
    clock.clearTimeout(cancelled);
    const every = clock.setInterval(() => fired.push(clock.now()), 10);
    clock.advanceTo(35);
    clock.clearInterval(every);
    clock.advanceTo(100);
    expect(fired).toEqual([10, 20, 30]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('counts pending timers through clears, fires and foreign handles', () => {
    const clock = new VirtualClock(0);
    const other = new VirtualClock(0);
    const fired: string[] = [];
    const once = clock.setTimeout(() => fired.push('once'), 10);
    const cleared = clock.setTimeout(() => fired.push('cleared'), 10);
    const every = clock.setInterval(() => fired.push('every'), 4);
    expect(clock.pendingTimers()).toBe(3);
    clock.clearTimeout(cleared);
    clock.clearTimeout(cleared);
    // A handle of another clock, or a handle-shaped object, clears nothing here.
    clock.clearTimeout(other.setTimeout(() => undefined, 1));
    clock.clearTimeout({ timerId: (once as { timerId: number }).timerId });
    expect(clock.pendingTimers()).toBe(2);
    clock.advanceTo(10);
    expect(fired).toEqual(['every', 'every', 'once']);
    expect(clock.pendingTimers()).toBe(1);
    // Clearing a timer that already fired changes nothing.
    clock.clearTimeout(once);
    expect(clock.pendingTimers()).toBe(1);
    clock.clearInterval(every);
    expect(clock.pendingTimers()).toBe(0);
    expect(clock.nextDueAt()).toBeNull();
    expect(other.pendingTimers()).toBe(1);
  });

  it('counts the timers it fires, each firing of an interval once, and not cleared ones', () => {
    const clock = new VirtualClock(0);
    let firedWhenCalled = -1;
    clock.setTimeout(() => {
      firedWhenCalled = clock.fired;
    }, 5);
    clock.clearTimeout(clock.setTimeout(() => undefined, 6));
    const every = clock.setInterval(() => undefined, 10);
    expect(clock.fired).toBe(0);
    clock.advanceTo(35);
    // The count moves before the callback runs: work a timer starts is seen as begun.
    expect(firedWhenCalled).toBe(1);
    expect(clock.fired).toBe(4);
    clock.clearInterval(every);
    clock.advanceTo(100);
    expect(clock.fired).toBe(4);
  });

  it('runs timers scheduled by timers within the same advance', () => {
    const clock = new VirtualClock();
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 5);
    }, 5);
    clock.advanceTo(10);
    expect(fired).toEqual([5, 10]);
  });

  it('refuses to move backwards and stops runaway intervals in runAll', () => {
    const clock = new VirtualClock(50);
    expect(() => clock.advanceTo(10)).toThrow(RangeError);
    clock.setInterval(() => undefined, 1);
    expect(() => clock.runAll(100)).toThrow(RangeError);
  });

  it('drives RxJS time operators through its scheduler', async () => {
    const clock = new VirtualClock(0);
    const values = firstValueFrom(interval(100, clock.scheduler).pipe(take(3), toArray()));
    clock.advanceTo(1_000);
    expect(await values).toEqual([0, 1, 2]);
    const late = firstValueFrom(timer(500, new ClockScheduler(clock)));
    clock.advanceBy(499);
    let done = false;
    void late.then(() => {
      done = true;
    });
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advanceBy(1);
    expect(await late).toBe(0);
  });
});

describe('isoTimestamp', () => {
  it('writes RFC 3339 UTC with milliseconds', () => {
    expect(isoTimestamp(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoTimestamp(1_767_225_600_123)).toBe('2026-01-01T00:00:00.123Z');
  });
});
