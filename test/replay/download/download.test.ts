/**
 * History from the service into a recording, and warm-up in a backtest of it: `paperbot
 * download` and a fresh `paperbot record`, both against the embedded emulator (a real emulator
 * on a loopback port, read through the real client), whose seeded past is the history.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NEVER } from 'rxjs';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerDownloadCommand } from '../../../src/cli/commands/download.ts';
import { registerRecordCommand } from '../../../src/cli/commands/record.ts';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import { runBacktest } from '../../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../../src/replay/backtest/sources.ts';
import { readCandleHistory } from '../../../src/replay/format/candle-history.ts';
import { verifyRecording } from '../../../src/replay/format/verify.ts';
import { isDamaged } from '../../../src/replay/format/integrity.ts';
import { openRecording, readRecording } from '../../../src/replay/format/recording.ts';
import { defineStrategy } from '../../../src/runtime/strategy/index.ts';
import { marketMakerDocument, runCommand, temporaryFolder } from '../backtest/helpers.ts';

const MINUTE = 60_000;
let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let config: string;

beforeAll(async () => {
  folder = await temporaryFolder('download');
  config = join(folder.path, 'bot.yaml');
  await writeFile(
    config,
    stringify({ venue: { key_file: null, reading: 'strict', emulator: { seed: 'download' } } }),
  );
});

afterAll(async () => {
  await folder.remove();
});

const download = (args: readonly string[]) =>
  runCommand(
    (program, print, printError) => registerDownloadCommand(program, { print, printError }),
    ['download', '--config', config, ...args],
  );

/** Backtests `directory` with a strategy asking for `count` 1m candles; what it was given. */
async function warmUpIn(directory: string, count: number): Promise<number[]> {
  const seen: number[] = [];
  const peek = defineStrategy({
    name: 'peek',
    params: z.strictObject({}),
    candleHistory: () => [{ marketId: 'BTC-PERP', interval: '1m', count }],
    create: (ctx) => {
      seen.push(ctx.candleHistory('BTC-PERP', '1m').length);
      return NEVER;
    },
  });
  const loaded = await resolveBacktestConfig(marketMakerDocument([directory]));
  await runBacktest({
    config: { ...loaded.config, markets: ['BTC-PERP'] },
    strategies: [{ id: 'peek', name: 'peek', definition: peek, rawParams: {}, params: {} }],
    source: await openReplaySource([directory]),
  });
  return seen;
}

describe('paperbot download', () => {
  it('writes the candles and trades it was served into a verified recording', async () => {
    const directory = join(folder.path, 'two-hours');
    const result = await download([
      '--markets',
      'BTC-PERP,ETH-PERP',
      '--interval',
      '1m',
      '--since',
      '2h',
      '--out',
      directory,
    ]);
    expect(result.code).toBe(0);
    // Two hours of candles fit in a page; 500 trades (the trades endpoint's most) do not.
    expect(result.err).not.toMatch(/serves candles/);
    expect(result.err).toMatch(/BTC-PERP: the service serves trades from .* only/);
    const history = await readCandleHistory(directory);
    const candles = history!.candles['BTC-PERP']!['1m']!;
    // Every closed minute of the two hours: 119, or 120 when the start fell on a minute.
    expect(candles.length).toBeGreaterThanOrEqual(119);
    expect(candles.length).toBeLessThanOrEqual(120);
    const opens = candles.map((candle) => Date.parse(candle.open_time));
    expect(opens.every((open, index) => index === 0 || open - opens[index - 1]! === MINUTE)).toBe(
      true,
    );
    expect(history!.candles['ETH-PERP']!['1m']!.length).toBe(candles.length);

    const verified = await verifyRecording(directory);
    expect(verified.complete).toBe(true);
    expect(isDamaged(verified.damage)).toBe(false);
    const recording = await openRecording(directory);
    expect(recording.manifest.version).toBe(2);
    expect(recording.manifest.counts.by_market['BTC-PERP']!.trade).toBe(500);
    expect(recording.manifest.counts.by_market['ETH-PERP']!.trade).toBe(500);
    const times: number[] = [];
    for await (const batch of readRecording(recording, { cache: 'off' }).batches()) {
      times.push(...batch.map((record) => record.t));
    }
    expect(times).toHaveLength(1000);
    expect(times).toEqual([...times].sort((left, right) => left - right));
    expect(result.out).toMatch(/BTC-PERP: 1\d\d 1m candles, 500 trades/);

    // A backtest of the download starts a strategy with the warm-up it asks for.
    expect(await warmUpIn(directory, 20)).toEqual([20]);
  }, 30_000);

  it('says so when the service no longer serves the start of what was asked', async () => {
    const result = await download([
      '--markets',
      'BTC-PERP',
      '--since',
      '2d',
      '--out',
      join(folder.path, 'two-days'),
    ]);
    expect(result.code).toBe(0);
    expect(result.err).toMatch(/BTC-PERP: the service serves candles from .* only/);
    const history = await readCandleHistory(join(folder.path, 'two-days'));
    expect(history!.candles['BTC-PERP']!['1m']!.length).toBeGreaterThanOrEqual(998);
  }, 30_000);

  it('refuses bad arguments by name before connecting', async () => {
    const interval = await download([
      '--markets',
      'BTC-PERP',
      '--interval',
      '2m',
      '--since',
      '1h',
      '--out',
      join(folder.path, 'x'),
    ]);
    expect(interval.code).toBe(2);
    expect(interval.err).toMatch(/--interval must be one of 1m/);
    const since = await download([
      '--markets',
      'BTC-PERP',
      '--since',
      'yesterday',
      '--out',
      join(folder.path, 'y'),
    ]);
    expect(since.code).toBe(2);
    expect(since.err).toMatch(/--since "yesterday"/);
    const market = await download([
      '--markets',
      'DOGE-PERP',
      '--since',
      '1h',
      '--out',
      join(folder.path, 'z'),
    ]);
    expect(market.code).toBe(2);
    expect(market.err).toMatch(/no market DOGE-PERP/);
  }, 30_000);
});

describe('a fresh paperbot record on the embedded emulator', () => {
  it("keeps the emulator's history in candles.json, and its backtest warms up", async () => {
    const directory = join(folder.path, 'recorded');
    const result = await runCommand(
      (program, print, printError) =>
        registerRecordCommand(program, { print, printError, interactive: false }),
      [
        'record',
        '--config',
        config,
        '--markets',
        'BTC-PERP',
        '--duration',
        '2s',
        '--out',
        directory,
      ],
    );
    expect(result.code).toBe(0);
    const history = await readCandleHistory(directory);
    // Before the seeded past this was 0 candles.
    expect(history!.candles['BTC-PERP']!['1m']!).toHaveLength(500);
    expect(await warmUpIn(directory, 20)).toEqual([20]);
  }, 30_000);
});
