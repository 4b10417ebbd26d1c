/**
 * Emulated exits through the whole kernel against the real emulator on a loopback port: a
 * bracket's take-profit fires and its stop-loss is cancelled (one-cancels-other), the released
 * order is a reduce-only market order under the exit's fixed id, and after a crash a waiting
 * exit is restored from the journal and fires once.
 */
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { decimal, toWire } from '../../../src/core/decimal.ts';
import type { OrderIntent } from '../../../src/runtime/intents.ts';
import { Journal } from '../../../src/runtime/journal/journal.ts';
import { bracket, marketOrder, takeProfit } from '../../../src/runtime/strategy/index.ts';
import { KernelWorld, type Process, Probe, probeStrategy, until } from '../kernel/world.ts';

let world: KernelWorld | undefined;

afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function markOf(process: Process): Promise<string> {
  const ticker = await firstValueFrom(process.live.marketData.ticker$('BTC-PERP'));
  if (ticker.mark_price === null) throw new Error('no mark price');
  return ticker.mark_price;
}

function scaled(price: string, factor: string): string {
  return toWire(decimal(price).times(decimal(factor)).round(1));
}

async function bootProbe(current: KernelWorld, probe: Probe): Promise<Process> {
  const process = await current.boot({
    strategies: [{ id: 'probe', definition: probeStrategy(probe), params: {} }],
    risk: { halted_allows_reduce_only: true },
  });
  await process.kernel.start();
  await until(() => probe.context !== null, 'the strategy to start');
  return process;
}

function positionQuantity(process: Process): string {
  const positions = process.kernel.status().positions.filter((p) => p.market_id === 'BTC-PERP');
  return toWire(decimal(positions[0]?.quantity ?? '0'));
}

describe('emulated exits in the kernel', () => {
  it('a bracket: the entry fills, the take-profit fires, the stop-loss is cancelled', async () => {
    world = await KernelWorld.start();
    const current = world;
    const probe = new Probe();
    const process = await bootProbe(current, probe);
    const mark = await markOf(process);
    const epoch = process.journal.epoch;
    const id = `probe:${epoch}:1`;

    probe.emit(
      bracket({
        entry: marketOrder({ marketId: 'BTC-PERP', side: 'buy', quantity: '0.010' }),
        stopLoss: { triggerPrice: scaled(mark, '0.5') },
        // Below the mark: fires on the first tick once the entry has filled.
        takeProfit: { triggerPrice: scaled(mark, '0.9') },
      }) as OrderIntent,
    );
    await current.advanceUntil(
      () => current.ordersWithRequestId(`${id}:tp:x`).length === 1,
      'the take-profit released',
    );
    await current.advanceUntil(() => positionQuantity(process) === '0', 'the position closed');

    const entry = current.ordersWithRequestId(id);
    expect(entry).toMatchObject([{ side: 'buy', status: 'FILLED', client_order_id: id }]);
    const released = current.ordersWithRequestId(`${id}:tp:x`);
    expect(released).toMatchObject([
      { side: 'sell', type: 'market', reduce_only: true, client_order_id: `${id}:tp:x` },
    ]);
    expect(current.ordersWithRequestId(`${id}:sl:x`)).toEqual([]);
    expect(process.kernel.status().waitingExits).toEqual([]);
    const exits = probe.context?.emulatedOrders() ?? [];
    expect(exits.map((exit) => [exit.id, exit.state])).toEqual([
      [`${id}:sl`, 'cancelled'],
      [`${id}:tp`, 'released'],
    ]);
    expect(probe.outcomesOf(id).map((outcome) => outcome.status)).toContain('accepted');
  });

  it('a waiting exit survives a crash, is restored before trading resumes, and fires once', async () => {
    world = await KernelWorld.start();
    const current = world;
    const first = new Probe();
    const before = await bootProbe(current, first);
    const mark = await markOf(before);
    const epoch = before.journal.epoch;

    first.emit(marketOrder({ marketId: 'BTC-PERP', side: 'buy', quantity: '0.010' }));
    await current.advanceUntil(() => positionQuantity(before) === '0.01', 'the long opened');
    const exitId = `probe:${epoch}:2`;
    first.emit(
      takeProfit({
        marketId: 'BTC-PERP',
        side: 'sell',
        quantity: '0.010',
        triggerPrice: scaled(mark, '2'),
      }),
    );
    await until(() => first.outcomesOf(exitId).length > 0, 'the exit taken');
    expect(first.outcomesOf(exitId)).toMatchObject([{ status: 'accepted', orderId: null }]);
    expect(before.kernel.status().waitingExits).toMatchObject([
      { id: exitId, state: 'waiting', kind: 'take_profit', triggerPrice: scaled(mark, '2') },
    ]);

    await current.crash(before);

    const second = new Probe();
    const after = await bootProbe(current, second);
    expect(after.kernel.status().waitingExits).toMatchObject([{ id: exitId, state: 'waiting' }]);
    expect(second.context?.emulatedOrders()).toMatchObject([{ id: exitId, state: 'waiting' }]);

    // The restarted strategy brings the trigger under the price: it fires, once.
    second.emit({ kind: 'amend', clientOrderId: exitId, price: scaled(mark, '0.5') });
    await current.advanceUntil(() => positionQuantity(after) === '0', 'the position closed');
    await current.advance(5_000, 100);
    expect(current.ordersWithRequestId(`${exitId}:x`)).toMatchObject([
      { side: 'sell', reduce_only: true, status: 'FILLED' },
    ]);
    expect(after.kernel.status().waitingExits).toEqual([]);
    expect(after.journal.exits.live()).toEqual([]);
  });

  it('an exit that fired but whose order never reached the executor is released on restart, once', async () => {
    world = await KernelWorld.start();
    const current = world;
    const first = new Probe();
    const before = await bootProbe(current, first);
    const epoch = before.journal.epoch;
    first.emit(marketOrder({ marketId: 'BTC-PERP', side: 'buy', quantity: '0.010' }));
    await current.advanceUntil(() => positionQuantity(before) === '0.01', 'the long opened');
    await current.crash(before);

    // As the journal reads after a crash between the trigger and the executor's write.
    const exitId = `probe:${epoch}:2`;
    const journal = Journal.open(current.journalPath, { now: () => current.clock.now() });
    journal.exits.save({
      id: exitId,
      strategyId: 'probe',
      sequence: 2,
      marketId: 'BTC-PERP',
      side: 'sell',
      quantity: '0.01',
      rule: { kind: 'stop', price: '1' },
      source: 'mark',
      order: { type: 'market' },
      reduceOnly: true,
      ocoGroup: null,
      parentId: null,
      state: 'triggered',
      trailing: null,
      releaseId: `${exitId}:x`,
      triggerPrice: '1',
      reason: null,
      createdAt: current.clock.now(),
      updatedAt: current.clock.now(),
    });
    journal.noteSequence('probe', 2);
    journal.close();

    const second = new Probe();
    const after = await bootProbe(current, second);
    await current.advanceUntil(() => positionQuantity(after) === '0', 'the position closed');
    await current.advance(5_000, 100);
    expect(current.ordersWithRequestId(`${exitId}:x`)).toMatchObject([
      { side: 'sell', reduce_only: true, status: 'FILLED' },
    ]);
    expect(second.context?.emulatedOrders()).toMatchObject([{ id: exitId, state: 'released' }]);
    expect(after.journal.getIntent(`${exitId}:x`)?.sequence).toBe(-8);
  });
});
