/**
 * The kernel's risk snapshot is kept up to date part by part: a ticker changes only its market's
 * mark, data status and time (the grids stay the objects parsed once), a placement let through
 * changes only the pending part, and the tracker's orders are read whole once, then kept order
 * event by order event with their per-market sums.
 */
import { describe, expect, it } from 'vitest';
import { toWire } from '../../../src/core/decimal.ts';
import type { StampedIntent } from '../../../src/runtime/intents.ts';
import { RiskSnapshotBuilder } from '../../../src/runtime/kernel/risk-snapshot.ts';
import type { Market, Order } from '../../../src/protocol/index.ts';
import type { Ticker } from '../../../src/runtime/strategy/types.ts';
import { sumOrders } from '../../../src/runtime/risk/order-sums.ts';

const market = {
  market_id: 'BTC-PERP',
  price_tick: '0.5',
  quantity_step: '0.001',
  minimum_quantity: '0.001',
  minimum_notional: '10',
  maximum_leverage: 50,
  mark_price: '60000',
  data_status: 'live',
  observed_at: '2025-01-15T12:00:00Z',
} as unknown as Market;

function restingOrder(clientOrderId: string, status = 'OPEN'): Order {
  return Object.freeze({
    order_id: `order-${clientOrderId}`,
    client_order_id: clientOrderId,
    market_id: 'BTC-PERP',
    side: 'buy',
    price: '59000',
    quantity: '0.010',
    filled_quantity: '0.002',
    reduce_only: false,
    status,
  }) as unknown as Order;
}

function placement(requestId: string, clientOrderId: string): StampedIntent {
  return {
    strategyId: 's',
    sequence: 1,
    requestId,
    clientOrderId,
    emittedAt: 0,
    intent: {
      kind: 'place',
      marketId: 'BTC-PERP',
      side: 'sell',
      type: 'limit',
      quantity: '0.02',
      price: '61000',
    },
  };
}

describe('RiskSnapshotBuilder', () => {
  it('reads the tracker again only after its orders changed, and counts pending placements once', () => {
    let reads = 0;
    let tracked: Order[] = [restingOrder('a')];
    const builder = new RiskSnapshotBuilder({
      markets: () => [market],
      positions: () => [],
      openOrders: () => {
        reads++;
        return tracked;
      },
    });
    expect(builder.snapshot().openOrders.map((order) => order.clientOrderId)).toEqual(['a']);
    expect(toWire(builder.snapshot().openOrders[0]!.remainingQuantity)).toBe('0.008');
    const trackedSums = builder.snapshot().orderSums;
    builder.addPending(placement('r1', 'b'));
    builder.addPending(placement('r2', 'c'));
    const withPending = builder.snapshot();
    expect(withPending.openOrders.map((order) => order.clientOrderId)).toEqual(['a', 'b', 'c']);
    // The placements are laid over the tracked sums, which are read through, not copied.
    expect(new Map(withPending.orderSums)).toEqual(sumOrders(withPending.openOrders));
    expect(withPending.orderSums?.get('BTC-PERP')).toEqual(
      sumOrders(withPending.openOrders).get('BTC-PERP'),
    );
    expect(trackedSums?.get('BTC-PERP')?.openOrders).toBe(1);
    builder.removePending('r2');
    const onePending = builder.snapshot();
    expect(onePending.openOrders.map((order) => order.clientOrderId)).toEqual(['a', 'b']);
    expect(new Map(onePending.orderSums)).toEqual(sumOrders(onePending.openOrders));
    // One overlay for the builder's life: no new map of the sums per intent.
    expect(onePending.orderSums).toBe(withPending.orderSums);
    expect(reads).toBe(1);

    // The venue answered b: the tracker holds it now, and it is not counted twice. The order
    // event is applied on its own; the tracker is not read again.
    tracked = [restingOrder('a'), restingOrder('b')];
    builder.onOrder(restingOrder('b'));
    const after = builder.snapshot();
    expect(after.openOrders.map((order) => order.clientOrderId)).toEqual(['a', 'b']);
    expect(toWire(after.openOrders[1]!.remainingQuantity)).toBe('0.008');
    expect(reads).toBe(1);
    expect(Object.isFrozen(after.openOrders)).toBe(true);
    expect(after.orderSums).toEqual(sumOrders(after.openOrders));

    // a ends: it leaves the views and the sums. The sums are the tracked ones, live (the gate
    // reads a snapshot within one call and keeps nothing of it): no copy per change.
    builder.onOrder(restingOrder('a', 'CANCELLED'));
    tracked = [restingOrder('b')];
    const ended = builder.snapshot();
    expect(ended.openOrders.map((order) => order.clientOrderId)).toEqual(['b']);
    expect(ended.orderSums).toEqual(sumOrders(ended.openOrders));
    expect(ended.orderSums).toBe(after.orderSums);

    // Told nothing order by order, the builder reads the tracker whole again.
    builder.invalidateOrders();
    expect(builder.snapshot().openOrders.map((order) => order.clientOrderId)).toEqual(['b']);
    expect(reads).toBe(2);
  });

  it('lays a ticker over its market and keeps the grids parsed once', () => {
    const builder = new RiskSnapshotBuilder({
      markets: () => [market],
      positions: () => [],
      openOrders: () => [],
    });
    const listed = builder.snapshot().markets['BTC-PERP']!;
    expect(toWire(listed.markPrice!)).toBe('60000');
    builder.onTicker({
      market_id: 'BTC-PERP',
      mark_price: '60100.5',
      data_status: 'stale',
      occurred_at: '2025-01-15T12:00:05Z',
    } as unknown as Ticker);
    const ticked = builder.snapshot().markets['BTC-PERP']!;
    expect(toWire(ticked.markPrice!)).toBe('60100.5');
    expect(ticked.dataStatus).toBe('stale');
    expect(ticked.observedAt).toBe(Date.UTC(2025, 0, 15, 12, 0, 5));
    expect(ticked.priceTick).toBe(listed.priceTick);
    expect(ticked.quantityStep).toBe(listed.quantityStep);
    expect(toWire(ticked.minimumNotional!)).toBe('10');
    builder.onTicker({
      market_id: 'BTC-PERP',
      mark_price: null,
      data_status: 'halted',
      occurred_at: '2025-01-15T12:00:06Z',
    } as unknown as Ticker);
    const unknownStatus = builder.snapshot().markets['BTC-PERP']!;
    expect(unknownStatus.markPrice).toBeNull();
    expect(unknownStatus.dataStatus).toBe('unavailable');
  });

  it('rebuilds the market record per ticker without touching an earlier snapshot', () => {
    const eth = { ...market, market_id: 'ETH-PERP', mark_price: '3000' } as unknown as Market;
    const sol = { ...market, market_id: 'SOL-PERP', mark_price: '150' } as unknown as Market;
    const builder = new RiskSnapshotBuilder({
      markets: () => [market, eth, sol],
      positions: () => [],
      openOrders: () => [],
    });
    const first = builder.snapshot().markets;
    builder.onTicker({
      market_id: 'ETH-PERP',
      mark_price: '3001.25',
      data_status: 'live',
      occurred_at: '2025-01-15T12:00:05Z',
    } as unknown as Ticker);
    const second = builder.snapshot().markets;
    expect(Object.keys(second)).toEqual(['BTC-PERP', 'ETH-PERP', 'SOL-PERP']);
    expect(Object.isFrozen(second)).toBe(true);
    expect(toWire(second['ETH-PERP']!.markPrice!)).toBe('3001.25');
    expect(second['BTC-PERP']).toBe(first['BTC-PERP']);
    expect(second['SOL-PERP']).toBe(first['SOL-PERP']);
    // The earlier snapshot still holds the listed mark.
    expect(toWire(first['ETH-PERP']!.markPrice!)).toBe('3000');
    // No ticker since: the same record again.
    expect(builder.snapshot().markets).toBe(second);
  });
});
