/**
 * A fresh start on the embedded emulator, the way `npm start` runs it: a strategy asking for 20
 * closed one-minute candles starts with 20, from the emulator's seeded past (before it, the
 * emulator had no history and the strategy started with 0).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURE_STRATEGIES, spawnBot, writeBotConfig } from './helpers.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-warmup-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('candle warm-up on a fresh embedded emulator (child process)', () => {
  it('gives a strategy asking for 20 one-minute candles 20 of them', async () => {
    const configPath = writeBotConfig(directory, {
      venue: { key_file: null, emulator: { seed: 'warmup-process' } },
      strategies_dir: FIXTURE_STRATEGIES,
      strategies: [{ id: 'warm', name: 'warmup-counter', params: { count: 20 } }],
      risk: { kill_switch: { file: join(directory, 'kill'), signal: null } },
      journal: { path: join(directory, 'journal.sqlite') },
      metrics: { port: 0 },
      market_data: { markets: ['BTC-PERP'] },
    });
    const child = spawnBot(configPath);
    const warmed = await child.waitFor(
      (record) => record.msg === 'warm-up candles',
      'the strategy reporting its warm-up',
    );
    expect(warmed.loaded).toBe(20);
    // The newest is a closed minute before the start: at most two minutes old.
    const started = await child.waitFor((record) => record.event === 'bot.started', 'the start');
    const newest = Date.parse(String(warmed.newest_open_time));
    expect(Date.parse(String(started.time))).toBeGreaterThanOrEqual(newest + 60_000);
    expect(child.records.some((record) => record.msg === 'less candle history than asked')).toBe(
      false,
    );
    child.process.kill('SIGINT');
    expect(await child.exited).toBe(0);
  }, 30_000);
});
