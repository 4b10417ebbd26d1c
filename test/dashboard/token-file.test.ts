/**
 * The dashboard token file is opened as every user-named file is: the bot refuses a FIFO (which
 * used to hang start-up, deaf to SIGINT and SIGTERM) and an oversized file (a 3 GiB sparse file
 * used to take 20 s and 4 GB before failing) at once, naming the path. Real bot processes.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.ts';
import { spawnBot } from '../bot/helpers.ts';
import { marketMakerBot } from './helpers.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-token-file-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** The bot's exit, or SIGTERM after `limitMs` (then the result says it had to be stopped). */
async function exitOf(bot: ReturnType<typeof spawnBot>, limitMs: number) {
  let stopped = false;
  const timer = systemClock.setTimeout(() => {
    stopped = true;
    bot.process.kill('SIGTERM');
  }, limitMs);
  const code = await bot.exited;
  systemClock.clearTimeout(timer);
  return { code, stopped };
}

function botWithTokenFile(name: string, tokenFile: string): string {
  const folder = join(directory, name);
  const path = join(directory, `${name}.yaml`);
  writeFileSync(
    path,
    JSON.stringify(marketMakerBot(folder, { dashboard: { token_file: tokenFile } })),
  );
  return path;
}

describe('the dashboard token file', () => {
  it('a FIFO is refused at once naming the path; the bot never hangs on it', async () => {
    const fifo = join(directory, 'token.fifo');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const bot = spawnBot(botWithTokenFile('fifo', fifo));
    const { code, stopped } = await exitOf(bot, 30_000);
    expect(stopped).toBe(false);
    expect(code).not.toBe(0);
    expect(bot.stderr() + JSON.stringify(bot.records)).toContain(
      `the dashboard token file ${fifo} is not a regular file`,
    );
  });

  it('an oversized (sparse 3 GiB) file is refused at once naming the path', async () => {
    const path = join(directory, 'token.big');
    writeFileSync(path, '', { mode: 0o600 });
    truncateSync(path, 3 * 1024 ** 3);
    const bot = spawnBot(botWithTokenFile('big', path));
    const { code, stopped } = await exitOf(bot, 30_000);
    expect(stopped).toBe(false);
    expect(code).not.toBe(0);
    expect(bot.stderr() + JSON.stringify(bot.records)).toContain(
      `the dashboard token file ${path} is larger than 1024 bytes`,
    );
  });
});
