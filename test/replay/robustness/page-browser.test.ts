/**
 * The robustness page in Chromium: the walk-forward chart, the bootstrap's histograms, the
 * heatmap with the best cell outlined and a failed look-ahead check naming the strategy.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bootstrapTrades,
  renderRobustnessHtml,
  type RobustnessReport,
} from '../../../src/replay/robustness/index.ts';
import { temporaryFolder } from '../backtest/helpers.ts';

let browser: Browser;
let folder: Awaited<ReturnType<typeof temporaryFolder>>;

beforeAll(async () => {
  folder = await temporaryFolder('robustness-page');
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await folder?.remove();
});

const T0 = Date.UTC(2025, 0, 1);

const REPORT: RobustnessReport = {
  format: 1,
  strategy: 'market-maker',
  seed: 3,
  data: ['session'],
  currency: 'pUSDC',
  range: { first_t: T0, last_t: T0 + 3_599_999 },
  best: { halfSpreadTicks: 6, refreshTicks: 4 },
  walk_forward: {
    mode: 'rolling',
    metric: 'net_pnl',
    folds: [0, 1].map((fold) => ({
      fold,
      inSample: { fromMs: T0 + fold * 600_000, toMs: T0 + (fold + 3) * 600_000 },
      outOfSample: { fromMs: T0 + (fold + 3) * 600_000, toMs: T0 + (fold + 4) * 600_000 },
      parameters: { halfSpreadTicks: 6, refreshTicks: 4 },
      inSampleScore: 1,
      outOfSampleScore: -0.5,
      inSampleNetPnl: '1',
      outOfSampleNetPnl: '-0.5',
      error: null,
    })),
    outOfSampleEquity: [
      [0, 0],
      [1, -0.5],
      [2, -1],
    ],
    inSampleEquity: [
      [0, 0],
      [1, 1],
      [2, 2],
    ],
    efficiency: -1.5,
  },
  bootstrap: bootstrapTrades({
    tradePnls: [1, -2, 3, -0.5, 0.25],
    startingBalance: 100,
    iterations: 500,
    ruin: 0.5,
    seed: 3,
  }),
  sensitivity: {
    metric: 'net_pnl',
    window: { fromMs: T0, toMs: T0 + 3_600_000 },
    rows: { name: 'halfSpreadTicks', values: ['4', '6', '8'] },
    columns: { name: 'refreshTicks', values: ['2', '4'] },
    best: ['6', '4'],
    scores: [
      [0.1, 0.2],
      [0.3, 0.9],
      [null, -0.4],
    ],
    errors: [],
  },
  lookahead: {
    cuts: [T0 + 1_800_000],
    compared: [12],
    passed: false,
    differences: [
      {
        strategyId: 'peeker',
        cutMs: T0 + 1_800_000,
        position: 11,
        t: T0 + 1_799_000,
        full: '{"kind":"place","marketId":"BTC-PERP"}',
        cut: null,
      },
    ],
  },
};

describe('the robustness page', () => {
  it('draws every section and names the strategy that peeks', async () => {
    const path = join(folder.path, 'robustness.html');
    await writeFile(path, renderRobustnessHtml(REPORT));
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(pathToFileURL(path).href);
    expect(await page.locator('h1').textContent()).toBe('Robustness: market-maker');
    // Out-of-sample and in-sample lines; two histograms of 20 bins each.
    expect(await page.locator('svg[aria-label="equity"] polyline').count()).toBe(2);
    expect(await page.locator('svg[aria-label="final PnL"] rect').count()).toBe(20);
    expect(await page.locator('svg[aria-label="maximum drawdown"] rect').count()).toBe(20);
    // The heatmap: 3 × 2 scores, the failed cell blank, the best one outlined.
    expect(await page.locator('table.heatmap td').count()).toBe(6);
    expect(await page.locator('table.heatmap td[data-score=""]').count()).toBe(1);
    const outlined = page.locator('table.heatmap td[style*="outline"]');
    expect(await outlined.count()).toBe(1);
    expect(await outlined.textContent()).toBe('0.9');
    expect(await page.locator('.verdict.fail').textContent()).toContain('Failed');
    expect(await page.locator('table.lookahead td').first().textContent()).toBe('peeker');
    expect(await page.locator('table.folds tr').count()).toBe(3);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
