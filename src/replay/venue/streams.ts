/**
 * Hot streams of recorded market data. Values are pushed only while someone listens (a record
 * nobody subscribed to costs one field write), and a new subscriber first gets the latest value
 * when the stream keeps one, built on demand.
 */
import { Observable, Subject } from 'rxjs';

export class HotStream<T> {
  private readonly subject = new Subject<T>();
  readonly observable: Observable<T>;

  /** `latest`: the value a new subscriber gets first, or undefined for none. */
  constructor(latest: () => T | undefined = () => undefined) {
    this.observable = new Observable<T>((subscriber) => {
      const current = latest();
      if (current !== undefined) subscriber.next(current);
      return this.subject.subscribe(subscriber);
    });
  }

  get observed(): boolean {
    return this.subject.observed;
  }

  next(value: T): void {
    this.subject.next(value);
  }

  complete(): void {
    this.subject.complete();
  }
}
