/**
 * A venue call that gives up waiting after a deadline on the injected clock. The call's own
 * timeout belongs to the venue; this one keeps a hung promise from holding the executor's lane
 * or a heartbeat forever. Giving up is `REQUEST_TIMEOUT`: for a mutation, an unknown outcome.
 */
import type { Clock } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import type { ResponseOf } from '../../protocol/index.ts';
import type { CommandEndpoint, ExecutionVenue, PreparedCommand } from '../venue.ts';

export interface DeadlineOptions {
  /**
   * Give the call a signal that aborts when the deadline passes (for a venue whose transport
   * stops on it, `ExecutionVenue.abortable`). Otherwise the call gets none: a signal costs more
   * than an in-process venue's whole answer, and giving up is this timer's either way.
   */
  readonly abortable?: boolean;
}

/** The call's promise; a call that throws before returning one becomes a rejection. */
function startCall<T>(
  call: (signal: AbortSignal | undefined) => Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
  try {
    return call(signal);
  } catch (error) {
    return Promise.reject(error);
  }
}

function timeoutError(timeoutMs: number): PaperbotError {
  return new PaperbotError('REQUEST_TIMEOUT', `no answer within ${timeoutMs} ms`, {
    details: { timeoutMs },
  });
}

export function withDeadline<T>(
  clock: Clock,
  timeoutMs: number | null,
  call: (signal: AbortSignal | undefined) => Promise<T>,
  options: DeadlineOptions = {},
): Promise<T> {
  const controller = options.abortable === true ? new AbortController() : null;
  if (timeoutMs === null) return call(controller?.signal);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = clock.setTimeout(() => {
      if (settled) return;
      settled = true;
      controller?.abort();
      reject(timeoutError(timeoutMs));
    }, timeoutMs);
    startCall(call, controller?.signal).then(
      (value) => {
        if (settled) return;
        settled = true;
        clock.clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clock.clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** Ticks per timeout of a `DeadlineQueue`: a call gives up at most this fraction late. */
const TICKS_PER_TIMEOUT = 8;

/**
 * A call in a `DeadlineQueue`: its promise and the handlers that settle it, made once per call
 * (no promise executor and settle closures of its own around each call's answer).
 */
class QueuedDeadline<T> {
  settled = false;
  readonly promise: Promise<T>;
  private resolvePromise!: (value: T) => void;
  private rejectPromise!: (reason: unknown) => void;

  constructor(
    /** The tick at which the call gives up, if still unanswered. */
    readonly expiresAtTick: number,
    readonly controller: AbortController | null,
  ) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolvePromise = resolve;
      this.rejectPromise = reject;
    });
  }

  /** Follows the call's answer; the first of it and the deadline settles the promise. */
  follow(answer: Promise<T>): Promise<T> {
    answer.then(this.answered, this.failed);
    return this.promise;
  }

  /** Gives up: the deadline passed with the call unanswered. */
  expire(error: PaperbotError): void {
    this.settled = true;
    this.controller?.abort();
    this.rejectPromise(error);
  }

  private readonly answered = (value: T): void => {
    if (this.settled) return;
    this.settled = true;
    this.resolvePromise(value);
  };

  private readonly failed = (reason: unknown): void => {
    if (this.settled) return;
    this.settled = true;
    this.rejectPromise(reason);
  };
}

/**
 * `withDeadline` for a caller that makes many calls with one timeout (the executor: one or two
 * per intent): one clock timer for all of them instead of one armed and cleared per call. The
 * timer ticks every `timeoutMs / 8` while a call is pending, and a call gives up at the first
 * tick at least `timeoutMs` after it started: never early, at most a tick (an eighth of the
 * timeout, rounded up to a millisecond) late. Elapsed time is counted in ticks, not by
 * subtracting `clock.now()` readings, so a step of the wall clock moves no deadline. Calls
 * answered between two ticks cost no timer work at all; the timer stops at the first tick
 * that finds every call answered.
 */
export class DeadlineQueue {
  private readonly tickMs: number;
  private readonly queue: QueuedDeadline<unknown>[] = [];
  private head = 0;
  private ticks = 0;
  /** When the last tick fired, or the timer was armed; null while disarmed. */
  private tickedAt: number | null = null;

  constructor(
    private readonly clock: Clock,
    readonly timeoutMs: number,
  ) {
    // Whole milliseconds, rounded up: eight ticks are never less than the timeout, and a
    // virtual clock's time stays an integer.
    this.tickMs = Math.ceil(timeoutMs / TICKS_PER_TIMEOUT);
  }

  /** Calls in the queue, answered ones included until the next tick drops them. */
  get size(): number {
    return this.queue.length - this.head;
  }

  /** Makes the call; `abortable`: give it a signal that aborts when it gives up. */
  run<T>(call: (signal: AbortSignal | undefined) => Promise<T>, abortable = false): Promise<T> {
    const entry = this.enter<T>(abortable);
    return entry.follow(startCall(call, entry.controller?.signal));
  }

  /** Sends a prepared command through the venue (no closure around the send per call). */
  send<E extends CommandEndpoint>(
    venue: ExecutionVenue,
    prepared: PreparedCommand<E>,
    abortable = false,
  ): Promise<ResponseOf<E>> {
    const entry = this.enter<ResponseOf<E>>(abortable);
    let answer: Promise<ResponseOf<E>>;
    try {
      answer = venue.send(prepared, entry.controller?.signal);
    } catch (error) {
      answer = Promise.reject(error);
    }
    return entry.follow(answer);
  }

  /** A call's entry, queued before the call starts (its deadline counts from now). */
  private enter<T>(abortable: boolean): QueuedDeadline<T> {
    const entry = new QueuedDeadline<T>(
      this.expiryTick(),
      abortable ? new AbortController() : null,
    );
    this.queue.push(entry as QueuedDeadline<unknown>);
    return entry;
  }

  /**
   * The tick a call starting now gives up at, arming the timer if it is not running. A call that
   * starts with a tick (or the arming) is due `TICKS_PER_TIMEOUT` ticks later; one that starts
   * between two ticks, a tick more, so at least `timeoutMs` passes either way.
   */
  private expiryTick(): number {
    const now = this.clock.now();
    if (this.tickedAt === null) {
      this.tickedAt = now;
      this.arm();
    }
    return this.ticks + TICKS_PER_TIMEOUT + (now === this.tickedAt ? 0 : 1);
  }

  private arm(): void {
    this.clock.setTimeout(() => this.tick(), this.tickMs);
  }

  private tick(): void {
    this.ticks += 1;
    this.tickedAt = this.clock.now();
    const queue = this.queue;
    // Expiry ticks grow with the queue's order: the due calls are at its head.
    while (this.head < queue.length) {
      const entry = queue[this.head]!;
      if (!entry.settled) {
        if (entry.expiresAtTick > this.ticks) break;
        entry.expire(timeoutError(this.timeoutMs));
      }
      this.head += 1;
    }
    // Answered calls further on are dropped at a later tick; a pending one keeps the timer.
    let pending = false;
    for (let index = this.head; index < queue.length; index++) {
      if (!queue[index]!.settled) {
        pending = true;
        break;
      }
    }
    if (!pending) {
      queue.length = 0;
      this.head = 0;
      this.tickedAt = null;
      return;
    }
    if (this.head > 1024 && this.head > queue.length / 2) {
      queue.splice(0, this.head);
      this.head = 0;
    }
    this.arm();
  }
}
