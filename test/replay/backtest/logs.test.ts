/**
 * A backtest logs what matters to a backtest: at level info, the sample session, a fresh
 * recording (`paperbot record` against the embedded emulator) and imported CSV data replay
 * with no WARN or ERROR line, exits left waiting at the end included. Real processes, JSON logs.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { writeBookUpdates, writeTrades } from '../import/fixtures.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../../..');
const directory = mkdtempSync(join(tmpdir(), 'paperbot-backtest-logs-'));
const strategiesDir = join(directory, 'strategies');

const LEVELS: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
};

beforeAll(() => {
  // The example market maker and a test plugin that leaves an emulated take-profit waiting.
  mkdirSync(strategiesDir);
  symlinkSync(join(ROOT, 'strategies/market-maker'), join(strategiesDir, 'market-maker'));
  symlinkSync(
    join(ROOT, 'test/bot/fixtures/strategies/exit-guard'),
    join(strategiesDir, 'exit-guard'),
  );
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function paperbot(...args: string[]) {
  return run(process.execPath, ['bin/paperbot.js', ...args], {
    cwd: ROOT,
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Runs a backtest at level info with JSON logs and returns every log line, parsed. */
async function backtestLogs(
  name: string,
  data: string,
  strategies: readonly Record<string, unknown>[],
): Promise<Record<string, unknown>[]> {
  const config = join(directory, `${name}.yaml`);
  writeFileSync(
    config,
    stringify({
      data: [data],
      seed: 1,
      strategies_dir: strategiesDir,
      strategies,
      logging: { level: 'info' },
    }),
  );
  const { stdout, stderr } = await paperbot('backtest', '--config', config, '--log-format', 'json');
  expect(stdout).toMatch(/^intents \d+ = \d+ from strategies/m);
  expect(stdout).toMatch(/^answered: accepted \d+/m);
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  // Every line is a JSON log record: no stray text, no runtime warnings.
  const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(records.length).toBeGreaterThan(0);
  return records;
}

function levelOf(record: Record<string, unknown>): number {
  return typeof record.level === 'number' ? record.level : (LEVELS[String(record.level)] ?? 100);
}

function loudLines(records: readonly Record<string, unknown>[]): unknown[] {
  return records
    .filter((record) => levelOf(record) >= 40)
    .map((record) => `${String(record.level)} ${String(record.msg)} ${JSON.stringify(record)}`);
}

const MARKET_MAKER = {
  id: 'mm',
  name: 'market-maker',
  params: { markets: ['BTC-PERP'], halfSpreadTicks: 60, refreshTicks: 25 },
};

describe('backtest logs', () => {
  it('the sample session: no WARN or ERROR, the periodic reconciliations at debug', async () => {
    const records = await backtestLogs('sample', join(ROOT, 'backtest-data/emulator-seed42-1h'), [
      MARKET_MAKER,
      { id: 'guard', name: 'exit-guard', params: { marketId: 'ETH-PERP' } },
    ]);
    expect(loudLines(records)).toEqual([]);
    expect(records.some((record) => record.msg === 'emulated exit added')).toBe(true);
    // One clean reconciliation at start; the one a minute for an hour of data stays at debug.
    const reconciliations = records.filter(
      (record) => record.msg === 'reconciliation found no differences',
    );
    expect(reconciliations.map((record) => record.reason)).toEqual(['start']);
  }, 90_000);

  it('a fresh recording of the embedded emulator: no WARN or ERROR', async () => {
    const botConfig = join(directory, 'record-bot.yaml');
    writeFileSync(
      botConfig,
      stringify({
        venue: { key_file: null, emulator: { seed: 'backtest-logs' } },
        market_data: { markets: ['BTC-PERP', 'ETH-PERP'] },
      }),
    );
    const session = join(directory, 'recorded');
    await paperbot('record', '--config', botConfig, '--duration', '8s', '--out', session);
    const records = await backtestLogs('recorded', session, [
      MARKET_MAKER,
      { id: 'guard', name: 'exit-guard', params: { marketId: 'ETH-PERP' } },
    ]);
    expect(loudLines(records)).toEqual([]);
  }, 90_000);

  it('imported CSV data: no WARN or ERROR', async () => {
    const trades = join(directory, 'trades.csv');
    const book = join(directory, 'book.csv');
    await writeTrades(trades, 600);
    await writeBookUpdates(book, 600);
    const session = join(directory, 'imported');
    await paperbot(
      'import',
      '--out',
      session,
      '--market',
      'BTC-PERP',
      '--tick',
      '0.1',
      '--step',
      '0.001',
      '--min-qty',
      '0.001',
      '--trades',
      trades,
      '--trade-columns',
      'timestamp=time,price=px,quantity=qty,side=side',
      '--book',
      book,
      '--book-columns',
      'timestamp=timestamp,side=side,price=price,quantity=quantity',
    );
    const records = await backtestLogs('imported', session, [
      // Quotes replaced every 1.5 (not 0.1) price units: within the default order rate limits.
      {
        id: 'mm',
        name: 'market-maker',
        params: { markets: ['BTC-PERP'], halfSpreadTicks: 30, refreshTicks: 15 },
      },
      { id: 'guard', name: 'exit-guard', params: { marketId: 'BTC-PERP' } },
    ]);
    expect(loudLines(records)).toEqual([]);
  }, 90_000);
});
