/**
 * Fail closed against the emulator: nothing is placed before the first reconciliation succeeds,
 * nor while a stream resync is raised and not yet reconciled.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OrderIntent } from '../../../src/runtime/intents.ts';
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
});

describe('fail closed', () => {
  it('places nothing before the first reconciliation succeeds', async () => {
    world = await KernelWorld.start();
    const current = world;
    const probe = new Probe();
    const process = await current.boot({
      strategies: [{ id: 'probe', definition: probeStrategy(probe), params: {} }],
    });
    current.emulator.controls.failRequests({
      code: 'EXECUTION_UNAVAILABLE',
      endpoint: 'listOrders',
      count: 1_000_000,
    });
    let started = false;
    void process.kernel.start().then(() => {
      started = true;
    });
    await current.advanceUntil(() => started, 'the kernel to start', 60_000, 10);
    expect(process.kernel.status()).toMatchObject({ reconciled: false, mayTrade: false });
    // The dead-man armed anyway: it is the reconciliation that holds trading back.
    expect(process.kernel.status().deadman).toMatchObject({ phase: 'armed' });

    probe.emit(restingBuy('63000'));
    const first = `probe:${process.journal.epoch}:1`;
    await until(() => probe.outcomesOf(first).length > 0, 'the denial');
    expect(probe.outcomesOf(first)).toMatchObject([
      { status: 'denied', denials: [{ rule: 'route_ready' }] },
    ]);
    expect(process.venue.sends('simulateOrder')).toEqual([]);
    expect(process.venue.sends('placeOrder')).toEqual([]);
    expect(current.orders()).toEqual([]);

    current.emulator.controls.clearFaults();
    await current.advanceUntil(() => process.kernel.status().mayTrade, 'a reconciliation');
    probe.emit(restingBuy('63000'));
    const second = `probe:${process.journal.epoch}:2`;
    await until(() => probe.outcomesOf(second).length > 0, 'the placement');
    expect(probe.outcomesOf(second)).toMatchObject([{ status: 'accepted' }]);
    expect(current.orders().map((order) => order.request_id)).toEqual([second]);
  });

  it('places nothing while a resync is raised and not reconciled', async () => {
    world = await KernelWorld.start();
    const current = world;
    const probe = new Probe();
    const process = await current.boot({
      strategies: [{ id: 'probe', definition: probeStrategy(probe), params: {} }],
    });
    const resyncs: string[] = [];
    process.live.venue.resync$.subscribe((signal) => resyncs.push(signal.reason));
    await process.kernel.start();
    await until(() => probe.context !== null, 'the strategy to start');
    const epoch = process.journal.epoch;

    // The next private frame is lost and the log cannot be read to fill the gap; the
    // reconciliation the resync asks for cannot read the venue's orders either.
    const controls = current.emulator.controls;
    controls.dropFrames({ count: 1 });
    controls.failRequests({ code: 'EXECUTION_UNAVAILABLE', endpoint: 'listEvents', count: 1e6 });
    controls.failRequests({ code: 'EXECUTION_UNAVAILABLE', endpoint: 'listOrders', count: 1e6 });
    probe.emit(restingBuy('63000'));
    const idA = `probe:${epoch}:1`;
    await until(() => probe.outcomesOf(idA).length > 0, 'A accepted');
    expect(probe.outcomesOf(idA)).toMatchObject([{ status: 'accepted' }]);
    await current.advanceUntil(
      () => !process.kernel.status().reconciled,
      'the resync to close trading',
      30_000,
      10,
    );
    expect(resyncs.some((reason) => reason.startsWith('gap_fill_failed'))).toBe(true);
    expect(process.kernel.status().mayTrade).toBe(false);

    probe.emit(restingBuy('62990'));
    const idB = `probe:${epoch}:2`;
    await until(() => probe.outcomesOf(idB).length > 0, 'B denied');
    expect(probe.outcomesOf(idB)).toMatchObject([
      { status: 'denied', denials: [{ rule: 'route_ready' }] },
    ]);
    await current.advance(3_000, 50);
    expect(process.kernel.status().reconciled).toBe(false);
    expect(current.orders().map((order) => order.request_id)).toEqual([idA]);

    controls.clearFaults();
    await current.advanceUntil(() => process.kernel.status().mayTrade, 'the reconciliation');
    probe.emit(restingBuy('62980'));
    const idC = `probe:${epoch}:3`;
    await until(() => probe.outcomesOf(idC).length > 0, 'C accepted');
    expect(probe.outcomesOf(idC)).toMatchObject([{ status: 'accepted' }]);
    expect(
      current
        .orders()
        .map((order) => order.request_id)
        .sort(),
    ).toEqual([idA, idC]);
  });
});
