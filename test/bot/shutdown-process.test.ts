/**
 * The shutdown as a real `paperbot run` process sees it, against a real emulator on a loopback
 * port whose fault injection refuses the shutdown cancel-all: with 429s and a 503 the bot waits,
 * recovers by request id, resends, confirms that no order is open and exits 0; when the venue
 * keeps refusing past the shutdown deadline it exits 3 and names the orders that may remain.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allOrders,
  type BotChild,
  delay,
  FIXTURE_STRATEGIES,
  type PacedEmulator,
  spawnBot,
  startPacedEmulator,
  writeBotConfig,
  writeEmulatorKey,
} from './helpers.ts';

const ACTIVE = new Set(['PENDING', 'SUBMITTED', 'OPEN', 'PARTIALLY_FILLED']);

let paced: PacedEmulator;
const directories: string[] = [];

beforeAll(async () => {
  paced = await startPacedEmulator({ seed: 'shutdown-process' });
});

afterAll(async () => {
  await paced.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** A bot with three orders resting at the emulator; resolves once they are all OPEN. */
async function botWithRestingOrders(shutdown: Record<string, unknown>) {
  const directory = mkdtempSync(join(tmpdir(), 'paperbot-shutdown-'));
  directories.push(directory);
  const key = await writeEmulatorKey(paced.emulator, directory);
  const configPath = writeBotConfig(directory, {
    venue: { key_file: key.path },
    strategies_dir: FIXTURE_STRATEGIES,
    strategies: [
      {
        id: 'rest',
        name: 'steady-submitter',
        params: { marketId: 'BTC-PERP', intervalMs: 50, maxOpen: 3, churn: false },
      },
    ],
    risk: { kill_switch: { file: null, signal: null } },
    shutdown,
    journal: { path: join(directory, 'journal.sqlite') },
    metrics: { enabled: false },
    market_data: { markets: ['BTC-PERP'] },
  });
  const active = () =>
    allOrders(paced.emulator, key.accountId).filter((order) => ACTIVE.has(order.status));
  const child: BotChild = spawnBot(configPath);
  let placed = 0;
  await child.waitFor(
    (record) => record.msg === 'intent submitted' && ++placed >= 3,
    'three resting orders',
    30_000,
  );
  for (let round = 0; round < 2_000 && active().some((order) => order.status !== 'OPEN'); round++) {
    await delay(5);
  }
  expect(active().map((order) => order.status)).toEqual(['OPEN', 'OPEN', 'OPEN']);
  return { child, active };
}

describe('paperbot run: the shutdown finishes its job', () => {
  it('rides out 429s and a 503 on the cancel-all, confirms, and exits 0', async () => {
    const { child, active } = await botWithRestingOrders({ retry_base_delay_ms: 200 });
    const controls = paced.emulator.controls;
    // Rules apply in order: two 429s (Retry-After 1 s), then one 503 that applied nothing.
    controls.failRequests({
      endpoint: 'cancelAllOrders',
      code: 'RATE_LIMITED',
      count: 2,
      retryAfterSeconds: 1,
    });
    controls.failRequests({ endpoint: 'cancelAllOrders', code: 'EXECUTION_UNAVAILABLE', count: 1 });
    try {
      child.process.kill('SIGINT');
      expect(await child.exited).toBe(0);
    } finally {
      controls.clearFaults();
    }
    expect(active()).toEqual([]);
    // Two 429s, a 503, a recovery read that found nothing, then the same bytes again.
    expect(
      child.records.find((record) => record.msg === 'shutdown cancel-all accepted'),
    ).toMatchObject({ attempts: 5, recovered: false });
    expect(child.records.find((record) => record.event === 'bot.shutdown')).toMatchObject({
      cancelled: true,
      confirmed: true,
      disarmed: true,
      remaining_order_ids: [],
    });
    expect(child.stderr()).toBe('');
  }, 60_000);

  it('exits 3 naming the orders when the venue keeps refusing past the shutdown deadline', async () => {
    const { child, active } = await botWithRestingOrders({
      deadline_ms: 3_000,
      retry_base_delay_ms: 200,
      retry_max_delay_ms: 500,
      max_attempts: 50,
    });
    const resting = active()
      .map((order) => order.order_id)
      .sort();
    const controls = paced.emulator.controls;
    controls.failRequests({
      endpoint: 'cancelAllOrders',
      code: 'EXECUTION_UNAVAILABLE',
      count: Number.POSITIVE_INFINITY,
    });
    try {
      child.process.kill('SIGINT');
      expect(await child.exited).toBe(3);
    } finally {
      controls.clearFaults();
    }
    // Nothing was cancelled, and the bot says exactly which orders it leaves behind.
    expect(
      active()
        .map((order) => order.order_id)
        .sort(),
    ).toEqual(resting);
    expect(child.records.find((record) => record.event === 'bot.shutdown')).toMatchObject({
      confirmed: false,
      disarmed: false,
      remaining_order_ids: resting,
    });
    expect(child.stderr()).toContain(`these may remain open: ${resting.join(', ')}`);
  }, 60_000);
});
