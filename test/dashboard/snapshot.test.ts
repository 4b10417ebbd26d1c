/**
 * The pure parts of the dashboard: an order's distance from the mark, the equity curve that
 * keeps the whole run in a bounded number of points, and the bounded recent lists.
 */
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.ts';
import {
  ActivityRecorder,
  MAXIMUM_EQUITY_POINTS,
  MAXIMUM_RECENT,
} from '../../src/cli/dashboard/activity.ts';
import {
  buildSnapshot,
  type DashboardStatus,
  distanceFromMark,
} from '../../src/cli/dashboard/snapshot.ts';
import type { Fill } from '../../src/protocol/index.ts';
import type { IntentOutcome } from '../../src/runtime/intents.ts';

describe('distance from the mark', () => {
  it('is in percent with four decimals, signed, and unknown without a mark', () => {
    expect(distanceFromMark('63987', '63989')).toBe('-0.0031');
    expect(distanceFromMark('63100', '63000')).toBe('0.1587');
    expect(distanceFromMark('64000', undefined)).toBeNull();
    expect(distanceFromMark(null, '64000')).toBeNull();
    expect(distanceFromMark('1', '0')).toBeNull();
  });
});

describe('the activity recorder', () => {
  it('keeps the whole run in at most MAXIMUM_EQUITY_POINTS points', () => {
    const clock = new VirtualClock(1_000);
    const activity = new ActivityRecorder(clock);
    for (let n = 0; n < 10 * MAXIMUM_EQUITY_POINTS; n++) {
      clock.advanceBy(1_000);
      activity.sampleEquity(String(10_000 + n));
    }
    const points = activity.snapshot().equity;
    expect(points.length).toBeLessThanOrEqual(MAXIMUM_EQUITY_POINTS);
    expect(points.length).toBeGreaterThan(MAXIMUM_EQUITY_POINTS / 4);
    expect(points[0]?.[1]).toBe('10000');
    // The last point is recent: within one stride of the end.
    const last = points.at(-1)?.[0] ?? 0;
    expect(clock.now() - last).toBeLessThanOrEqual(16_000);
    const times = points.map((point) => point[0]);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('keeps the newest intents, each strategy’s last one, and the denial reasons', () => {
    const clock = new VirtualClock(0);
    const activity = new ActivityRecorder(clock);
    const outcomes$ = new Subject<IntentOutcome>();
    activity.attach({
      outcomes$,
      denials$: new Subject(),
      fills$: new Subject(),
      reconciliation$: new Subject(),
      tradingState$: new Subject(),
    });
    for (let n = 1; n <= MAXIMUM_RECENT + 10; n++) {
      outcomes$.next({
        status: 'denied',
        intent: {
          strategyId: n % 2 === 0 ? 'even' : 'odd',
          sequence: n,
          requestId: `r${n}`,
          clientOrderId: `r${n}`,
          intent: {
            kind: 'place',
            marketId: 'BTC-PERP',
            side: 'buy',
            type: 'limit',
            quantity: '1',
            price: '10',
          },
          emittedAt: 0,
        },
        denials: [{ rule: 'max_open_orders', limit: '2', observed: '2', message: 'too many' }],
      });
    }
    const snapshot = activity.snapshot();
    expect(snapshot.intents).toHaveLength(MAXIMUM_RECENT);
    expect(snapshot.intents[0]?.requestId).toBe(`r${MAXIMUM_RECENT + 10}`);
    expect(snapshot.intents[0]?.reason).toBe('max_open_orders: too many');
    expect(snapshot.lastIntents.even?.requestId).toBe(`r${MAXIMUM_RECENT + 10}`);
    expect(snapshot.lastIntents.odd?.requestId).toBe(`r${MAXIMUM_RECENT + 9}`);
    activity.detach();
  });

  it('makes each strategy a PnL from its own fills, marked', () => {
    const clock = new VirtualClock(0);
    const activity = new ActivityRecorder(clock);
    const outcomes$ = new Subject<IntentOutcome>();
    const fills$ = new Subject<Fill>();
    const ticker$ = new Subject<{ market_id: string; mark_price: string | null }>();
    activity.attach({
      outcomes$,
      denials$: new Subject(),
      fills$,
      reconciliation$: new Subject(),
      tradingState$: new Subject(),
    });
    activity.attachMarks([ticker$]);
    const accept = (strategyId: string, orderId: string) =>
      outcomes$.next({
        status: 'accepted',
        orderId,
        intent: {
          strategyId,
          sequence: 1,
          requestId: `${strategyId}:${orderId}`,
          clientOrderId: `${strategyId}:${orderId}`,
          intent: {
            kind: 'place',
            marketId: 'BTC-PERP',
            side: 'buy',
            type: 'limit',
            quantity: '1',
            price: '100',
          },
          emittedAt: 0,
        },
      });
    const fill = (orderId: string, side: string, quantity: string, price: string, fee: string) =>
      fills$.next({
        fill_id: `f-${orderId}-${side}`,
        market_id: 'BTC-PERP',
        route_id: 'r',
        side,
        quantity,
        price,
        fee,
        notional: '0',
        order_id: orderId,
        is_maker: true,
        occurred_at: '2026-01-05T00:00:00.000Z',
      });
    accept('mm', 'o1');
    accept('mm', 'o2');
    accept('other', 'o3');
    fill('o1', 'buy', '1', '100', '0.1');
    fill('o2', 'sell', '1', '110', '0.1');
    // Flat: the round trip's 10 less two fees.
    expect(activity.snapshot().strategyPnl).toEqual({ mm: '9.8' });
    fill('o3', 'buy', '2', '100', '0');
    // Holding without a mark: unknown, not guessed.
    expect(activity.snapshot().strategyPnl.other).toBeNull();
    ticker$.next({ market_id: 'BTC-PERP', mark_price: '105' });
    expect(activity.snapshot().strategyPnl).toEqual({ mm: '9.8', other: '10' });
    // A fill of an order this session did not place is nobody's.
    fill('unknown', 'buy', '5', '100', '0');
    expect(activity.snapshot().fillCounts).toEqual({ mm: 2, other: 1 });
  });
});

describe('the snapshot', () => {
  it('lists the waiting emulated exits with their trigger, price and distance', () => {
    const exit = {
      id: 'mm:e1:9',
      strategyId: 'mm',
      marketId: 'BTC-PERP',
      side: 'sell',
      quantity: '0.01',
      state: 'waiting',
      kind: 'stop',
      source: 'mark',
      triggerPrice: '62000',
      price: '63000',
      distance: '1000',
    };
    const status = { waitingExits: [exit], openOrders: [], positions: [] };
    const snapshot = buildSnapshot({
      now: 0,
      status: status as unknown as DashboardStatus,
      activity: new ActivityRecorder(new VirtualClock(0)).snapshot(),
      strategies: [],
      readOnly: true,
      notifications: null,
      day: null,
    });
    expect(snapshot.waitingExits).toEqual([exit]);
  });
});
