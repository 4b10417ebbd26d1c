/**
 * Unknown outcomes end to end: the emulator loses a response after committing, answers 503, or
 * says the confirmation is pending. Each time the intent is reported unknown, is resolved by its
 * request id, and the emulator holds exactly one order for it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { IntentOutcome, OrderIntent } from '../../../src/runtime/intents.ts';
import { KernelWorld, Probe, type Process, probeStrategy, until } from './world.ts';

let world: KernelWorld | undefined;

afterEach(async () => {
  await world?.close();
  world = undefined;
});

const restingBuy: OrderIntent = {
  kind: 'place',
  marketId: 'BTC-PERP',
  side: 'buy',
  type: 'limit',
  quantity: '0.010',
  price: '63000',
};

async function started(): Promise<{ probe: Probe; process: Process; world: KernelWorld }> {
  const current = await KernelWorld.start();
  world = current;
  const probe = new Probe();
  const process = await current.boot({
    strategies: [{ id: 'probe', definition: probeStrategy(probe), params: {} }],
  });
  await process.kernel.start();
  await until(() => probe.context !== null, 'the strategy to start');
  return { probe, process, world: current };
}

function statuses(outcomes: readonly IntentOutcome[]): string[] {
  return outcomes.map((outcome) =>
    outcome.status === 'resolved' ? `resolved:${outcome.resolution}` : outcome.status,
  );
}

describe('unknown outcomes against the emulator', () => {
  it('a response lost after the commit: unknown, resolved by request id, one order', async () => {
    const { probe, process, world } = await started();
    world.emulator.controls.dropResponses({ endpoint: 'placeOrder', count: 1 });
    probe.emit(restingBuy);
    const requestId = `probe:${process.journal.epoch}:1`;
    await until(() => probe.outcomesOf(requestId).length > 0, 'the first outcome');
    expect(statuses(probe.outcomesOf(requestId))).toEqual(['unknown']);
    expect(process.kernel.status().unknownIntents).toBe(1);

    await world.advanceUntil(() => probe.outcomesOf(requestId).length > 1, 'the resolution');
    expect(statuses(probe.outcomesOf(requestId))).toEqual(['unknown', 'resolved:accepted']);
    const orders = world.ordersWithRequestId(requestId);
    expect(orders).toHaveLength(1);
    const resolved = probe.outcomesOf(requestId)[1];
    expect(resolved).toMatchObject({ orderId: orders[0]?.order_id });
    // The service had it: it was read back, never sent again.
    expect(process.venue.sends('placeOrder').map((command) => command.requestId)).toEqual([
      requestId,
    ]);
    expect(process.journal.requireIntent(requestId).state).toBe('resolved');
    expect(process.kernel.status()).toMatchObject({ unknownIntents: 0, unresolvedIntents: 0 });
    await world.advanceUntil(
      () => probe.context?.openOrders().some((order) => order.status === 'OPEN') === true,
      'the order to show open to the strategy',
    );
  });

  it('a 503 EXECUTION_UNAVAILABLE: unknown, resent with the same bytes, one order', async () => {
    const { probe, process, world } = await started();
    world.emulator.controls.failRequests({
      code: 'EXECUTION_UNAVAILABLE',
      endpoint: 'placeOrder',
      count: 1,
    });
    probe.emit(restingBuy);
    const requestId = `probe:${process.journal.epoch}:1`;
    await until(() => probe.outcomesOf(requestId).length > 0, 'the first outcome');
    expect(statuses(probe.outcomesOf(requestId))).toEqual(['unknown']);

    await world.advanceUntil(() => probe.outcomesOf(requestId).length > 1, 'the resolution');
    expect(statuses(probe.outcomesOf(requestId))).toEqual(['unknown', 'resolved:accepted']);
    expect(world.ordersWithRequestId(requestId)).toHaveLength(1);
    const sends = process.venue.sends('placeOrder');
    expect(sends).toHaveLength(2);
    expect(sends[1]?.body).toEqual(sends[0]?.body);
    expect(sends[1]?.requestId).toBe(requestId);
  });

  it('ORDER_CONFIRMATION_PENDING: unknown until the request reads completed, one order', async () => {
    const { probe, process, world } = await started();
    world.emulator.controls.failRequests({
      code: 'ORDER_CONFIRMATION_PENDING',
      endpoint: 'placeOrder',
      count: 1,
    });
    probe.emit(restingBuy);
    const requestId = `probe:${process.journal.epoch}:1`;
    await until(() => probe.outcomesOf(requestId).length > 0, 'the first outcome');
    expect(statuses(probe.outcomesOf(requestId))).toEqual(['unknown']);
    await world.advanceUntil(() => probe.outcomesOf(requestId).length > 1, 'the resolution');
    expect(statuses(probe.outcomesOf(requestId))).toEqual(['unknown', 'resolved:accepted']);
    expect(world.ordersWithRequestId(requestId)).toHaveLength(1);
  });

  it('a refusal by the venue is rejected, never unknown', async () => {
    const { probe, process, world } = await started();
    world.emulator.controls.setRouteHealth('degraded');
    probe.emit(restingBuy);
    const requestId = `probe:${process.journal.epoch}:1`;
    await until(() => probe.outcomesOf(requestId).length > 0, 'the outcome');
    expect(probe.outcomesOf(requestId)).toMatchObject([{ status: 'rejected' }]);
    expect(world.ordersWithRequestId(requestId)).toEqual([]);
  });
});
