/**
 * The dashboard in a real browser (Debian's headless Chromium, driven by playwright-core):
 * a bot trades the market maker on its embedded emulator; the page shows its orders and fills
 * as they happen, halting from the page stops the market maker (its orders are cancelled and
 * none come back), clearing lets it quote again, and the log says the same. Screenshots at
 * phone and desktop sizes are kept in test-artifacts/dashboard/.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  ARTIFACTS,
  launchBrowser,
  LineCollector,
  marketMakerBot,
  startBot,
  temporaryDirectory,
} from './helpers.ts';

const directory = temporaryDirectory();
let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('the dashboard in Chromium', () => {
  it(
    'shows orders and fills live, halts and clears the market maker',
    { timeout: 60_000 },
    async () => {
      const lines = new LineCollector();
      const bot = await startBot(marketMakerBot(directory), lines);
      onTestFinished(async () => {
        await bot.stop('test cleanup');
      });
      const url = bot.httpUrl ?? '';
      const kernel = bot.kernel;
      if (kernel === null) throw new Error('no kernel');

      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const requests: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      page.on('dialog', (dialog) => void dialog.accept());
      await page.goto(`${url}/`);

      // Live: the state badge, then the market maker's quotes in the open-orders table.
      await page.locator('#trading-state', { hasText: 'ACTIVE' }).waitFor({ timeout: 15_000 });
      await page.locator('#open-orders tbody tr').first().waitFor({ timeout: 15_000 });
      expect(await page.locator('#open-orders').textContent()).toContain('mm-btc:');
      // A fill arrives without a reload (a quote two ticks from the mark is hit within seconds).
      await page.locator('#fills tbody tr').first().waitFor({ timeout: 30_000 });
      expect(await page.locator('#fills').textContent()).toContain('BTC-PERP');
      expect(await page.locator('#equity-chart canvas').count()).toBeGreaterThan(0);
      expect(await page.locator('#pnl-today').textContent()).toMatch(/^[+-]?\d/);
      expect(await page.locator('#routes').textContent()).toMatch(/^ready since/);
      expect(await page.locator('#stream-state').textContent()).toMatch(/^live since/);
      expect(await page.locator('#may-trade').textContent()).toBe('yes');
      expect(await page.locator('#equity').textContent()).toMatch(/^\d+(\.\d+)?$/);
      await page.screenshot({ path: join(ARTIFACTS, 'desktop.png'), fullPage: true });

      // Halt from the page: the gate halts, the kill file is written, the quotes go away.
      await page.click('#control-halt');
      await page.locator('#trading-state', { hasText: 'HALTED' }).waitFor({ timeout: 10_000 });
      expect(kernel.status().tradingState).toBe('HALTED');
      await page.click('#control-cancel-all');
      await page.locator('#control-result', { hasText: 'cancel-all accepted' }).waitFor();
      await page
        .locator('#open-orders tbody tr')
        .first()
        .waitFor({ state: 'detached', timeout: 10_000 });
      const placedWhileHalted = kernel.status().counters.accepted;
      await page.waitForTimeout(1_500);
      expect(kernel.status().openOrders).toHaveLength(0);
      expect(kernel.status().counters.accepted).toBe(placedWhileHalted);

      // Clear: ACTIVE again and quoting again.
      await page.click('#control-clear');
      await page.locator('#trading-state', { hasText: 'ACTIVE' }).waitFor({ timeout: 10_000 });
      await page.locator('#open-orders tbody tr').first().waitFor({ timeout: 15_000 });

      // Phone size: still readable (no horizontal page scroll; tables scroll inside themselves).
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(300);
      // Run in the page, where `document` exists; written as text since this file has no DOM types.
      const overflow = await page.evaluate<number>(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(ARTIFACTS, 'phone.png'), fullPage: true });

      // Nothing came from anywhere but the bot.
      expect(requests.filter((address) => !address.startsWith(url))).toEqual([]);

      // The log agrees: the controls, the halt and the resume, in that order.
      const records = lines.records();
      const controls = records
        .filter((record) => record.event === 'dashboard.control')
        .map((record) => record.action);
      expect(controls).toEqual(['halt', 'cancel-all', 'clear']);
      const messages = records.map((record) => String(record.msg));
      expect(messages.some((message) => message.includes('operator cancel-all'))).toBe(true);
      expect(messages.findIndex((m) => m.includes('trading resumed'))).toBeGreaterThan(
        messages.findIndex((m) => m.includes('dashboard: halt')),
      );
      // The token is never in the log.
      const html = await (await page.request.get(`${url}/`)).text();
      const token = /name="paperbot-token" content="([^"]+)"/.exec(html)?.[1] ?? '';
      expect(token.length).toBeGreaterThan(30);
      expect(lines.text).not.toContain(token);
      await page.close();
    },
  );

  it('hides the controls in read-only mode', { timeout: 30_000 }, async () => {
    const lines = new LineCollector();
    const bot = await startBot(
      marketMakerBot(join(directory, 'read-only'), { dashboard: { read_only: true } }),
      lines,
    );
    onTestFinished(async () => {
      await bot.stop('test cleanup');
    });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(`${bot.httpUrl ?? ''}/`);
    await page.locator('#trading-state', { hasText: 'ACTIVE' }).waitFor({ timeout: 15_000 });
    expect(await page.locator('#controls').count()).toBe(0);
    expect(await page.locator('button').count()).toBe(0);
    await page.close();
  });
});
