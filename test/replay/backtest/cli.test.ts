import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerBacktestCommand } from '../../../src/cli/commands/backtest.ts';
import type { BacktestReport } from '../../../src/replay/report/report.ts';
import { marketMakerDocument, recordSession, runCommand, temporaryFolder } from './helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;

beforeAll(async () => {
  folder = await temporaryFolder('cli');
  session = join(folder.path, 'session');
  await recordSession(session, { durationMs: 90_000 });
});

afterAll(async () => {
  await folder.remove();
});

function backtest(args: readonly string[]) {
  return runCommand(
    (program, print, printError) =>
      registerBacktestCommand(program, { print, printError, interactive: false }),
    ['backtest', ...args],
  );
}

describe('paperbot backtest', () => {
  it('prints the JSON report and writes the HTML page', async () => {
    const config = join(folder.path, 'backtest.yaml');
    const html = join(folder.path, 'report.html');
    await writeFile(config, stringify(marketMakerDocument(['does-not-exist'])));
    const result = await backtest([
      '--config',
      config,
      '--data',
      session,
      '--json',
      '--report',
      html,
    ]);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.out) as BacktestReport;
    expect(report.schema).toBe('paperbot.backtest-report');
    expect(report.metadata.data).toEqual([session]);
    expect(report.summary.fills).toBeGreaterThan(0);
    const page = await readFile(html, 'utf8');
    expect(page.startsWith('<!DOCTYPE html>') || page.startsWith('<!doctype html>')).toBe(true);
    expect(page).toContain(report.summary.net_pnl);
    expect(page).not.toMatch(/<script[^>]+src=/);
  });

  it('prints a summary on a terminal, with why intents did not trade', async () => {
    const config = join(folder.path, 'summary.yaml');
    await writeFile(config, stringify(marketMakerDocument([session])));
    const result = await backtest(['--config', config, '--seed', '5']);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^backtest\s*\n-+/);
    expect(result.out).toMatch(/net PnL\s+-?\d/);
    expect(result.out).toMatch(/intents \d+: accepted \d+, denied \d+, rejected \d+, unknown 0/);
  });

  it('refuses a broken config before reading any data, with exit code 2', async () => {
    const config = join(folder.path, 'broken.yaml');
    await writeFile(
      config,
      stringify({ ...marketMakerDocument([session]), venue: { slippage: 1 } }),
    );
    const result = await backtest(['--config', config]);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/venue\.slippage: unknown key/);
    expect(result.out).toBe('');
  });

  it('runs the shipped config on the shipped sample data', { timeout: 180_000 }, async () => {
    // No cache: the test leaves the repository's data folder as it found it.
    const result = await backtest(['--config', 'config/backtest.yaml', '--json', '--cache', 'off']);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.out) as BacktestReport;
    expect(report.range.duration_ms).toBeGreaterThanOrEqual(3_600_000);
    expect(report.summary.fills).toBeGreaterThan(0);
    // SOL-PERP is quoted but never traded: its resting quotes never fill.
    expect(report.trades.some((trade) => trade.market_id === 'SOL-PERP')).toBe(false);
  });
});
