/**
 * The emulator's data dir keeps its windows: the newest events (and fills) per account, the
 * newest idempotency records and terminal orders. Through the real server on a loopback port:
 * after pruning, GET /v1/events still serves the whole retained window contiguously (what a
 * reconnecting client reads back), older request ids are unknown again, and a restart reads the
 * same bounded file.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { EventsPage } from '../../../src/protocol/index.ts';
import {
  expectError,
  limitOrder,
  SignedClient,
  START_MS,
  startTestEmulator,
  TestHttp,
} from '../server/helpers.ts';

let folder: string;
let http: TestHttp;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'paperbot-emulator-retention-'));
  http = new TestHttp();
});

afterEach(async () => {
  await http.close();
  await rm(folder, { recursive: true, force: true });
});

const WINDOWS = {
  retainedEvents: 40,
  retainedFills: 40,
  retainedIdempotency: 30,
  retainedTerminalOrders: 20,
  pruneEveryCommits: 4,
};

async function allEvents(client: SignedClient, after: number) {
  const events: { sequence: number }[] = [];
  let cursor = after;
  for (let page = 0; page < 50; page++) {
    const reply = EventsPage.parse(
      (await client.get(`/v1/events?after_sequence=${cursor}&limit=200`)).json,
    );
    events.push(...reply.data);
    if (!reply.has_more || reply.data.length === 0) break;
    cursor = reply.data[reply.data.length - 1]?.sequence ?? cursor;
  }
  return events.map((event) => event.sequence);
}

describe('emulator store windows (data dir)', () => {
  it('prunes beyond its windows and still serves the retained events page contiguously', async () => {
    const clock = new VirtualClock(START_MS);
    const emulator = await startTestEmulator({ clock, dataDir: folder, storeWindows: WINDOWS });
    const credential = emulator.createKey();
    const client = new SignedClient(http, emulator, credential);
    const placed: string[] = [];
    for (let index = 0; index < 80; index++) {
      const order = limitOrder({ price: String(50_000 + index) });
      placed.push(order.request_id as string);
      clock.advanceBy(30);
      const reply = await client.post('/v1/orders', order);
      const orderId = (reply.json as { order_id: string }).order_id;
      const cancel = await client.post(`/v1/orders/${orderId}/cancel`, {
        request_id: `cancel-${index.toString().padStart(6, '0')}`,
      });
      expect(cancel.status).toBe(202);
      clock.advanceBy(30);
    }
    const sequences = await allEvents(client, 0);
    const newest = sequences[sequences.length - 1] as number;
    expect(newest).toBeGreaterThan(3 * WINDOWS.retainedEvents);
    // Older events left; the retained window is there, contiguous, up to the newest.
    expect(sequences[0]).toBeGreaterThan(1);
    expect(sequences.length).toBeGreaterThanOrEqual(WINDOWS.retainedEvents);
    expect(sequences.length).toBeLessThan(WINDOWS.retainedEvents + 4 * 8);
    for (let index = 1; index < sequences.length; index++) {
      expect(sequences[index]).toBe((sequences[index - 1] as number) + 1);
    }
    // A client that is behind by the window reads every event after its sequence.
    const behind = newest - WINDOWS.retainedEvents;
    expect(await allEvents(client, behind)).toEqual(
      Array.from({ length: WINDOWS.retainedEvents }, (_, index) => behind + 1 + index),
    );
    // The newest request is still known; the oldest is unknown again.
    expect((await client.get(`/v1/requests/${placed[placed.length - 1] as string}`)).status).toBe(
      200,
    );
    expectError(await client.get(`/v1/requests/${placed[0] as string}`), 404, 'ORDER_NOT_FOUND');
    await emulator.close();

    const raw = new Database(join(folder, 'emulator.sqlite'), { readonly: true });
    try {
      const count = (table: string) =>
        raw.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
      expect(count('events')).toBeLessThan(WINDOWS.retainedEvents + 4 * 8);
      expect(count('idempotency')).toBeLessThan(WINDOWS.retainedIdempotency + 4 * 8);
      expect(count('orders')).toBeLessThan(WINDOWS.retainedTerminalOrders + 4 * 8);
    } finally {
      raw.close();
    }

    // A restart reads the bounded file and serves the same window.
    const again = await startTestEmulator({
      clock,
      dataDir: folder,
      storeWindows: WINDOWS,
    });
    const fresh = new TestHttp();
    try {
      const after = new SignedClient(fresh, again, credential);
      expect((await allEvents(after, behind)).length).toBe(WINDOWS.retainedEvents);
    } finally {
      await fresh.close();
      await again.close();
    }
  });
});
