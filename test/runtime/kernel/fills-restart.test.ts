/**
 * Fills across a crash, through the kernel with the live venue against the emulator: a fill made
 * while the process was down is applied once at the restart, from the event log after the
 * journal's sequence; the restarted strategy sees it once (and not the fill its predecessor
 * already saw), the kernel counts it once, the journal holds every venue fill once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RestClient } from '../../../src/client/index.ts';
import { DEFAULT_EMULATOR_CONFIG_INPUT } from '../../../src/emulator/index.ts';
import type { OrderIntent } from '../../../src/runtime/intents.ts';
import { KernelWorld, Probe, probeStrategy, until } from './world.ts';

let world: KernelWorld | undefined;
let taker: RestClient | undefined;

afterEach(async () => {
  await taker?.close();
  await world?.close();
  taker = undefined;
  world = undefined;
});

const bid = (price: string): OrderIntent => ({
  kind: 'place',
  marketId: 'BTC-PERP',
  side: 'buy',
  type: 'limit',
  quantity: '0.010',
  price,
  tag: `bid-${price}`,
});

describe('fills across a crash, through the kernel', () => {
  it('applies a fill made while down once: journal, strategy, counters', async () => {
    // No market simulation: only the taker below trades with the bot's bids.
    world = await KernelWorld.start({
      emulator: {
        config: {
          ...DEFAULT_EMULATOR_CONFIG_INPUT,
          simulation: { ...DEFAULT_EMULATOR_CONFIG_INPUT.simulation, enabled: false },
        },
      },
    });
    const active = world;
    const takerClient = new RestClient({
      credential: active.emulator.createKey(),
      clock: active.clock,
      requestTimeoutMs: 600_000,
    });
    taker = takerClient;
    const take = async (price: string, label: string) => {
      const before = active.fills().length;
      await takerClient.placeOrder({
        request_id: `take-${label}-0000`,
        client_order_id: `take-${label}`,
        market_id: 'BTC-PERP',
        side: 'sell',
        type: 'limit',
        quantity: '0.010',
        price,
        time_in_force: 'IOC',
        leverage: 1,
      });
      await active.advanceUntil(() => active.fills().length === before + 1, `the ${label} fill`);
    };

    const first = new Probe();
    const before = await active.boot({
      strategies: [{ id: 'probe', definition: probeStrategy(first), params: {} }],
    });
    await before.kernel.start();
    await until(() => first.context !== null, 'the strategy to start');
    first.emit(bid('63900'));
    first.emit(bid('63800'));
    await active.advanceUntil(
      () => active.orders().filter((order) => order.status === 'OPEN').length === 2,
      'two resting bids',
    );
    await take('63900', 'live');
    await active.advanceUntil(() => first.fills.length === 1, 'the live fill');
    const liveFill = first.fills[0];
    await active.crash(before);

    await take('63800', 'down');
    const downFill = active.fills()[0];
    expect(downFill?.fill_id).not.toBe(liveFill?.fill_id);

    const second = new Probe();
    const after = await active.boot({
      strategies: [{ id: 'probe', definition: probeStrategy(second), params: {} }],
    });
    await after.kernel.start();
    await until(() => second.context !== null, 'the restarted strategy');
    await active.advance(500);
    expect(second.fills.map((fill) => fill.fill_id)).toEqual([downFill?.fill_id]);
    expect(after.kernel.status().counters.fills).toBe(1);
    expect(after.journal.fillCount()).toBe(2);
    expect(after.journal.fill(downFill?.fill_id ?? '')).toMatchObject({
      source: 'stream',
      fill: downFill,
    });
    expect(after.journal.privateCursor()?.lastSequence).toBeGreaterThanOrEqual(
      after.journal.fill(downFill?.fill_id ?? '')?.sequence ?? Infinity,
    );
    expect(after.journal.pendingFillReadBack()).toBeNull();
  });
});
