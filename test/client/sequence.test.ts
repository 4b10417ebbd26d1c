import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SequenceTracker } from '../../src/client/index.ts';
import { PrivateEvent } from '../../src/protocol/index.ts';
import { orderStatusEvent, uuid } from '../protocol/fixtures.ts';

function event(sequence: number, id = uuid(sequence)): PrivateEvent {
  return PrivateEvent.parse({ ...orderStatusEvent(sequence), event_id: id });
}

function sequences(events: readonly PrivateEvent[]): number[] {
  return events.map((item) => item.sequence);
}

describe('SequenceTracker', () => {
  it('delivers in-order events at once', () => {
    const tracker = new SequenceTracker({ lastSequence: 0 });
    expect(sequences(tracker.offerLive(event(1)).delivered)).toEqual([1]);
    expect(sequences(tracker.offerLive(event(2)).delivered)).toEqual([2]);
    expect(tracker.hasGap()).toBe(false);
    expect(tracker.lastSequence).toBe(2);
  });

  it('holds events after a gap and releases them once the gap is filled from the log', () => {
    const tracker = new SequenceTracker({ lastSequence: 0 });
    tracker.offerLive(event(1));
    expect(tracker.offerLive(event(3)).delivered).toEqual([]);
    expect(tracker.offerLive(event(4)).delivered).toEqual([]);
    expect(tracker.hasGap()).toBe(true);
    expect(sequences(tracker.offerLogged(event(2)).delivered)).toEqual([2, 3, 4]);
    expect(tracker.offerLogged(event(3)).duplicate).toBe(true);
    expect(tracker.hasGap()).toBe(false);
  });

  it('drops duplicates', () => {
    const tracker = new SequenceTracker({ lastSequence: 0 });
    tracker.offerLive(event(1));
    tracker.offerLive(event(3));
    expect(tracker.offerLive(event(1)).duplicate).toBe(true);
    expect(tracker.offerLive(event(3)).duplicate).toBe(true);
    expect(tracker.duplicates).toBe(2);
  });

  it('reports a gap announced by a head', () => {
    const tracker = new SequenceTracker({ lastSequence: 5 });
    expect(tracker.observeHead(5).problem).toBeNull();
    expect(tracker.hasGap()).toBe(false);
    tracker.observeHead(7);
    expect(tracker.hasGap()).toBe(true);
    expect(tracker.highestKnown).toBe(7);
  });

  it('halts when the head goes backwards, holds events, and resumes on reset', () => {
    const tracker = new SequenceTracker({ lastSequence: 10 });
    const offer = tracker.observeHead(3);
    expect(offer.problem).toMatchObject({
      reason: 'sequence_backwards',
      lastSequence: 10,
    });
    expect(tracker.halted?.reason).toBe('sequence_backwards');
    expect(tracker.hasGap()).toBe(false);
    // Further contradictions do not signal again.
    expect(tracker.observeHead(2).problem).toBeNull();
    expect(tracker.offerLive(event(4)).delivered).toEqual([]);
    expect(tracker.offerLive(event(5)).delivered).toEqual([]);
    expect(sequences(tracker.reset(3))).toEqual([4, 5]);
    expect(tracker.halted).toBeNull();
    expect(tracker.lastSequence).toBe(5);
  });

  it('halts when an already processed sequence comes back as another event', () => {
    const tracker = new SequenceTracker({ lastSequence: 0 });
    tracker.offerLive(event(1));
    const offer = tracker.offerLive(event(1, uuid(999)));
    expect(offer.problem?.reason).toBe('sequence_backwards');
    tracker.offerLive(event(3));
    expect(tracker.offerLive(event(3, uuid(998))).problem).toBeNull();
  });

  it('halts when the log skips a sequence the stream delivered', () => {
    const tracker = new SequenceTracker({ lastSequence: 0 });
    tracker.offerLive(event(2));
    const offer = tracker.offerLogged(event(3));
    expect(offer.problem?.reason).toBe('inconsistent_log');
    expect(offer.delivered).toEqual([]);
  });

  it('accepts the log skipping numbers when nothing contradicts it', () => {
    const tracker = new SequenceTracker({ lastSequence: 0 });
    expect(sequences(tracker.offerLogged(event(3)).delivered)).toEqual([3]);
    expect(tracker.lastSequence).toBe(3);
  });

  it('halts on buffer overflow', () => {
    const tracker = new SequenceTracker({ lastSequence: 0, bufferLimit: 2 });
    tracker.offerLive(event(2));
    tracker.offerLive(event(3));
    expect(tracker.offerLive(event(4)).problem?.reason).toBe('buffer_overflow');
  });

  it('delivers every event exactly once and in order under drops, duplicates and fills', () => {
    const copies = fc.array(fc.constantFrom(0, 1, 1, 1, 2), {
      minLength: 1,
      maxLength: 60,
    });
    fc.assert(
      fc.property(
        copies,
        fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }),
        fc.array(fc.nat(60), { maxLength: 10 }),
        (copiesOf, fillAfter, resends) => {
          const count = copiesOf.length;
          const log = Array.from({ length: count }, (_, index) => event(index + 1));
          const tracker = new SequenceTracker({ lastSequence: 0 });
          const out: PrivateEvent[] = [];
          const take = (delivered: readonly PrivateEvent[]) => out.push(...delivered);
          const fill = (committed: number) => {
            for (const item of log.slice(0, committed)) {
              if (item.sequence > tracker.lastSequence) take(tracker.offerLogged(item).delivered);
            }
          };
          for (let index = 0; index < count; index += 1) {
            for (let copy = 0; copy < (copiesOf[index] ?? 0); copy += 1) {
              const offer = tracker.offerLive(log[index] as PrivateEvent);
              expect(offer.problem).toBeNull();
              take(offer.delivered);
            }
            for (const resend of resends) {
              if (resend <= index) take(tracker.offerLive(log[resend] as PrivateEvent).delivered);
            }
            if (fillAfter[index] && tracker.hasGap()) fill(index + 1);
          }
          // A heartbeat announces the head; the last fill closes every gap.
          tracker.observeHead(count);
          if (tracker.hasGap()) fill(count);
          expect(sequences(out)).toEqual(log.map((item) => item.sequence));
          expect(tracker.hasGap()).toBe(false);
          expect(tracker.halted).toBeNull();
        },
      ),
      { numRuns: 300 },
    );
  });
});
