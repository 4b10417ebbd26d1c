import { readdir, readFile, writeFile } from 'node:fs/promises';
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
    // stdout is one JSON document; where the page went is said on stderr.
    expect(result.err).toBe(`report written to ${html}\n`);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.out) as BacktestReport;
    expect(report.schema).toBe('paperbot.backtest-report');
    expect(report.metadata.data).toEqual([session]);
    expect(report.summary.fills).toBeGreaterThan(0);
    // How the run went, last: counts that repeat, CPU time and peak RSS that do not.
    const { run, ...rest } = JSON.parse(result.out) as { run: Record<string, number> };
    expect(Object.keys(JSON.parse(result.out) as object).at(-1)).toBe('run');
    expect(Object.keys(run)).toEqual(['events', 'intents', 'cpu_ms', 'max_rss_mb']);
    expect(run.events).toBeGreaterThan(100);
    expect(run.intents).toBeGreaterThan(0);
    expect(run.intents).toBeLessThan(run.events!);
    expect(run.cpu_ms).toBeGreaterThan(0);
    expect(run.max_rss_mb).toBeGreaterThan(10);
    expect(Object.keys(rest).at(-1)).toBe('charts');
    const page = await readFile(html, 'utf8');
    expect(page.startsWith('<!DOCTYPE html>') || page.startsWith('<!doctype html>')).toBe(true);
    expect(page).toContain(report.summary.net_pnl);
    expect(page).not.toMatch(/<script[^>]+src=/);
    // The JSON lists every fill of a short run (the first and last 1,000 of a long one), with
    // the strategy that placed it.
    expect(report.fills).toHaveLength(report.summary.fills);
    expect(report.fills.every((fill) => fill.strategy_id === 'mm-btc')).toBe(true);
    expect(report.strategies.map((strategy) => [strategy.strategy_id, strategy.fills])).toEqual([
      ['mm-btc', report.summary.fills],
    ]);
  });

  it('writes trades, fills and equity as CSV and says where', async () => {
    const config = join(folder.path, 'csv.yaml');
    const csv = join(folder.path, 'csv-out');
    const html = join(folder.path, 'nested', 'page.html');
    await writeFile(config, stringify(marketMakerDocument([session])));
    const result = await backtest(['--config', config, '--csv', csv, '--report', html]);
    expect(result.code).toBe(0);
    expect(result.out).toContain(`report written to ${html}\n`);
    expect(result.out).toContain(
      `CSV written to ${join(csv, 'trades.csv')}, ${join(csv, 'fills.csv')}, ${join(csv, 'equity.csv')}\n`,
    );
    expect((await readdir(csv)).sort()).toEqual(['equity.csv', 'fills.csv', 'trades.csv']);
    const fills = (await readFile(join(csv, 'fills.csv'), 'utf8')).trimEnd().split('\n');
    expect(fills[0]).toBe(
      'occurred_at,fill_id,order_id,strategy_id,market_id,side,quantity,price,fee,is_maker',
    );
    const fillCount = Number(/Fills\s+(\d+)/.exec(result.out)![1]);
    expect(fills).toHaveLength(fillCount + 1);
    expect(fills.slice(1).every((line) => line.split(',')[3] === 'mm-btc')).toBe(true);
    const equity = (await readFile(join(csv, 'equity.csv'), 'utf8')).trimEnd().split('\n');
    expect(equity[0]).toBe('t,equity,drawdown');
    expect(equity.length).toBeGreaterThan(80);
  });

  it('refuses a strategy whose market the data lacks before running, unless told to skip it', async () => {
    const config = join(folder.path, 'missing.yaml');
    const document = marketMakerDocument([session]);
    await writeFile(
      config,
      stringify({
        ...document,
        strategies: [
          ...(document.strategies as unknown[]),
          { id: 'mm-doge', name: 'market-maker', params: { markets: ['DOGE-PERP'] } },
        ],
      }),
    );
    const refused = await backtest(['--config', config]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/the data has no DOGE-PERP \(strategy mm-doge\)/);
    expect(refused.err).toContain('--skip-missing-markets');
    expect(refused.out).toBe('');

    const skipped = await backtest(['--config', config, '--skip-missing-markets', '--json']);
    expect(skipped.code).toBe(0);
    const report = JSON.parse(skipped.out) as BacktestReport;
    expect(
      report.strategies.map((strategy) => [
        strategy.strategy_id,
        strategy.status,
        strategy.missing_markets,
      ]),
    ).toEqual([
      ['mm-btc', 'ran', []],
      ['mm-doge', 'skipped', ['DOGE-PERP']],
    ]);
    expect(report.summary.fills).toBeGreaterThan(0);
    const summary = await backtest(['--config', config, '--skip-missing-markets']);
    expect(summary.out).toContain(
      'Strategy mm-doge (market-maker) was skipped: the data has no DOGE-PERP.',
    );
  });

  it('prints a summary on a terminal, with why intents did not trade', async () => {
    const config = join(folder.path, 'summary.yaml');
    await writeFile(config, stringify(marketMakerDocument([session])));
    const result = await backtest(['--config', config, '--seed', '5']);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^backtest\s*\n-+/);
    expect(result.out).toMatch(/Net PnL\s+-?\d/);
    // Ratios as percentages, Sharpe per stated period and not annualized from 90 seconds.
    expect(result.out).toMatch(/Return\s+-?\d+\.\d+%/);
    expect(result.out).toMatch(/Max drawdown\s+\d+(?:\.\d+)?% \(/);
    expect(result.out).not.toMatch(/annualized/);
    expect(result.out).toMatch(/strategy\s+status\s+Fills/);
    expect(result.out).toMatch(/market\s+Fills.*Final position/);
    // Every intent once: the sources add up to the total, and so do the answers.
    const sources = /intents (\d+) = (\d+) from strategies.* \+ (\d+) released by the runtime/.exec(
      result.out,
    );
    expect(sources).not.toBeNull();
    expect(Number(sources![2]) + Number(sources![3])).toBe(Number(sources![1]));
    const answers =
      /answered: accepted (\d+), denied (\d+), rejected (\d+), unknown (\d+), held as emulated exits (\d+), unanswered at the end (\d+)/.exec(
        result.out,
      );
    expect(answers).not.toBeNull();
    expect(answers!.slice(1).reduce((sum, count) => sum + Number(count), 0)).toBe(
      Number(sources![1]),
    );
    expect(answers![4]).toBe('0');
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
    // JSON counts are numbers and decimals strings, as documented.
    expect(typeof JSON.parse(result.out).summary.fills).toBe('number');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.out) as BacktestReport;
    expect(report.range.duration_ms).toBeGreaterThanOrEqual(3_600_000);
    expect(report.summary.fills).toBeGreaterThan(0);
    // SOL-PERP is quoted but never traded: its resting quotes never fill.
    expect(report.trades.some((trade) => trade.market_id === 'SOL-PERP')).toBe(false);
  });
});
