/**
 * The dead-man test: a bot child keeps orders resting under a short cancel-all-after timeout;
 * it is killed with SIGKILL (no clean shutdown, so nothing cancels or disarms), and the
 * emulator, its clock moved past the deadline, must cancel those orders and say so on the risk
 * channel.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PrivateEvent } from '../../src/protocol/index.ts';
import {
  allOrders,
  delay,
  FIXTURE_STRATEGIES,
  type PacedEmulator,
  spawnBot,
  startPacedEmulator,
  writeBotConfig,
  writeEmulatorKey,
} from './helpers.ts';

const ACTIVE = new Set(['PENDING', 'SUBMITTED', 'OPEN', 'PARTIALLY_FILLED']);
const TIMEOUT_SECONDS = 5;

let paced: PacedEmulator;
let directory: string;

beforeAll(async () => {
  paced = await startPacedEmulator();
  directory = mkdtempSync(join(tmpdir(), 'paperbot-deadman-'));
});

afterAll(async () => {
  await paced.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('the dead-man switch outlives the bot', () => {
  it('cancels a killed bot’s orders when the deadline passes, and emits the risk event', async () => {
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
      // A short timeout needs a margin it can survive: 1250 + 2 x 1000 ms < 5 s.
      deadman: { timeout_seconds: TIMEOUT_SECONDS, latency_margin_ms: 1_000 },
      journal: { path: join(directory, 'journal.sqlite') },
      metrics: { enabled: false },
      market_data: { markets: ['BTC-PERP'] },
    });
    const active = () =>
      allOrders(paced.emulator, key.accountId).filter((order) => ACTIVE.has(order.status));

    const child = spawnBot(configPath);
    await child.waitFor(
      (record) => record.msg === 'dead-man deadline armed',
      'the dead-man deadline',
    );
    let placed = 0;
    await child.waitFor(
      (record) => record.msg === 'intent submitted' && ++placed >= 3,
      'three resting orders',
    );
    while (active().some((order) => order.status !== 'OPEN')) await delay(5);
    const resting = active();
    expect(resting).toHaveLength(3);

    child.process.kill('SIGKILL');
    expect(await child.exited).toBe('SIGKILL');
    paced.freeze();
    const events: PrivateEvent[] = [];
    const stop = paced.emulator.exchange.onPrivateEvent((accountId, event) => {
      if (accountId === key.accountId) events.push(event);
    });
    try {
      // The last refresh was at most a quarter of the timeout ago, so the deadline is still
      // more than half the timeout away: nothing is cancelled yet.
      const killedAt = paced.clock.now();
      paced.clock.advanceTo(killedAt + (TIMEOUT_SECONDS * 1000) / 2);
      expect(
        active()
          .map((order) => order.order_id)
          .sort(),
      ).toEqual(resting.map((order) => order.order_id).sort());
      expect(events).toEqual([]);

      paced.clock.advanceTo(killedAt + TIMEOUT_SECONDS * 1000 + 1);
      expect(active()).toEqual([]);
      const after = allOrders(paced.emulator, key.accountId);
      for (const order of resting) {
        expect(after.find((candidate) => candidate.order_id === order.order_id)?.status).toBe(
          'CANCELLED',
        );
      }
      const triggered = events.filter((event) => event.type === 'cancel_all_after.triggered');
      expect(triggered).toHaveLength(1);
      // The risk event follows the cancellations it reports.
      const lastCancel = events.findLastIndex(
        (event) => event.type === 'authoritative_status' && event.data.to_state === 'CANCELLED',
      );
      expect(events.indexOf(triggered[0] as PrivateEvent)).toBeGreaterThan(lastCancel);
    } finally {
      stop();
    }
  }, 30_000);
});
