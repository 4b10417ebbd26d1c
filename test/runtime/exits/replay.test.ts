/**
 * Emulated exits in a backtest: the same kernel and exit emulator as live, fed by a recorded
 * session on virtual time. A strategy buys, then sets a stop-loss and a take-profit on the last
 * trade; the one that fires must fire on the first recorded trade that crosses its level, the
 * other is dropped once the position is gone, and a second run gives the same result.
 */
import { join } from 'node:path';
import { filter, from, map, merge, mergeMap, take } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decimal, toWire } from '../../../src/core/decimal.ts';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import { runBacktest } from '../../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../../src/replay/backtest/sources.ts';
import { openRecording, readRecording } from '../../../src/replay/format/recording.ts';
import type { EmulatedOrder, OrderIntent } from '../../../src/runtime/strategy/index.ts';
import {
  defineStrategy,
  marketOrder,
  stopMarket,
  takeProfit,
} from '../../../src/runtime/strategy/index.ts';
import {
  marketMakerDocument,
  recordSession,
  temporaryFolder,
} from '../../replay/backtest/helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;
/** BTC-PERP's recorded trades: time and price. */
let trades: { t: number; price: string }[];

beforeAll(async () => {
  folder = await temporaryFolder('exits-replay');
  session = join(folder.path, 'session');
  await recordSession(session, { durationMs: 4 * 60_000 });
  trades = [];
  const reader = readRecording(await openRecording(session), {
    kinds: ['trade'],
    markets: ['BTC-PERP'],
  });
  for await (const batch of reader.batches()) {
    for (const record of batch)
      if (record.k === 'trade') trades.push({ t: record.t, price: record.d.price });
  }
});

afterAll(async () => {
  await folder.remove();
});

const Params = z.strictObject({ stop: z.string(), profit: z.string() });

/** Buys on the first trade; once long, sets a stop and a take-profit; records its exits. */
function exitProbe(seen: { exits: readonly EmulatedOrder[] }) {
  const exit = {
    marketId: 'BTC-PERP',
    side: 'sell',
    quantity: '0.01',
    triggerSource: 'last',
  } as const;
  return defineStrategy({
    name: 'exit-probe',
    description: 'buys once, then protects the position with emulated exits',
    params: Params,
    create: (context, params) => {
      const entry = context.trades$('BTC-PERP').pipe(
        take(1),
        map((): OrderIntent =>
          marketOrder({ marketId: 'BTC-PERP', side: 'buy', quantity: '0.01' }),
        ),
      );
      const exits = context.positions$.pipe(
        filter(
          (position) => position.market_id === 'BTC-PERP' && !decimal(position.quantity).eq(0),
        ),
        take(1),
        mergeMap(() =>
          from<OrderIntent[]>([
            stopMarket({ ...exit, triggerPrice: params.stop }),
            takeProfit({ ...exit, triggerPrice: params.profit }),
          ]),
        ),
      );
      context.trades$('BTC-PERP').subscribe(() => {
        seen.exits = context.emulatedOrders('BTC-PERP');
      });
      return merge(entry, exits);
    },
  });
}

function midway(from: string, to: string): string {
  return toWire(decimal(from).plus(decimal(to)).div(2).round(1));
}

async function run(params: { stop: string; profit: string }) {
  const seen: { exits: readonly EmulatedOrder[] } = { exits: [] };
  const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
  const source = await openReplaySource(loaded.config.data, { cache: 'off' });
  const result = await runBacktest({
    config: loaded.config,
    strategies: [
      { id: 'exits', name: 'exit-probe', definition: exitProbe(seen), rawParams: params, params },
    ],
    source,
  });
  return { result, exits: seen.exits };
}

describe('emulated exits in replay', () => {
  it('fire on the first recorded trade that crosses their level, the same on every run', async () => {
    expect(trades.length).toBeGreaterThan(20);
    const first = trades[0]!;
    const later = trades
      .filter((trade) => trade.t > first.t + 5_000)
      .map((trade) => decimal(trade.price));
    const low = later.reduce((a, b) => (a.lt(b) ? a : b));
    const high = later.reduce((a, b) => (a.gt(b) ? a : b));
    const params = {
      stop: midway(first.price, toWire(low)),
      profit: midway(first.price, toWire(high)),
    };

    const { result, exits } = await run(params);
    expect(exits.map((exit) => exit.rule.kind)).toEqual(['stop', 'take_profit']);
    const released = exits.filter((exit) => exit.state === 'released');
    expect(released).toHaveLength(1);
    const fired = released[0]!;
    const other = exits.find((exit) => exit !== fired)!;
    expect(other).toMatchObject({ state: 'cancelled', reason: 'its position is gone' });

    // The recorded trade that should have fired it: the first crossing after it was set.
    const crossing = trades.find(
      (trade) =>
        trade.t >= fired.createdAt &&
        (decimal(trade.price).lte(decimal(params.stop)) ||
          decimal(trade.price).gte(decimal(params.profit))),
    );
    expect(crossing).toBeDefined();
    const expectedKind = decimal(crossing!.price).lte(decimal(params.stop))
      ? 'stop'
      : 'take_profit';
    expect(fired.rule.kind).toBe(expectedKind);
    expect(fired.triggerPrice).toBe(toWire(decimal(crossing!.price)));
    expect(fired.updatedAt).toBeGreaterThanOrEqual(crossing!.t);

    // The released order filled: a sell under the exit's release id, and the position is flat.
    const sells = result.fills.filter((fill) => fill.side === 'sell');
    expect(sells.length).toBeGreaterThan(0);
    for (const fill of sells) {
      expect(result.orderIds.get(fill.order_id!)?.clientOrderId).toBe(`${fired.id}:x`);
    }
    expect(result.outcomes['denied:reduce_only'] ?? 0).toBe(0);

    const again = await run(params);
    expect(again.exits).toEqual(exits);
    expect(again.result.fills).toEqual(result.fills);
  });
});
