import { take } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { HotStream } from '../../src/core/streams.ts';

describe('hot streams of recorded data', () => {
  it('gives a new subscriber the latest value, then what is pushed while it listens', () => {
    let latest: number | undefined;
    const stream = new HotStream<number>(() => latest);
    expect(stream.observed).toBe(false);
    const early: number[] = [];
    const first = stream.observable.subscribe((value) => early.push(value));
    expect(stream.observed).toBe(true);
    latest = 1;
    stream.next(1);
    const late: number[] = [];
    const second = stream.observable.subscribe((value) => late.push(value));
    latest = 2;
    stream.next(2);
    first.unsubscribe();
    stream.next(3);
    second.unsubscribe();
    expect(stream.observed).toBe(false);
    stream.next(4);
    expect(early).toEqual([1, 2]);
    expect(late).toEqual([1, 2, 3]);
  });

  it('lets a subscriber that leaves during a value stop at once, the others still get it', () => {
    const stream = new HotStream<string>();
    const seen: string[] = [];
    const leaving = stream.observable.subscribe((value) => {
      seen.push(`a:${value}`);
      staying.unsubscribe();
    });
    const staying = stream.observable.subscribe((value) => seen.push(`b:${value}`));
    stream.next('x');
    expect(seen).toEqual(['a:x']);
    stream.next('y');
    expect(seen).toEqual(['a:x', 'a:y']);
    leaving.unsubscribe();
  });

  it('completes its subscribers, and completes later ones at once without a value', () => {
    const stream = new HotStream<number>(() => 7);
    const events: string[] = [];
    stream.observable.subscribe({
      next: (value) => events.push(`next ${value}`),
      complete: () => events.push('complete'),
    });
    stream.complete();
    stream.observable.subscribe({
      next: (value) => events.push(`late ${value}`),
      complete: () => events.push('late complete'),
    });
    stream.next(8);
    expect(events).toEqual(['next 7', 'complete', 'late complete']);
    expect(stream.observed).toBe(false);
  });

  it('does not keep a subscriber that is done with the latest value', () => {
    const stream = new HotStream<number>(() => 5);
    const seen: number[] = [];
    stream.observable.pipe(take(1)).subscribe((value) => seen.push(value));
    expect(stream.observed).toBe(false);
    stream.next(6);
    expect(seen).toEqual([5]);
  });

  it('signals a value in its place among the value subscribers, and builds none for signals alone', () => {
    let builds = 0;
    let latest: number | undefined;
    const stream = new HotStream<{ n: number }, string>(() => {
      if (latest === undefined) return undefined;
      builds += 1;
      return { n: latest };
    }, 'm');
    const seen: string[] = [];
    const signals = stream.signals.subscribe((signal) => seen.push(`signal ${signal}`));
    expect(stream.observed).toBe(true);
    latest = 1;
    stream.nextBuilt();
    expect(builds).toBe(0);
    expect(seen).toEqual(['signal m']);
    // A value subscriber gets the latest first; later values are built once for all of them.
    const values = stream.observable.subscribe((value) => seen.push(`value ${value.n}`));
    const second = stream.observable.subscribe((value) => seen.push(`second ${value.n}`));
    expect(builds).toBe(2);
    latest = 2;
    stream.nextBuilt();
    expect(builds).toBe(3);
    expect(seen).toEqual(['signal m', 'value 1', 'second 1', 'signal m', 'value 2', 'second 2']);
    stream.next({ n: 9 });
    expect(seen.slice(-3)).toEqual(['signal m', 'value 9', 'second 9']);
    values.unsubscribe();
    second.unsubscribe();
    latest = 3;
    stream.nextBuilt();
    expect(builds).toBe(3);
    signals.unsubscribe();
    expect(stream.observed).toBe(false);
  });

  it('tells a new signal subscriber of the latest value only when there is one', () => {
    const state: { latest?: number } = {};
    const stream = new HotStream<number, string>(() => state.latest, 'm');
    const seen: string[] = [];
    stream.signals.pipe(take(1)).subscribe((signal) => seen.push(`early ${signal}`));
    expect(seen).toEqual([]);
    state.latest = 4;
    stream.signals.pipe(take(1)).subscribe((signal) => seen.push(`late ${signal}`));
    expect(seen).toEqual(['late m']);
    stream.nextBuilt();
    expect(seen).toEqual(['late m', 'early m']);
    expect(stream.observed).toBe(false);
  });
});
