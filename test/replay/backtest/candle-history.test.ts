/**
 * Candle warm-up end to end: the recorder keeps the service's candle history beside a recording,
 * the live venue reads the same history from the service, and a backtest hands a strategy the
 * recording's history at its start, so backtest and live start from the same candles.
 */
import { join } from 'node:path';
import { NEVER } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import { runBacktest } from '../../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../../src/replay/backtest/sources.ts';
import { readCandleHistory } from '../../../src/replay/format/candle-history.ts';
import { openRecording } from '../../../src/replay/format/recording.ts';
import { recordCandleHistory } from '../../../src/replay/recorder/candle-history.ts';
import { clientSource } from '../../../src/replay/recorder/sources.ts';
import { LiveMarketData } from '../../../src/runtime/live/market-data.ts';
import { defineStrategy } from '../../../src/runtime/strategy/index.ts';
import { parseTimestamp } from '../../../src/protocol/index.ts';
import { testCandle } from '../../../src/runtime/testing/index.ts';
import { Environment } from '../../client/environment.ts';
import { marketMakerDocument, recordSession, SESSION_START, temporaryFolder } from './helpers.ts';

const MINUTE = 60_000;
let folder: Awaited<ReturnType<typeof temporaryFolder>>;

beforeAll(async () => {
  folder = await temporaryFolder('candle-history');
});

afterAll(async () => {
  await folder.remove();
});

const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe('candle history', () => {
  it('is recorded beside a recording and read the same way live, closed candles only', async () => {
    const environment = await Environment.start();
    const directory = join(folder.path, 'history');
    try {
      await environment.advance(12 * MINUTE, 5_000); // the emulator's taker flow makes candles
      const history = await recordCandleHistory({
        source: clientSource({
          rest: environment.rest,
          stream: environment.stream(),
          privateEvents: false,
        }),
        directory,
        clock: environment.clock,
        marketIds: ['BTC-PERP'],
        intervals: ['1m'],
        limit: 8,
      });
      const stored = await readCandleHistory(directory);
      expect(stored).toEqual(history);
      const candles = stored!.candles['BTC-PERP']!['1m']!;
      expect(candles).toHaveLength(8);
      const now = environment.clock.now();
      const opens = candles.map((candle) => parseTimestamp(candle.open_time)!);
      expect(opens).toEqual([...opens].sort((left, right) => left - right));
      expect(Math.max(...opens) + MINUTE).toBeLessThanOrEqual(now);

      const live = new LiveMarketData({
        rest: environment.rest,
        stream: environment.stream(),
        clock: environment.clock,
        logger: silent,
        bookPollMs: 1_000,
        tradesPollMs: 1_000,
      });
      expect(await live.candleHistory('BTC-PERP', '1m', 8)).toEqual(candles);
    } finally {
      await environment.close();
    }
  });

  it("reaches a backtest's strategy at its start: the recording's candles closed before its first event", async () => {
    const session = join(folder.path, 'session');
    await recordSession(session, { durationMs: 30_000 });
    const source = await openReplaySource([session]);
    const startMs = SESSION_START; // the replay's clock starts at the first record, made then
    const start = (await openRecording(session)).manifest.created_at;
    const closes = ['101', '102', '103', '104'];
    const candles = closes.map((close, index) =>
      testCandle(
        { market_id: 'BTC-PERP', close },
        '1m',
        startMs - (closes.length - index) * MINUTE,
      ),
    );
    // One more whose minute is still open when the replay starts: it must not be served.
    candles.push(testCandle({ market_id: 'BTC-PERP', close: '999' }, '1m', startMs - 1));
    const seen: string[][] = [];
    const peek = defineStrategy({
      name: 'peek',
      params: z.strictObject({}),
      candleHistory: () => [{ marketId: 'BTC-PERP', interval: '1m', count: 10 }],
      create: (ctx) => {
        seen.push(ctx.candleHistory('BTC-PERP', '1m').map((candle) => candle.close));
        return NEVER;
      },
    });
    const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
    await runBacktest({
      config: { ...loaded.config, markets: ['BTC-PERP'] },
      strategies: [{ id: 'peek', name: 'peek', definition: peek, rawParams: {}, params: {} }],
      source: {
        ...source,
        candleHistory: {
          format: 'paperbot-candle-history',
          version: 1,
          recorded_at: start,
          candles: { 'BTC-PERP': { '1m': candles } },
        },
      },
    });
    expect(seen).toEqual([closes]);
  });
});
