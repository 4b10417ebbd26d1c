/**
 * The order tracker on virtual time: coalesced REST reads, forward-only versions, fills counted
 * once across a restart, and the positions and account refresh.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import type { Fill, Order } from '../../../src/protocol/index.ts';
import { OrderTracker, type TrackedOrder } from '../../../src/runtime/execution/tracker.ts';
import type { Journal } from '../../../src/runtime/journal/journal.ts';
import {
  account,
  fill,
  openJournal,
  order,
  orderEvent,
  position,
  START,
  tempJournalPath,
} from './fixtures.ts';
import { StrictVenue } from './strict-venue.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function setup(path?: string) {
  let journalPath = path;
  if (journalPath === undefined) {
    const temp = tempJournalPath();
    cleanups.push(temp.cleanup);
    journalPath = temp.path;
  }
  const clock = new VirtualClock(START);
  const journal: Journal = openJournal(journalPath, clock);
  const venue = new StrictVenue();
  const tracker = new OrderTracker({
    venue,
    journal,
    clock,
    config: { coalesceMs: 25, refreshIntervalMs: 30_000 },
  });
  tracker.start();
  const orders: TrackedOrder[] = [];
  const fills: Fill[] = [];
  tracker.orders$.subscribe((tracked) => orders.push(tracked));
  tracker.fills$.subscribe((received) => fills.push(received));
  cleanups.push(() => {
    tracker.stop();
    journal.close();
  });
  const advance = async (ms: number) => {
    clock.advanceBy(ms);
    await tracker.idle();
  };
  return {
    clock,
    journal,
    venue,
    tracker,
    orders,
    fills,
    advance,
    path: journalPath,
  };
}

const open = (fields: Partial<Order> = {}) =>
  order({
    order_id: 'o-1',
    client_order_id: 'c-1',
    status: 'OPEN',
    last_event_sequence: 2,
    ...fields,
  });

describe('order tracker', () => {
  it('coalesces a burst of events for one order into one read', async () => {
    const t = setup();
    t.tracker.applyOrder(open());
    t.venue.expect('getOrder', {
      value: open({
        status: 'FILLED',
        filled_quantity: '0.01',
        last_event_sequence: 5,
      }),
    });
    t.venue.orderEventSource.next(orderEvent('o-1', 'OPEN', 'PARTIALLY_FILLED', 3));
    t.venue.orderEventSource.next(orderEvent('o-1', 'PARTIALLY_FILLED', 'PARTIALLY_FILLED', 4));
    t.venue.orderEventSource.next(orderEvent('o-1', 'PARTIALLY_FILLED', 'FILLED', 5));
    await t.advance(24);
    expect(t.venue.calls).toHaveLength(0);
    await t.advance(1);
    t.venue.verify();
    expect(t.venue.calls).toEqual([{ method: 'getOrder', orderId: 'o-1' }]);
    expect(t.orders.map((tracked) => tracked.order.status)).toEqual(['OPEN', 'FILLED']);
    expect(t.tracker.openOrders()).toHaveLength(0);
    expect(t.tracker.orderByClientOrderId('c-1')?.order.status).toBe('FILLED');
  });

  it('reads once more when an event arrives while a read is in flight', async () => {
    const t = setup();
    t.tracker.applyOrder(open());
    let release: (value: Order) => void = () => {};
    t.venue.expect('getOrder', {
      answer: () =>
        new Promise<Order>((resolve) => {
          release = resolve;
        }),
    });
    t.venue.orderEventSource.next(orderEvent('o-1', 'OPEN', 'PARTIALLY_FILLED', 3));
    t.clock.advanceBy(25);
    t.venue.orderEventSource.next(orderEvent('o-1', 'PARTIALLY_FILLED', 'FILLED', 4));
    t.venue.expect('getOrder', {
      value: open({
        status: 'FILLED',
        filled_quantity: '0.01',
        last_event_sequence: 4,
      }),
    });
    release(
      open({
        status: 'PARTIALLY_FILLED',
        filled_quantity: '0.004',
        last_event_sequence: 3,
      }),
    );
    await t.tracker.idle();
    await t.advance(25);
    t.venue.verify();
    expect(t.orders.map((tracked) => tracked.order.status)).toEqual([
      'OPEN',
      'PARTIALLY_FILLED',
      'FILLED',
    ]);
  });

  it('applies status-only moves from the event and reads unknown orders', async () => {
    const t = setup();
    t.tracker.applyOrder(open({ status: 'PENDING', last_event_sequence: 1 }));
    t.venue.orderEventSource.next(orderEvent('o-1', 'PENDING', 'SUBMITTED', 2));
    t.venue.orderEventSource.next(orderEvent('o-1', 'SUBMITTED', 'OPEN', 3));
    expect(t.tracker.order('o-1')?.order).toMatchObject({
      status: 'OPEN',
      execution_stage: 'WORKING',
      last_event_sequence: 3,
    });
    t.venue.expect('getOrder', {
      value: order({ order_id: 'o-2', status: 'PENDING' }),
    });
    t.venue.orderEventSource.next(orderEvent('o-2', null, 'PENDING', 4));
    await t.advance(25);
    t.venue.verify();
    expect(t.tracker.order('o-2')?.order.status).toBe('PENDING');
  });

  it('ignores stale events and never reopens a terminal order', async () => {
    const t = setup();
    t.tracker.applyOrder(open({ last_event_sequence: 7 }));
    t.venue.orderEventSource.next(orderEvent('o-1', 'PENDING', 'SUBMITTED', 5));
    expect(t.tracker.order('o-1')?.order.status).toBe('OPEN');
    t.tracker.applyOrder(open({ status: 'CANCELLED', last_event_sequence: 8 }));
    expect(t.tracker.applyOrder(open({ status: 'OPEN', last_event_sequence: 9 }))).toBeNull();
    t.venue.orderEventSource.next(orderEvent('o-1', 'CANCELLED', 'OPEN', 10));
    await t.advance(100);
    t.venue.verify();
    expect(t.tracker.order('o-1')?.order.status).toBe('CANCELLED');
    expect(t.orders.map((tracked) => tracked.order.status)).toEqual(['OPEN', 'CANCELLED']);
  });

  it('counts a fill once, across a restart, and refreshes its order and the account', async () => {
    const first = setup();
    first.venue
      .expect('getOrder', {
        value: open({ status: 'PARTIALLY_FILLED', last_event_sequence: 3 }),
      })
      .expect('listPositions', { value: [position()] })
      .expect('getAccount', { value: account() });
    first.venue.fillSource.next(fill({ fill_id: 'f-1', order_id: 'o-1' }));
    first.venue.fillSource.next(fill({ fill_id: 'f-1', order_id: 'o-1' }));
    await first.advance(25);
    first.venue.verify();
    expect(first.fills.map((received) => received.fill_id)).toEqual(['f-1']);
    expect(first.tracker.positions()).toHaveLength(1);
    expect(first.tracker.account()?.total_equity).toBe('10000');
    first.tracker.stop();
    first.journal.close();

    const second = setup(first.path);
    second.venue
      .expect('getOrder', {
        value: open({ status: 'FILLED', last_event_sequence: 4 }),
      })
      .expect('listPositions', { value: [position({ quantity: '0.03' })] })
      .expect('getAccount', { value: account() });
    // A reconnect replays the old fill before the new one.
    second.venue.fillSource.next(fill({ fill_id: 'f-1', order_id: 'o-1' }));
    second.venue.fillSource.next(fill({ fill_id: 'f-2', order_id: 'o-1' }));
    await second.advance(25);
    second.venue.verify();
    expect(second.fills.map((received) => received.fill_id)).toEqual(['f-2']);
  });

  it('refreshes positions and the account on its timer, one read pair at a time', async () => {
    const t = setup();
    t.venue
      .expect('listPositions', { value: [] })
      .expect('getAccount', { value: account({ total_equity: '9999' }) });
    await t.advance(30_000);
    await t.advance(25);
    t.venue.verify();
    expect(t.tracker.account()?.total_equity).toBe('9999');
    expect(t.tracker.positionsKnown).toBe(true);
  });

  it('tracks an order under the intent id the runtime linked it to', () => {
    const t = setup();
    t.tracker.linkOrder('o-5', {
      clientOrderId: 'alpha:e:2',
      requestId: 'alpha:e:2',
    });
    const tracked = t.tracker.applyOrder(order({ order_id: 'o-5', client_order_id: 'alpha:e:1' }));
    expect(tracked).toMatchObject({
      order: { client_order_id: 'alpha:e:2' },
      venueClientOrderId: 'alpha:e:1',
      requestId: 'alpha:e:2',
    });
    expect(t.tracker.orderByClientOrderId('alpha:e:2')?.order.order_id).toBe('o-5');
    expect([...t.tracker.openOrdersByClientOrderId().keys()]).toEqual(['alpha:e:2']);
  });

  it('reads no order back that a response already ended at or past the asking event', async () => {
    const t = setup();
    t.tracker.linkOrder('o-1', { clientOrderId: 'c-1', requestId: 'c-1' });
    t.tracker.applyOrder(open());
    // The cancel's event comes before its response, which holds the order whole and terminal.
    t.venue.orderEventSource.next(orderEvent('o-1', 'OPEN', 'CANCELLED', 3));
    t.tracker.applyOrder(open({ status: 'CANCELLED', last_event_sequence: 3 }), 'response');
    expect(t.clock.pendingTimers()).toBe(1);
    // A fill made before the cancel, delivered after it, is counted but reads nothing either.
    t.venue
      .expect('listPositions', { value: [position()] })
      .expect('getAccount', { value: account() });
    t.venue.fillSource.next(fill({ fill_id: 'f-1', order_id: 'o-1' }));
    await t.advance(100);
    t.venue.verify();
    expect(t.venue.calls.filter((call) => call.method === 'getOrder')).toEqual([]);
    expect(t.fills.map((received) => received.fill_id)).toEqual(['f-1']);
    expect(t.orders.map((tracked) => tracked.order.status)).toEqual(['OPEN', 'CANCELLED']);
  });

  it('takes the moves of an order whose events came before its response, and reads nothing', async () => {
    const t = setup();
    // A placement's events overtake its response: the order is not known when they arrive.
    t.venue.orderEventSource.next(orderEvent('o-1', null, 'PENDING', 1));
    t.venue.orderEventSource.next(orderEvent('o-1', 'PENDING', 'SUBMITTED', 2));
    t.venue.orderEventSource.next(orderEvent('o-1', 'SUBMITTED', 'OPEN', 3));
    // The refresh interval and the read's flush.
    expect(t.clock.pendingTimers()).toBe(2);
    t.tracker.linkOrder('o-1', { clientOrderId: 'c-1', requestId: 'c-1' });
    t.tracker.applyOrder(open({ status: 'PENDING', last_event_sequence: 1 }), 'response');
    // The read is dropped at once, and its flush timer with it: nothing fires for it.
    expect(t.clock.pendingTimers()).toBe(1);
    expect(t.orders.map((tracked) => tracked.order)).toMatchObject([
      { status: 'OPEN', execution_stage: 'WORKING', last_event_sequence: 3 },
    ]);
    await t.advance(100);
    // The strict venue fails on any read; none was made.
    t.venue.verify();
    expect(t.venue.calls).toEqual([]);
    // A later response older than the moves taken changes nothing.
    expect(t.tracker.applyOrder(open({ status: 'PENDING', last_event_sequence: 1 }))).toBeNull();
  });

  it('still reads an order not known yet when an event changed more than its status, or no response came', async () => {
    const filled = setup();
    filled.venue.orderEventSource.next(orderEvent('o-1', 'PENDING', 'OPEN', 2));
    filled.venue.orderEventSource.next(orderEvent('o-1', 'OPEN', 'PARTIALLY_FILLED', 3));
    filled.venue.orderEventSource.next(orderEvent('o-1', 'PARTIALLY_FILLED', 'OPEN', 4));
    filled.tracker.linkOrder('o-1', { clientOrderId: 'c-1', requestId: 'c-1' });
    filled.tracker.applyOrder(open({ status: 'PENDING', last_event_sequence: 1 }), 'response');
    const read = open({ status: 'OPEN', filled_quantity: '0.004', last_event_sequence: 4 });
    filled.venue.expect('getOrder', { value: read });
    await filled.advance(25);
    filled.venue.verify();
    expect(filled.tracker.order('o-1')?.order.filled_quantity).toBe('0.004');

    // No response before the read is due: the read answers, and the move kept is let go.
    const unanswered = setup();
    unanswered.venue.orderEventSource.next(orderEvent('o-2', 'PENDING', 'OPEN', 2));
    unanswered.venue.expect('getOrder', {
      value: order({ order_id: 'o-2', status: 'OPEN', last_event_sequence: 2 }),
    });
    await unanswered.advance(25);
    unanswered.venue.verify();
    const late = order({ order_id: 'o-2', status: 'PENDING', last_event_sequence: 1 });
    expect(unanswered.tracker.applyOrder(late)).toBeNull();
    expect(unanswered.tracker.order('o-2')?.order.status).toBe('OPEN');
  });

  it('still reads a terminal order held older than the event, or not under its link', async () => {
    const older = setup();
    older.tracker.linkOrder('o-1', { clientOrderId: 'c-1', requestId: 'c-1' });
    older.tracker.applyOrder(open());
    older.venue.orderEventSource.next(orderEvent('o-1', 'OPEN', 'PARTIALLY_FILLED', 4));
    older.tracker.applyOrder(open({ status: 'CANCELLED', last_event_sequence: 3 }), 'response');
    const final = open({ status: 'CANCELLED', filled_quantity: '0.004', last_event_sequence: 5 });
    older.venue.expect('getOrder', { value: final });
    await older.advance(25);
    older.venue.verify();
    expect(older.tracker.order('o-1')?.order.filled_quantity).toBe('0.004');

    // Never linked to an intent: the read may still find the intent's link in the journal.
    const unlinked = setup();
    unlinked.tracker.applyOrder(open());
    unlinked.venue.orderEventSource.next(orderEvent('o-1', 'OPEN', 'CANCELLED', 3));
    unlinked.tracker.applyOrder(open({ status: 'CANCELLED', last_event_sequence: 3 }), 'response');
    unlinked.venue.expect('getOrder', {
      value: open({ status: 'CANCELLED', last_event_sequence: 3 }),
    });
    await unlinked.advance(25);
    unlinked.venue.verify();
  });
  it('forgets the terminal orders stored longest ago beyond its memory, an order stored again counting as new', () => {
    const temp = tempJournalPath();
    cleanups.push(temp.cleanup);
    const clock = new VirtualClock(START);
    const journal = openJournal(temp.path, clock);
    const tracker = new OrderTracker({
      venue: new StrictVenue(),
      journal,
      clock,
      config: { terminalMemory: 3 },
    });
    cleanups.push(() => journal.close());
    const cancelled = (orderId: string, sequence: number) =>
      order({ order_id: orderId, status: 'CANCELLED', last_event_sequence: sequence });
    for (let round = 0; round < 3; round++) {
      // Many orders, so the memory's own order of forgetting is exercised well past its size.
      const base = round * 1_000;
      for (let index = 1; index <= 3; index++)
        tracker.applyOrder(cancelled(`o-${base + index}`, 1));
      // o-1 again, newer: now the latest stored.
      tracker.applyOrder(cancelled(`o-${base + 1}`, 2));
      tracker.applyOrder(cancelled(`o-${base + 4}`, 1));
      tracker.applyOrder(cancelled(`o-${base + 5}`, 1));
      const held = [1, 2, 3, 4, 5].filter(
        (index) => tracker.order(`o-${base + index}`) !== undefined,
      );
      expect(held).toEqual([1, 4, 5]);
      for (let index = 6; index < 900; index++)
        tracker.applyOrder(cancelled(`o-${base + index}`, 1));
      expect(tracker.order(`o-${base + 899}`)).toBeDefined();
      expect(tracker.order(`o-${base + 896}`)).toBeUndefined();
    }
  });
});
