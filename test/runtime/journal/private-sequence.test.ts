/**
 * Exactly once by sequence, in the journal (schema 2): a fill row or an order event and the
 * private sequence it carried commit in one transaction; a failure between them loses both.
 * A version-1 journal is migrated in place and keeps everything it held.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { Journal } from '../../../src/runtime/journal/journal.ts';
import { JOURNAL_SCHEMA_VERSION, migrations } from '../../../src/runtime/journal/schema.ts';
import {
  fill,
  limitBuy,
  orderEvent,
  placeCommand,
  START,
  stamp,
  tempJournalPath,
} from '../execution/fixtures.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function temp(): string {
  const { path, cleanup } = tempJournalPath();
  cleanups.push(cleanup);
  return path;
}

function open(path: string): Journal {
  const clock = new VirtualClock(START);
  const journal = Journal.open(path, { now: () => clock.now(), durability: 'normal' });
  cleanups.push(() => journal.close());
  return journal;
}

/** Makes the disk refuse every write of the private sequence, as a crash at that moment would. */
function refuseCursorWrites(path: string): void {
  const raw = new Database(path);
  raw.exec(`
    CREATE TRIGGER refuse_cursor_insert BEFORE INSERT ON private_cursor
      BEGIN SELECT RAISE(ABORT, 'disk full'); END;
    CREATE TRIGGER refuse_cursor_update BEFORE UPDATE ON private_cursor
      BEGIN SELECT RAISE(ABORT, 'disk full'); END;`);
  raw.close();
}

describe('the private sequence in the journal', () => {
  it('stores a fill and its sequence together, keyed by fill_id', () => {
    const path = temp();
    const journal = open(path);
    expect(journal.schemaVersion).toBe(JOURNAL_SCHEMA_VERSION);
    expect(journal.privateCursor()).toBeNull();
    const first = fill({ fill_id: 'f-1', order_id: 'o-1', fee: '0.42' });
    expect(journal.recordFill(first, { sequence: 7, source: 'stream' })).toBe(true);
    // The same fill again (the event log's replay, then a REST read-back): not a new fill.
    expect(journal.recordFill(first, { sequence: 7, source: 'stream' })).toBe(false);
    expect(journal.recordFill(first, { sequence: null, source: 'rest' })).toBe(false);
    expect(journal.privateCursor()).toEqual({ lastSequence: 7, lastEventAt: first.occurred_at });
    // An older sequence never moves the stored one back.
    journal.recordFill(fill({ fill_id: 'f-0' }), { sequence: 5, source: 'stream' });
    expect(journal.privateCursor()?.lastSequence).toBe(7);
    journal.close();

    const again = open(path);
    expect(again.fill('f-1')).toMatchObject({
      fillId: 'f-1',
      orderId: 'o-1',
      sequence: 7,
      source: 'stream',
      fill: first,
    });
    expect(again.fillCount()).toBe(2);
    expect(again.privateCursor()?.lastSequence).toBe(7);
  });

  it('loses both the fill row and the sequence when the sequence cannot be written', () => {
    const path = temp();
    open(path).close();
    refuseCursorWrites(path);
    const journal = open(path);
    expect(() =>
      journal.recordFill(fill({ fill_id: 'f-lost' }), { sequence: 3, source: 'stream' }),
    ).toThrow('disk full');
    expect(journal.hasSeenFill('f-lost')).toBe(false);
    expect(journal.privateCursor()).toBeNull();
    // The same fill delivered again after the failure is new: it was never counted.
    journal.close();
    const raw = new Database(path);
    raw.exec('DROP TRIGGER refuse_cursor_insert; DROP TRIGGER refuse_cursor_update;');
    raw.close();
    const healed = open(path);
    expect(healed.recordFill(fill({ fill_id: 'f-lost' }), { sequence: 3, source: 'stream' })).toBe(
      true,
    );
  });

  it('applies an order event once: its row and its sequence together', () => {
    const path = temp();
    open(path).close();
    refuseCursorWrites(path);
    const failing = open(path);
    expect(() => failing.recordOrderEvent(orderEvent('o-1', null, 'PENDING', 4))).toThrow(
      'disk full',
    );
    expect(failing.orderEvents()).toEqual([]);
    failing.close();
    const raw = new Database(path);
    raw.exec('DROP TRIGGER refuse_cursor_insert; DROP TRIGGER refuse_cursor_update;');
    raw.close();

    const journal = open(path);
    const pending = orderEvent('o-1', null, 'PENDING', 4);
    expect(journal.recordOrderEvent(pending)).toBe(true);
    expect(journal.recordOrderEvent(pending)).toBe(false);
    expect(journal.recordOrderEvent(orderEvent('o-1', 'PENDING', 'OPEN', 6))).toBe(true);
    // At or below the highest sequence applied: applied before, whatever the event.
    expect(journal.recordOrderEvent(orderEvent('o-2', null, 'PENDING', 5))).toBe(false);
    journal.close();
    const again = open(path);
    expect(again.orderEvents().map((row) => [row.sequence, row.orderId, row.toState])).toEqual([
      [4, 'o-1', 'PENDING'],
      [6, 'o-1', 'OPEN'],
    ]);
    expect(again.privateCursor()?.lastSequence).toBe(6);
  });

  it('keeps the order events of the latest sequences only, and still applies each once', () => {
    const path = temp();
    const clock = new VirtualClock(START);
    const journal = Journal.open(path, {
      now: () => clock.now(),
      durability: 'normal',
      orderEventWindow: 10,
    });
    cleanups.push(() => journal.close());
    for (let sequence = 1; sequence <= 1_000; sequence += 1) {
      journal.recordOrderEvent(orderEvent(`o-${sequence}`, null, 'PENDING', sequence));
    }
    expect(journal.orderEvents().map((row) => row.sequence)).toEqual(
      Array.from({ length: 10 }, (_, index) => 991 + index),
    );
    expect(journal.recordOrderEvent(orderEvent('o-5', null, 'PENDING', 5))).toBe(false);
    expect(() => Journal.open(temp(), { now: () => clock.now(), orderEventWindow: 0 })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    );
  });

  it('keeps an owed fill read-back across a restart until the newest request is done', () => {
    const path = temp();
    const journal = open(path);
    journal.recordFill(fill({ fill_id: 'f-1', occurred_at: '2024-01-01T00:00:01.000Z' }), {
      sequence: 2,
      source: 'stream',
    });
    const first = journal.requestFillReadBack('log too short');
    expect(first).toMatchObject({
      stopFillId: 'f-1',
      stopOccurredAt: '2024-01-01T00:00:01.000Z',
      reason: 'log too short',
    });
    journal.recordFill(fill({ fill_id: 'f-9' }), { sequence: 30, source: 'stream' });
    // A second gap while the first read-back is owed keeps the older stop, with a new generation.
    const second = journal.requestFillReadBack('another gap');
    expect(second.stopFillId).toBe('f-1');
    expect(second.generation).toBe(first.generation + 1);
    expect(journal.finishFillReadBack(first.generation)).toBe(false);
    journal.close();
    const again = open(path);
    expect(again.pendingFillReadBack()?.generation).toBe(second.generation);
    expect(again.finishFillReadBack(second.generation)).toBe(true);
    expect(again.pendingFillReadBack()).toBeNull();
  });

  it('migrates a version-1 journal in place, keeping its intents, ids and fills', () => {
    const path = temp();
    const raw = new Database(path);
    raw.pragma('journal_mode = WAL');
    migrations[0]?.(raw);
    raw.pragma('user_version = 1');
    raw.prepare("INSERT INTO meta (key, value) VALUES ('epoch', 'oldepoch1')").run();
    raw.prepare("INSERT INTO meta (key, value) VALUES ('created_at', '1')").run();
    raw
      .prepare("INSERT INTO seen_fills (fill_id, order_id, seen_at) VALUES ('old-fill', 'o-9', 1)")
      .run();
    const stamped = stamp(limitBuy(), 3);
    raw
      .prepare(
        `INSERT INTO intents (request_id, strategy_id, sequence, kind, client_order_id, market_id,
           intent_json, emitted_at, state, created_at, updated_at)
         VALUES (?, ?, 3, 'place', ?, 'BTC-PERP', ?, 1, 'journaled', 1, 1)`,
      )
      .run(stamped.requestId, stamped.strategyId, stamped.clientOrderId, JSON.stringify(stamped));
    raw.prepare('INSERT INTO strategy_sequences VALUES (?, 3)').run(stamped.strategyId);
    raw.close();

    const journal = open(path);
    expect(journal.schemaVersion).toBe(JOURNAL_SCHEMA_VERSION);
    expect(journal.epoch).toBe('oldepoch1');
    expect(journal.nextSequence(stamped.strategyId)).toBe(4);
    expect(journal.openIntents().map((record) => record.requestId)).toEqual([stamped.requestId]);
    journal.recordCommand(stamped.requestId, placeCommand(stamped.requestId));
    journal.recordSendAttempt(stamped.requestId);
    expect(journal.getIntent(stamped.requestId)?.state).toBe('sending');
    expect(journal.hasSeenFill('old-fill')).toBe(true);
    expect(journal.fill('old-fill')).toMatchObject({
      fillId: 'old-fill',
      orderId: 'o-9',
      sequence: null,
      source: null,
      fill: null,
    });
    expect(journal.privateCursor()).toBeNull();
    expect(
      journal.recordFill(fill({ fill_id: 'old-fill' }), { sequence: 1, source: 'stream' }),
    ).toBe(false);
    expect(journal.privateCursor()?.lastSequence).toBe(1);
    // A read-back owed by a migrated journal stops at its newest fill (which has no time).
    expect(journal.requestFillReadBack('migrated')).toMatchObject({ stopFillId: 'old-fill' });
  });
});
