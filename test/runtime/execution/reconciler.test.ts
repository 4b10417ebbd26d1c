/**
 * The reconciler with a real executor, tracker and journal against a strict fake venue: the
 * fail-closed `ready$`, the diff report, foreign orders reported and cancelled only when
 * configured, and settlement of what an earlier process left open.
 */
import { BehaviorSubject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { Executor } from '../../../src/runtime/execution/executor.ts';
import {
  Reconciler,
  type ReconcilerConfig,
  type ReconciliationReport,
} from '../../../src/runtime/execution/reconciler.ts';
import { OrderTracker } from '../../../src/runtime/execution/tracker.ts';
import {
  account,
  limitBuy,
  mutationStatus,
  openJournal,
  order,
  position,
  START,
  serviceError,
  stamp,
  tempJournalPath,
  transportError,
} from './fixtures.ts';
import { StrictVenue } from './strict-venue.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function setup(
  config: Partial<ReconcilerConfig> = {},
  path?: string,
  logged: { level: string; message: string }[] = [],
) {
  let journalPath = path;
  if (journalPath === undefined) {
    const temp = tempJournalPath();
    cleanups.push(temp.cleanup);
    journalPath = temp.path;
  }
  const clock = new VirtualClock(START);
  const journal = openJournal(journalPath, clock);
  const venue = new StrictVenue();
  const tracker = new OrderTracker({
    venue,
    journal,
    clock,
    config: { refreshIntervalMs: 3_600_000 },
  });
  tracker.start();
  const executor = new Executor({
    venue,
    journal,
    tracker,
    clock,
    permit$: new BehaviorSubject(true),
    config: { simulate: { place: false, amend: false, closePosition: false } },
  });
  const reconciler = new Reconciler({
    venue,
    journal,
    tracker,
    execution: executor,
    clock,
    config: { intervalMs: 3_600_000, ...config },
    logger: {
      debug: (message) => logged.push({ level: 'debug', message }),
      info: (message) => logged.push({ level: 'info', message }),
      warn: (message) => logged.push({ level: 'warn', message }),
      error: (message) => logged.push({ level: 'error', message }),
    },
  });
  const ready: boolean[] = [];
  const reports: ReconciliationReport[] = [];
  reconciler.ready$.subscribe((value) => ready.push(value));
  reconciler.reports$.subscribe((report) => reports.push(report));
  cleanups.push(() => {
    reconciler.stop();
    executor.stop();
    tracker.stop();
    journal.close();
  });
  return {
    clock,
    journal,
    venue,
    tracker,
    executor,
    reconciler,
    ready,
    reports,
    path: journalPath,
  };
}

type Setup = ReturnType<typeof setup>;

function expectSnapshot(
  s: Setup,
  orders: ReturnType<typeof order>[],
  positions = [position()],
): void {
  s.venue
    .expect('listOpenOrders', { value: orders })
    .expect('listPositions', { value: positions })
    .expect('getAccount', { value: account() });
}

describe('reconciler', () => {
  it('makes no rerun asked for during a run once stopped (the lane then closed): no failure logged', async () => {
    const logged: { level: string; message: string }[] = [];
    const s = setup({}, undefined, logged);
    let release!: (orders: unknown[]) => void;
    s.venue
      .expect('listOpenOrders', {
        answer: () =>
          new Promise((resolve) => {
            release = resolve;
          }),
      })
      .expect('listPositions', { value: [position()] })
      .expect('getAccount', { value: account() });
    const first = s.reconciler.start();
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    // Asked for while the first run reads: folded into a rerun after it.
    void s.reconciler.reconcile('resync: gap');
    // The kernel's shutdown: the reconciler stops, then the executor's lane closes.
    s.reconciler.stop();
    s.executor.stop();
    release([]);
    expect((await first).ok).toBe(true);
    await s.reconciler.idle();
    s.venue.verify();
    expect(logged.filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([]);
  });

  it('once stopped, starts no run (timer, resync, request) and logs no failure when the lane closes after it', async () => {
    const logged: { level: string; message: string }[] = [];
    const s = setup({ intervalMs: 60_000 }, undefined, logged);
    expectSnapshot(s, []);
    expect((await s.reconciler.start()).ok).toBe(true);
    // A clean run at start is worth a line; the periodic ones are routine.
    expect(logged).toContainEqual({
      level: 'info',
      message: 'reconciliation found no differences',
    });
    expectSnapshot(s, []);
    s.clock.advanceBy(60_000);
    await s.reconciler.idle();
    expect(logged.at(-1)).toEqual({
      level: 'debug',
      message: 'reconciliation found no differences',
    });
    const before = s.reports.length;
    // The kernel's shutdown order: the reconciler, then the executor's lane.
    s.reconciler.stop();
    s.executor.stop();
    s.clock.advanceBy(180_000);
    s.venue.resyncSource.next({ reason: 'gap', at: s.clock.now() });
    const late = await s.reconciler.reconcile('asked after the stop');
    expect(late.ok).toBe(false);
    s.venue.verify();
    expect(s.reports.length).toBe(before);
    expect(logged.filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([]);
  });

  it('keeps ready$ false until the first run succeeds, and again from a resync', async () => {
    const s = setup();
    expect(s.ready).toEqual([false]);
    s.venue.expect('listOpenOrders', {
      error: transportError('TRANSPORT_FAILURE'),
    });
    s.venue.expect('listPositions', { value: [] });
    s.venue.expect('getAccount', { value: account() });
    const failed = await s.reconciler.start();
    s.venue.verify();
    expect(failed).toMatchObject({
      ok: false,
      error: { code: 'TRANSPORT_FAILURE' },
    });
    expect(s.ready).toEqual([false]);

    // The retry waits 1 s (the backoff's first step).
    s.clock.advanceBy(999);
    await s.reconciler.idle();
    s.venue.verify();
    expectSnapshot(s, []);
    s.clock.advanceBy(1);
    await s.reconciler.idle();
    s.venue.verify();
    expect(s.ready).toEqual([false, true]);

    expectSnapshot(s, []);
    s.venue.resyncSource.next({ reason: 'sequence gap', at: START });
    expect(s.ready).toEqual([false, true, false]);
    await s.reconciler.idle();
    s.venue.verify();
    expect(s.ready).toEqual([false, true, false, true]);
    expect(s.reports.map((report) => [report.reason, report.ok])).toEqual([
      ['start', false],
      ['retry', true],
      ['resync: sequence gap', true],
    ]);
  });

  it('does not call an order mismatched when ours is newer than the snapshot', async () => {
    const s = setup();
    // Placed a moment before the read: the venue answered PENDING (event 1), and the OPEN
    // event (2) reached the tracker after that answer. A third order is older here than there.
    s.tracker.applyOrder(
      order({
        order_id: 'o-1',
        client_order_id: 'alpha:testepoch01:1',
        status: 'OPEN',
        last_event_sequence: 2,
      }),
    );
    s.tracker.applyOrder(
      order({
        order_id: 'o-2',
        client_order_id: 'alpha:testepoch01:2',
        status: 'PENDING',
        last_event_sequence: 3,
      }),
    );
    s.tracker.applySnapshot({ openOrders: [], positions: [position()], account: null });
    expectSnapshot(s, [
      order({
        order_id: 'o-1',
        client_order_id: 'alpha:testepoch01:1',
        status: 'PENDING',
        last_event_sequence: 1,
      }),
      order({
        order_id: 'o-2',
        client_order_id: 'alpha:testepoch01:2',
        status: 'OPEN',
        last_event_sequence: 4,
      }),
    ]);
    const report = await s.reconciler.start();
    s.venue.verify();
    expect(report.ok).toBe(true);
    expect(report.stateMismatches).toEqual([
      {
        orderId: 'o-2',
        clientOrderId: 'alpha:testepoch01:2',
        local: { status: 'PENDING', filledQuantity: '0' },
        venue: { status: 'OPEN', filledQuantity: '0' },
      },
    ]);
    // The newer view stays: the snapshot does not take the order back to PENDING.
    expect(s.tracker.order('o-1')?.order.status).toBe('OPEN');
    expect(s.tracker.order('o-2')?.order.status).toBe('OPEN');
  });

  it('reports what differs and takes the venue view', async () => {
    const s = setup();
    // What the runtime believed: two open orders of its own and a long position.
    const ownId = 'alpha:testepoch01:1';
    s.tracker.applyOrder(order({ order_id: 'o-1', client_order_id: ownId, status: 'OPEN' }));
    s.tracker.applyOrder(
      order({
        order_id: 'o-2',
        client_order_id: 'alpha:testepoch01:2',
        status: 'OPEN',
      }),
    );
    s.tracker.applySnapshot({
      openOrders: [],
      positions: [position()],
      account: null,
    });

    expectSnapshot(
      s,
      [
        order({
          order_id: 'o-1',
          client_order_id: ownId,
          status: 'PARTIALLY_FILLED',
          filled_quantity: '0.004',
        }),
        order({ order_id: 'o-3', client_order_id: 'manual-1', status: 'OPEN' }),
        order({
          order_id: 'o-4',
          client_order_id: 'alpha:testepoch01:44',
          status: 'OPEN',
        }),
      ],
      [
        position({ quantity: '0.03' }),
        position({
          position_id: 'position-eth-1',
          market_id: 'ETH-PERP',
          side: 'short',
        }),
      ],
    );
    s.venue.expect('getOrder', {
      value: order({
        order_id: 'o-2',
        client_order_id: 'alpha:testepoch01:2',
        status: 'FILLED',
      }),
    });
    const report = await s.reconciler.start();
    s.venue.verify();
    expect(report.ok).toBe(true);
    expect(report.stateMismatches).toEqual([
      {
        orderId: 'o-1',
        clientOrderId: ownId,
        local: { status: 'OPEN', filledQuantity: '0' },
        venue: { status: 'PARTIALLY_FILLED', filledQuantity: '0.004' },
      },
    ]);
    expect(report.missingLocally.map((summary) => summary.orderId)).toEqual(['o-3', 'o-4']);
    expect(report.foreignOrders.map((summary) => summary.orderId)).toEqual(['o-3']);
    expect(report.missingAtVenue).toMatchObject([{ orderId: 'o-2', status: 'FILLED' }]);
    expect(report.positionMismatches).toEqual([
      {
        marketId: 'BTC-PERP',
        local: { positionId: 'position-btc-1', side: 'long', quantity: '0.02' },
        venue: { positionId: 'position-btc-1', side: 'long', quantity: '0.03' },
      },
      {
        marketId: 'ETH-PERP',
        local: null,
        venue: {
          positionId: 'position-eth-1',
          side: 'short',
          quantity: '0.02',
        },
      },
    ]);
    expect(report.cancelledForeignOrders).toEqual([]);
    // The venue's view is now the tracker's.
    expect(
      s.tracker
        .openOrders()
        .map((tracked) => tracked.order.order_id)
        .sort(),
    ).toEqual(['o-1', 'o-3', 'o-4']);
    expect(s.tracker.order('o-1')?.order.status).toBe('PARTIALLY_FILLED');
    expect(s.tracker.positions().map((item) => item.quantity)).toEqual(['0.03', '0.02']);
  });

  it('cancels foreign orders only when configured to, with its own journaled ids', async () => {
    const s = setup({ cancelUnknownOrders: true });
    const foreign = order({
      order_id: 'o-9',
      client_order_id: 'manual-9',
      status: 'OPEN',
    });
    expectSnapshot(s, [foreign]);
    s.venue.expectSend(
      'cancelOrder',
      { value: { ...foreign, status: 'CANCELLED' } },
      (prepared, body) => {
        expect(prepared.path).toBe('/v1/orders/o-9/cancel');
        expect(body.request_id).toBe('pb-reconcile:testepoch01:1');
        expect(s.journal.getInternalCommand('pb-reconcile:testepoch01:1')?.state).toBe('sending');
      },
    );
    const report = await s.reconciler.start();
    s.venue.verify();
    expect(report.cancelledForeignOrders).toEqual(['o-9']);
    expect(s.journal.getInternalCommand('pb-reconcile:testepoch01:1')?.state).toBe('accepted');
    expect(s.tracker.order('o-9')?.order.status).toBe('CANCELLED');
  });

  it('leaves foreign orders alone by default', async () => {
    const s = setup();
    expectSnapshot(s, [order({ order_id: 'o-9', client_order_id: null, status: 'OPEN' })]);
    const report = await s.reconciler.start();
    s.venue.verify();
    expect(report.foreignOrders.map((summary) => summary.orderId)).toEqual(['o-9']);
    expect(s.venue.sends()).toHaveLength(0);
  });

  it('settles what an earlier process left open, and cancels no foreign order while an intent is unresolved', async () => {
    const first = setup();
    const intent = stamp(limitBuy(), 1);
    first.venue.expectSend('placeOrder', { hang: true });
    first.executor.submit(intent);
    await new Promise((resolve) => setImmediate(resolve));
    first.reconciler.stop();
    first.executor.stop();
    first.tracker.stop();
    first.journal.close();

    const second = setup({ cancelUnknownOrders: true }, first.path);
    second.venue.expect('getRequest', {
      value: mutationStatus(intent.requestId, 'PENDING'),
    });
    expectSnapshot(second, [
      order({ order_id: 'o-9', client_order_id: 'manual-9', status: 'OPEN' }),
    ]);
    const report = await second.reconciler.start();
    second.venue.verify();
    expect(report.settlement).toEqual({
      abandoned: [],
      resolved: [],
      unresolved: [intent.requestId],
    });
    expect(report.foreignOrders.map((summary) => summary.orderId)).toEqual(['o-9']);
    expect(report.cancelledForeignOrders).toEqual([]);
    expect(second.journal.requireIntent(intent.requestId).state).toBe('unknown');

    // Once the request is found, the order it made is the runtime's own, not foreign.
    second.venue
      .expect('getRequest', {
        value: mutationStatus(intent.requestId, 'COMPLETED', {
          order_id: 'o-9',
        }),
      })
      .expect('getOrder', {
        value: order({ order_id: 'o-9', client_order_id: 'manual-9' }),
      });
    expectSnapshot(second, [
      order({ order_id: 'o-9', client_order_id: 'manual-9', status: 'OPEN' }),
    ]);
    const next = await second.reconciler.reconcile('periodic');
    second.clock.advanceBy(25);
    await second.tracker.idle();
    second.venue.verify();
    expect(next.settlement?.resolved).toEqual([intent.requestId]);
    expect(next.foreignOrders).toEqual([]);
  });

  it('reports a failed read and stays closed', async () => {
    const s = setup();
    s.venue
      .expect('listOpenOrders', { value: [] })
      .expect('listPositions', { error: serviceError('KEY_REVOKED') })
      .expect('getAccount', { value: account() });
    const report = await s.reconciler.start();
    s.venue.verify();
    expect(report).toMatchObject({ ok: false, error: { code: 'KEY_REVOKED' } });
    expect(s.reconciler.ready).toBe(false);
  });
});
