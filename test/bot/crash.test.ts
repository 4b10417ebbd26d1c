/**
 * Crash tests of the bot process: the emulator runs here, the bot as a child process that this
 * test kills with SIGKILL at random points of its submissions (kill points drawn from a seeded
 * PRNG), then restarts on the same journal. After the last run the emulator must hold no two
 * orders with the same client order id or request id, and the journal no unresolved intent.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.ts';
import { Journal } from '../../src/runtime/journal/index.ts';
import {
  allOrders,
  type BotChild,
  delay,
  FIXTURE_STRATEGIES,
  type PacedEmulator,
  seededRandom,
  spawnBot,
  startPacedEmulator,
  writeBotConfig,
  writeEmulatorKey,
} from './helpers.ts';

const SEED = 0x5eed_2024;

type KillMode = 'random' | 'answer_delayed' | 'response_dropped' | 'never_received';

let paced: PacedEmulator;
let directory: string;

beforeAll(async () => {
  paced = await startPacedEmulator();
  directory = mkdtempSync(join(tmpdir(), 'paperbot-crash-'));
});

afterAll(async () => {
  await paced.close();
  rmSync(directory, { recursive: true, force: true });
});

function openIntentsIn(journalPath: string): number {
  const journal = Journal.open(journalPath, { now: () => systemClock.now() });
  try {
    return journal.openIntents().length;
  } finally {
    journal.close();
  }
}

/** Resolves when the emulator commits the next order of the account (its first status event). */
function nextOrderCommitted(accountId: string): Promise<void> {
  return new Promise((resolve) => {
    const stop = paced.emulator.exchange.onPrivateEvent((account, event) => {
      if (
        account === accountId &&
        event.type === 'authoritative_status' &&
        event.data.from_state === null
      ) {
        stop();
        resolve();
      }
    });
  });
}

async function faultConsumed(): Promise<void> {
  while (paced.emulator.controls.faults().requests.length > 0) await delay(2);
}

describe('bot crash recovery (SIGKILL during submission, restart on the same journal)', () => {
  it('leaves no duplicate order at the emulator and every journaled intent resolved', async () => {
    const random = seededRandom(SEED);
    const key = await writeEmulatorKey(paced.emulator, directory);
    const journalPath = join(directory, 'journal.sqlite');
    const configPath = writeBotConfig(directory, {
      venue: { key_file: key.path },
      strategies_dir: FIXTURE_STRATEGIES,
      strategies: [
        {
          id: 'steady',
          name: 'steady-submitter',
          params: { marketId: 'BTC-PERP', intervalMs: 40, maxOpen: 4 },
        },
      ],
      risk: {
        max_orders_per_second: 100,
        max_orders_per_minute: 6000,
        kill_switch: { file: null, signal: null },
      },
      execution: { resolution_base_delay_ms: 50 },
      journal: { path: journalPath, durability: 'normal' },
      metrics: { enabled: false },
      market_data: { markets: ['BTC-PERP'] },
    });

    // Every mode once, in a seeded order, then one more random kill.
    const modes: KillMode[] = ['random', 'answer_delayed', 'response_dropped', 'never_received'];
    for (let index = modes.length - 1; index > 0; index--) {
      const other = Math.floor(random() * (index + 1));
      [modes[index], modes[other]] = [modes[other] as KillMode, modes[index] as KillMode];
    }
    modes.push('random');

    const openAtKill: number[] = [];
    for (const mode of modes) {
      const child: BotChild = spawnBot(configPath);
      let submitted = 0;
      const target = 1 + Math.floor(random() * 3);
      await child.waitFor(
        (record) => record.msg === 'intent submitted' && ++submitted >= target,
        `intent submitted #${target}`,
      );
      const controls = paced.emulator.controls;
      switch (mode) {
        case 'random':
          await delay(Math.floor(random() * 80));
          break;
        case 'answer_delayed': {
          // Committed at the venue, the answer still on its way: the journal says `sending`.
          const committed = nextOrderCommitted(key.accountId);
          controls.delayResponses({ endpoint: 'placeOrder', delayMs: 3_000, count: 1 });
          await committed;
          await delay(Math.floor(random() * 10));
          break;
        }
        case 'response_dropped':
          // Committed, the connection cut: the bot is resolving an unknown outcome.
          controls.dropResponses({ endpoint: 'placeOrder', count: 1 });
          await faultConsumed();
          await delay(Math.floor(random() * 30));
          break;
        case 'never_received':
          // Refused before committing: a resend of the journaled bytes is due.
          controls.failRequests({
            endpoint: 'placeOrder',
            code: 'EXECUTION_UNAVAILABLE',
            commit: false,
            count: 1,
          });
          await faultConsumed();
          await delay(Math.floor(random() * 30));
          break;
      }
      child.process.kill('SIGKILL');
      expect(await child.exited).toBe('SIGKILL');
      controls.clearFaults();
      const open = openIntentsIn(journalPath);
      // Killed between the venue's commit and its answer: the intent must still be open.
      if (mode === 'answer_delayed') expect(open).toBeGreaterThan(0);
      openAtKill.push(open);
    }

    // The last run: it must settle what the others left, trade on, and stop cleanly.
    const last = spawnBot(configPath);
    await last.waitFor((record) => record.event === 'bot.started', 'the start line');
    let afterStart = 0;
    await last.waitFor(
      (record) => record.msg === 'intent submitted' && ++afterStart >= 3,
      'three more submissions',
    );
    last.process.kill('SIGTERM');
    expect(await last.exited).toBe(0);
    expect(last.records.some((record) => record.event === 'bot.stopped')).toBe(true);

    // The kills did land mid-submission: intents were left open for the restarts to settle.
    expect(openAtKill.reduce((sum, open) => sum + open, 0)).toBeGreaterThan(0);

    const orders = allOrders(paced.emulator, key.accountId);
    const clientOrderIds = orders.map((order) => order.client_order_id);
    const requestIds = orders.map((order) => order.request_id);
    expect(orders.length).toBeGreaterThan(modes.length);
    expect(clientOrderIds.every((id) => id !== null)).toBe(true);
    expect(new Set(clientOrderIds).size).toBe(orders.length);
    expect(new Set(requestIds).size).toBe(orders.length);

    const journal = Journal.open(journalPath, { now: () => systemClock.now() });
    try {
      expect(journal.openIntents()).toEqual([]);
      for (const order of orders) {
        // Every order at the venue is one of this journal's intents, which knows it was placed.
        const intent = journal.intentByClientOrderId(order.client_order_id ?? '');
        expect(intent, `order ${order.client_order_id}`).toBeDefined();
        expect(intent?.requestId).toBe(order.request_id);
        expect(['accepted', 'resolved']).toContain(intent?.state);
        expect(intent?.orderId).toBe(order.order_id);
      }
      const placed = journal.countIntents('accepted');
      expect(placed).toBeGreaterThan(0);
    } finally {
      journal.close();
    }
    // Nothing of the bot is left resting at the venue after the clean stop.
    expect(
      orders.filter((order) => ['PENDING', 'SUBMITTED', 'OPEN'].includes(order.status)),
    ).toEqual([]);
  }, 60_000);
});

/** Request ids (by client order id) of the intents in the archive files of `directory`. */
function archivedIntents(directory: string): Map<string, string> {
  const found = new Map<string, string>();
  if (!existsSync(directory)) return found;
  for (const name of readdirSync(directory).filter((file) => file.endsWith('.sqlite'))) {
    const archive = new Database(join(directory, name), { readonly: true });
    try {
      const rows = archive.prepare('SELECT request_id, client_order_id FROM intents').all() as {
        request_id: string;
        client_order_id: string | null;
      }[];
      for (const row of rows) {
        if (row.client_order_id !== null) found.set(row.client_order_id, row.request_id);
      }
    } finally {
      archive.close();
    }
  }
  return found;
}

describe('bot crash recovery with journal retention (SIGKILL right after a prune)', () => {
  it('recovers every unsettled intent once; every order is in the live journal or the archive', async () => {
    const folder = join(directory, 'retention');
    mkdirSync(folder, { recursive: true });
    const key = await writeEmulatorKey(paced.emulator, folder);
    const journalPath = join(folder, 'journal.sqlite');
    const archiveDir = join(folder, 'archive');
    const configPath = writeBotConfig(folder, {
      venue: { key_file: key.path },
      strategies_dir: FIXTURE_STRATEGIES,
      strategies: [
        {
          id: 'steady',
          name: 'steady-submitter',
          params: { marketId: 'BTC-PERP', intervalMs: 40, maxOpen: 4 },
        },
      ],
      risk: {
        max_orders_per_second: 100,
        max_orders_per_minute: 6000,
        kill_switch: { file: null, signal: null },
      },
      execution: { resolution_base_delay_ms: 50 },
      // A window far below any real one: settled rows leave about a second after settling.
      journal: {
        path: journalPath,
        durability: 'normal',
        retention: {
          window: '1s',
          interval: '200ms',
          pause: '1ms',
          mode: 'archive',
          archive_dir: archiveDir,
        },
      },
      metrics: { enabled: false },
      market_data: { markets: ['BTC-PERP'] },
    });

    const openAtKill: number[] = [];
    for (let run = 0; run < 3; run++) {
      const child: BotChild = spawnBot(configPath);
      await child.waitFor((record) => record.event === 'bot.started', 'the start line');
      // An intent left open at the kill: the venue commits it, its answer is held back.
      const committed = nextOrderCommitted(key.accountId);
      paced.emulator.controls.delayResponses({
        endpoint: 'placeOrder',
        delayMs: 3_000,
        count: 1,
      });
      await committed;
      // Killed right after the next pass that moved rows.
      let passes = 0;
      await child.waitFor(
        (record) => record.event === 'journal.retention' && ++passes >= 1,
        'a retention pass',
      );
      child.process.kill('SIGKILL');
      expect(await child.exited).toBe('SIGKILL');
      paced.emulator.controls.clearFaults();
      openAtKill.push(openIntentsIn(journalPath));
    }
    expect(openAtKill.every((open) => open > 0)).toBe(true);

    const last = spawnBot(configPath);
    await last.waitFor((record) => record.event === 'bot.started', 'the start line');
    let afterStart = 0;
    await last.waitFor(
      (record) => record.msg === 'intent submitted' && ++afterStart >= 3,
      'three more submissions',
    );
    last.process.kill('SIGTERM');
    expect(await last.exited).toBe(0);

    const orders = allOrders(paced.emulator, key.accountId);
    const clientOrderIds = orders.map((order) => order.client_order_id ?? '');
    expect(new Set(clientOrderIds).size).toBe(orders.length);
    expect(new Set(orders.map((order) => order.request_id)).size).toBe(orders.length);

    const archived = archivedIntents(archiveDir);
    // Rows did leave the live journal into the archive.
    expect(archived.size).toBeGreaterThan(0);
    const journal = Journal.open(journalPath, { now: () => systemClock.now() });
    try {
      expect(journal.openIntents()).toEqual([]);
      for (const order of orders) {
        const live = journal.intentByClientOrderId(order.client_order_id ?? '');
        const requestId = live?.requestId ?? archived.get(order.client_order_id ?? '');
        expect(requestId, `order ${order.client_order_id}`).toBe(order.request_id);
      }
      // The sequence went on across the prunes: no request id was handed out twice.
      expect(journal.nextSequence('steady')).toBeGreaterThan(orders.length);
    } finally {
      journal.close();
    }
  }, 90_000);
});
