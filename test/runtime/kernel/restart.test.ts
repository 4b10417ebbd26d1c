/**
 * A crash and a restart on the same journal: the intent left unknown is resolved by its request
 * id (never placed twice), ids continue where they stopped, and the strategy finds its orders.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { IntentOutcome, OrderIntent } from '../../../src/runtime/intents.ts';
import { LOSS_TRACKING_META_KEY } from '../../../src/runtime/kernel/index.ts';
import { KernelWorld, Probe, probeStrategy, until } from './world.ts';

let world: KernelWorld | undefined;

afterEach(async () => {
  await world?.close();
  world = undefined;
});

const restingBuy = (price: string): OrderIntent => ({
  kind: 'place',
  marketId: 'BTC-PERP',
  side: 'buy',
  type: 'limit',
  quantity: '0.010',
  price,
  tag: `bid-${price}`,
});

describe('restart on the same journal', () => {
  it('resumes without duplicates: the unknown intent is resolved, ids continue', async () => {
    world = await KernelWorld.start();
    const first = new Probe();
    const before = await world.boot({
      strategies: [{ id: 'probe', definition: probeStrategy(first), params: {} }],
    });
    await before.kernel.start();
    await until(() => first.context !== null, 'the strategy to start');
    const epoch = before.journal.epoch;
    const idA = `probe:${epoch}:1`;
    const idB = `probe:${epoch}:2`;

    first.emit(restingBuy('63000'));
    await until(() => first.outcomesOf(idA).length > 0, 'A accepted');
    expect(first.outcomesOf(idA)).toMatchObject([{ status: 'accepted' }]);

    world.emulator.controls.dropResponses({ endpoint: 'placeOrder', count: 1 });
    first.emit(restingBuy('62990'));
    await until(() => first.outcomesOf(idB).length > 0, 'B unknown');
    expect(first.outcomesOf(idB)).toMatchObject([{ status: 'unknown' }]);
    await world.advance(100, 20);
    expect(before.journal.requireIntent(idB).state).toBe('unknown');
    expect(before.journal.readMeta(LOSS_TRACKING_META_KEY)).not.toBeNull();

    // The process dies before B is resolved.
    await world.crash(before);

    const second = new Probe();
    const after = await world.boot({
      strategies: [{ id: 'probe', definition: probeStrategy(second), params: {} }],
    });
    expect(after.journal.epoch).toBe(epoch);
    const outcomes: IntentOutcome[] = [];
    after.kernel.outcomes$.subscribe((outcome) => outcomes.push(outcome));
    await after.kernel.start();
    await until(() => second.context !== null, 'the strategy to start again');

    expect(outcomes.filter((outcome) => outcome.intent.requestId === idB)).toMatchObject([
      { status: 'resolved', resolution: 'accepted' },
    ]);
    expect(after.journal.requireIntent(idB).state).toBe('resolved');
    expect(after.venue.sends('placeOrder')).toEqual([]);
    expect(after.kernel.status().strategies).toEqual([
      { id: 'probe', status: 'running', nextSequence: 3 },
    ]);

    // The strategy finds both orders as its own (adopted by their id prefix).
    await world.advanceUntil(
      () => second.context?.openOrders('BTC-PERP').length === 2,
      'the strategy to see its two resting orders',
    );
    expect(
      second.context
        ?.openOrders('BTC-PERP')
        .map((order) => order.clientOrderId)
        .sort(),
    ).toEqual([idA, idB]);

    second.emit(restingBuy('62980'));
    const idC = `probe:${epoch}:3`;
    await until(() => second.outcomesOf(idC).length > 0, 'C accepted');
    expect(second.outcomesOf(idC)).toMatchObject([{ status: 'accepted' }]);

    const orders = world.orders();
    expect(orders.map((order) => order.request_id).sort()).toEqual([idA, idB, idC]);
    expect(orders.every((order) => order.status === 'OPEN' || order.status === 'PENDING')).toBe(
      true,
    );

    // A clean stop cancels them all and disarms the dead-man.
    const report = await world.stop(after);
    expect(report).toMatchObject({ cancelled: true, disarmed: true, error: null });
    expect(world.orders().every((order) => order.status === 'CANCELLED')).toBe(true);
  });
});
