/**
 * The stream helpers that stand in for RxJS pieces on the hot paths, in one place.
 *
 * Why not RxJS itself: a backtest pushes every recorded ticker, every private event and every
 * strategy notification through these, millions per run. `Subject.next` allocates an
 * error-context closure and an iterator per value, and `observeOn` keeps a subscription per
 * scheduled value; these do the same job with a plain list and a direct schedule, measured by
 * `npm run bench` (replay.bench). They keep RxJS's observable contract (they are `Observable`s,
 * subscribers are RxJS subscribers), so callers compose them with RxJS operators as usual.
 *
 * - `HotStream`: a hot stream over a plain subscriber list (the list is copied on change, so a
 *   value goes to the subscribers there were when it was pushed, as with a `Subject`). Values
 *   are pushed only while someone listens; a new subscriber first gets the latest value when
 *   the stream keeps one, built on demand. A stream may also be heard without its values
 *   (`signals`): such a subscriber is told a value came, in its place among the others, and
 *   reads the latest itself when it needs it. A value only signalled is never built
 *   (`nextBuilt`).
 * - `observeOnQueue`: `observeOn(queueScheduler)`, each notification a queue task of its own,
 *   scheduled directly (a task left queued after the subscriber unsubscribed hands nothing on).
 */
import { type MonoTypeOperatorFunction, Observable, queueScheduler, type Subscriber } from 'rxjs';

interface Listener {
  readonly subscriber: Subscriber<unknown>;
  /** Told of each value by `signal`, not given the value. */
  readonly signalOnly: boolean;
}

export class HotStream<T, S = never> {
  private listeners: readonly Listener[] = [];
  private completed = false;
  readonly observable: Observable<T>;
  /** Each value's arrival as `signal`, in the same order among subscribers as the values. */
  readonly signals: Observable<S>;

  /**
   * `latest`: the value a new subscriber gets first, or undefined for none; `signal`: what a
   * signal subscriber gets instead of a value (a new one first gets it if there is a latest).
   */
  constructor(
    private readonly latest: () => T | undefined = () => undefined,
    private readonly signal?: S,
  ) {
    this.observable = this.listen<T>(false, latest);
    this.signals = this.listen<S>(true, () => (latest() === undefined ? undefined : signal));
  }

  get observed(): boolean {
    return this.listeners.length > 0;
  }

  next(value: T): void {
    const listeners = this.listeners;
    for (let index = 0; index < listeners.length; index++) {
      const listener = listeners[index]!;
      listener.subscriber.next(listener.signalOnly ? this.signal : value);
    }
  }

  /**
   * The latest value (`latest()`) to the value subscribers and the signal to the signal ones,
   * each in its place; the value is built only if a value subscriber listens.
   */
  nextBuilt(): void {
    const listeners = this.listeners;
    let value: T | undefined;
    for (let index = 0; index < listeners.length; index++) {
      const listener = listeners[index]!;
      if (listener.signalOnly) listener.subscriber.next(this.signal);
      else listener.subscriber.next((value ??= this.latest()));
    }
  }

  complete(): void {
    if (this.completed) return;
    this.completed = true;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener.subscriber.complete();
  }

  private listen<V>(signalOnly: boolean, first: () => V | undefined): Observable<V> {
    return new Observable<V>((subscriber) => {
      if (this.completed) {
        subscriber.complete();
        return;
      }
      const current = first();
      if (current !== undefined) subscriber.next(current);
      if (subscriber.closed) return;
      const listener: Listener = { subscriber: subscriber as Subscriber<unknown>, signalOnly };
      this.listeners = [...this.listeners, listener];
      return () => {
        this.listeners = this.listeners.filter((entry) => entry !== listener);
      };
    });
  }
}

/**
 * `observeOn(queueScheduler)`: each notification as a task of its own on the queue scheduler,
 * in the same order, scheduled directly rather than kept as a subscription per value (a task
 * left queued after the subscriber unsubscribed hands nothing on).
 */
export function observeOnQueue<T>(): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) =>
      source.subscribe({
        next: (value) => {
          queueScheduler.schedule(() => {
            if (!subscriber.closed) subscriber.next(value);
          });
        },
        error: (error: unknown) => {
          queueScheduler.schedule(() => {
            if (!subscriber.closed) subscriber.error(error);
          });
        },
        complete: () => {
          queueScheduler.schedule(() => {
            if (!subscriber.closed) subscriber.complete();
          });
        },
      }),
    );
}
