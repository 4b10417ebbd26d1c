/**
 * Exactly-once fills across crashes, with the real bot process and the real emulator (on
 * loopback, its state in SQLite): the bot is killed with SIGKILL while its orders rest, a second
 * client takes them while it is down, and the bot restarts on the same journal. Every venue
 * fill (GET /v1/fills) must land exactly once in the journal, in the fill log lines and in
 * `paperbot_fills_total`; every order event of the account once in the journal's ledger.
 *
 * The second downtime also cuts the emulator's event log (its oldest events dropped, as a
 * venue with a short retention would), so the fills made meanwhile can only come back through
 * GET /v1/fills, read back to the last fill the journal knows.
 *
 * Last, a rejected simulation: the venue's issues reach the bot's log line and the journal.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../../src/client/index.ts';
import { systemClock } from '../../src/core/clock.ts';
import { DATABASE_FILE, DEFAULT_EMULATOR_CONFIG_INPUT } from '../../src/emulator/index.ts';
import type { Fill, Order, PrivateEvent } from '../../src/protocol/index.ts';
import { Journal } from '../../src/runtime/journal/index.ts';
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

let paced: PacedEmulator;
let directory: string;
let taker: RestClient;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'paperbot-fills-'));
  // No market simulation: only the orders placed here trade, so every fill is one the test made.
  paced = await startPacedEmulator({
    dataDir: join(directory, 'emulator'),
    config: {
      ...DEFAULT_EMULATOR_CONFIG_INPUT,
      simulation: { ...DEFAULT_EMULATOR_CONFIG_INPUT.simulation, enabled: false },
    },
  });
  taker = new RestClient({ credential: paced.emulator.createKey() });
});

afterAll(async () => {
  await taker?.close();
  await paced?.close();
  rmSync(directory, { recursive: true, force: true });
});

async function until<T>(read: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = systemClock.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (systemClock.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

function restingOrders(accountId: string): Order[] {
  return allOrders(paced.emulator, accountId)
    .filter((order) => order.status === 'OPEN')
    .sort((a, b) => Number(b.price) - Number(a.price));
}

function venueFills(accountId: string): Fill[] {
  const fills: Fill[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = paced.emulator.exchange.listFills(accountId, {
      limit: 200,
      ...(cursor === undefined ? {} : { cursor }),
    });
    fills.push(...page.data);
    if (!page.page.has_more || page.page.next_cursor === null) return fills;
    cursor = page.page.next_cursor;
  }
}

function venueEvents(accountId: string): PrivateEvent[] {
  const events: PrivateEvent[] = [];
  let after = 0;
  for (;;) {
    const page = paced.emulator.exchange.listEvents(accountId, after, 200);
    events.push(...page.data);
    const last = page.data[page.data.length - 1];
    if (!page.has_more || last === undefined) return events;
    after = last.sequence;
  }
}

/** Takes the `count` highest resting bids of the bot with immediate-or-cancel sells. */
async function takeResting(accountId: string, count: number, label: string): Promise<void> {
  const taken = restingOrders(accountId).slice(0, count);
  expect(taken).toHaveLength(count);
  const before = venueFills(accountId).length;
  for (const [index, order] of taken.entries()) {
    await taker.placeOrder({
      request_id: `take-${label}-${index}`,
      client_order_id: `take-${label}-${index}`,
      market_id: 'BTC-PERP',
      side: 'sell',
      type: 'limit',
      quantity: order.quantity ?? '0',
      price: order.price ?? '0',
      time_in_force: 'IOC',
      leverage: 1,
    });
  }
  // Bids at one price fill in time order, so count fills rather than name orders.
  await until(
    () => (venueFills(accountId).length === before + count ? true : undefined),
    `${count} fills (${label})`,
  );
}

function fillLines(child: BotChild): string[] {
  return child.records
    .filter((record) => record.event === 'fill')
    .map((record) => String(record.fill_id));
}

async function fillsMetric(child: BotChild): Promise<number> {
  const started = await child.waitFor((record) => record.event === 'bot.started', 'the start line');
  const text = await (await fetch(String(started.metrics))).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('paperbot_fills_total{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

function readJournal<T>(path: string, read: (journal: Journal) => T): T {
  const journal = Journal.open(path, { now: () => systemClock.now() });
  try {
    return read(journal);
  } finally {
    journal.close();
  }
}

describe('fills across bot crashes (SIGKILL while orders rest, fills made while it is down)', () => {
  it('lands every venue fill exactly once in the journal, the log lines and the fills metric', async () => {
    const key = await writeEmulatorKey(paced.emulator, directory);
    const accountId = key.accountId;
    const journalPath = join(directory, 'journal.sqlite');
    const configPath = writeBotConfig(directory, {
      venue: { key_file: key.path },
      strategies_dir: FIXTURE_STRATEGIES,
      strategies: [
        {
          id: 'rester',
          name: 'steady-submitter',
          params: { marketId: 'BTC-PERP', intervalMs: 40, maxOpen: 4, churn: false },
        },
      ],
      risk: {
        max_orders_per_second: 100,
        max_orders_per_minute: 6000,
        kill_switch: { file: null, signal: null },
      },
      journal: { path: journalPath, durability: 'normal' },
      metrics: { enabled: true, port: 0 },
      market_data: { markets: ['BTC-PERP'] },
    });
    const headBefore = paced.emulator.exchange.lastSequence(accountId);
    const runs: BotChild[] = [];

    // Run 1: four bids rest; one is taken while the bot watches.
    const first = spawnBot(configPath);
    runs.push(first);
    await first.waitFor((record) => record.event === 'bot.started', 'the start line');
    await until(() => (restingOrders(accountId).length === 4 ? true : undefined), '4 resting');
    await takeResting(accountId, 1, 'live');
    await first.waitFor((record) => record.event === 'fill', 'the live fill line');
    await until(() => (restingOrders(accountId).length === 4 ? true : undefined), '4 resting');
    first.process.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    // Down 1: two bids are taken; the event log still reaches back to the journal's sequence.
    await takeResting(accountId, 2, 'down1');
    const downOne = venueFills(accountId).slice(0, 2);

    const second = spawnBot(configPath);
    runs.push(second);
    for (const fill of downOne) {
      await second.waitFor(
        (record) => record.event === 'fill' && record.fill_id === fill.fill_id,
        `the fill line of ${fill.fill_id}`,
      );
    }
    await until(() => (restingOrders(accountId).length === 4 ? true : undefined), '4 resting');
    expect(await fillsMetric(second)).toBe(fillLines(second).length);
    await delay(200);
    second.process.kill('SIGKILL');
    expect(await second.exited).toBe('SIGKILL');

    // Down 2: two more bids are taken, then the venue's log loses every event but the newest.
    const cursorAtCrash = readJournal(journalPath, (journal) => journal.privateCursor());
    expect(cursorAtCrash).not.toBeNull();
    const orderEventsAtCrash = venueEvents(accountId).filter(
      (event) =>
        event.channel === 'orders' &&
        event.sequence > headBefore &&
        event.sequence <= (cursorAtCrash?.lastSequence ?? 0),
    );
    await takeResting(accountId, 2, 'down2');
    const downTwo = venueFills(accountId).slice(0, 2);
    const head = paced.emulator.exchange.lastSequence(accountId);
    const emulatorDatabase = new Database(join(directory, 'emulator', DATABASE_FILE));
    const dropped = emulatorDatabase
      .prepare('DELETE FROM events WHERE account_id = ? AND sequence < ?')
      .run(accountId, head).changes;
    emulatorDatabase.close();
    expect(dropped).toBeGreaterThan(0);
    expect(
      paced.emulator.exchange.listEvents(accountId, 0, 10).data.map((e) => e.sequence),
    ).toEqual([head]);

    const third = spawnBot(configPath);
    runs.push(third);
    for (const fill of downTwo) {
      await third.waitFor(
        (record) => record.event === 'fill' && record.fill_id === fill.fill_id,
        `the read-back fill line of ${fill.fill_id}`,
      );
    }
    await third.waitFor((record) => record.msg === 'fills read back over REST', 'the read-back');
    expect(await fillsMetric(third)).toBe(fillLines(third).length);
    third.process.kill('SIGTERM');
    expect(await third.exited).toBe(0);

    // Every venue fill once in the log lines, over all runs.
    const fills = venueFills(accountId);
    expect(fills).toHaveLength(5);
    const logged = runs.flatMap(fillLines);
    expect([...logged].sort()).toEqual(fills.map((fill) => fill.fill_id).sort());

    readJournal(journalPath, (journal) => {
      // Every venue fill once in the journal, as the venue gave it.
      expect(journal.fillCount()).toBe(fills.length);
      for (const fill of fills) expect(journal.fill(fill.fill_id)?.fill).toEqual(fill);
      // The first downtime's fills came through the event log, with their sequences; the
      // second's only through GET /v1/fills.
      for (const fill of downOne) {
        expect(journal.fill(fill.fill_id)).toMatchObject({ source: 'stream' });
        expect(journal.fill(fill.fill_id)?.sequence).toBeGreaterThan(0);
      }
      // (The one event left in the log may be one of them, delivered by the stream.)
      const readBack = downTwo.filter((fill) => journal.fill(fill.fill_id)?.source === 'rest');
      expect(readBack.length).toBeGreaterThanOrEqual(1);
      for (const fill of readBack) expect(journal.fill(fill.fill_id)?.sequence).toBeNull();
      expect(journal.pendingFillReadBack()).toBeNull();
      // Every order event the venue logged while the bot (or its journal) could see it, once.
      const ledger = journal.orderEvents();
      expect(new Set(ledger.map((row) => row.sequence)).size).toBe(ledger.length);
      const bySequence = new Map(ledger.map((row) => [row.sequence, row]));
      expect(orderEventsAtCrash.length).toBeGreaterThan(8);
      for (const event of orderEventsAtCrash) {
        expect(bySequence.get(event.sequence)?.eventId, `order event ${event.sequence}`).toBe(
          event.event_id,
        );
      }
    });
  }, 90_000);
});

/** Fill ids in the archive files of `folder` (journal retention, mode archive). */
function archivedFillIds(folder: string): string[] {
  if (!existsSync(folder)) return [];
  const ids: string[] = [];
  for (const name of readdirSync(folder).filter((file) => file.endsWith('.sqlite'))) {
    const archive = new Database(join(folder, name), { readonly: true });
    try {
      ids.push(...(archive.prepare('SELECT fill_id FROM seen_fills').pluck().all() as string[]));
    } finally {
      archive.close();
    }
  }
  return ids;
}

describe('fills across a SIGKILL right after a retention pass (a short window)', () => {
  it('lands every venue fill once in the log lines and once in the journal or its archive', async () => {
    const folder = join(directory, 'retention');
    mkdirSync(folder, { recursive: true });
    const key = await writeEmulatorKey(paced.emulator, folder);
    const accountId = key.accountId;
    const journalPath = join(folder, 'journal.sqlite');
    const archiveDir = join(folder, 'archive');
    const configPath = writeBotConfig(folder, {
      venue: { key_file: key.path },
      strategies_dir: FIXTURE_STRATEGIES,
      strategies: [
        {
          id: 'rester',
          name: 'steady-submitter',
          params: { marketId: 'BTC-PERP', intervalMs: 40, maxOpen: 4, churn: false },
        },
      ],
      risk: {
        max_orders_per_second: 100,
        max_orders_per_minute: 6000,
        kill_switch: { file: null, signal: null },
      },
      journal: {
        path: journalPath,
        durability: 'normal',
        retention: {
          window: '300ms',
          interval: '200ms',
          pause: '1ms',
          mode: 'archive',
          archive_dir: archiveDir,
        },
      },
      metrics: { enabled: false },
      market_data: { markets: ['BTC-PERP'] },
    });
    const runs: BotChild[] = [];

    // Run 1: three bids taken while the bot watches; killed right after a pass moved fills.
    const first = spawnBot(configPath);
    runs.push(first);
    await first.waitFor((record) => record.event === 'bot.started', 'the start line');
    await until(() => (restingOrders(accountId).length === 4 ? true : undefined), '4 resting');
    await takeResting(accountId, 3, 'retention-live');
    await until(() => (fillLines(first).length === 3 ? true : undefined), 'three fill lines');
    await first.waitFor(
      (record) => record.event === 'journal.retention' && Number(record.fills) > 0,
      'a retention pass that moved fills',
    );
    first.process.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(archivedFillIds(archiveDir).length).toBeGreaterThan(0);

    // Down: two more bids are taken.
    await takeResting(accountId, 2, 'retention-down');
    const down = venueFills(accountId).slice(0, 2);

    const second = spawnBot(configPath);
    runs.push(second);
    for (const fill of down) {
      await second.waitFor(
        (record) => record.event === 'fill' && record.fill_id === fill.fill_id,
        `the fill line of ${fill.fill_id}`,
      );
    }
    await until(() => (restingOrders(accountId).length === 4 ? true : undefined), '4 resting');
    await delay(500);
    second.process.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    const fills = venueFills(accountId).map((fill) => fill.fill_id);
    expect(fills).toHaveLength(5);
    // Each fill logged once over both runs: none pruned and then taken for a new one.
    expect(runs.flatMap(fillLines).sort()).toEqual([...fills].sort());
    const live = readJournal(journalPath, (journal) =>
      fills.filter((fillId) => journal.fill(fillId) !== undefined),
    );
    const kept = new Set([...live, ...archivedFillIds(archiveDir)]);
    expect([...kept].sort()).toEqual([...fills].sort());
    expect(readJournal(journalPath, (journal) => journal.openIntents())).toEqual([]);
  }, 90_000);
});

describe('a placement whose simulation is not READY', () => {
  it("logs and journals a rejected simulation with the venue's reasons", async () => {
    const folder = join(directory, 'rejection');
    mkdirSync(folder);
    // Every order of this key breaks its notional limit: the simulation says REJECTED.
    const key = await writeEmulatorKey(paced.emulator, folder, { maxOrderNotional: '1' });
    const journalPath = join(folder, 'journal.sqlite');
    const configPath = writeBotConfig(folder, {
      venue: { key_file: key.path },
      strategies_dir: FIXTURE_STRATEGIES,
      strategies: [
        {
          id: 'refused',
          name: 'steady-submitter',
          params: { marketId: 'BTC-PERP', intervalMs: 40, maxOpen: 1, churn: false },
        },
      ],
      risk: { kill_switch: { file: null, signal: null } },
      journal: { path: journalPath, durability: 'normal' },
      metrics: { enabled: false },
      market_data: { markets: ['BTC-PERP'] },
    });
    const bot = spawnBot(configPath);
    const line = await bot.waitFor(
      (record) => record.msg === 'intent submitted' && record.code === 'SIMULATION_NOT_READY',
      'a rejected simulation',
    );
    bot.process.kill('SIGTERM');
    expect(await bot.exited).toBe(0);
    expect(line.reason).toMatch(/^simulation decided REJECTED: RISK_LIMIT_EXCEEDED: .+/);
    expect(line.issues).toEqual([expect.objectContaining({ code: 'RISK_LIMIT_EXCEEDED' })]);
    readJournal(journalPath, (journal) => {
      const intent = journal.getIntent(String(line.request_id));
      expect(intent?.state).toBe('rejected');
      expect(intent?.outcome).toMatchObject({
        code: 'SIMULATION_NOT_READY',
        message: line.reason,
        issues: line.issues,
      });
    });
  }, 30_000);
});
