import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerBacktestCommand } from '../../../src/cli/commands/backtest.ts';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import { runBacktest } from '../../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../../src/replay/backtest/sources.ts';
import {
  runBacktestSweep,
  runSweepCell,
  sweepCoerce,
  sweepTarget,
  withOverrides,
} from '../../../src/replay/backtest/sweep-run.ts';
import { buildGrid, parseSweepSpecs } from '../../../src/replay/sweep/index.ts';
import { marketMakerDocument, recordSession, runCommand, temporaryFolder } from './helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;

beforeAll(async () => {
  folder = await temporaryFolder('sweep');
  session = join(folder.path, 'tiny');
  await recordSession(session, { durationMs: 60_000, marketIds: ['BTC-PERP'] });
});

afterAll(async () => {
  await folder.remove();
});

describe('sweep names', () => {
  const document = {
    data: ['x'],
    strategies: [
      { id: 'a', name: 'market-maker', params: { halfSpreadTicks: 3 } },
      { id: 'b', name: 'market-maker' },
    ],
  };

  it('address a strategy by id, or a config section', () => {
    expect(sweepTarget('a.halfSpreadTicks', document)).toEqual({
      kind: 'strategy',
      index: 0,
      path: ['halfSpreadTicks'],
    });
    expect(sweepTarget('venue.latency.order_ms', document)).toEqual({
      kind: 'config',
      path: ['venue', 'latency', 'order_ms'],
    });
    expect(() => sweepTarget('halfSpreadTicks', document)).toThrow(/name one/);
    expect(sweepTarget('halfSpreadTicks', { strategies: [document.strategies[0]] })).toMatchObject({
      kind: 'strategy',
      index: 0,
    });
  });

  it('override copies, leaving the original document untouched', () => {
    const changed = withOverrides(document, {
      'b.refreshTicks': 7,
      'venue.latency.order_ms': 50,
      seed: 9,
    });
    expect(changed).toMatchObject({
      seed: 9,
      venue: { latency: { order_ms: 50 } },
      strategies: [{ params: { halfSpreadTicks: 3 } }, { params: { refreshTicks: 7 } }],
    });
    expect(document).not.toHaveProperty('venue');
    expect(document.strategies[1]).not.toHaveProperty('params');
  });

  it('type values as JSON when they read so, and refuse what the schemas refuse, all at once', async () => {
    const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
    const coerce = sweepCoerce(loaded);
    expect(coerce('halfSpreadTicks', '4')).toBe(4);
    expect(coerce('venue.slippage_bps', '1.5')).toBe('1.5');
    expect(coerce('markets', '["BTC-PERP"]')).toEqual(['BTC-PERP']);
    const error = (() => {
      try {
        buildGrid(parseSweepSpecs(['halfSpreadTicks=0,4', 'venue.latency.order_ms=fast']), {
          coerce,
        });
      } catch (caught) {
        return caught as { code: string; details: { problems: { spec: string }[] } };
      }
      return null;
    })();
    expect(error?.code).toBe('INVALID_SWEEP');
    expect(error?.details.problems.map((problem) => problem.spec)).toEqual([
      'halfSpreadTicks=0',
      'venue.latency.order_ms=fast',
    ]);
  });
});

describe('sweep runs', () => {
  it('runs each cell as a full backtest on worker threads, in grid order', async () => {
    const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
    const axes = parseSweepSpecs(['halfSpreadTicks=4,8']);
    const cells = buildGrid(axes, { coerce: sweepCoerce(loaded) });
    const results = await runBacktestSweep({ loaded, axes, cells, data: null, concurrency: 2 });
    expect(results.map((result) => [result.label, result.status])).toEqual([
      ['halfSpreadTicks=4', 'ok'],
      ['halfSpreadTicks=8', 'ok'],
    ]);
    // A cell is the same backtest as a direct run with that value.
    const direct = await runBacktest({
      config: loaded.config,
      strategies: loaded.strategies,
      source: await openReplaySource([session]),
      paramOverrides: { 'mm-btc': { halfSpreadTicks: 8 } },
    });
    const second = results[1]!;
    expect(second.status === 'ok' ? second.value : null).toMatchObject({
      net_pnl: direct.report.summary.net_pnl,
      fills: direct.report.summary.fills,
      trades: direct.report.summary.trades,
      sharpe: direct.report.summary.sharpe,
    });
    if (second.status === 'ok') {
      expect(second.value.equity.length).toBeLessThanOrEqual(120);
      expect(second.value.equity[0]![0]).toBe(direct.report.range.start_ms);
      expect(second.value.equity.at(-1)).toEqual([
        direct.report.range.end_ms,
        direct.report.summary.ending_equity,
      ]);
    }
    expect(
      await runSweepCell(
        { halfSpreadTicks: 8 },
        {
          document: loaded.document,
          source: '(test)',
          data: null,
        },
      ),
    ).toEqual(second.status === 'ok' ? second.value : null);
  });

  it('prints the table from `paperbot backtest --sweep`', async () => {
    const config = join(folder.path, 'sweep.yaml');
    await writeFile(config, stringify(marketMakerDocument([session])));
    const result = await runCommand(
      (program, print, printError) =>
        registerBacktestCommand(program, { print, printError, interactive: false }),
      [
        'backtest',
        '--config',
        config,
        '--sweep',
        'halfSpreadTicks=5,9',
        '--sweep',
        'venue.slippage_bps=0,2',
        '--workers',
        '2',
      ],
    );
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const lines = result.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^halfSpreadTicks\s+venue\.slippage_bps\s+net_pnl\s+return\s+sharpe/);
    expect(lines.slice(2).map((line) => line.trim().split(/\s+/).slice(0, 2))).toEqual([
      ['5', '0'],
      ['5', '2'],
      ['9', '0'],
      ['9', '2'],
    ]);
    expect(lines.slice(2).every((line) => line.endsWith('ok'))).toBe(true);
    // The table reads ratios as percentages, like the single-run summary.
    expect(lines.slice(2).every((line) => /\d%/.test(line))).toBe(true);
  });

  it('writes the comparison page with --report, and JSON with typed numbers', async () => {
    const config = join(folder.path, 'sweep-report.yaml');
    const page = join(folder.path, 'sweep', 'comparison.html');
    await writeFile(config, stringify(marketMakerDocument([session])));
    const result = await runCommand(
      (program, print, printError) =>
        registerBacktestCommand(program, { print, printError, interactive: false }),
      [
        'backtest',
        '--config',
        config,
        '--sweep',
        'halfSpreadTicks=5,9',
        '--json',
        '--report',
        page,
      ],
    );
    expect(result.code).toBe(0);
    expect(result.err).toBe(`comparison report written to ${page}\n`);
    const cells = JSON.parse(result.out) as {
      status: string;
      value: { fills: unknown; trades: unknown; net_pnl: unknown };
    }[];
    expect(cells.map((cell) => cell.status)).toEqual(['ok', 'ok']);
    for (const cell of cells) {
      expect(typeof cell.value.fills).toBe('number');
      expect(typeof cell.value.trades).toBe('number');
      expect(typeof cell.value.net_pnl).toBe('string');
    }
    const html = await readFile(page, 'utf8');
    expect(html.match(/<tr data-cell=/g)).toHaveLength(2);
    expect(html.match(/<polyline /g)).toHaveLength(2);
    expect(html).toContain('<th aria-sort="none">halfSpreadTicks</th>');
  });

  it('refuses --csv with --sweep, clearly', async () => {
    const config = join(folder.path, 'sweep-csv.yaml');
    await writeFile(config, stringify(marketMakerDocument([session])));
    const result = await runCommand(
      (program, print, printError) =>
        registerBacktestCommand(program, { print, printError, interactive: false }),
      ['backtest', '--config', config, '--sweep', 'halfSpreadTicks=5,9', '--csv', folder.path],
    );
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/--csv writes one run/);
    expect(result.out).toBe('');
  });
});
