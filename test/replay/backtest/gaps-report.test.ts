/**
 * A recorded emulator session with one `book` gap written into it: the backtest's report lists
 * the gap, its end (the market's next snapshot) and the resting orders whose queue restarted.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import { runBacktest } from '../../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../../src/replay/backtest/sources.ts';
import { gapRecord, type RecordedEvent } from '../../../src/replay/format/records.ts';
import { openRecording, recountRecording } from '../../../src/replay/format/recording.ts';
import { renderReportHtml } from '../../../src/replay/report/index.ts';
import { marketMakerDocument, recordSession, SESSION_START, temporaryFolder } from './helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;
const GAP_AT = SESSION_START + 60_500;
let nextSnapshotAt = 0;

beforeAll(async () => {
  folder = await temporaryFolder('gaps');
  session = join(folder.path, 'session');
  await recordSession(session, { durationMs: 2 * 60_000, compression: 'none' });
  const { eventsPath } = await openRecording(session);
  const lines = (await readFile(eventsPath, 'utf8')).split('\n').filter((line) => line !== '');
  const records = lines.map((line) => JSON.parse(line) as RecordedEvent);
  const at = records.findIndex((record) => record.t > GAP_AT);
  const gap = gapRecord(GAP_AT, 'book', 'book poll failed: timeout', 'BTC-PERP');
  nextSnapshotAt = records.find(
    (record) => record.t > GAP_AT && record.k === 'book' && record.m === 'BTC-PERP',
  )!.t;
  lines.splice(at, 0, JSON.stringify(gap));
  await writeFile(eventsPath, `${lines.join('\n')}\n`);
  await recountRecording(session, { write: true });
});

afterAll(async () => {
  await folder.remove();
});

describe('backtest report: gaps', () => {
  it('lists the gap with its end and the orders whose queue restarted', async () => {
    const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
    const source = await openReplaySource(loaded.config.data, { cache: 'off' });
    const { report } = await runBacktest({
      config: loaded.config,
      strategies: loaded.strategies,
      source,
      reportFiles: null,
    });
    expect(report.gaps).toHaveLength(1);
    const [gap] = report.gaps!;
    expect(gap).toMatchObject({
      market_id: 'BTC-PERP',
      stream: 'book',
      reason: 'book poll failed: timeout',
      start_ms: GAP_AT,
      end_ms: nextSnapshotAt,
      suspended: true,
      unfilled_takers: { count: 0, order_ids: [] },
    });
    // The market maker quotes both sides: both its resting orders start again in the queue.
    expect(gap!.restarted_queues.count).toBe(2);
    expect(gap!.restarted_queues.order_ids).toHaveLength(2);
    // The page lists it too.
    const html = renderReportHtml(report);
    expect(html).toContain('<h2>Data gaps</h2>');
    expect(html).toContain('<td>book poll failed: timeout</td>');
  });
});
