/**
 * The kernel against the emulator while route readiness refuses: the log never says "trading
 * permitted" while a gate refuses every intent; it names the gate and why, once, and again
 * when that changes. Intents are denied by the route gate meanwhile, and `mayTrade` is false.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OrderIntent } from '../../../src/runtime/intents.ts';
import { KernelWorld, Probe, probeStrategy, until } from '../kernel/world.ts';

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

describe('the permit log', () => {
  it('names the refusing gate and why, once per change, and says permitted only when none refuses', async () => {
    world = await KernelWorld.start();
    const current = world;
    current.emulator.controls.setRouteHealth('degraded');
    const probe = new Probe();
    const process = await current.boot({
      strategies: [{ id: 'probe', definition: probeStrategy(probe), params: {} }],
    });
    expect(process.live.routeReadiness()).toMatchObject({
      ready: false,
      reason: 'route svc-paper is not ready (route health is degraded)',
    });
    await process.kernel.start();
    await current.advanceUntil(
      () =>
        process.kernel.status().deadman?.phase === 'armed' && process.kernel.status().reconciled,
      'the dead-man to arm and the first reconciliation',
    );
    // Several route polls with the same answer: nothing new to say.
    await current.advance(20_000, 500);

    const status = process.kernel.status();
    expect(status.mayTrade).toBe(false);
    expect(status.refusing).toEqual([
      {
        gate: 'route readiness',
        reason: 'route svc-paper is not ready (route health is degraded)',
      },
    ]);

    const permitLines = () =>
      process.logger.lines.filter(
        (line) =>
          line.message.startsWith('trading permitted') ||
          line.message.startsWith('trading refused'),
      );
    expect(permitLines().some((line) => line.message === 'trading permitted')).toBe(false);
    const routeRefusals = permitLines().filter(
      (line) =>
        line.message ===
        'trading refused, no new exposure (route readiness: route svc-paper is not ready (route health is degraded))',
    );
    expect(routeRefusals).toHaveLength(1);
    expect(routeRefusals[0]?.level).toBe('warn');

    probe.emit(restingBuy);
    const first = `probe:${process.journal.epoch}:1`;
    await until(() => probe.outcomesOf(first).length > 0, 'the denial');
    expect(probe.outcomesOf(first)).toMatchObject([
      { status: 'denied', denials: [{ rule: 'route_ready' }] },
    ]);
    expect(process.venue.sends('placeOrder')).toEqual([]);

    const before = permitLines().length;
    current.emulator.controls.setRouteHealth('ready');
    await current.advanceUntil(() => process.kernel.status().mayTrade, 'the route to be ready');
    const after = permitLines().slice(before);
    expect(after.map((line) => [line.level, line.message])).toEqual([
      ['info', 'trading permitted'],
    ]);
    expect(process.kernel.status().refusing).toEqual([]);

    current.emulator.controls.setRouteHealth('disabled');
    await current.advanceUntil(() => !process.kernel.status().mayTrade, 'the route to refuse');
    await current.advance(10_000, 500);
    expect(
      permitLines()
        .slice(before + 1)
        .map((line) => line.message),
    ).toEqual([
      'trading refused, no new exposure (route readiness: route svc-paper is not ready (route health is disabled))',
    ]);
  });
});
