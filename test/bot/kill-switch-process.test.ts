/**
 * One kill switch, against the real bot process: `paperbot kill`, `--reduce-only` and `--clear`
 * (other processes), the kill signal and the dashboard's controls move the same switch, a clear
 * resumes the running bot within its poll interval (no restart), and `/status`, `paperbot
 * status` and `/health` say what the gate does. A config with a typo in `risk:` still halts.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT, spawnBot, writeBotConfig } from './helpers.ts';

const run = promisify(execFile);
const directory = mkdtempSync(join(tmpdir(), 'paperbot-kill-process-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const POLL_MS = 100;

async function paperbot(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['bin/paperbot.js', ...args], {
    cwd: REPOSITORY_ROOT,
    timeout: 20_000,
  });
}

interface StatusDocument {
  readonly tradingState: string;
  readonly tradingReason: string | null;
  readonly mayTrade: boolean;
}

async function readStatus(base: string): Promise<StatusDocument> {
  const response = await fetch(`${base}/status`);
  return (await response.json()) as StatusDocument;
}

/** Polls `/status` (bounded: 100 tries, 100 ms apart) until the state is `state`. */
async function untilState(base: string, state: string): Promise<StatusDocument> {
  let last: StatusDocument | null = null;
  for (let attempt = 0; attempt < 100; attempt++) {
    last = await readStatus(base);
    if (last.tradingState === state) return last;
    await new Promise((resolve) => {
      globalThis.setTimeout(resolve, POLL_MS);
    });
  }
  throw new Error(`the bot never reached ${state}; last status ${JSON.stringify(last)}`);
}

describe('the kill switch of a running bot', () => {
  it('halts, reduces and clears from the CLI, the signal and the dashboard alike, with no restart', async () => {
    const killFile = join(directory, 'state', 'paperbot.kill');
    const configPath = writeBotConfig(directory, {
      venue: { key_file: null, emulator: { seed: 'kill-switch-process' } },
      strategies_dir: join(REPOSITORY_ROOT, 'strategies'),
      strategies: [{ id: 'mm', name: 'market-maker', params: { markets: ['BTC-PERP'] } }],
      risk: { kill_switch: { file: killFile, poll_ms: POLL_MS, signal: 'SIGUSR2' } },
      journal: { path: join(directory, 'journal.sqlite') },
      metrics: { port: 0 },
      market_data: { markets: ['BTC-PERP'] },
    });
    const child = spawnBot(configPath);
    try {
      const started = await child.waitFor((record) => record.event === 'bot.started', 'the start');
      const base = String(started.status).replace(/\/status$/, '');
      await child.waitFor((record) => record.msg === 'trading permitted', 'the permit');
      expect(await readStatus(base)).toMatchObject({ tradingState: 'ACTIVE', mayTrade: true });

      // `paperbot kill` from another process: HALTED, and nothing says "may trade".
      const killed = await paperbot('kill', '--config', configPath, '--reason', 'too fast');
      expect(killed.stdout).toContain(`wrote the kill file ${killFile}`);
      expect(await untilState(base, 'HALTED')).toMatchObject({
        tradingReason: `kill file ${killFile}: too fast`,
        mayTrade: false,
      });
      const statusText = (await paperbot('status', '--url', base)).stdout;
      expect(statusText).toMatch(/Trading: +HALTED \(kill file .*: too fast\); may trade: no/);
      const health = (await (await fetch(`${base}/health`)).json()) as Record<string, unknown>;
      expect(health).toMatchObject({
        status: 'degraded',
        trading_state: 'HALTED',
        may_trade: false,
      });

      // `--clear` resumes the running bot within its poll interval.
      const cleared = await paperbot('kill', '--config', configPath, '--clear');
      expect(cleared.stdout).toContain(`removed the kill file ${killFile}`);
      expect(await untilState(base, 'ACTIVE')).toMatchObject({ mayTrade: true });
      expect((await paperbot('status', '--url', base)).stdout).toMatch(
        /Trading: +ACTIVE; may trade: yes/,
      );

      // Reduce-only from the CLI.
      await paperbot('kill', '--config', configPath, '--reduce-only', '--reason', 'flatten');
      expect(await untilState(base, 'REDUCING')).toMatchObject({
        tradingReason: `kill file ${killFile}: flatten`,
        mayTrade: false,
      });
      await paperbot('kill', '--config', configPath, '--clear');
      await untilState(base, 'ACTIVE');

      // The signal halts through the same file, so the CLI clears it.
      child.process.kill('SIGUSR2');
      expect(await untilState(base, 'HALTED')).toMatchObject({
        tradingReason: `kill file ${killFile}: signal SIGUSR2`,
      });
      expect(readFileSync(killFile, 'utf8')).toBe('signal SIGUSR2\n');
      await paperbot('kill', '--config', configPath, '--clear');
      await untilState(base, 'ACTIVE');

      // The dashboard's Halt writes the same file (the CLI clears it), its Clear removes it.
      const page = await (await fetch(`${base}/`)).text();
      const token = /name="paperbot-token" content="([^"]+)"/.exec(page)?.[1] ?? '';
      expect(token).not.toBe('');
      const control = async (action: string) => {
        const response = await fetch(`${base}/dashboard/control/${action}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-paperbot-token': token },
          body: JSON.stringify({ confirm: action }),
        });
        expect(response.status).toBe(200);
      };
      await control('halt');
      expect(readFileSync(killFile, 'utf8')).toBe('dashboard\n');
      expect(await readStatus(base)).toMatchObject({ tradingState: 'HALTED', mayTrade: false });
      await paperbot('kill', '--config', configPath, '--clear');
      await untilState(base, 'ACTIVE');
      await control('reduce');
      expect(readFileSync(killFile, 'utf8')).toBe('reduce-only: dashboard\n');
      expect(await readStatus(base)).toMatchObject({ tradingState: 'REDUCING' });
      await control('clear');
      expect(existsSync(killFile)).toBe(false);
      expect(await readStatus(base)).toMatchObject({ tradingState: 'ACTIVE', mayTrade: true });

      // A typo in `risk:` does not stand in the way of a halt: the file it names is written.
      const broken = join(directory, 'broken.yaml');
      writeFileSync(
        broken,
        `risk:\n  max_order_notionall: 5\n  kill_switch: { file: ${JSON.stringify(killFile)} }\n`,
      );
      const typo = await paperbot('kill', '--config', broken, '--reason', 'typo or not');
      expect(typo.stderr).toContain('max_order_notionall');
      expect(typo.stderr).toContain(`kill file ${killFile}`);
      expect(await untilState(base, 'HALTED')).toMatchObject({
        tradingReason: `kill file ${killFile}: typo or not`,
      });
      await paperbot('kill', '--config', configPath, '--clear');
      await untilState(base, 'ACTIVE');
    } finally {
      child.process.kill('SIGINT');
      expect(await child.exited).toBe(0);
    }
    expect(child.stderr()).toBe('');
  }, 90_000);
});
