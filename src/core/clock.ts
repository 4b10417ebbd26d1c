/**
 * The clock seam (design rule 1). Everything that reads time or waits goes through a `Clock`,
 * so live code runs on the system clock and replay and tests run on a `VirtualClock` that only
 * moves when told to. This is the only module allowed to touch `Date.now`, `setTimeout` and
 * `setInterval`.
 */
import { asyncScheduler, type SchedulerAction, type SchedulerLike, Subscription } from 'rxjs';

export interface TimerHandle {
  readonly timerId: number;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
  setInterval(callback: () => void, periodMs: number): TimerHandle;
  clearInterval(handle: TimerHandle | undefined): void;
  /** An RxJS scheduler on this clock, for time operators (`debounceTime(ms, clock.scheduler)`). */
  readonly scheduler: SchedulerLike;
}

/** RFC 3339 UTC with milliseconds, the form paperbot writes on the wire and in files. */
export function isoTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

class SystemClock implements Clock {
  readonly scheduler: SchedulerLike = asyncScheduler;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private nextTimerId = 1;

  now(): number {
    return Date.now();
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timerId = this.nextTimerId++;
    const timer = setTimeout(() => {
      this.timers.delete(timerId);
      callback();
    }, delayMs);
    this.timers.set(timerId, timer);
    return { timerId };
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    this.clearTimer(handle, clearTimeout);
  }

  setInterval(callback: () => void, periodMs: number): TimerHandle {
    const timerId = this.nextTimerId++;
    this.timers.set(timerId, setInterval(callback, periodMs));
    return { timerId };
  }

  clearInterval(handle: TimerHandle | undefined): void {
    this.clearTimer(handle, clearInterval);
  }

  private clearTimer(
    handle: TimerHandle | undefined,
    clear: (timer: NodeJS.Timeout) => void,
  ): void {
    if (!handle) return;
    const timer = this.timers.get(handle.timerId);
    if (timer) clear(timer);
    this.timers.delete(handle.timerId);
  }

  /** Lets a long-lived timer stop holding the process open (metrics, heartbeats). */
  unref(handle: TimerHandle): void {
    this.timers.get(handle.timerId)?.unref();
  }
}

export const systemClock = new SystemClock();

/**
 * A timer of a `VirtualClock`, and its own handle: clearing it marks it, and the heap drops it
 * when it comes to the top. No map of live timers to keep in step: replay sets several timers
 * per intent (the venue's latencies, the runtime's own).
 */
class VirtualTimer implements TimerHandle {
  /** Cleared, or fired once (a timeout). */
  ended = false;

  constructor(
    readonly owner: VirtualClock,
    readonly timerId: number,
    public dueAt: number,
    public order: number,
    readonly periodMs: number | null,
    readonly callback: () => void,
  ) {}
}

/**
 * A clock that moves only when advanced. Timers fire in due-time order (ties in the order they
 * were set), each seeing `now()` equal to its due time. Used by replay and by tests.
 */
export class VirtualClock implements Clock {
  readonly scheduler: SchedulerLike;
  private current: number;
  private readonly heap: VirtualTimer[] = [];
  /** Timers set and neither cleared nor fired. */
  private live = 0;
  private nextTimerId = 1;
  private nextOrder = 0;
  private firedCount = 0;

  constructor(startMs = 0) {
    this.current = startMs;
    this.scheduler = new ClockScheduler(this);
  }

  /**
   * Timers fired so far, intervals once per firing: a replay's loop reads it to know when work
   * may have begun (counted here, so no timer needs a counting wrapper of its own).
   */
  get fired(): number {
    return this.firedCount;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    return this.add(callback, Math.max(0, delayMs), null);
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (!(handle instanceof VirtualTimer) || handle.owner !== this || handle.ended) return;
    handle.ended = true;
    this.live -= 1;
  }

  setInterval(callback: () => void, periodMs: number): TimerHandle {
    return this.add(callback, Math.max(1, periodMs), Math.max(1, periodMs));
  }

  clearInterval(handle: TimerHandle | undefined): void {
    this.clearTimeout(handle);
  }

  /** The due time of the next pending timer, or null. */
  nextDueAt(): number | null {
    this.dropCancelledHead();
    return this.heap[0]?.dueAt ?? null;
  }

  pendingTimers(): number {
    return this.live;
  }

  /** Moves time forward to `targetMs`, firing every timer due on the way, in order. */
  advanceTo(targetMs: number): void {
    if (targetMs < this.current) {
      throw new RangeError(`virtual time cannot move backwards (${targetMs} < ${this.current})`);
    }
    for (;;) {
      this.dropCancelledHead();
      const next = this.heap[0];
      if (!next || next.dueAt > targetMs) break;
      this.pop();
      this.current = next.dueAt;
      if (next.periodMs !== null) {
        next.dueAt += next.periodMs;
        next.order = this.nextOrder++;
        this.push(next);
      } else {
        next.ended = true;
        this.live -= 1;
      }
      this.firedCount += 1;
      next.callback();
    }
    this.current = targetMs;
  }

  advanceBy(deltaMs: number): void {
    this.advanceTo(this.current + deltaMs);
  }

  /** Fires timers until none is due, at most `limit` of them (guards against runaway intervals). */
  runAll(limit = 100_000): void {
    for (let fired = 0; fired < limit; fired++) {
      const due = this.nextDueAt();
      if (due === null) return;
      this.advanceTo(due);
    }
    throw new RangeError(`VirtualClock.runAll fired more than ${limit} timers`);
  }

  private add(callback: () => void, delayMs: number, periodMs: number | null): TimerHandle {
    const timer = new VirtualTimer(
      this,
      this.nextTimerId++,
      this.current + delayMs,
      this.nextOrder++,
      periodMs,
      callback,
    );
    this.live += 1;
    this.push(timer);
    return timer;
  }

  private dropCancelledHead(): void {
    for (;;) {
      const head = this.heap[0];
      if (!head || !head.ended) return;
      this.pop();
    }
  }

  private static before(a: VirtualTimer, b: VirtualTimer): boolean {
    return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.order < b.order);
  }

  private push(timer: VirtualTimer): void {
    const heap = this.heap;
    heap.push(timer);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const parentTimer = heap[parent]!;
      if (!VirtualClock.before(timer, parentTimer)) break;
      heap[index] = parentTimer;
      index = parent;
    }
    heap[index] = timer;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (!last || heap.length === 0) return;
    let index = 0;
    for (;;) {
      const left = index * 2 + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child =
        right < heap.length && VirtualClock.before(heap[right]!, heap[left]!) ? right : left;
      if (!VirtualClock.before(heap[child]!, last)) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
  }
}

/** An RxJS scheduler whose time and delays come from a `Clock`. */
export class ClockScheduler implements SchedulerLike {
  constructor(private readonly clock: Clock) {}

  now(): number {
    return this.clock.now();
  }

  schedule<T>(
    work: (this: SchedulerAction<T>, state?: T) => void,
    delay = 0,
    state?: T,
  ): Subscription {
    return new ClockAction<T>(this.clock, work).schedule(state, delay);
  }
}

class ClockAction<T> extends Subscription implements SchedulerAction<T> {
  private handle: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly work: (this: SchedulerAction<T>, state?: T) => void,
  ) {
    super(() => this.clock.clearTimeout(this.handle));
  }

  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    this.clock.clearTimeout(this.handle);
    this.handle = this.clock.setTimeout(() => {
      this.handle = undefined;
      if (!this.closed) this.work.call(this, state);
    }, delay);
    return this;
  }
}
