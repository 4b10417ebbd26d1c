/**
 * The journal's disk use and row counts as metrics, read from a real SQLite file at scrape.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.ts';
import { createBotMetrics } from '../../src/cli/bot/metrics.ts';
import { Journal } from '../../src/runtime/journal/journal.ts';
import {
  limitBuy,
  placeCommand,
  START,
  stamp,
  tempJournalPath,
} from '../runtime/execution/fixtures.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

describe('journal metrics', () => {
  it('reports bytes by file and rows by table; a scrape after the journal closed does not fail', async () => {
    const { path, cleanup } = tempJournalPath();
    cleanups.push(cleanup);
    const clock = new VirtualClock(START);
    const journal = Journal.open(path, { now: () => clock.now(), durability: 'normal' });
    cleanups.push(() => journal.close());
    for (let sequence = 1; sequence <= 5; sequence++) {
      const stamped = stamp(limitBuy(), sequence);
      journal.recordIntent(stamped, {
        command: placeCommand(stamped.requestId),
        context: {},
        step: 'sending',
      });
    }
    const metrics = createBotMetrics({ clock, processMetrics: false });
    metrics.attachJournal(() => (journal.isOpen ? journal.retention.stats() : null));
    metrics.attachStore(() => ({ main: 4096, wal: 0 }));
    const text = await metrics.registry.metrics();
    expect(text).toContain('paperbot_journal_rows{table="intents"} 5');
    expect(text).toContain('paperbot_journal_rows{table="seen_fills"} 0');
    expect(text).toMatch(/paperbot_journal_bytes\{file="main"\} [1-9]\d*/);
    expect(text).toContain('paperbot_emulator_store_bytes{file="main"} 4096');
    journal.close();
    await expect(metrics.registry.metrics()).resolves.toContain('paperbot_journal_rows');
  });
});
