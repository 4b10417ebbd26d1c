/**
 * Journal retention on a real SQLite file: settled rows older than the window leave (archived
 * into a dated file with a manifest, or dropped), in batches; what recovery needs stays (open
 * intents, intents of live orders, the private cursor, the newest fill, the strategies'
 * sequences); the file gives its pages back; start-up queries stay on indexes.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { Journal } from '../../../src/runtime/journal/journal.ts';
import type { RetentionPolicy } from '../../../src/runtime/journal/retention.ts';
import { RetentionRunner } from '../../../src/runtime/journal/retention-runner.ts';
import { JournalRetentionSection } from '../../../src/runtime/journal/retention-config.ts';
import {
  fill,
  limitBuy,
  orderEvent,
  placeCommand,
  START,
  stamp,
  STRATEGY,
  tempJournalPath,
} from '../execution/fixtures.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const HOUR = 3_600_000;

function setup(): { path: string; clock: VirtualClock; journal: Journal } {
  const { path, cleanup } = tempJournalPath();
  cleanups.push(cleanup);
  const clock = new VirtualClock(START);
  const journal = Journal.open(path, { now: () => clock.now(), durability: 'normal' });
  cleanups.push(() => journal.close());
  return { path, clock, journal };
}

/** `count` placements accepted as orders `o-<sequence>`, each with an event and a fill. */
function trade(journal: Journal, from: number, count: number, eventSequence: { next: number }) {
  for (let sequence = from; sequence < from + count; sequence++) {
    const stamped = stamp(limitBuy(), sequence);
    journal.recordIntent(stamped, {
      command: placeCommand(stamped.requestId),
      context: {},
      step: 'sending',
    });
    journal.recordAccepted(stamped.requestId, `o-${sequence}`, { status: 'accepted' });
    journal.recordOrderEvent(orderEvent(`o-${sequence}`, 'OPEN', 'FILLED', eventSequence.next++));
    journal.recordFill(fill({ fill_id: `f-${sequence}`, order_id: `o-${sequence}` }), {
      sequence: eventSequence.next++,
      source: 'stream',
    });
  }
}

function policy(path: string, fields: Partial<RetentionPolicy> = {}): RetentionPolicy {
  return {
    windowMs: HOUR,
    mode: 'drop',
    archiveDir: `${path}.archive`,
    batchRows: 50,
    ...fields,
  };
}

function pruneAll(journal: Journal, rules: RetentionPolicy, live: ReadonlySet<string> = new Set()) {
  let steps = 0;
  for (;;) {
    steps += 1;
    const step = journal.pruneStep(rules, (orderId) => live.has(orderId));
    if (step.done) return steps;
    expect(steps).toBeLessThan(1_000);
  }
}

describe('journal retention', () => {
  it('drops settled rows older than the window in batches and keeps what recovery needs', () => {
    const { path, clock, journal } = setup();
    const events = { next: 1 };
    trade(journal, 1, 300, events);
    // An intent still open (sent, no answer), and an old order still live.
    const open = stamp(limitBuy(), 301);
    journal.recordIntent(open, {
      command: placeCommand(open.requestId),
      context: {},
      step: 'sending',
    });
    clock.advanceBy(2 * HOUR);
    trade(journal, 302, 10, events);

    const steps = pruneAll(journal, policy(path), new Set(['o-7']));
    expect(steps).toBeGreaterThan(6); // 300 rows in batches of 50

    // Settled and old: gone, except the live order's; the open one and the recent ten stay.
    expect(journal.getIntent(open.requestId)?.state).toBe('sending');
    expect(journal.intentByOrderId('o-7')?.sequence).toBe(7);
    expect(journal.getIntent(stamp(limitBuy(), 8).requestId)).toBeUndefined();
    expect(journal.openIntents().map((record) => record.requestId)).toEqual([open.requestId]);
    // The sequences continue, and events at or below the cursor are still refused.
    expect(journal.nextSequence(STRATEGY)).toBe(312);
    expect(journal.privateCursor()?.lastSequence).toBe(events.next - 1);
    expect(journal.recordOrderEvent(orderEvent('o-1', 'OPEN', 'FILLED', 5))).toBe(false);
    // Whether an order is ours is still answered by the index.
    expect(journal.isKnownOrder('o-305', null)).toBe(true);
    expect(journal.isKnownOrder('o-foreign', 'x')).toBe(false);
    journal.close();

    const raw = new Database(path, { readonly: true, fileMustExist: true });
    cleanups.push(() => raw.close());
    const count = (sql: string) => raw.prepare(sql).pluck().get() as number;
    expect(count('SELECT COUNT(*) FROM intents')).toBe(1 + 1 + 10);
    expect(count('SELECT COUNT(*) FROM order_events')).toBe(10);
    expect(count('SELECT COUNT(*) FROM seen_fills')).toBe(10);
  });

  it('walks past many kept rows: a step goes on where the last one stopped', () => {
    const { path, clock, journal } = setup();
    // 100 old intents still open (journaled, never sent), then 50 settled ones.
    for (let sequence = 1; sequence <= 100; sequence++)
      journal.recordIntent(stamp(limitBuy(), sequence));
    trade(journal, 101, 50, { next: 1 });
    clock.advanceBy(2 * HOUR);
    const rules = policy(path, { batchRows: 10 });
    let moved = 0;
    let steps = 0;
    for (; steps < 100; steps++) {
      const step = journal.pruneStep(rules, () => false);
      moved += step.intents;
      if (step.done) break;
    }
    expect(moved).toBe(50);
    expect(steps).toBeLessThan(20);
    expect(journal.openIntents()).toHaveLength(100);
  });

  it('never prunes the only strategy rows so a sequence would start over', () => {
    const { path, clock, journal } = setup();
    trade(journal, 1, 20, { next: 1 });
    clock.advanceBy(2 * HOUR);
    pruneAll(journal, policy(path));
    expect(journal.nextSequence(STRATEGY)).toBe(21);
    // The newest fill stays: a read-back requested now still has its stop.
    expect(journal.fillCount()).toBe(1);
    expect(journal.requestFillReadBack('test').stopFillId).toBe('f-20');
  });

  it('archives into a dated file with a manifest, each row once', () => {
    const { path, clock, journal } = setup();
    trade(journal, 1, 120, { next: 1 });
    clock.advanceBy(2 * HOUR);
    const rules = policy(path, { mode: 'archive' });
    pruneAll(journal, rules);
    journal.retention.flushManifest();
    const manifest = JSON.parse(readFileSync(join(rules.archiveDir, 'manifest.json'), 'utf8')) as {
      files: { file: string; rows: Record<string, number> }[];
    };
    expect(manifest.files).toHaveLength(1);
    const entry = manifest.files[0] as { file: string; rows: Record<string, number> };
    expect(entry.file).toBe('journal.sqlite.2024-01-01.sqlite');
    expect(entry.rows).toEqual({
      intents: 120,
      order_events: 120,
      seen_fills: 119,
      internal_commands: 0,
    });
    const archive = new Database(join(rules.archiveDir, entry.file), { readonly: true });
    cleanups.push(() => archive.close());
    expect(archive.prepare('SELECT COUNT(DISTINCT request_id) FROM intents').pluck().get()).toBe(
      120,
    );
    const row = archive
      .prepare('SELECT state, order_id FROM intents WHERE sequence = 42')
      .get() as { state: string; order_id: string };
    expect(row).toEqual({ state: 'accepted', order_id: 'o-42' });
  });

  it('reclaims the freed pages of a new journal, in the background', async () => {
    const { path, clock, journal } = setup();
    trade(journal, 1, 2_000, { next: 1 });
    journal.retention.checkpoint();
    const before = statSync(path).size;
    clock.advanceBy(2 * HOUR);
    expect(journal.retention.reclaimsSpace()).toBe(true);
    const runner = new RetentionRunner({
      journal,
      clock,
      policy: policy(path, { batchRows: 500 }),
      intervalMs: 60_000,
      pauseMs: 1,
      liveOrderIds: () => new Set(),
    });
    const pass = runner.runPass();
    // Steps pause on the (virtual) clock: move it until the pass ends.
    let settled = false;
    void pass.then(() => {
      settled = true;
    });
    for (let turn = 0; turn < 10_000 && !settled; turn++) {
      clock.advanceBy(1);
      await Promise.resolve();
      await new Promise((resolve) => process.nextTick(resolve));
    }
    const report = await pass;
    expect(report.intents).toBe(2_000);
    expect(report.freePagesLeft).toBe(0);
    expect(statSync(path).size).toBeLessThan(before / 4);
    expect(existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0).toBe(0);
    const stats = journal.retention.stats();
    expect(stats.rows.intents).toBe(0);
    expect(stats.rows.seen_fills).toBe(1);
  });

  it('reads its config with durations and refuses a bad one with its path', () => {
    expect(JournalRetentionSection.parse({ window: '2h', interval: '30s' })).toMatchObject({
      window: 2 * HOUR,
      interval: 30_000,
      mode: 'archive',
      enabled: true,
    });
    const bad = JournalRetentionSection.safeParse({ window: 'a week' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['window']);
    expect(bad.error?.issues[0]?.message).toContain('not a duration');
  });

  it('abandons unfinished internal commands at start through an index, not a scan', () => {
    const { journal, path } = setup();
    journal.close();
    const raw = new Database(path);
    cleanups.push(() => raw.close());
    const plan = raw
      .prepare(
        `EXPLAIN QUERY PLAN UPDATE internal_commands INDEXED BY internal_commands_sending
           SET state = 'abandoned' WHERE state = 'sending'`,
      )
      .all() as { detail: string }[];
    expect(plan.map((step) => step.detail).join(' ')).toContain('internal_commands_sending');
  });
});
