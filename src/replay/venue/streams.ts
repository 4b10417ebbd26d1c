/**
 * Hot streams of recorded market data. Values are pushed only while someone listens (a record
 * nobody subscribed to costs one field write), and a new subscriber first gets the latest value
 * when the stream keeps one, built on demand.
 *
 * The subscribers are a plain list rather than an rxjs `Subject`: a replay pushes a value per
 * ticker, and `Subject.next` allocates an error-context closure and an iterator per value. The
 * list is copied on change, so a value goes to the subscribers there were when it was pushed
 * (one that unsubscribes meanwhile is closed, and ignores it), as with a `Subject`.
 */
import { Observable, type Subscriber } from 'rxjs';

export class HotStream<T> {
  private subscribers: readonly Subscriber<T>[] = [];
  private completed = false;
  readonly observable: Observable<T>;

  /** `latest`: the value a new subscriber gets first, or undefined for none. */
  constructor(latest: () => T | undefined = () => undefined) {
    this.observable = new Observable<T>((subscriber) => {
      if (this.completed) {
        subscriber.complete();
        return;
      }
      const current = latest();
      if (current !== undefined) subscriber.next(current);
      if (subscriber.closed) return;
      this.subscribers = [...this.subscribers, subscriber];
      return () => {
        this.subscribers = this.subscribers.filter((entry) => entry !== subscriber);
      };
    });
  }

  get observed(): boolean {
    return this.subscribers.length > 0;
  }

  next(value: T): void {
    const subscribers = this.subscribers;
    for (let index = 0; index < subscribers.length; index++) subscribers[index]!.next(value);
  }

  complete(): void {
    if (this.completed) return;
    this.completed = true;
    const subscribers = this.subscribers;
    this.subscribers = [];
    for (const subscriber of subscribers) subscriber.complete();
  }
}
