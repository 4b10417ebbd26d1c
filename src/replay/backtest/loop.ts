/**
 * Driving virtual time. The runtime is asynchronous (the executor awaits venue promises, the
 * tracker awaits reads) while a replay delivers records synchronously, so the loop interleaves
 * the two deterministically:
 *
 * - Time moves one step at a time: to the next timer due, to the next equity sample, or to the
 *   next record's `t`, whichever comes first; a timer therefore fires at its own due time, and
 *   the code it wakes sees `now()` equal to that time.
 * - After a step that may have started asynchronous work (a timer fired, the venue was called or
 *   delivered something, a strategy emitted an intent), the loop lets every queued promise
 *   continuation run before time moves again (`settle`). It waits for that on `process.nextTick`
 *   queued from a continuation, which Node runs only once the microtask queue is empty: a turn
 *   of the event loop (`setImmediate`) costs several times more, and a replay settles a few
 *   times per intent. It never waits on time: every delay of the run is on the virtual clock.
 *   Every `YIELD_EVERY` settles it still gives the event loop a turn (signals, I/O, progress).
 * - Steps that start nothing (most records) cost no yield, which is what keeps a replay fast.
 *
 * The order of everything is fixed by the data and the code, so the same inputs give the same
 * run.
 */
import { setImmediate as eventLoopTurn } from 'node:timers/promises';
import { VirtualClock } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';

/**
 * The virtual clock of a replay. It counts the timers it fires (`fired`, kept by `VirtualClock`
 * itself), so a loop knows when work may have begun.
 */
export class ReplayClock extends VirtualClock {}

/** Rounds of settling in a row before a run counts as stuck in a loop of its own making. */
const MAX_SETTLE_ROUNDS = 100_000;
/** Settling rounds between two turns of the event loop. */
const YIELD_EVERY = 256;

/** Settled once: `.then` on it queues a microtask without a new promise to resolve. */
const SETTLED = Promise.resolve();
const nothing = (): void => undefined;

/**
 * One settle in progress: its promise's settling functions and how far it has got. `step` runs
 * the next round and `hop` queues it; both are made once and the object is reused by the next
 * settle (a settle runs a few times per intent, a round a few times per settle).
 */
interface Settling {
  resolve: () => void;
  reject: (error: unknown) => void;
  before: number;
  round: number;
  readonly step: () => void;
  readonly hop: () => void;
}

export class TimeDriver {
  private readonly sources: (() => number)[];
  private rounds = 0;
  /** A finished settling, ready for the next settle (they run one after the other). */
  private idle: Settling | null = null;

  /**
   * `activity`: counters that move when asynchronous work may have started (the venue's
   * activity, intents emitted); the clock's fired timers always count.
   */
  constructor(
    readonly clock: ReplayClock,
    activity: readonly (() => number)[],
  ) {
    this.sources = [() => clock.fired, ...activity];
  }

  /** A number that changes whenever any activity source moves. */
  mark(): number {
    // Indexed: called twice per record, where an iterator's result objects would be garbage.
    const sources = this.sources;
    let total = 0;
    for (let index = 0; index < sources.length; index++) total += sources[index]!();
    return total;
  }

  /**
   * Lets queued continuations run, and timers they set for now fire, until nothing moves. The
   * rounds are callbacks, not awaits: one promise per settle rather than several per round.
   */
  settle(): Promise<void> {
    return new Promise<void>(this.startSettling);
  }

  /** The executor of every settle's promise: one function, not a closure per settle. */
  private readonly startSettling = (resolve: () => void, reject: (error: unknown) => void) => {
    const settling = this.idle ?? this.newSettling();
    this.idle = null;
    settling.resolve = resolve;
    settling.reject = reject;
    settling.before = this.mark();
    settling.round = 0;
    this.afterPendingWork(settling);
  };

  private newSettling(): Settling {
    const settling: Settling = {
      resolve: nothing,
      reject: nothing,
      before: 0,
      round: 0,
      step: () => this.settleRound(settling),
      hop: () => process.nextTick(settling.step),
    };
    return settling;
  }

  /** One round: runs what fell due now, then settles or waits for the next round. */
  private settleRound(settling: Settling): void {
    try {
      const due = this.clock.nextDueAt();
      if (due !== null && due <= this.clock.now()) this.clock.advanceTo(this.clock.now());
      if (this.mark() === settling.before) {
        this.finish(settling, null);
        return;
      }
      settling.round++;
      if (settling.round >= MAX_SETTLE_ROUNDS) {
        throw new PaperbotError(
          'BACKTEST_STALLED',
          `the run kept scheduling work at ${this.clock.now()} without time moving`,
        );
      }
      settling.before = this.mark();
      this.afterPendingWork(settling);
    } catch (error) {
      this.finish(settling, { error });
    }
  }

  /** Settles the settle's promise and keeps its settling for the next one. */
  private finish(settling: Settling, failure: { readonly error: unknown } | null): void {
    const { resolve, reject } = settling;
    settling.resolve = nothing;
    settling.reject = nothing;
    this.idle = settling;
    if (failure === null) resolve();
    else reject(failure.error);
  }

  /**
   * Runs the settling's next round once every promise continuation queued before, and every
   * one those queue, has run; now and then after a turn of the event loop instead. Queued from a
   * microtask, a tick runs only after the microtask queue has drained (a tick queued from plain
   * code would run before it). The microtask is a reaction on a settled promise, not
   * `queueMicrotask`, which wraps each callback in an async resource and a bound function; both
   * join the same queue in the same order.
   */
  private afterPendingWork(settling: Settling): void {
    this.rounds++;
    if (this.rounds % YIELD_EVERY === 0) setImmediate(settling.step);
    else void SETTLED.then(settling.hop);
  }

  /**
   * Moves time to `target`, firing timers at their due times and calling `onSample` at each
   * sample time on the way (`nextSampleAt` returns the next one, or Infinity).
   */
  async advanceTo(
    target: number,
    nextSampleAt: () => number = () => Number.POSITIVE_INFINITY,
    onSample: (t: number) => void = () => undefined,
  ): Promise<void> {
    const clock = this.clock;
    for (;;) {
      const due = clock.nextDueAt() ?? Number.POSITIVE_INFINITY;
      const sample = nextSampleAt();
      if (due > target && sample > target) break;
      if (due <= sample) {
        const before = this.mark();
        clock.advanceTo(due);
        if (this.mark() !== before) await this.settle();
      } else {
        clock.advanceTo(sample);
        onSample(sample);
      }
    }
    if (target > clock.now()) clock.advanceTo(target);
  }

  /**
   * Runs time forward until `work` settles, for at most `limitMs` of virtual time (startup
   * reads, the final cancel-all and drain).
   */
  async runUntil<T>(work: Promise<T>, limitMs: number, what: string): Promise<T> {
    let done = false;
    work.then(
      () => {
        done = true;
      },
      () => {
        done = true;
      },
    );
    const deadline = this.clock.now() + limitMs;
    while (!done) {
      await this.settle();
      if (done) break;
      const due = this.clock.nextDueAt();
      if (due === null || due > deadline) {
        await eventLoopTurn();
        if (done) break;
        throw new PaperbotError(
          'BACKTEST_STALLED',
          `${what} did not finish within ${limitMs} ms of virtual time`,
        );
      }
      const before = this.mark();
      this.clock.advanceTo(due);
      if (this.mark() !== before) await this.settle();
    }
    return work;
  }
}
