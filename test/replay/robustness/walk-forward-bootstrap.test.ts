/**
 * Walk-forward and the trade bootstrap on a recorded emulator session: the same seed gives the
 * same outcome, and the bootstrap's median final PnL is the backtest's within its 95 % interval.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import { openReplaySource, recordedTimeRange } from '../../../src/replay/backtest/sources.ts';
import { runBacktestSweep, sweepCoerce } from '../../../src/replay/backtest/sweep-run.ts';
import {
  bootstrapTrades,
  runLookaheadCell,
  runWalkForward,
  walkForwardWindows,
} from '../../../src/replay/robustness/index.ts';
import { parseSearchSpecs } from '../../../src/replay/search/index.ts';
import { marketMakerDocument, recordSession, temporaryFolder } from '../backtest/helpers.ts';

/** A fast EMA crossover on marks with market orders: many short round trips. */
const TREND_DOCUMENT = (data: string) =>
  marketMakerDocument([data], {
    strategies: [
      {
        id: 'trend',
        name: 'trend-follower',
        params: {
          markets: ['BTC-PERP'],
          source: 'ticker',
          fastPeriod: 2,
          slowPeriod: 5,
          enterOnStart: true,
        },
      },
    ],
  });

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;

beforeAll(async () => {
  folder = await temporaryFolder('robustness');
  session = join(folder.path, 'session');
  await recordSession(session, { durationMs: 180_000, marketIds: ['BTC-PERP'] });
}, 60_000);

afterAll(async () => {
  await folder?.remove();
});

describe('the trade bootstrap', () => {
  it('is deterministic for a seed, and its median is the backtest final PnL within its interval', async () => {
    const baseline = await runLookaheadCell(
      { cutMs: null },
      { document: TREND_DOCUMENT(session), source: '(test)', data: null, parameters: {} },
    );
    expect(baseline.tradePnls.length).toBeGreaterThan(3);
    const options = {
      tradePnls: baseline.tradePnls,
      startingBalance: baseline.startingBalance,
      iterations: 2000,
      ruin: 0.5,
    };
    const first = bootstrapTrades({ ...options, seed: 7 });
    expect(bootstrapTrades({ ...options, seed: 7 })).toEqual(first);
    expect(bootstrapTrades({ ...options, seed: 8 }).final_pnl).not.toEqual(first.final_pnl);

    const backtestPnl = baseline.tradePnls.reduce((sum, pnl) => sum + pnl, 0);
    expect(first.actual.final_pnl).toBeCloseTo(backtestPnl, 9);
    const [low, high] = first.final_pnl.confidence_interval;
    expect(low).toBeLessThan(high);
    expect(backtestPnl).toBeGreaterThanOrEqual(low);
    expect(backtestPnl).toBeLessThanOrEqual(high);
    const median = first.final_pnl.percentiles.p50;
    expect(Math.abs(median - backtestPnl)).toBeLessThanOrEqual((high - low) / 2);
    expect(first.final_pnl.histogram.counts.reduce((sum, count) => sum + count, 0)).toBe(2000);
    expect(first.ruin.probability).toBeGreaterThanOrEqual(0);
  }, 120_000);

  it('refuses a backtest without closed trades, and bad draws or ruin levels', () => {
    const base = { startingBalance: 100, iterations: 10, ruin: 0.5, seed: 1 };
    expect(() => bootstrapTrades({ ...base, tradePnls: [] })).toThrow(/closed no trades/);
    expect(() => bootstrapTrades({ ...base, tradePnls: [1], iterations: 0 })).toThrow(
      /--bootstrap/,
    );
    expect(() => bootstrapTrades({ ...base, tradePnls: [1], ruin: 1.5 })).toThrow(/--ruin/);
  });

  it('counts a draw as ruined when its equity reaches the stated loss', () => {
    // Every draw of these two trades goes to 50 or below: all ruined at 50 %.
    const outcome = bootstrapTrades({
      tradePnls: [-60, -60],
      startingBalance: 100,
      iterations: 50,
      ruin: 0.5,
      seed: 1,
    });
    expect(outcome.ruin.probability).toBe(1);
    expect(outcome.max_drawdown.percentiles.p50).toBeCloseTo(1.2, 9);
  });
});

describe('walk-forward', () => {
  it('tiles the end of the range with out-of-sample windows, rolling or anchored', () => {
    const range = { firstT: 0, lastT: 999 };
    expect(walkForwardWindows(range, 2, 'rolling', 0.5)).toEqual([
      { inSample: { fromMs: 0, toMs: 334 }, outOfSample: { fromMs: 334, toMs: 667 } },
      { inSample: { fromMs: 333, toMs: 667 }, outOfSample: { fromMs: 667, toMs: 1000 } },
    ]);
    expect(walkForwardWindows(range, 2, 'anchored', 0.5)[1]).toEqual({
      inSample: { fromMs: 0, toMs: 667 },
      outOfSample: { fromMs: 667, toMs: 1000 },
    });
  });

  it('is deterministic for a seed on the sweep pool', async () => {
    const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
    const range = recordedTimeRange(await openReplaySource([session]))!;
    const dimensions = parseSearchSpecs(['halfSpreadTicks=2..12', 'refreshTicks=2..6']);
    const run = () =>
      runWalkForward({
        dimensions,
        budget: 2,
        method: 'random',
        metric: 'net_pnl',
        folds: 2,
        mode: 'rolling',
        inSampleShare: 0.6,
        seed: 'wf',
        range,
        coerce: sweepCoerce(loaded),
        evaluate: (cells, window) =>
          runBacktestSweep({
            loaded,
            axes: [],
            cells,
            data: null,
            window,
            concurrency: 2,
          }),
      });
    const first = await run();
    expect(first.folds).toHaveLength(2);
    expect(first.folds.every((fold) => fold.error === null && fold.parameters !== null)).toBe(true);
    // The stitched out-of-sample PnL starts at 0 in fold 0 and ends in the last fold, at the
    // sum of the folds' out-of-sample net PnLs.
    const [x0, y0] = first.outOfSampleEquity[0]!;
    expect(x0).toBeGreaterThanOrEqual(0);
    expect(x0).toBeLessThan(0.1);
    expect(y0).toBe(0);
    const last = first.outOfSampleEquity.at(-1)!;
    expect(last[0]).toBeGreaterThan(1);
    expect(last[0]).toBeLessThanOrEqual(2);
    const total = first.folds.reduce((sum, fold) => sum + Number(fold.outOfSampleNetPnl), 0);
    expect(last[1]).toBeCloseTo(total, 6);
    expect(await run()).toEqual(first);
  }, 240_000);
});
