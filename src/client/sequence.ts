/**
 * The private sequence (one counter per account across all private channels): delivers every
 * event exactly once and in order, from two sources, the WebSocket ("live") and
 * GET /v1/events (the "log"). Pure and synchronous; the stream client does the I/O.
 *
 * - A live event one past the last delivered is delivered at once, then any buffered events
 *   that now follow on.
 * - A live event further ahead is held, and a gap is reported (`hasGap`): the caller fills it
 *   from the log.
 * - An event at or below the last delivered one is a duplicate and dropped, unless the same
 *   sequence was delivered with another event id: then the counter went backwards.
 * - The log is the authority on which sequences exist: a log event is delivered even when it
 *   skips numbers, unless a live event is held below it (the log and the stream disagree).
 * - A head (heartbeat or `authenticated` sequence) below the last delivered one means the
 *   service lost events or the account changed: the counter went backwards.
 *
 * Any such contradiction halts delivery until `reset` is called with a sequence the caller has
 * reconciled to: fail closed. While halted every event is held, whatever its sequence (up to the
 * buffer limit; the log covers anything beyond).
 */
import type { PrivateEvent } from '../protocol/index.ts';

/** What the tracker needs of an event: its place in the sequence and its identity. */
export interface SequencedEvent {
  readonly sequence: number;
  readonly event_id: string;
}

export type ResyncReason =
  /** A head below the last delivered sequence, or a sequence seen twice with different events. */
  | 'sequence_backwards'
  /** The log skips a sequence the stream delivered. */
  | 'inconsistent_log'
  /** A gap the log could not fill. */
  | 'gap_unfilled'
  /** Reading the log failed; the held events wait for the next fill. */
  | 'gap_fill_failed'
  /** More events held than the buffer allows. */
  | 'buffer_overflow';

export interface SequenceProblem {
  readonly reason: ResyncReason;
  readonly message: string;
  readonly lastSequence: number;
  readonly sequence: number | null;
}

export interface SequenceOffer<E extends SequencedEvent = PrivateEvent> {
  /** Events to hand on now, in order. */
  readonly delivered: readonly E[];
  readonly duplicate: boolean;
  readonly problem: SequenceProblem | null;
}

export interface SequenceTrackerOptions {
  /** The last sequence already processed (0 when none). */
  readonly lastSequence: number;
  /** Events held while waiting for a gap fill. Default 10 000. */
  readonly bufferLimit?: number;
  /** Delivered event ids remembered, to tell a duplicate from a counter going backwards. */
  readonly recentLimit?: number;
}

const NOTHING: SequenceOffer<never> = Object.freeze({
  delivered: [],
  duplicate: false,
  problem: null,
});
const DUPLICATE: SequenceOffer<never> = Object.freeze({
  delivered: [],
  duplicate: true,
  problem: null,
});

export class SequenceTracker<E extends SequencedEvent = PrivateEvent> {
  private last: number;
  private highest: number;
  private halt: SequenceProblem | null = null;
  private readonly buffer = new Map<number, E>();
  private readonly recent = new Map<number, string>();
  private readonly bufferLimit: number;
  private readonly recentLimit: number;
  private deliveredCount = 0;
  private duplicateCount = 0;

  constructor(options: SequenceTrackerOptions) {
    checkSequence(options.lastSequence);
    this.last = options.lastSequence;
    this.highest = options.lastSequence;
    this.bufferLimit = options.bufferLimit ?? 10_000;
    this.recentLimit = options.recentLimit ?? 4_096;
  }

  get lastSequence(): number {
    return this.last;
  }

  /** The highest sequence known to exist (delivered, held, or announced by a head). */
  get highestKnown(): number {
    return this.highest;
  }

  get halted(): SequenceProblem | null {
    return this.halt;
  }

  get held(): number {
    return this.buffer.size;
  }

  get delivered(): number {
    return this.deliveredCount;
  }

  get duplicates(): number {
    return this.duplicateCount;
  }

  /** True when sequences are known to be missing and delivery is not halted. */
  hasGap(): boolean {
    return this.halt === null && (this.buffer.size > 0 || this.highest > this.last);
  }

  offerLive(event: E): SequenceOffer<E> {
    const sequence = event.sequence;
    if (this.halt !== null) return this.holdWhileHalted(event);
    if (sequence <= this.last) return this.alreadyDelivered(event);
    const held = this.buffer.get(sequence);
    if (held !== undefined) {
      if (held.event_id === event.event_id) return this.countDuplicate();
      return this.stop(
        'sequence_backwards',
        `sequence ${sequence} arrived twice with different events`,
        sequence,
      );
    }
    this.highest = Math.max(this.highest, sequence);
    if (sequence === this.last + 1) {
      return {
        delivered: this.deliverAndDrain(event),
        duplicate: false,
        problem: null,
      };
    }
    return this.hold(event);
  }

  offerLogged(event: E): SequenceOffer<E> {
    const sequence = event.sequence;
    if (this.halt !== null) return this.holdWhileHalted(event);
    if (sequence <= this.last) return this.alreadyDelivered(event);
    const held = this.buffer.get(sequence);
    if (held !== undefined && held.event_id !== event.event_id) {
      return this.stop(
        'sequence_backwards',
        `sequence ${sequence} differs between the stream and the log`,
        sequence,
      );
    }
    for (const heldSequence of this.buffer.keys()) {
      if (heldSequence < sequence && heldSequence > this.last) {
        return this.stop(
          'inconsistent_log',
          `the log skips sequence ${heldSequence}, which the stream delivered`,
          heldSequence,
        );
      }
    }
    this.buffer.delete(sequence);
    this.highest = Math.max(this.highest, sequence);
    return {
      delivered: this.deliverAndDrain(event),
      duplicate: false,
      problem: null,
    };
  }

  /** A head: the service's highest sequence now (heartbeat, `authenticated`). */
  observeHead(sequence: number): SequenceOffer<E> {
    if (this.halt !== null) return NOTHING;
    if (sequence < this.last) {
      return this.stop(
        'sequence_backwards',
        `the service's highest sequence ${sequence} is below the last one processed, ${this.last}`,
        sequence,
      );
    }
    this.highest = Math.max(this.highest, sequence);
    return NOTHING;
  }

  /** Stops delivery for a problem found outside (a gap the log could not fill). */
  stopFor(reason: ResyncReason, message: string): SequenceProblem | null {
    return this.stop(reason, message, null).problem;
  }

  /**
   * Resumes from `sequence` (reconciled by the caller, or the head on a fresh start): held
   * events above it follow on, those at or below it are dropped.
   */
  reset(sequence: number): readonly E[] {
    checkSequence(sequence);
    this.halt = null;
    this.last = sequence;
    this.highest = sequence;
    this.recent.clear();
    for (const heldSequence of [...this.buffer.keys()]) {
      if (heldSequence <= sequence) this.buffer.delete(heldSequence);
      else this.highest = Math.max(this.highest, heldSequence);
    }
    const first = this.buffer.get(sequence + 1);
    if (first === undefined) return [];
    this.buffer.delete(sequence + 1);
    return this.deliverAndDrain(first);
  }

  private alreadyDelivered(event: E): SequenceOffer<E> {
    const known = this.recent.get(event.sequence);
    if (known !== undefined && known !== event.event_id) {
      return this.stop(
        'sequence_backwards',
        `sequence ${event.sequence} was already processed as another event`,
        event.sequence,
      );
    }
    return this.countDuplicate();
  }

  private countDuplicate(): SequenceOffer<E> {
    this.duplicateCount += 1;
    return DUPLICATE;
  }

  /**
   * While halted the counter cannot be trusted (it may have restarted), so every event is held,
   * whatever its sequence, until `reset` says where to resume.
   */
  private holdWhileHalted(event: E): SequenceOffer<E> {
    const held = this.buffer.get(event.sequence);
    if (held?.event_id === event.event_id) return this.countDuplicate();
    if (held === undefined && this.buffer.size >= this.bufferLimit) return NOTHING;
    this.buffer.set(event.sequence, event);
    return NOTHING;
  }

  private hold(event: E): SequenceOffer<E> {
    if (this.buffer.size >= this.bufferLimit) {
      return this.stop(
        'buffer_overflow',
        `more than ${this.bufferLimit} events held while waiting for sequence ${this.last + 1}`,
        event.sequence,
      );
    }
    this.buffer.set(event.sequence, event);
    return NOTHING;
  }

  /** Halts delivery; reports the problem only the first time, so one halt is one signal. */
  private stop(reason: ResyncReason, message: string, sequence: number | null): SequenceOffer<E> {
    if (this.halt !== null) return NOTHING;
    const problem: SequenceProblem = {
      reason,
      message,
      lastSequence: this.last,
      sequence,
    };
    this.halt = problem;
    return { delivered: [], duplicate: false, problem };
  }

  private deliverAndDrain(first: E): E[] {
    const out: E[] = [];
    let next: E | undefined = first;
    while (next !== undefined) {
      this.last = next.sequence;
      this.remember(next);
      out.push(next);
      next = this.buffer.get(this.last + 1);
      if (next !== undefined) this.buffer.delete(next.sequence);
    }
    this.deliveredCount += out.length;
    return out;
  }

  private remember(event: E): void {
    this.recent.set(event.sequence, event.event_id);
    if (this.recent.size > this.recentLimit) {
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
  }
}

function checkSequence(sequence: number): void {
  if (!Number.isSafeInteger(sequence) || sequence < 0) {
    throw new RangeError(`a sequence is a non-negative integer, not ${sequence}`);
  }
}
