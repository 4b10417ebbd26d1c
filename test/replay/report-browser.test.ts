/**
 * The HTML reports as a person sees them: rendered by Debian's Chromium (headless, driven by
 * playwright-core), read through lightweight-charts' own API and the rendered table. Checks
 * that every chart shows the whole run, that axis labels of small drawdowns are not all zero,
 * and that the sweep comparison sorts by a column. Screenshots go to test-artifacts/ (ignored
 * by git) for a person to look at.
 *
 * CI installs chromium (.ci/run), so a missing browser fails the test rather than skipping it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../src/core/clock.ts';
import type { Fill } from '../../src/protocol/index.ts';
import { resolveBacktestConfig } from '../../src/replay/backtest/config.ts';
import { runBacktest } from '../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../src/replay/backtest/sources.ts';
import {
  buildReport,
  BucketedSeries,
  type MarketSeries,
  type ReportInput,
  renderReportHtml,
  renderSweepHtml,
} from '../../src/replay/report/index.ts';

import { marketMakerDocument, recordSession, temporaryFolder } from './backtest/helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = resolve('test-artifacts/report-browser');
const T0 = Date.UTC(2025, 0, 1);
const HOUR_MS = 3_600_000;

/** The case: one hour sampled every second (3,601 points), drawdowns of 0.008-0.09%. */
function hourInput(): ReportInput {
  const equity: { t: number; equity: string }[] = [];
  const price = new BucketedSeries();
  const buyOrders = new BucketedSeries();
  const sellOrders = new BucketedSeries();
  for (let second = 0; second <= 3_600; second++) {
    const t = T0 + second * 1_000;
    // A slow rise with dips of up to 9 units on 10,000: 0.09%.
    const dip = second % 600 < 300 ? (second % 300) * 0.03 : 0;
    equity.push({ t, equity: (10_000 + second * 0.001 - dip).toFixed(3) });
    const mark = (100_000 + Math.round(Math.sin(second / 200) * 500)).toString();
    price.add(t, mark);
    if (second % 30 === 0) {
      buyOrders.add(t, String(Number(mark) - 50));
      sellOrders.add(t, String(Number(mark) + 50));
    }
  }
  const fills: Fill[] = [];
  for (let index = 0; index < 40; index++) {
    const t = T0 + 60_000 + index * 80_000;
    fills.push({
      fill_id: `f${index}`,
      market_id: 'BTC-PERP',
      route_id: 'svc-paper',
      side: index % 2 === 0 ? 'buy' : 'sell',
      quantity: '0.01',
      price: String(100_000 + (index % 2 === 0 ? -50 : 50)),
      fee: '0.01',
      notional: '1000',
      order_id: `o${index}`,
      is_maker: true,
      occurred_at: isoTimestamp(t),
    });
  }
  const series: MarketSeries = {
    price: price.points(),
    buyOrders: buyOrders.points(),
    sellOrders: sellOrders.points(),
  };
  return {
    currency: 'USDC',
    startingBalance: '10000',
    startMs: T0,
    endMs: T0 + HOUR_MS,
    fills,
    equity,
    metadata: { strategy: 'market-maker', data: ['backtest-data/sample'] },
    fillStrategies: new Map(fills.map((fill) => [fill.fill_id, 'mm-btc'])),
    strategies: [
      { id: 'mm-btc', name: 'market-maker', markets: ['BTC-PERP'], missingMarkets: [] },
      {
        id: 'mm-doge',
        name: 'market-maker',
        markets: ['DOGE-PERP'],
        missingMarkets: ['DOGE-PERP'],
      },
    ],
    marketSeries: new Map([['BTC-PERP', series]]),
  };
}

interface ChartView {
  readonly name: string;
  readonly from: number;
  readonly to: number;
  readonly labels: readonly string[];
}

/** Each chart's visible time range, and its price axis read at five points of its visible range. */
async function chartViews(page: Page): Promise<ChartView[]> {
  return page.evaluate(() => {
    type Chart = {
      timeScale(): { getVisibleRange(): { from: number; to: number } | null };
      panes(): {
        getSeries(): {
          priceFormatter(): { format(value: number): string };
          priceScale(): { getVisibleRange(): { from: number; to: number } | null };
        }[];
      }[];
    };
    const charts = (globalThis as unknown as { paperbotCharts: Record<string, Chart> })
      .paperbotCharts;
    return Object.entries(charts).map(([name, chart]) => {
      const range = chart.timeScale().getVisibleRange();
      const series = chart.panes()[0]!.getSeries()[0]!;
      const prices = series.priceScale().getVisibleRange();
      const labels: string[] = [];
      if (prices !== null) {
        for (let step = 0; step <= 4; step++) {
          const value = prices.from + ((prices.to - prices.from) * step) / 4;
          labels.push(series.priceFormatter().format(value));
        }
      }
      return { name, from: range?.from ?? Number.NaN, to: range?.to ?? Number.NaN, labels };
    });
  });
}

describe('the HTML report in Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('shows the whole hour on every chart, with drawdown labels that are not zero', async () => {
    const report = buildReport(hourInput());
    const file = join(ARTIFACTS, 'report.html');
    writeFileSync(file, renderReportHtml(report));
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(
      () =>
        Object.keys((globalThis as { paperbotCharts?: object }).paperbotCharts ?? {}).length >= 4,
    );
    const views = await chartViews(page);
    expect(errors).toEqual([]);
    expect(views.map((view) => view.name).sort()).toEqual([
      'drawdown',
      'equity',
      'position:BTC-PERP',
      'price:BTC-PERP',
    ]);
    const first = Math.floor(T0 / 1_000);
    const last = Math.floor((T0 + HOUR_MS) / 1_000);
    for (const view of views) {
      expect(view.from, `${view.name} starts at the run's start`).toBe(first);
      expect(view.to, `${view.name} ends at the run's end`).toBe(last);
    }
    const drawdown = views.find((view) => view.name === 'drawdown')!;
    expect(drawdown.labels).toHaveLength(5);
    expect(drawdown.labels.every((label) => label.endsWith('%'))).toBe(true);
    // Labels distinct enough to read: not all the same, and not all zero.
    expect(new Set(drawdown.labels).size).toBeGreaterThan(2);
    expect(drawdown.labels.some((label) => !/^-?0(?:\.0*)?%$/.test(label))).toBe(true);
    expect(drawdown.labels.some((label) => /^-0\.0[0-9]*[1-9]/.test(label))).toBe(true);

    // What the tables say, as text on the page.
    const summary = await page.locator('table.summary').innerText();
    expect(summary).toMatch(/Max drawdown\s+0\.0867% \(8\.671 USDC\)/);
    expect(summary).toMatch(/Sharpe\s+-?\d+\.\d{4} per 1 min/);
    expect(summary).not.toMatch(/annualized/);
    const notice = await page.locator('p.notice').innerText();
    expect(notice).toContain('mm-doge');
    expect(notice).toContain('DOGE-PERP');
    expect(await page.locator('table.markets').innerText()).toContain('BTC-PERP');
    expect(await page.locator('table.trades tr').count()).toBe(21);
    await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });
    await page.close();
  }, 60_000);

  it('shows the whole of a real backtest: every chart from its first to its last second', async () => {
    const folder = await temporaryFolder('report-browser');
    try {
      const session = join(folder.path, 'session');
      await recordSession(session, { durationMs: 4 * 60_000 });
      const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
      const result = await runBacktest({
        config: loaded.config,
        strategies: loaded.strategies,
        source: await openReplaySource(loaded.config.data, { cache: 'off' }),
      });
      expect(result.report.summary.fills).toBeGreaterThan(0);
      const file = join(ARTIFACTS, 'backtest.html');
      writeFileSync(file, renderReportHtml(result.report));
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      await page.goto(pathToFileURL(file).href);
      await page.waitForFunction(
        () =>
          Object.keys((globalThis as { paperbotCharts?: object }).paperbotCharts ?? {}).length >= 6,
      );
      const views = await chartViews(page);
      // Equity, drawdown, and a price and a position chart for each of the two markets.
      expect(views).toHaveLength(6);
      const first = Math.floor(result.report.range.start_ms / 1_000);
      const last = Math.floor(result.report.range.end_ms / 1_000);
      for (const view of views) {
        expect([view.name, view.from, view.to]).toEqual([view.name, first, last]);
        expect(new Set(view.labels).size, `${view.name} axis labels differ`).toBeGreaterThan(1);
      }
      const fills = await page.locator('table.strategies').innerText();
      expect(fills).toMatch(
        new RegExp(
          `mm-btc\\s+market-maker\\s+BTC-PERP\\s+ran\\s+${result.report.summary.fills}\\s`,
        ),
      );
      await page.screenshot({ path: join(ARTIFACTS, 'backtest.png'), fullPage: true });
      await page.close();
    } finally {
      await folder.remove();
    }
  }, 60_000);

  it('sorts the sweep comparison by any column', async () => {
    const curve = (end: string): [number, string][] => [
      [T0, '10000'],
      [T0 + HOUR_MS, end],
    ];
    const figures = (net: string, trades: number) => ({
      currency: 'USDC',
      net_pnl: net,
      return: String(Number(net) / 10_000),
      sharpe: '0.01',
      sortino: null,
      sharpe_period_ms: 60_000,
      max_drawdown: '0.0001',
      fees: '1',
      trades,
      win_rate: '0.5',
      fills: trades * 2,
      equity: curve(String(10_000 + Number(net))),
    });
    const file = join(ARTIFACTS, 'sweep.html');
    writeFileSync(
      file,
      renderSweepHtml({
        title: 'Sweep: halfSpreadTicks',
        axes: ['halfSpreadTicks'],
        rows: [
          { parameters: { halfSpreadTicks: '2' }, figures: figures('5', 9), error: null },
          { parameters: { halfSpreadTicks: '10' }, figures: figures('-3', 30), error: null },
          { parameters: { halfSpreadTicks: '6' }, figures: figures('12', 4), error: null },
        ],
      }),
    );
    const page = await browser.newPage({ viewport: { width: 1280, height: 600 } });
    await page.goto(pathToFileURL(file).href);
    const column = async (index: number) =>
      page.locator(`table.sweep tbody tr td:nth-child(${index})`).allInnerTexts();
    expect(await column(1)).toEqual(['2', '10', '6']);
    expect(await page.locator('table.sweep tbody svg polyline').count()).toBe(3);
    await page.locator('table.sweep thead th', { hasText: 'Net PnL' }).click();
    expect(await column(2)).toEqual(['-3', '5', '12']);
    await page.locator('table.sweep thead th', { hasText: 'Net PnL' }).click();
    expect(await column(2)).toEqual(['12', '5', '-3']);
    // Numbers sort as numbers: 2 < 6 < 10.
    await page.locator('table.sweep thead th', { hasText: 'halfSpreadTicks' }).click();
    expect(await column(1)).toEqual(['2', '6', '10']);
    await page.screenshot({ path: join(ARTIFACTS, 'sweep.png'), fullPage: true });
    await page.close();
  }, 60_000);
});
