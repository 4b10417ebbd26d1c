import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEVER } from 'rxjs';
import { z } from 'zod';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import {
  checkStrategyMarkets,
  runBacktest,
  strategyMarkets,
} from '../../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../../src/replay/backtest/sources.ts';
import { openRecording } from '../../../src/replay/format/recording.ts';
import {
  renderReportHtml,
  type ReportFiles,
  reportToJson,
} from '../../../src/replay/report/index.ts';
import { defineStrategy } from '../../../src/runtime/strategy/index.ts';
import { marketMakerDocument, recordSession, SESSION_START, temporaryFolder } from './helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;

beforeAll(async () => {
  folder = await temporaryFolder('runner');
  session = join(folder.path, 'session');
  await recordSession(session, { durationMs: 4 * 60_000 });
});

afterAll(async () => {
  await folder.remove();
});

async function backtest(
  document: Record<string, unknown>,
  cache: 'auto' | 'off' = 'auto',
  reportFiles: ReportFiles | null = null,
) {
  const loaded = await resolveBacktestConfig(document);
  const source = await openReplaySource(loaded.config.data, { cache });
  return runBacktest({ config: loaded.config, strategies: loaded.strategies, source, reportFiles });
}

describe('backtest runner', () => {
  it("replays every record through the kernel and reports the venue's fills and equity", async () => {
    const recording = await openRecording(session);
    const equityTimes: number[] = [];
    const fillIds: string[] = [];
    const result = await backtest(marketMakerDocument([session]), 'auto', {
      paths: { fills: 'fills.csv', trades: 'trades.csv', equity: 'equity.csv' },
      fill: (fill) => fillIds.push(fill.fill_id),
      trade: () => {},
      equity: (point) => equityTimes.push(point.t),
    });
    const report = result.report;
    // Every fill reached the files, in the venue's order.
    expect(fillIds).toEqual(result.fills.map((fill) => fill.fill_id));
    expect(report.lists.equity_samples).toBe(equityTimes.length);
    expect(result.records).toBe(recording.manifest.counts.total);
    expect(report.range.start_ms).toBe(SESSION_START);
    expect(report.range.end_ms).toBeGreaterThanOrEqual(recording.manifest.time_range.last_t!);
    expect(report.summary.fills).toBeGreaterThan(0);
    expect(report.summary.fills).toBe(result.fills.length);
    expect(result.counters.intents).toBeGreaterThan(0);
    expect(result.fills.every((fill) => fill.market_id === 'BTC-PERP')).toBe(true);
    // Samples on the one-second grid, then one at the end (every one in equity.csv).
    const times = equityTimes;
    expect(times.slice(0, 3)).toEqual([
      SESSION_START + 1_000,
      SESSION_START + 2_000,
      SESSION_START + 3_000,
    ]);
    expect(times[times.length - 1]).toBe(report.range.end_ms);
    // The kernel's shutdown cancels every resting order.
    expect(result.shutdown).toMatchObject({ cancelled: true, error: null });
    // Every fill belongs to an order the runtime placed under its own ids.
    for (const fill of result.fills) {
      expect(result.orderIds.get(fill.order_id!)?.clientOrderId).toMatch(/^mm-btc:backtest:\d+$/);
    }
    expect(report.metadata).toMatchObject({
      strategy: 'market-maker',
      data: [session],
      parameters: { seed: 1, halfSpreadTicks: 6, markets: '["BTC-PERP"]' },
      run_at: null,
    });
  });

  it('gives byte-identical JSON and HTML for the same data, config and seed', async () => {
    const document = marketMakerDocument([session]);
    const first = await backtest(document, 'off');
    const second = await backtest(document);
    const third = await backtest(document);
    expect(reportToJson(second.report)).toBe(reportToJson(first.report));
    expect(reportToJson(third.report)).toBe(reportToJson(first.report));
    expect(renderReportHtml(third.report)).toBe(renderReportHtml(first.report));
    expect(first.outcomes).toEqual(third.outcomes);
  });

  it('charges the configured fee rates: a post-only maker pays the maker rate only', async () => {
    const base = await backtest(marketMakerDocument([session]));
    const free = await backtest(
      marketMakerDocument([session], {
        venue: { fees: { maker_rate: '0', taker_rate: '0.001' } },
      }),
    );
    expect(base.fills.every((fill) => fill.is_maker)).toBe(true);
    expect(free.fills.map((fill) => fill.fill_id)).toEqual(base.fills.map((fill) => fill.fill_id));
    expect(free.report.summary.fees).toBe('0');
    expect(Number(base.report.summary.fees)).toBeGreaterThan(0);
  });

  it('keeps equity flat for a strategy that does nothing', async () => {
    const idle = defineStrategy({
      name: 'idle',
      params: z.strictObject({}),
      create: () => NEVER,
    });
    const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
    const source = await openReplaySource([session]);
    const result = await runBacktest({
      config: { ...loaded.config, markets: ['ETH-PERP'] },
      strategies: [{ id: 'idle', name: 'idle', definition: idle, rawParams: {}, params: {} }],
      source: await openReplaySource([session], { markets: ['ETH-PERP'] }),
    });
    expect(source.markets.map((market) => market.market_id)).toEqual(['BTC-PERP', 'ETH-PERP']);
    expect(result.report.summary).toMatchObject({
      fills: 0,
      net_pnl: '0',
      ending_equity: '10000',
      trades: 0,
    });
    expect(result.counters.intents).toBe(0);
    const recording = await openRecording(session);
    const ethRecords = recording.manifest.counts.by_market['ETH-PERP']!;
    expect(result.records).toBe(ethRecords.ticker + ethRecords.book + ethRecords.trade);
  });

  it('refuses a config with problems, listing each with its path', async () => {
    type Refusal = { code: string; details: { issues: { path: string }[] } };
    const error = (await resolveBacktestConfig({
      data: [],
      strategies: [{ id: 'mm', name: 'market-maker', params: { halfSpreadTicks: 0 } }],
      venue: { latency: { order_ms: 'fast' } },
      surprise: true,
    }).then(
      () => null,
      (caught: unknown) => caught,
    )) as Refusal;
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.details.issues.map((issue) => issue.path).sort()).toEqual([
      'data',
      'strategies[0].params.halfSpreadTicks',
      'surprise',
      'venue.latency.order_ms',
    ]);
  });

  it('reads the sample data shipped with the repository', async () => {
    const manifest = JSON.parse(
      await readFile('backtest-data/emulator-seed42-1h/manifest.json', 'utf8'),
    ) as {
      complete: boolean;
      time_range: { first_t: number; last_t: number };
      markets: { market_id: string }[];
    };
    expect(manifest.complete).toBe(true);
    expect(manifest.time_range.last_t - manifest.time_range.first_t).toBeGreaterThanOrEqual(
      3_600_000,
    );
    expect(manifest.markets.map((market) => market.market_id)).toEqual([
      'BTC-PERP',
      'ETH-PERP',
      'SOL-PERP',
    ]);
  });
});

describe('missing markets', () => {
  const strategies = [
    { id: 'a', name: 'market-maker', params: { markets: ['BTC-PERP', 'DOGE-PERP'] } },
    { id: 'b', name: 'grid', params: { market: 'XRP-PERP' } },
    { id: 'c', name: 'grid', params: { markets: [] } },
  ];

  it('refuse the run, naming every strategy and market at once', () => {
    let caught: unknown;
    try {
      checkStrategyMarkets(strategies, ['BTC-PERP', 'ETH-PERP'], false);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({
      code: 'BACKTEST_MISSING_MARKET',
      details: {
        strategies: [
          { id: 'a', missing: ['DOGE-PERP'] },
          { id: 'b', missing: ['XRP-PERP'] },
        ],
      },
    });
    expect((caught as Error).message).toContain(
      'the data has no DOGE-PERP (strategy a); XRP-PERP (strategy b)',
    );
  });

  it('are listed per strategy when skipping; a strategy naming none trades every market', () => {
    expect(checkStrategyMarkets(strategies, ['BTC-PERP'], true)).toEqual([
      {
        id: 'a',
        name: 'market-maker',
        markets: ['BTC-PERP', 'DOGE-PERP'],
        missingMarkets: ['DOGE-PERP'],
      },
      { id: 'b', name: 'grid', markets: ['XRP-PERP'], missingMarkets: ['XRP-PERP'] },
      { id: 'c', name: 'grid', markets: [], missingMarkets: [] },
    ]);
    expect(strategyMarkets(null)).toEqual([]);
  });
});
