/**
 * The whole pipeline against the emulator: a strategy's intents pass the gate, are journaled,
 * simulated, placed and filled by the emulator's synthetic market; outcomes and fills reach the
 * strategy once each; denials carry their rule, limit and observed figure.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OrderIntent } from '../../../src/runtime/intents.ts';
import marketMaker from '../../../strategies/market-maker/index.ts';
import { KernelWorld, Probe, probeStrategy, until } from './world.ts';

let world: KernelWorld | undefined;

afterEach(async () => {
  await world?.close();
  world = undefined;
});

const marketBuy = (quantity = '0.010'): OrderIntent => ({
  kind: 'place',
  marketId: 'BTC-PERP',
  side: 'buy',
  type: 'market',
  quantity,
  maxSlippagePercent: '1',
});

describe('the pipeline against the emulator', () => {
  it('places, fills and reports each fill once; the dead-man is armed before the first order', async () => {
    world = await KernelWorld.start();
    const probe = new Probe();
    const process = await world.boot({
      strategies: [{ id: 'probe', definition: probeStrategy(probe), params: {} }],
    });
    await process.kernel.start();
    expect(process.kernel.status()).toMatchObject({ reconciled: true, mayTrade: true });
    await until(() => probe.context !== null, 'the strategy to start');

    probe.emit(marketBuy());
    const requestId = `probe:${process.journal.epoch}:1`;
    await until(() => probe.outcomesOf(requestId).length > 0, 'the first outcome');
    expect(probe.outcomesOf(requestId)[0]).toMatchObject({ status: 'accepted' });

    // Journal first, then simulated under its own id, then placed.
    const record = process.journal.requireIntent(requestId);
    expect(record.state).toBe('accepted');
    expect(record.simulateRequestId).toBe(`${requestId}:s1`);
    const order = world.ordersWithRequestId(requestId);
    expect(order).toHaveLength(1);
    expect(record.orderId).toBe(order[0]?.order_id);
    // The intent's row carries its sequence: the next intent does not reuse the id.
    expect(process.journal.nextSequence('probe')).toBe(2);

    const endpoints = process.venue.sent.map((command) => command.endpoint);
    expect(endpoints.indexOf('setCancelAllAfter')).toBeGreaterThanOrEqual(0);
    expect(endpoints.indexOf('setCancelAllAfter')).toBeLessThan(endpoints.indexOf('simulateOrder'));
    expect(endpoints.indexOf('simulateOrder')).toBeLessThan(endpoints.indexOf('placeOrder'));

    await world.advanceUntil(
      () => probe.outcomesOf(requestId).some((outcome) => outcome.status === 'filled'),
      'the order to fill',
    );
    // Let events, reads and refreshes settle, then compare with the venue's own fill list.
    await world.advance(2_000);
    const venueFills = world.fills().filter((fill) => fill.order_id === order[0]?.order_id);
    expect(venueFills.length).toBeGreaterThan(0);
    const seen = probe.fills.map((fill) => fill.fill_id);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(venueFills.map((fill) => fill.fill_id).sort());
    expect(
      probe.outcomesOf(requestId).filter((outcome) => outcome.status === 'filled'),
    ).toHaveLength(1);
    expect(process.kernel.status().counters).toMatchObject({
      intents: 1,
      accepted: 1,
      denied: 0,
      fills: venueFills.length,
    });
    expect(probe.context?.position('BTC-PERP').quantity.toString()).toBe('0.01');
  });

  it('delivers a denial with its rule, limit and observed figure, and sends nothing', async () => {
    world = await KernelWorld.start();
    const probe = new Probe();
    const process = await world.boot({
      strategies: [{ id: 'probe', definition: probeStrategy(probe), params: {} }],
      risk: { max_order_quantity: '0.05' },
    });
    const denials: string[] = [];
    process.kernel.denials$.subscribe((event) => denials.push(event.intent.requestId));
    await process.kernel.start();
    await until(() => probe.context !== null, 'the strategy to start');
    const sentBefore = process.venue.sent.length;

    probe.emit(marketBuy('0.2'));
    const requestId = `probe:${process.journal.epoch}:1`;
    await until(() => probe.outcomesOf(requestId).length > 0, 'the denial');
    const outcome = probe.outcomesOf(requestId)[0];
    expect(outcome).toMatchObject({
      status: 'denied',
      denials: [{ rule: 'max_order_quantity', limit: '0.05', observed: '0.2' }],
    });
    expect(Object.isFrozen(outcome)).toBe(true);
    expect(denials).toEqual([requestId]);
    expect(process.venue.sent.slice(sentBefore)).toEqual([]);
    expect(process.journal.getIntent(requestId)).toBeUndefined();
    // The sequence is taken even so: the next intent does not reuse the id.
    expect(process.journal.nextSequence('probe')).toBe(2);
    expect(world.orders()).toEqual([]);
    expect(process.kernel.status().counters).toMatchObject({ intents: 1, denied: 1 });
  });

  it('runs the market-maker example: quotes rest, fills arrive once each, no id is used twice', async () => {
    world = await KernelWorld.start();
    const probe = new Probe();
    const process = await world.boot({
      strategies: [
        {
          id: 'maker',
          definition: marketMaker as never,
          params: { markets: ['BTC-PERP'], halfSpreadTicks: 1, refreshTicks: 4 },
        },
        { id: 'probe', definition: probeStrategy(probe), params: {} },
      ],
    });
    // A post-only quote one tick from the mark may cross a book that moved: the simulation
    // says so and nothing is placed. No other refusal is expected.
    const refusals = new Set<string>();
    process.kernel.outcomes$.subscribe((outcome) => {
      if (outcome.status === 'rejected' || outcome.status === 'denied') {
        refusals.add(outcome.status === 'rejected' ? outcome.code : 'denied');
      }
    });
    await process.kernel.start();
    await world.advance(60_000, 100);
    await process.kernel.idle();
    await world.advance(1_000, 50);

    const orders = world.orders();
    expect(orders.length).toBeGreaterThan(2);
    const requestIds = orders.map((order) => order.request_id);
    expect(new Set(requestIds).size).toBe(requestIds.length);
    for (const order of orders) expect(order.post_only).toBe(true);
    const venueFills = world.fills();
    expect(venueFills.length).toBeGreaterThan(0);
    const seen = probe.fills.map((fill) => fill.fill_id);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(venueFills.map((fill) => fill.fill_id).sort());
    const status = process.kernel.status();
    expect([...refusals].filter((code) => code !== 'SIMULATION_NOT_READY')).toEqual([]);
    expect(process.logger.at('error')).toEqual([]);
    expect(status.counters.fills).toBe(venueFills.length);
    expect(status.unknownIntents).toBe(0);
    expect(status.strategies.find((strategy) => strategy.id === 'maker')?.status).toBe('running');
  });
});
