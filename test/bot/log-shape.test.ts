import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { Command } from 'commander';
import { resolveBotConfig } from '../../src/cli/bot/config.ts';
import { registerRunCommand } from '../../src/cli/commands/run.ts';
import { PaperbotError } from '../../src/core/errors.ts';
import { createBotLogger } from '../../src/cli/bot/logging.ts';
import { createLogger, intentLogFields, isPrettyFormat } from '../../src/cli/logging.ts';
import { VirtualClock } from '../../src/core/clock.ts';
import { marketMakerDocument, recordSession, temporaryFolder } from '../replay/backtest/helpers.ts';
import { LineCollector, REPOSITORY_ROOT } from './helpers.ts';

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The keys every command's lines share, and what they must not carry. */
function expectShape(record: Record<string, unknown>, name?: string): void {
  expect(typeof record.level).toBe('string');
  expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(record.level);
  expect(record.time).toMatch(RFC3339);
  // A strategy's lines carry its own name (`market-maker`), as in the bot.
  if (name === undefined) expect(typeof record.name).toBe('string');
  else expect(record.name).toBe(name);
  expect(typeof record.pid).toBe('number');
  expect(typeof record.msg).toBe('string');
  expect(record).not.toHaveProperty('hostname');
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

interface Finished {
  readonly code: number | string;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node bin/paperbot.js <args>`; `until` may end it (SIGTERM) once stdout shows something. */
function paperbot(args: readonly string[], until?: RegExp): Promise<Finished> {
  const child = spawn(process.execPath, ['bin/paperbot.js', ...args], {
    cwd: REPOSITORY_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk;
    if (until !== undefined && until.test(stdout)) child.kill('SIGTERM');
  });
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) => {
    child.once('exit', (code, signal) =>
      resolve({ code: code ?? signal ?? 'unknown', stdout, stderr }),
    );
  });
}

describe('one log shape for every command', () => {
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;
  beforeAll(async () => {
    folder = await temporaryFolder('log-shape');
  });
  afterAll(async () => {
    await folder.remove();
  });

  it('the bot: level labels, RFC 3339 time from the clock, pid, no hostname', () => {
    const lines = new LineCollector();
    const clock = new VirtualClock(Date.UTC(2030, 0, 2, 3, 4, 5));
    const logger = createBotLogger({ level: 'info', clock, destination: lines });
    logger.info({ event: 'x' }, 'hello');
    const [record] = lines.records();
    expectShape(record!, 'paperbot');
    expect(record!.time).toBe('2030-01-02T03:04:05.000Z');
  });

  it('the emulator, piped: JSON lines of the same shape on stderr', async () => {
    const result = await paperbot(
      ['emulator', '--host', '127.0.0.1', '--port', '0'],
      /listening on/,
    );
    expect(result.stdout).toMatch(/paperbot emulator listening on http:\/\/127\.0\.0\.1:\d+/);
    const records = jsonLines(result.stderr);
    expect(records.map((record) => record.msg)).toEqual(['emulator started', 'emulator stopped']);
    for (const record of records) expectShape(record, 'paperbot-emulator');
    expect(records[0]!.level).toBe('info');
  }, 30_000);

  it('the emulator with --log-format pretty: readable lines, no JSON', async () => {
    const result = await paperbot(
      ['emulator', '--host', '127.0.0.1', '--port', '0', '--log-format', 'pretty'],
      /listening on/,
    );
    expect(result.stderr).toMatch(/INFO.*paperbot-emulator.*emulator started/);
    expect(result.stderr.trimStart().startsWith('{')).toBe(false);
  }, 30_000);

  it('the backtest, piped: JSON lines of the same shape on stderr, the report alone on stdout', async () => {
    const session = join(folder.path, 'session');
    await recordSession(session, { durationMs: 20_000, marketIds: ['BTC-PERP'] });
    const config = join(folder.path, 'backtest.yaml');
    await writeFile(
      config,
      stringify({ ...marketMakerDocument([session]), logging: { level: 'info' } }),
    );
    const result = await paperbot(['backtest', '--config', config, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toHaveProperty('summary');
    const records = jsonLines(result.stderr);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) expectShape(record);
    expect(records.some((record) => record.name === 'paperbot-backtest')).toBe(true);
  }, 60_000);
});

describe('log formats', () => {
  const clock = new VirtualClock(Date.UTC(2030, 0, 2, 3, 4, 5));

  it('auto is readable on a terminal and JSON otherwise', () => {
    expect(isPrettyFormat('auto', true)).toBe(true);
    expect(isPrettyFormat('auto', false)).toBe(false);
    expect(isPrettyFormat('json', true)).toBe(false);
    expect(isPrettyFormat('pretty', false)).toBe(true);
  });

  it('pretty lines carry the message and the fields, with secrets redacted first', () => {
    let text = '';
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString('utf8');
        done();
      },
    });
    const logger = createLogger({ level: 'info', clock, format: 'pretty', destination });
    const seed = 'c2VjcmV0LXNlZWQtYnl0ZXMtdGhhdC1tdXN0LW5vdC1sZWFr';
    logger.info(
      { market: 'BTC-PERP', key: { seed }, headers: { authorization: 'Bearer abc' } },
      'intent submitted',
    );
    expect(text).toContain('intent submitted');
    expect(text).toContain('BTC-PERP');
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(seed);
    expect(text).not.toContain('Bearer abc');
    expect(text).toContain('2030-01-02');
    expect(text.trimStart().startsWith('{')).toBe(false);
  });

  it('JSON when asked, even on a terminal', () => {
    const lines = new LineCollector();
    const logger = createLogger({
      level: 'info',
      clock,
      format: 'json',
      terminal: true,
      destination: lines,
    });
    logger.info('plain');
    expectShape(lines.records()[0]!, 'paperbot');
  });
});

describe('intent lines', () => {
  it('name the market, side, type, price, quantity and tag of a placement', () => {
    expect(
      intentLogFields({
        kind: 'place',
        marketId: 'BTC-PERP',
        side: 'buy',
        type: 'limit',
        price: '64000.5',
        quantity: '0.002',
        tag: 'mm-bid',
      }),
    ).toEqual({
      market: 'BTC-PERP',
      side: 'buy',
      type: 'limit',
      price: '64000.5',
      quantity: '0.002',
      tag: 'mm-bid',
    });
    expect(intentLogFields({ kind: 'amend', clientOrderId: 'c1', price: '1.5' })).toEqual({
      price: '1.5',
    });
    expect(intentLogFields({ kind: 'cancel_all', marketId: 'ETH-PERP' })).toEqual({
      market: 'ETH-PERP',
    });
  });
});

describe('logging.format in the bot config', () => {
  const strategies = [{ id: 'mm', name: 'market-maker', params: { markets: ['BTC-PERP'] } }];

  it('defaults to auto and reads the older logging.pretty as a format', async () => {
    const formatOf = async (logging: Record<string, unknown>) =>
      (await resolveBotConfig({ strategies, logging })).config.logging;
    expect(await formatOf({})).toMatchObject({ level: 'info', format: 'auto' });
    expect(await formatOf({ format: 'json' })).toMatchObject({ level: 'info', format: 'json' });
    expect(await formatOf({ pretty: true })).toMatchObject({ level: 'info', format: 'pretty' });
    expect(await formatOf({ pretty: false })).toMatchObject({ level: 'info', format: 'json' });
  });

  it('refuses both names at once, and an unknown format with a suggestion', async () => {
    await expect(
      resolveBotConfig({ strategies, logging: { format: 'pretty', pretty: true } }),
    ).rejects.toThrow(
      'logging.pretty: set format or pretty, not both (pretty is the older name of format)',
    );
    await expect(resolveBotConfig({ strategies, logging: { format: 'jsn' } })).rejects.toThrow(
      "logging.format: must be one of 'auto', 'pretty', 'json'; did you mean 'json'?",
    );
  });
});

describe('paperbot run --log-format', () => {
  it('replaces the config format for the bot it starts', async () => {
    const loaded = await resolveBotConfig({
      strategies: [{ id: 'mm', name: 'market-maker', params: { markets: ['BTC-PERP'] } }],
      logging: { format: 'pretty' },
    });
    const formats: string[] = [];
    const run = new Command('paperbot').exitOverride();
    registerRunCommand(run, {
      printError: () => {},
      load: () => Promise.resolve(loaded),
      start: (options) => {
        formats.push(options.loaded.config.logging.format);
        return Promise.reject(new PaperbotError('BOT_START_ABORTED', 'test: not started'));
      },
      onSignal: () => () => {},
      exit: () => {},
    });
    await run.parseAsync(['node', 'paperbot', 'run', '--log-format', 'json']);
    await run.parseAsync(['node', 'paperbot', 'run']);
    expect(formats).toEqual(['json', 'pretty']);
  });
});

describe('readable lines', () => {
  it('the bot on a terminal: one line per event within 120 columns, no stray lines', async () => {
    const folder = await temporaryFolder('pretty-bot');
    try {
      const config = join(folder.path, 'bot.yaml');
      await writeFile(
        config,
        stringify({
          venue: { key_file: null, emulator: { seed: 'pretty-lines' } },
          strategies_dir: join(REPOSITORY_ROOT, 'strategies'),
          strategies: [{ id: 'mm', name: 'market-maker', params: { markets: ['BTC-PERP'] } }],
          risk: { kill_switch: { file: join(folder.path, 'kill'), signal: null } },
          journal: { path: join(folder.path, 'journal.sqlite') },
          metrics: { port: 0 },
          market_data: { markets: ['BTC-PERP'] },
        }),
      );
      // Ended (SIGTERM) once four placements are out.
      const result = await paperbot(
        ['run', '--config', config, '--log-format', 'pretty'],
        /(intent submitted mm place[^\n]*\n[\s\S]*){4}/,
      );
      const lines = result.stdout.split('\n').filter((line) => line !== '');
      expect(lines.length).toBeGreaterThan(10);
      for (const line of lines) {
        // One event a line: a timestamp first, never a continuation (`    error: null`).
        expect(line).toMatch(
          /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) /,
        );
        expect([...line].length).toBeLessThanOrEqual(120);
      }
      expect(result.stdout).not.toMatch(/error: null/);
      // An intent line shows its order before anything is cut.
      expect(lines.find((line) => line.includes('intent submitted mm place'))).toMatch(
        /intent submitted mm place (buy|sell) limit 0\.001 BTC-PERP @ \d+(\.\d+)? #mm-(bid|ask)/,
      );
      expect(result.stderr).toBe('');
    } finally {
      await folder.remove();
    }
  }, 60_000);
});
