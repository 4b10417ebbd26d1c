/**
 * `paperbot run` as a real process on its embedded emulator, the way `npm start` runs it:
 * it quotes, and on SIGINT it cancels everything, disarms the dead-man switch and exits 0.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT, spawnBot, writeBotConfig } from './helpers.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-run-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('paperbot run (child process, embedded emulator)', () => {
  it('starts quoting with the example market maker and shuts down cleanly on SIGINT', async () => {
    const configPath = writeBotConfig(directory, {
      venue: { key_file: null, emulator: { seed: 'run-process' } },
      strategies_dir: join(REPOSITORY_ROOT, 'strategies'),
      strategies: [{ id: 'mm', name: 'market-maker', params: { markets: ['BTC-PERP'] } }],
      risk: { kill_switch: { file: join(directory, 'kill'), signal: null } },
      journal: { path: join(directory, 'journal.sqlite') },
      metrics: { port: 0 },
      market_data: { markets: ['BTC-PERP'] },
    });
    const child = spawnBot(configPath);
    const started = await child.waitFor((record) => record.event === 'bot.started', 'the start');
    expect(started).toMatchObject({ embedded_emulator: true, markets: ['BTC-PERP'] });
    expect(String(started.metrics)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    let quotes = 0;
    await child.waitFor(
      (record) => record.msg === 'intent submitted' && record.kind === 'place' && ++quotes >= 2,
      'a bid and an ask',
    );
    child.process.kill('SIGINT');
    expect(await child.exited).toBe(0);
    expect(child.records.find((record) => record.event === 'bot.shutdown')).toMatchObject({
      cancelled: true,
      disarmed: true,
    });
    expect(child.records.at(-1)).toMatchObject({ event: 'bot.stopped', reason: 'SIGINT' });
    expect(child.stderr()).toBe('');
  }, 20_000);
});
