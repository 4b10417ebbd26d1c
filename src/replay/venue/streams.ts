/**
 * Hot streams of recorded market data. Values are pushed only while someone listens (a record
 * nobody subscribed to costs one field write), and a new subscriber first gets the latest value
 * when the stream keeps one, built on demand.
 *
 * The subscribers are a plain list rather than an rxjs `Subject`: a replay pushes a value per
 * ticker, and `Subject.next` allocates an error-context closure and an iterator per value. The
 * list is copied on change, so a value goes to the subscribers there were when it was pushed
 * (one that unsubscribes meanwhile is closed, and ignores it), as with a `Subject`.
 *
 * A stream may also be heard without its values (`signals`): such a subscriber is told a value
 * came, in its place among the others, and reads the latest itself when it needs it. A value
 * only signalled is never built (`nextBuilt`).
 */
import { Observable, type Subscriber } from 'rxjs';

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
