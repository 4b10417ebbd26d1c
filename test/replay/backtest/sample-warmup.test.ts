/**
 * The bundled sample has its candle history: a backtest of it starts a strategy asking for 20
 * one-minute candles with 20, and the sample's candles.json is what the emulator's seeded past
 * (seed 42) gives at the sample's start, so `record --emulator-virtual` regenerates it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NEVER } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ReplayClock } from '../../../src/replay/backtest/loop.ts';
import { parseEmulatorConfig, defaultEmulatorConfig } from '../../../src/emulator/config.ts';
import { Exchange, MemoryStore } from '../../../src/emulator/index.ts';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import { runBacktest } from '../../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../../src/replay/backtest/sources.ts';
import {
  DEFAULT_HISTORY_INTERVALS,
  DEFAULT_HISTORY_LIMIT,
  recordCandleHistory,
} from '../../../src/replay/recorder/candle-history.ts';
import { exchangeSource } from '../../../src/replay/recorder/sources.ts';
import { defineStrategy } from '../../../src/runtime/strategy/index.ts';
import { marketMakerDocument, temporaryFolder } from './helpers.ts';

const SAMPLE = 'backtest-data/emulator-seed42-1h';
let folder: Awaited<ReturnType<typeof temporaryFolder>>;

beforeAll(async () => {
  folder = await temporaryFolder('sample-warmup');
});

afterAll(async () => {
  await folder.remove();
});

describe('the bundled sample and warm-up', () => {
  it('starts a strategy asking for 20 one-minute candles with 20', async () => {
    const seen: { count: number; newest: string | undefined }[] = [];
    const peek = defineStrategy({
      name: 'peek',
      params: z.strictObject({}),
      candleHistory: () => [{ marketId: 'BTC-PERP', interval: '1m', count: 20 }],
      create: (ctx) => {
        const history = ctx.candleHistory('BTC-PERP', '1m');
        seen.push({ count: history.length, newest: history.at(-1)?.open_time });
        return NEVER;
      },
    });
    const loaded = await resolveBacktestConfig(marketMakerDocument([SAMPLE]));
    await runBacktest({
      config: { ...loaded.config, markets: ['BTC-PERP'] },
      strategies: [{ id: 'peek', name: 'peek', definition: peek, rawParams: {}, params: {} }],
      source: await openReplaySource([SAMPLE]),
    });
    expect(seen).toEqual([{ count: 20, newest: '2024-12-31T23:59:00.000Z' }]);
  }, 60_000);

  it("holds the seeded past of seed 42 at the sample's start", async () => {
    const manifest = JSON.parse(await readFile(join(SAMPLE, 'manifest.json'), 'utf8')) as {
      time_range: { first_t: number };
    };
    const clock = new ReplayClock(manifest.time_range.first_t);
    const config = parseEmulatorConfig({ ...defaultEmulatorConfig(), seed: 42 });
    const exchange = Exchange.open({ clock, config, store: new MemoryStore() });
    const directory = join(folder.path, 'regenerated');
    await recordCandleHistory({
      source: exchangeSource({ exchange, accountId: null }),
      directory,
      clock,
      marketIds: ['BTC-PERP', 'ETH-PERP', 'SOL-PERP'],
      intervals: DEFAULT_HISTORY_INTERVALS,
      limit: DEFAULT_HISTORY_LIMIT,
    });
    expect(await readFile(join(directory, 'candles.json'), 'utf8')).toBe(
      await readFile(join(SAMPLE, 'candles.json'), 'utf8'),
    );
  });
});
