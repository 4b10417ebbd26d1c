/**
 * The stream's private events in sequence (interface Recovery section): each event offered to
 * a `SequenceTracker`, gaps filled from GET /v1/events until `has_more` is false, duplicates
 * dropped, so each event is delivered exactly once and in order. A counter going backwards, or
 * a gap that cannot be filled, is signalled on `resync$`; the runtime treats that as
 * fail-closed.
 */
import { type Observable, Subject } from 'rxjs';
import type { Clock } from '../core/clock.ts';
import {
  describeIssues,
  formatWirePath,
  isKnownPrivateEvent,
  isUnreadablePrivateEvent,
  type KnownPrivateEventReading,
  type OtherPrivateEvent,
  type PrivateEventReading,
  skippedItemsOf,
  type UnreadablePrivateEvent,
  unreadablePrivateEvent,
} from '../protocol/index.ts';
import type { RestClient } from './rest-client.ts';
import { type SequenceOffer, type SequenceProblem, SequenceTracker } from './sequence.ts';
import type { ResyncSignal } from './stream-types.ts';

const EVENTS_PAGE_LIMIT = 200;

/** A private event as the sequence carries it: read, or unreadable but counted. */
export type StreamEvent = PrivateEventReading | UnreadablePrivateEvent;

/**
 * The events of a GET /v1/events page in sequence order, with those a tolerant read left out
 * (they broke their schema) as unreadable events where their sequence can be read.
 */
function eventsOfPage(page: {
  readonly data: readonly PrivateEventReading[];
}): readonly StreamEvent[] {
  const skipped = skippedItemsOf(page);
  if (skipped.length === 0) return page.data;
  const events: StreamEvent[] = [...page.data];
  for (const item of skipped) {
    const relative = item.issues.map((issue) => ({
      ...issue,
      path: issue.path.slice(item.path.length),
    }));
    const problem = `listEvents: ${describeIssues(relative, item.raw, formatWirePath(item.path))}`;
    const unreadable = unreadablePrivateEvent(item.raw, problem);
    if (unreadable !== null) events.push(unreadable);
  }
  return events.sort((left, right) => left.sequence - right.sequence);
}

export interface PrivateSequenceHooks {
  /** Reads the log (GET /v1/events). */
  readonly rest: Pick<RestClient, 'eventPages'>;
  readonly clock: Clock;
  /** Whether any private channel is followed (none: nothing to read or fill). */
  readonly isPrivate: () => boolean;
  /** Whether the stream stopped for good (a fill under way ends). */
  readonly isStopped: () => boolean;
}

export class PrivateSequence {
  private readonly tracker: SequenceTracker<StreamEvent>;
  /** Waiting for the first head (`startAfterSequence: 'latest'`): nothing is delivered before. */
  private fromHead: boolean;
  private filling: Promise<void> | null = null;
  private fillRequested = false;
  private forcedFillRequested = false;
  private readonly eventSubject = new Subject<KnownPrivateEventReading>();
  private readonly otherEventSubject = new Subject<OtherPrivateEvent>();
  private readonly unreadableEventSubject = new Subject<UnreadablePrivateEvent>();
  private readonly resyncSubject = new Subject<ResyncSignal>();
  readonly counters = {
    gapFills: 0,
    otherEvents: 0,
    unreadableEvents: 0,
    resyncs: 0,
  };

  readonly events$: Observable<KnownPrivateEventReading> = this.eventSubject.asObservable();
  readonly otherEvents$: Observable<OtherPrivateEvent> = this.otherEventSubject.asObservable();
  readonly unreadableEvents$: Observable<UnreadablePrivateEvent> =
    this.unreadableEventSubject.asObservable();
  readonly resync$: Observable<ResyncSignal> = this.resyncSubject.asObservable();

  constructor(
    private readonly hooks: PrivateSequenceHooks,
    options: { readonly startAfterSequence: number | 'latest'; readonly bufferLimit?: number },
  ) {
    const start = options.startAfterSequence;
    this.fromHead = start === 'latest';
    this.tracker = new SequenceTracker<StreamEvent>({
      lastSequence: start === 'latest' ? 0 : start,
      bufferLimit: options.bufferLimit,
    });
  }

  /** The last private sequence delivered. */
  get lastSequence(): number {
    return this.tracker.lastSequence;
  }

  get delivered(): number {
    return this.tracker.delivered;
  }

  get duplicates(): number {
    return this.tracker.duplicates;
  }

  /** Whether events are taken: not while waiting for the first head. */
  get following(): boolean {
    return !this.fromHead;
  }

  /** Whether a new session reads the log first: following, and not halted. */
  get recovers(): boolean {
    return !this.fromHead && this.tracker.halted === null;
  }

  /** A private event (or an unreadable one with its sequence) from the socket. */
  offerLive(event: StreamEvent): void {
    this.handleOffer(this.tracker.offerLive(event));
    this.fillIfGap();
  }

  /** Fills from the log when a gap is known. */
  fillIfGap(): void {
    if (this.tracker.hasGap()) void this.fill(false);
  }

  /** Resumes delivery after `sequence` (`StreamClient.resetSequence`). */
  reset(sequence: number): void {
    this.deliver(this.tracker.reset(sequence));
    this.fillIfGap();
  }

  /** Ends delivery: a fill under way settles, then every observable completes. */
  async complete(): Promise<void> {
    await this.filling?.catch(() => undefined);
    this.eventSubject.complete();
    this.otherEventSubject.complete();
    this.unreadableEventSubject.complete();
    this.resyncSubject.complete();
  }

  /**
   * A head from `authenticated` or a heartbeat. Starting from the head, the first one known
   * sets it; a missing sequence (a service that does not send one) leaves the tracker as is.
   */
  observeHead(sequence: number | null | undefined, fillGaps: boolean): void {
    if (typeof sequence !== 'number') return;
    if (this.fromHead) {
      this.fromHead = false;
      this.deliver(this.tracker.reset(sequence));
      return;
    }
    this.handleOffer(this.tracker.observeHead(sequence));
    if (fillGaps && this.tracker.hasGap()) void this.fill(false);
  }

  private deliver(events: readonly StreamEvent[]): void {
    for (const event of events) {
      if (isUnreadablePrivateEvent(event)) {
        this.counters.unreadableEvents += 1;
        this.unreadableEventSubject.next(event);
      } else if (isKnownPrivateEvent(event)) {
        this.eventSubject.next(event);
      } else {
        this.counters.otherEvents += 1;
        this.otherEventSubject.next(event);
      }
    }
  }

  private handleOffer(offer: SequenceOffer<StreamEvent>): void {
    this.deliver(offer.delivered);
    if (offer.problem !== null) this.signalResync(offer.problem, true, null);
  }

  private signalResync(problem: SequenceProblem, halted: boolean, cause: unknown): void {
    this.counters.resyncs += 1;
    this.resyncSubject.next(
      Object.freeze({
        reason: problem.reason,
        message: problem.message,
        lastSequence: problem.lastSequence,
        sequence: problem.sequence,
        halted,
        at: this.hooks.clock.now(),
        cause,
      }),
    );
  }

  /**
   * Reads GET /v1/events after the last delivered sequence until `has_more` is false, as long
   * as a gap remains and each round makes progress. `force` reads even without a known gap (on
   * reconnect). One fill runs at a time; a request during it runs another round after.
   */
  fill(force: boolean): Promise<void> {
    if (!this.hooks.isPrivate()) return Promise.resolve();
    if (this.filling !== null) {
      this.fillRequested = true;
      this.forcedFillRequested ||= force;
      return this.filling;
    }
    const run = async (): Promise<void> => {
      let mustRead = force;
      for (;;) {
        mustRead ||= this.forcedFillRequested;
        this.fillRequested = false;
        this.forcedFillRequested = false;
        if (this.tracker.halted !== null || !(mustRead || this.tracker.hasGap())) return;
        const gapAtStart = this.tracker.hasGap();
        const before = this.tracker.lastSequence;
        mustRead = false;
        this.counters.gapFills += 1;
        try {
          for await (const page of this.hooks.rest.eventPages({
            after_sequence: before,
            limit: EVENTS_PAGE_LIMIT,
          })) {
            if (this.hooks.isStopped()) return;
            for (const event of eventsOfPage(page)) {
              this.handleOffer(this.tracker.offerLogged(event));
            }
            if (this.tracker.halted !== null) return;
          }
        } catch (error) {
          if (this.hooks.isStopped()) return;
          this.signalResync(
            {
              reason: 'gap_fill_failed',
              message: `reading GET /v1/events after sequence ${before} failed: ${error instanceof Error ? error.message : String(error)}`,
              lastSequence: this.tracker.lastSequence,
              sequence: null,
            },
            false,
            error,
          );
          return;
        }
        if (gapAtStart && this.tracker.hasGap() && this.tracker.lastSequence === before) {
          const problem = this.tracker.stopFor(
            'gap_unfilled',
            `the log has nothing after sequence ${before}, yet sequence ${this.tracker.highestKnown} exists`,
          );
          if (problem !== null) this.signalResync(problem, true, null);
          return;
        }
        if (!this.fillRequested && !this.forcedFillRequested && !this.tracker.hasGap()) return;
      }
    };
    this.filling = run().finally(() => {
      this.filling = null;
    });
    return this.filling;
  }
}
