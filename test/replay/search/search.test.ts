import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerBacktestCommand } from '../../../src/cli/commands/backtest.ts';
import type { SweepCellFigures } from '../../../src/replay/report/sweep-html.ts';
import {
  halvingRungs,
  parseSearchSpecs,
  runSearch,
  sampleCandidates,
  type TimeWindow,
} from '../../../src/replay/search/index.ts';
import type { GridCell } from '../../../src/replay/sweep/grid.ts';
import {
  marketMakerDocument,
  recordSession,
  runCommand,
  temporaryFolder,
} from '../backtest/helpers.ts';

function figures(netPnl: number): SweepCellFigures {
  return {
    currency: 'pUSDC',
    net_pnl: String(netPnl),
    return: String(netPnl / 10_000),
    sharpe: null,
    sortino: null,
    sharpe_period_ms: 60_000,
    max_drawdown: '0.02',
    fees: '0',
    trades: 1,
    win_rate: null,
    fills: 2,
    equity: [],
  };
}

describe('search space and sampling', () => {
  it('parses ranges, steps and choices, and reports every problem at once', () => {
    expect(parseSearchSpecs(['a=1..5', 'b=0.5..1.5:0.25', 'c=x,y', 'd=0.0..1.0'])).toEqual([
      { name: 'a', kind: 'range', low: 1, high: 5, step: 1, decimals: 0 },
      { name: 'b', kind: 'range', low: 0.5, high: 1.5, step: 0.25, decimals: 2 },
      { name: 'c', kind: 'choice', values: ['x', 'y'] },
      { name: 'd', kind: 'range', low: 0, high: 1, step: null, decimals: 6 },
    ]);
    expect(() => parseSearchSpecs(['a=5..1', 'b=x', 'a=1..2', '=3'])).toThrow(
      /a=5\.\.1: needs low < high.*b=x: choices need at least two.*=3: expected/,
    );
  });

  it('samples distinct points on the grid, the same from the same seed', () => {
    const dimensions = parseSearchSpecs(['a=1..5', 'b=0.5..1.5:0.25', 'c=x,y']);
    const first = sampleCandidates(dimensions, 12, 7);
    expect(sampleCandidates(dimensions, 12, 7)).toEqual(first);
    expect(sampleCandidates(dimensions, 12, 8)).not.toEqual(first);
    expect(new Set(first.map((cell) => cell.label)).size).toBe(12);
    for (const cell of first) {
      expect(['1', '2', '3', '4', '5']).toContain(cell.raw.a);
      expect(['0.50', '0.75', '1.00', '1.25', '1.50']).toContain(cell.raw.b);
      expect(['x', 'y']).toContain(cell.raw.c);
    }
    // A space smaller than the budget gives every point once.
    expect(
      sampleCandidates(parseSearchSpecs(['c=x,y,z']), 10, 1)
        .map((cell) => cell.raw.c)
        .sort(),
    ).toEqual(['x', 'y', 'z']);
  });

  it('sizes halving rungs within the budget', () => {
    expect(halvingRungs(20)).toEqual([11, 5, 2]);
    expect(halvingRungs(3)).toEqual([2]);
    expect(halvingRungs(1)).toEqual([1]);
    for (let budget = 1; budget <= 60; budget++) {
      expect(halvingRungs(budget).reduce((sum, size) => sum + size, 0)).toBeLessThanOrEqual(budget);
    }
  });
});

describe('runSearch', () => {
  // A fake runner: net PnL peaks at a=7 in-sample; held out, lower a does better (overfitting).
  function fakeEvaluate(heldOutFrom: number, calls: Array<{ cells: number; window: TimeWindow }>) {
    return async (cells: readonly GridCell[], window: TimeWindow) => {
      calls.push({ cells: cells.length, window });
      return cells.map((cell) => {
        const a = Number(cell.raw.a);
        const pnl = window.fromMs >= heldOutFrom ? 100 - a : 100 - (a - 7) ** 2;
        return {
          index: cell.index,
          label: cell.label,
          raw: cell.raw,
          parameters: cell.parameters,
          status: 'ok' as const,
          value: figures(pnl),
        };
      });
    };
  }

  it('ranks random candidates by the metric and re-runs the best on the held-out period', async () => {
    const calls: Array<{ cells: number; window: TimeWindow }> = [];
    const outcome = await runSearch({
      dimensions: parseSearchSpecs(['a=1..10']),
      budget: 10,
      method: 'random',
      metric: 'net_pnl',
      holdout: 0.25,
      seed: 1,
      range: { firstT: 0, lastT: 999 },
      evaluate: fakeEvaluate(750, calls),
    });
    expect(outcome.inSample).toEqual({ fromMs: 0, toMs: 750 });
    expect(outcome.heldOut).toEqual({ fromMs: 750, toMs: 1000 });
    expect(calls).toEqual([
      { cells: 10, window: { fromMs: 0, toMs: 750 } },
      { cells: 5, window: { fromMs: 750, toMs: 1000 } },
    ]);
    expect(outcome.rows.map((row) => row.score)).toEqual([100, 99, 99, 96, 96, 91, 91, 84, 75, 64]);
    expect(outcome.rows[0]!.cell.raw.a).toBe('7');
    // Held out, the best in-sample does worse than some it beat: what the column is for.
    expect(outcome.rows[0]!.heldOutScore).toBe(93);
    expect(
      outcome.rows.slice(0, 5).map((row) => row.heldOutScore! + Number(row.cell.raw.a)),
    ).toEqual([100, 100, 100, 100, 100]);
    expect(outcome.rows[5]!.heldOut).toBeNull();
  });

  it('halves on growing slices of the in-sample period within the budget', async () => {
    const calls: Array<{ cells: number; window: TimeWindow }> = [];
    const outcome = await runSearch({
      dimensions: parseSearchSpecs(['a=1..40']),
      budget: 20,
      method: 'halving',
      metric: 'return_over_drawdown',
      holdout: 0.2,
      seed: 3,
      range: { firstT: 1000, lastT: 1999 },
      evaluate: fakeEvaluate(1800, calls),
    });
    expect(calls.map((call) => [call.cells, call.window.toMs])).toEqual([
      [11, 1200],
      [5, 1400],
      [2, 1800],
      [5, 2000],
    ]);
    expect(outcome.runs).toBe(18);
    // The two that ran on the whole in-sample period lead, the better first.
    expect(outcome.rows.slice(0, 2).map((row) => row.rung)).toEqual([2, 2]);
    expect(outcome.rows[0]!.score!).toBeGreaterThanOrEqual(outcome.rows[1]!.score!);
  });
});

describe('paperbot backtest --search', () => {
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;
  let config: string;

  beforeAll(async () => {
    folder = await temporaryFolder('search');
    const session = join(folder.path, 'session');
    await recordSession(session, { durationMs: 60_000, marketIds: ['BTC-PERP'] });
    config = join(folder.path, 'backtest.yaml');
    await writeFile(config, stringify(marketMakerDocument([session])));
  });

  afterAll(async () => {
    await folder.remove();
  });

  it('prints the same ranked table from the same seed, with the held-out metric', async () => {
    const args = [
      'backtest',
      '--config',
      config,
      '--search',
      'halfSpreadTicks=2..12',
      '--search',
      'refreshTicks=2,4',
      '--budget',
      '2',
      '--metric',
      'net_pnl',
      '--workers',
      '2',
      '--seed',
      '5',
    ];
    const run = () =>
      runCommand(
        (program, print, printError) =>
          registerBacktestCommand(program, { print, printError, interactive: false }),
        args,
      );
    const first = await run();
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    expect(first.out).toContain('search: random, 2 runs in-sample + 2 held-out, metric net_pnl');
    expect(first.out).toMatch(
      /rank\s+halfSpreadTicks\s+refreshTicks\s+net_pnl in-sample\s+net_pnl held-out/,
    );
    const table = first.out.split('\n').filter((line) => /^\s*\d+\s/.test(line));
    expect(table).toHaveLength(2);
    const inSample = table.map((line) => Number(line.trim().split(/\s+/)[3]));
    expect([...inSample].sort((a, b) => b - a)).toEqual(inSample);
    expect((await run()).out).toBe(first.out);
  }, 90_000);
});
