/**
 * A serial lane: asynchronous tasks run one at a time, in order, urgent ones first. The executor
 * sends every command through one lane (design rule 10: through a queue, never re-entrantly).
 */
import { PaperbotError } from '../../core/errors.ts';

interface LaneEntry {
  readonly task: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
  readonly urgent: boolean;
  /** Queued by `post`: `reject` is the caller's own callback, not a promise's. */
  readonly posted: boolean;
}

function ignore(): void {}

export class SerialLane {
  // Entries hold the task and its settlers, not closures over them: a closure assigned to a
  // name costs a name definition each time under tsx, and the executor queues every command.
  private readonly queue: LaneEntry[] = [];
  private running = false;
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  /** Queues `task`; urgent tasks go ahead of ordinary ones (in their own order). */
  run<T>(task: () => Promise<T>, urgent = false): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the lane is closed'));
    return new Promise<T>((resolve, reject) => {
      this.enqueue({
        task,
        resolve: resolve as (value: unknown) => void,
        reject,
        urgent,
        posted: false,
      });
    });
  }

  /**
   * Queues an ordinary `task` whose result nobody awaits: `run` without the promise of its
   * result (the executor queues every intent this way). `onFailure` gets the task's error, or
   * `LANE_CLOSED` when the lane closes before it runs.
   */
  post(task: () => Promise<unknown>, onFailure: (reason: unknown) => void): void {
    if (this.closed) {
      const error = new Error('the lane is closed');
      queueMicrotask(() => onFailure(error));
      return;
    }
    this.enqueue({ task, resolve: ignore, reject: onFailure, urgent: false, posted: true });
  }

  private enqueue(entry: LaneEntry): void {
    if (entry.urgent) {
      const firstOrdinary = this.queue.findIndex((queued) => !queued.urgent);
      if (firstOrdinary === -1) this.queue.push(entry);
      else this.queue.splice(firstOrdinary, 0, entry);
    } else {
      this.queue.push(entry);
    }
    if (!this.running) void this.drain();
  }

  get size(): number {
    return this.queue.length + (this.running ? 1 : 0);
  }

  /** Resolves once nothing is queued or running. */
  idle(): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Refuses new tasks; queued ones are dropped (their promises reject). */
  close(): void {
    this.closed = true;
    for (const entry of this.queue.splice(0)) {
      const error = new PaperbotError('LANE_CLOSED', 'the lane closed before the task ran');
      // As a rejected promise's handler would: after the closing caller's own code.
      if (entry.posted) queueMicrotask(() => entry.reject(error));
      else entry.reject(error);
    }
  }

  private async drain(): Promise<void> {
    this.running = true;
    for (;;) {
      const next = this.queue.shift();
      if (next === undefined) break;
      // One await on the task itself (no derived promise); a task that throws before its first
      // await fails alone, not the drain.
      try {
        next.resolve(await next.task());
      } catch (error) {
        next.reject(error);
      }
    }
    this.running = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter();
  }
}

/**
 * An operators' lane: up to `capacity` tasks at once, none waiting behind another. The dead-man
 * heartbeat sends its refreshes here, never through the executor's serial lane, so a slow order
 * command cannot hold a refresh back and a slow refresh cannot hold the next one back either
 * (design: "Operators' lanes"). A task offered while the lane is full is refused, not queued:
 * a queued refresh would be stale by the time it left.
 */
export class ConcurrentLane {
  private readonly running = new Set<Promise<unknown>>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`a lane needs a capacity of at least 1, got ${capacity}`);
    }
  }

  /** Starts `task` at once, or returns null when `capacity` tasks are already running. */
  tryRun<T>(task: () => Promise<T>): Promise<T> | null {
    if (this.running.size >= this.capacity) return null;
    let work: Promise<T>;
    try {
      work = task();
    } catch (error) {
      work = Promise.reject(error);
    }
    this.running.add(work);
    const forget = () => {
      this.running.delete(work);
    };
    work.then(forget, forget);
    return work;
  }

  get size(): number {
    return this.running.size;
  }

  /** Resolves once no task is running. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
