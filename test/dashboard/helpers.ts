/** Shared pieces of the dashboard tests: a bot on its embedded emulator, and a browser. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { Bot } from '../../src/cli/bot/bot.ts';
import { resolveBotConfig } from '../../src/cli/bot/config.ts';
import { createBotLogger } from '../../src/cli/bot/logging.ts';
import { systemClock } from '../../src/core/clock.ts';
import { delay, LineCollector } from '../bot/helpers.ts';

export const REPOSITORY_ROOT = resolve(import.meta.dirname, '../..');
export const ARTIFACTS = join(REPOSITORY_ROOT, 'test-artifacts', 'dashboard');

export function temporaryDirectory(): string {
  return mkdtempSync(join(tmpdir(), 'paperbot-dashboard-'));
}

/** A market maker quoting close to the mark, so orders appear at once and fills soon. */
export function marketMakerBot(directory: string, extra: Record<string, unknown> = {}) {
  return {
    venue: {
      key_file: null,
      emulator: { seed: 'dashboard-e2e', data_dir: null },
      reading: 'strict',
    },
    strategies_dir: join(REPOSITORY_ROOT, 'strategies'),
    strategies: [
      {
        id: 'mm-btc',
        name: 'market-maker',
        params: { markets: ['BTC-PERP'], halfSpreadTicks: 2, refreshTicks: 4, quantity: '0.002' },
      },
    ],
    risk: { kill_switch: { file: join(directory, 'paperbot.kill'), poll_ms: 50, signal: null } },
    journal: { path: join(directory, 'journal.sqlite'), durability: 'normal' },
    metrics: { host: '127.0.0.1', port: 0 },
    market_data: { markets: ['BTC-PERP'] },
    dashboard: { update_ms: 250 },
    ...extra,
  };
}

export async function startBot(
  document: Record<string, unknown>,
  lines: LineCollector,
): Promise<Bot> {
  const loaded = await resolveBotConfig(document, 'test');
  return Bot.start({
    loaded,
    logger: createBotLogger({ level: 'info', clock: systemClock, destination: lines }),
    signalSource: null,
    processMetrics: false,
  });
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

export async function until(what: string, test: () => boolean, timeoutMs = 15_000) {
  const deadline = systemClock.now() + timeoutMs;
  while (!test()) {
    if (systemClock.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

export { LineCollector };
