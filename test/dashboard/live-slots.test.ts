/**
 * The dashboard's live updates when others hold the slots, in Debian's headless Chromium with
 * a real bot on its embedded emulator:
 * - the first paint is in the HTML: with scripts off the page shows the trading state and the
 *   equity, never "Waiting for the bot…"; `/favicon.ico` is an icon;
 * - a stream per address at most MAXIMUM_EVENT_CLIENTS_PER_ADDRESS: idle clients opened after
 *   the page take the oldest slot (the page's), which is told so; the page then polls the
 *   snapshot, still shows the bot's data, and its Halt control still halts the bot;
 * - a page whose stream is refused outright (503) polls as well.
 */
import { connect, type Socket } from 'node:net';
import { rmSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { MAXIMUM_EVENT_CLIENTS_PER_ADDRESS } from '../../src/cli/dashboard/server.ts';
import { systemClock } from '../../src/core/clock.ts';
import {
  launchBrowser,
  LineCollector,
  marketMakerBot,
  startBot,
  temporaryDirectory,
  until,
} from './helpers.ts';

const directory = temporaryDirectory();
let browser: Browser;
const idle = new Set<Socket>();
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  for (const socket of idle) socket.destroy();
  await browser.close();
  rmSync(directory, { recursive: true, force: true });
});

/** An idle live-update client: opens the stream and never reads past its first bytes. */
function idleStream(port: number): Promise<{ socket: Socket; text: () => string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.write(
        `GET /dashboard/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`,
      );
    });
    idle.add(socket);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      const first = text === '';
      text += chunk;
      if (first) resolve({ socket, text: () => text });
    });
    socket.on('error', reject);
  });
}

describe('live updates under pressure', () => {
  it(
    'paints the first snapshot in the HTML, and keeps the page working when idle clients take the slots',
    { timeout: 60_000 },
    async () => {
      const lines = new LineCollector();
      const bot = await startBot(marketMakerBot(directory), lines);
      onTestFinished(async () => {
        await bot.stop('test cleanup');
      });
      const url = bot.httpUrl ?? '';
      const port = Number(new URL(url).port);
      const kernel = bot.kernel;
      if (kernel === null) throw new Error('no kernel');

      // The HTML itself, with scripts off: the state and the equity, no waiting line.
      const still = await browser.newContext({ javaScriptEnabled: false });
      const stillPage = await still.newPage();
      await stillPage.goto(`${url}/`);
      expect(await stillPage.locator('#trading-state').textContent()).toBe('ACTIVE');
      expect(await stillPage.locator('#equity').textContent()).toMatch(/^\d+(\.\d+)?$/);
      expect(await stillPage.locator('body').textContent()).not.toContain('Waiting for the bot');
      const icon = await stillPage.request.get(`${url}/favicon.ico`);
      expect(icon.status()).toBe(200);
      expect(icon.headers()['content-type']).toBe('image/svg+xml');
      expect(await icon.text()).toContain('<svg');
      await still.close();

      const page = await browser.newPage();
      page.on('dialog', (dialog) => void dialog.accept());
      const polls: string[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith('/dashboard/snapshot')) polls.push(request.url());
      });
      await page.goto(`${url}/`);
      await page.locator('#live', { hasText: 'live' }).waitFor({ timeout: 15_000 });

      // Idle clients from this process fill every slot of the address the page shares.
      const streams = [];
      for (let index = 0; index < MAXIMUM_EVENT_CLIENTS_PER_ADDRESS; index += 1) {
        streams.push(await idleStream(port));
      }
      for (const stream of streams) expect(stream.text()).toMatch(/^HTTP\/1\.1 200/);

      // The page's stream was the oldest: it was told, and the page polls the snapshot now.
      await page.locator('#live', { hasText: 'polling' }).waitFor({ timeout: 15_000 });
      await until('two snapshot polls', () => polls.length >= 2, 15_000);
      expect(await page.locator('#equity').textContent()).toMatch(/^\d+(\.\d+)?$/);
      expect(await page.locator('#trading-state').textContent()).toBe('ACTIVE');

      // And its controls work: Halt halts the bot, and the polled page shows it.
      await page.click('#control-halt');
      await page.locator('#trading-state', { hasText: 'HALTED' }).waitFor({ timeout: 10_000 });
      expect(kernel.status().tradingState).toBe('HALTED');
      await page.close();

      // One more idle client takes the oldest idle one's place, which is told to go.
      const before = streams[0];
      await idleStream(port);
      const deadline = systemClock.now() + 10_000;
      while (!/event: reaped/.test(before?.text() ?? '') && systemClock.now() < deadline) {
        await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 20));
      }
      expect(before?.text()).toContain('event: reaped');
    },
  );

  it('polls the snapshot when the stream is refused outright', { timeout: 60_000 }, async () => {
    const lines = new LineCollector();
    const bot = await startBot(marketMakerBot(temporaryDirectory()), lines);
    onTestFinished(async () => {
      await bot.stop('test cleanup');
    });
    const url = bot.httpUrl ?? '';
    const page = await browser.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    // As a proxy or an older bot that refuses the stream would answer.
    await page.route('**/dashboard/events', (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: '{"error":"too many dashboard connections"}',
      }),
    );
    await page.goto(`${url}/`);
    await page.locator('#live', { hasText: 'polling' }).waitFor({ timeout: 15_000 });
    expect(await page.locator('#equity').textContent()).toMatch(/^\d+(\.\d+)?$/);
    await page.click('#control-halt');
    await page.locator('#trading-state', { hasText: 'HALTED' }).waitFor({ timeout: 10_000 });
    expect(bot.kernel?.status().tradingState).toBe('HALTED');
    await page.close();
  });
});
