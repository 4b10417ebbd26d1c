/**
 * The live private stream as the runtime applies it (`PrivateStreamFeed`): every private event
 * the stream client delivers, with its sequence, in order, and a `gap` item wherever sequences
 * will never arrive.
 *
 * - Events are taken from the moment `start()` runs (before the stream connects), so what the
 *   stream client reads from GET /v1/events on its first connection, resuming after the
 *   journal's sequence, is kept until the order tracker subscribes. The buffer is bounded; an
 *   event that finds it full is dropped, and the next one handed on shows the gap.
 * - A gap is any jump in sequence: the venue's event log no longer reaching back to the resume
 *   point (it starts later), a resume at the account head after a halted resync, or events the
 *   key's scopes hide. A gap costs a read-back of GET /v1/fills to the newest fill known; fills
 *   are keyed by `fill_id`, so a gap found where there was none costs reads, never a double count.
 * - The resume point comes from the journal, never from the page's `next_after_sequence`: the
 *   events' own `sequence` values are what count.
 */
import { Observable, Subject, type Subscription } from 'rxjs';
import type { RestClient, StreamClient } from '../../client/index.ts';
import type {
  OtherPrivateEvent,
  PrivateEvent,
  UnreadablePrivateEvent,
} from '../../protocol/index.ts';
import { PrivateSequence, privateStreamItem, readFillsBackFrom } from '../private-stream.ts';
import type {
  FillReadBack,
  FillReadBackStop,
  PrivateStreamFeed,
  PrivateStreamItem,
} from '../venue.ts';
import { translated } from '../venue-error.ts';

const FILLS_PAGE_LIMIT = 200;
export const DEFAULT_PRIVATE_BUFFER = 10_000;

export interface LivePrivateStreamOptions {
  readonly rest: RestClient;
  readonly stream: StreamClient;
  /** The sequence the stream client resumes after (the journal's); null: from the head. */
  readonly resumeAfterSequence: number | null;
  /** Items kept until the first subscriber. Default 10 000. */
  readonly bufferLimit?: number;
}

export class LivePrivateStream implements PrivateStreamFeed {
  readonly items$: Observable<PrivateStreamItem>;

  private readonly rest: RestClient;
  private readonly stream: StreamClient;
  private readonly bufferLimit: number;
  private readonly live = new Subject<PrivateStreamItem>();
  /** Items waiting for the first subscriber; null once it came. */
  private buffer: PrivateStreamItem[] | null = [];
  private readonly sequence: PrivateSequence;
  private subscription: Subscription | null = null;

  constructor(options: LivePrivateStreamOptions) {
    this.rest = options.rest;
    this.stream = options.stream;
    this.bufferLimit = options.bufferLimit ?? DEFAULT_PRIVATE_BUFFER;
    this.sequence = new PrivateSequence(options.resumeAfterSequence);
    this.items$ = new Observable<PrivateStreamItem>((subscriber) => {
      const held = this.buffer;
      this.buffer = null;
      if (held !== null) for (const item of held) subscriber.next(item);
      return this.live.subscribe(subscriber);
    });
  }

  /** Starts taking the stream client's events; call before the stream connects. */
  start(): void {
    if (this.subscription !== null) return;
    this.subscription = this.stream.events$.subscribe((event) => this.onEvent(event));
    // Delivered in sequence order among the others (one synchronous delivery loop): events
    // that broke their schema, to be read back, and events of types the project does not know,
    // which count in the sequence (else each one would look like a gap).
    this.subscription.add(this.stream.unreadableEvents$.subscribe((event) => this.onEvent(event)));
    this.subscription.add(this.stream.otherEvents$.subscribe((event) => this.onOther(event)));
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
  }

  /**
   * Delivery resumes at `head` after a halt: whatever lies between the last sequence handed on
   * and the head is not delivered. Call before the stream client is reset.
   */
  resumedAt(head: number, reason: string): void {
    // Above the last one: events were skipped. Below: the counter went backwards.
    const last = this.sequence.last;
    if (last === null || head !== last) {
      this.emit({ kind: 'gap', after: last, next: head + 1, reason });
    }
    this.sequence.last = head;
  }

  readFillsBack(stop: FillReadBackStop): Promise<FillReadBack> {
    return translated(() =>
      readFillsBackFrom(this.rest.iterateFills({ limit: FILLS_PAGE_LIMIT }), stop),
    );
  }

  private onOther(event: OtherPrivateEvent): void {
    const occurredAt = typeof event.occurred_at === 'string' ? event.occurred_at : '';
    this.onItem(event.sequence, () => ({ kind: 'other', sequence: event.sequence, occurredAt }));
  }

  private onEvent(event: PrivateEvent | UnreadablePrivateEvent): void {
    this.onItem(event.sequence, () => privateStreamItem(event));
  }

  private onItem(sequence: number, item: () => PrivateStreamItem): void {
    if (this.sequence.seen(sequence)) return;
    // No room for the event (and its gap): dropped, so the next one handed on shows the gap.
    const needed = this.sequence.jumps(sequence) ? 2 : 1;
    if (this.buffer !== null && this.buffer.length + needed > this.bufferLimit) return;
    const gap = this.sequence.advance(sequence);
    if (gap !== null) this.emit(gap);
    this.emit(item());
  }

  private emit(unfrozen: PrivateStreamItem): void {
    const item = Object.freeze(unfrozen);
    if (this.buffer !== null) {
      // Events find room (see `onEvent`); a resume's gap is always kept, or the loss is hidden.
      this.buffer.push(item);
      return;
    }
    this.live.next(item);
  }
}
