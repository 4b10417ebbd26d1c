/**
 * Exactly once by sequence in the order tracker: a fill delivered by the stream, again by the
 * event log's replay after a restart, and again by a REST read-back after a gap, lands once in
 * the journal and once on `fills$` (what the kernel counts, logs and shows the strategies); an
 * order event at or below the journal's sequence is not applied again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import type { Fill } from '../../../src/protocol/index.ts';
import { OrderTracker, type TrackedOrder } from '../../../src/runtime/execution/tracker.ts';
import type { PrivateStreamItem } from '../../../src/runtime/venue.ts';
import {
  account,
  fill,
  openJournal,
  order,
  orderEvent,
  START,
  tempJournalPath,
} from './fixtures.ts';
import { SequencedStrictVenue } from './strict-venue.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function run(path: string) {
  const clock = new VirtualClock(START);
  const journal = openJournal(path, clock, 'normal');
  const venue = new SequencedStrictVenue();
  const tracker = new OrderTracker({
    venue,
    journal,
    clock,
    config: { coalesceMs: 25, refreshIntervalMs: 3_600_000 },
  });
  const fills: Fill[] = [];
  const orders: TrackedOrder[] = [];
  tracker.fills$.subscribe((received) => fills.push(received));
  tracker.orders$.subscribe((tracked) => orders.push(tracked));
  tracker.start();
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    tracker.stop();
    journal.close();
  };
  cleanups.push(stop);
  return {
    clock,
    journal,
    venue,
    tracker,
    fills,
    orders,
    stop,
    push: (item: PrivateStreamItem) => venue.itemSource.next(item),
    settle: async () => {
      clock.advanceBy(100);
      await tracker.idle();
    },
  };
}

const fillItem = (sequence: number, received: Fill): PrivateStreamItem => ({
  kind: 'fill',
  sequence,
  occurredAt: received.occurred_at,
  fill: received,
});

/** The reads one new fill of order o-1 causes (the order, positions and account). */
function expectReadsAfterFill(venue: SequencedStrictVenue, filled: string): void {
  venue
    .expect('getOrder', {
      value: order({
        order_id: 'o-1',
        status: 'PARTIALLY_FILLED',
        filled_quantity: filled,
        last_event_sequence: 3,
      }),
    })
    .expect('listPositions', { value: [] })
    .expect('getAccount', { value: account() });
}

describe('order tracker, exactly once by sequence', () => {
  it('counts a fill once across the stream, the event log after a restart and a REST read-back', async () => {
    const temp = tempJournalPath();
    cleanups.push(temp.cleanup);
    const first = fill({
      fill_id: 'f-1',
      order_id: 'o-1',
      occurred_at: '2024-01-01T00:00:01.000Z',
    });
    const second = fill({
      fill_id: 'f-2',
      order_id: 'o-1',
      occurred_at: '2024-01-01T00:00:02.000Z',
    });
    const third = fill({
      fill_id: 'f-3',
      order_id: 'o-1',
      occurred_at: '2024-01-01T00:00:03.000Z',
    });

    // The first run: the stream delivers f-1 at sequence 3 (twice, as a reconnect might).
    const one = run(temp.path);
    one.tracker.applyOrder(order({ order_id: 'o-1', status: 'OPEN', last_event_sequence: 2 }));
    expectReadsAfterFill(one.venue, '0.01');
    one.push(fillItem(3, first));
    one.push(fillItem(3, first));
    await one.settle();
    one.venue.verify();
    expect(one.fills.map((received) => received.fill_id)).toEqual(['f-1']);
    expect(one.journal.privateCursor()?.lastSequence).toBe(3);
    one.stop();

    // The restart: the event log replays sequence 3; then its oldest retained event is 10, so
    // sequences 4..9 are gone and the fills among them are read back down to f-1.
    const two = run(temp.path);
    two.tracker.applyOrder(order({ order_id: 'o-1', status: 'OPEN', last_event_sequence: 2 }));
    two.push(fillItem(3, first));
    expect(two.fills).toEqual([]);
    two.venue.expect(
      'readFillsBack',
      { value: { fills: [first, second], complete: true } },
      {
        check: (call) =>
          expect(call.stop).toMatchObject({ stopFillId: 'f-1', stopOccurredAt: first.occurred_at }),
      },
    );
    expectReadsAfterFill(two.venue, '0.02');
    two.push({ kind: 'gap', after: 3, next: 10, reason: 'the log starts at 10' });
    two.push(fillItem(10, third));
    await two.settle();
    expectReadsAfterFill(two.venue, '0.03');
    await two.settle();
    two.venue.verify();
    expect(two.fills.map((received) => received.fill_id)).toEqual(['f-3', 'f-2']);
    expect(two.journal.pendingFillReadBack()).toBeNull();
    expect(two.journal.fillCount()).toBe(3);
    expect(two.journal.fill('f-2')).toMatchObject({ source: 'rest', sequence: null, fill: second });
    expect(two.journal.fill('f-3')).toMatchObject({ source: 'stream', sequence: 10 });
    expect(two.journal.privateCursor()?.lastSequence).toBe(10);
  });

  it('keeps a read-back owed across a crash and does it at the next start', async () => {
    const temp = tempJournalPath();
    cleanups.push(temp.cleanup);
    const known = fill({ fill_id: 'f-1', order_id: null });
    const missed = fill({ fill_id: 'f-2', order_id: null });
    const one = run(temp.path);
    one.venue.expect('listPositions', { value: [] }).expect('getAccount', { value: account() });
    one.push(fillItem(1, known));
    await one.settle();
    // The gap is found; the read-back never answers before the crash.
    one.venue.expect('readFillsBack', { hang: true });
    one.push({ kind: 'gap', after: 1, next: 9, reason: 'the log starts at 9' });
    expect(one.journal.pendingFillReadBack()).not.toBeNull();
    one.stop();

    const two = run(temp.path);
    two.venue
      .expect('readFillsBack', { value: { fills: [known, missed], complete: true } })
      .expect('listPositions', { value: [] })
      .expect('getAccount', { value: account() });
    expect(await two.tracker.readFillsBack()).toBe(true);
    await two.settle();
    two.venue.verify();
    expect(two.fills.map((received) => received.fill_id)).toEqual(['f-2']);
    expect(two.journal.pendingFillReadBack()).toBeNull();
  });

  it('applies an order event once: not again when the log replays it after a restart', async () => {
    const temp = tempJournalPath();
    cleanups.push(temp.cleanup);
    const opened = orderEvent('o-1', 'SUBMITTED', 'OPEN', 5);
    const one = run(temp.path);
    one.tracker.applyOrder(order({ order_id: 'o-1', status: 'SUBMITTED', last_event_sequence: 4 }));
    one.orders.length = 0;
    one.push({ kind: 'order', sequence: 5, event: opened });
    expect(one.orders.map((tracked) => tracked.order.status)).toEqual(['OPEN']);
    one.stop();

    const two = run(temp.path);
    // The restarted tracker holds the order as its reconciliation read it before the event.
    two.tracker.applyOrder(order({ order_id: 'o-1', status: 'SUBMITTED', last_event_sequence: 4 }));
    two.orders.length = 0;
    two.push({ kind: 'order', sequence: 5, event: opened });
    expect(two.orders).toEqual([]);
    const moved = orderEvent('o-1', 'OPEN', 'SUBMITTED', 6);
    two.push({ kind: 'order', sequence: 6, event: moved });
    expect(two.orders.map((tracked) => tracked.order.status)).toEqual(['SUBMITTED']);
    expect(two.journal.orderEvents().map((row) => row.sequence)).toEqual([5, 6]);
    await two.settle();
    two.venue.verify();
  });

  it('starts the sequence over when the venue says its counter went backwards', async () => {
    const temp = tempJournalPath();
    cleanups.push(temp.cleanup);
    const one = run(temp.path);
    one.tracker.applyOrder(order({ order_id: 'o-1', status: 'SUBMITTED', last_event_sequence: 1 }));
    one.push({ kind: 'order', sequence: 40, event: orderEvent('o-1', 'SUBMITTED', 'OPEN', 40) });
    // A reset account: delivery resumes at the new head, 3, below the 40 applied.
    one.venue.expect('readFillsBack', { value: { fills: [], complete: true } });
    one.push({ kind: 'gap', after: 40, next: 4, reason: 'the counter went backwards' });
    one.tracker.applyOrder(order({ order_id: 'o-2', status: 'SUBMITTED', last_event_sequence: 2 }));
    one.orders.length = 0;
    one.push({ kind: 'order', sequence: 4, event: orderEvent('o-2', 'SUBMITTED', 'OPEN', 4) });
    expect(one.orders.map((tracked) => [tracked.order.order_id, tracked.order.status])).toEqual([
      ['o-2', 'OPEN'],
    ]);
    expect(one.journal.privateCursor()?.lastSequence).toBe(4);
    await one.settle();
    one.venue.verify();
  });

  it('reads back what an unreadable event said: its order, or the fills; none lost or twice', async () => {
    const temp = tempJournalPath();
    cleanups.push(temp.cleanup);
    const known = fill({ fill_id: 'f-1', order_id: null });
    const hidden = fill({ fill_id: 'f-2', order_id: null });
    const one = run(temp.path);
    one.tracker.applyOrder(order({ order_id: 'o-1', status: 'OPEN', last_event_sequence: 1 }));
    one.venue.expect('listPositions', { value: [] }).expect('getAccount', { value: account() });
    one.push(fillItem(2, known));
    await one.settle();
    // An order event whose data broke its schema: the order is read by REST.
    one.venue.expect('getOrder', {
      value: order({ order_id: 'o-1', status: 'CANCELLED', last_event_sequence: 3 }),
    });
    one.orders.length = 0;
    one.push({
      kind: 'unreadable',
      sequence: 3,
      channel: 'orders',
      type: 'authoritative_status',
      entityId: 'o-1',
      problem: 'body.data[0].data.to_state: required',
    });
    await one.settle();
    expect(one.orders.map((tracked) => tracked.order.status)).toEqual(['CANCELLED']);
    // A fill event that broke its schema: the fills are read back down to the newest known,
    // and the one it carried is counted once, as a fill the stream already gave would not be.
    one.venue
      .expect('readFillsBack', { value: { fills: [known, hidden], complete: true } })
      .expect('listPositions', { value: [] })
      .expect('getAccount', { value: account() });
    one.push({
      kind: 'unreadable',
      sequence: 4,
      channel: 'fills',
      type: 'fill',
      entityId: null,
      problem: 'frame.data.quantity: Invalid input',
    });
    await one.settle();
    await one.settle();
    one.venue.verify();
    expect(one.fills.map((received) => received.fill_id)).toEqual(['f-1', 'f-2']);
    expect(one.journal.pendingFillReadBack()).toBeNull();
  });
});
