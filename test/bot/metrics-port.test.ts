/**
 * `paperbot run --metrics-port N` replaces the config's port (and turns the endpoint on), `0`
 * takes any free port, printed in the start line, and `paperbot status --config` finds the bot
 * there through the address file beside its journal, removed at shutdown.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { addressFileOf } from '../../src/cli/bot/address-file.ts';
import { REPOSITORY_ROOT, spawnBot, writeBotConfig } from './helpers.ts';

const run = promisify(execFile);
const directory = mkdtempSync(join(tmpdir(), 'paperbot-metrics-port-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('paperbot run --metrics-port', () => {
  it('0 takes a free port, printed at start, where `paperbot status --config` finds the bot', async () => {
    const journal = join(directory, 'journal.sqlite');
    const configPath = writeBotConfig(directory, {
      venue: { key_file: null, emulator: { seed: 'metrics-port' } },
      strategies_dir: join(REPOSITORY_ROOT, 'strategies'),
      strategies: [{ id: 'mm', name: 'market-maker', params: { markets: ['BTC-PERP'] } }],
      risk: { kill_switch: { file: join(directory, 'kill'), signal: null } },
      journal: { path: journal },
      // Off in the config: the flag turns the endpoint on.
      metrics: { enabled: false, port: 9464 },
      market_data: { markets: ['BTC-PERP'] },
    });
    const child = spawnBot(configPath, ['--metrics-port', '0']);
    try {
      const started = await child.waitFor((record) => record.event === 'bot.started', 'the start');
      const url = /^(http:\/\/127\.0\.0\.1:(\d+))\/metrics$/.exec(String(started.metrics));
      expect(url).not.toBeNull();
      expect(Number(url![2])).not.toBe(9464);
      expect(Number(url![2])).toBeGreaterThan(0);
      expect(existsSync(addressFileOf(journal))).toBe(true);
      const status = await run(
        process.execPath,
        ['bin/paperbot.js', 'status', '--config', configPath, '--json'],
        { cwd: REPOSITORY_ROOT, timeout: 20_000 },
      );
      expect(JSON.parse(status.stdout)).toMatchObject({ bot: { pid: child.process.pid } });
    } finally {
      child.process.kill('SIGINT');
      expect(await child.exited).toBe(0);
    }
    expect(existsSync(addressFileOf(journal))).toBe(false);
    // With the bot gone, status says so and names the way out.
    await expect(
      run(process.execPath, ['bin/paperbot.js', 'status', '--config', configPath], {
        cwd: REPOSITORY_ROOT,
        timeout: 20_000,
      }),
    ).rejects.toMatchObject({ stderr: expect.stringContaining('metrics.enabled: false') });
  }, 60_000);

  it('refuses a port that is not one, naming the flag', async () => {
    await expect(
      run(process.execPath, ['bin/paperbot.js', 'run', '--metrics-port', '70000'], {
        cwd: REPOSITORY_ROOT,
        timeout: 20_000,
      }),
    ).rejects.toMatchObject({
      stderr: expect.stringMatching(/--metrics-port.*must be a port from 0 to 65535/),
    });
  }, 30_000);
});
