/**
 * The stream's public channels (tickers): how many subscribers each has, the latest frame of
 * each (a late subscriber starts from it, as a snapshot), and the frames handed to the
 * subscribers of their market only, a snapshot first.
 */
import { Observable, Subject } from 'rxjs';
import type { PublicChannel } from '../protocol/index.ts';
import { deepFreeze } from './stream-frames.ts';
import type { TickerFrame } from './stream-types.ts';

export class TickerSubscriptions {
  private readonly subscribers = new Map<PublicChannel, number>();
  private readonly latest = new Map<PublicChannel, TickerFrame>();
  private readonly frames = new Subject<TickerFrame>();

  /**
   * `change` is told when a channel gains its first subscriber (`subscribe`) or loses its last
   * (`unsubscribe`), to send that frame if the stream is live.
   */
  constructor(
    private readonly change: (op: 'subscribe' | 'unsubscribe', channel: PublicChannel) => void,
  ) {}

  /** The channels subscribed to: subscribed again on every new session. */
  channels(): Iterable<PublicChannel> {
    return this.subscribers.keys();
  }

  /** The ticker of one channel: a snapshot (the latest frame, if any), then its frames. */
  observe(channel: PublicChannel): Observable<TickerFrame> {
    return new Observable<TickerFrame>((subscriber) => {
      const count = (this.subscribers.get(channel) ?? 0) + 1;
      this.subscribers.set(channel, count);
      if (count === 1) this.change('subscribe', channel);
      let seenSnapshot = false;
      const latest = this.latest.get(channel);
      if (latest !== undefined) {
        seenSnapshot = true;
        subscriber.next(
          latest.type === 'ticker.snapshot'
            ? latest
            : deepFreeze({ ...latest, type: 'ticker.snapshot' as const }),
        );
      }
      const inner = this.frames.subscribe({
        next: (frame) => {
          if (frame.channel !== channel) return;
          if (frame.type === 'ticker.snapshot') seenSnapshot = true;
          else if (!seenSnapshot) return;
          subscriber.next(frame);
        },
        complete: () => subscriber.complete(),
      });
      return () => {
        inner.unsubscribe();
        const remaining = (this.subscribers.get(channel) ?? 1) - 1;
        if (remaining > 0) {
          this.subscribers.set(channel, remaining);
          return;
        }
        this.subscribers.delete(channel);
        this.latest.delete(channel);
        this.change('unsubscribe', channel);
      };
    });
  }

  /** A ticker frame from the socket; one of a channel nobody follows is dropped. */
  onFrame(frame: TickerFrame): void {
    if (!this.subscribers.has(frame.channel)) return;
    this.latest.set(frame.channel, frame);
    this.frames.next(frame);
  }

  complete(): void {
    this.frames.complete();
  }
}
