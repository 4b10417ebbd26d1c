/**
 * One private stream from every venue: a backtest runs the order tracker on the replay venue's
 * sequenced private stream, as live. The replay journal records each order event
 * (`recordOrderEvent`), and a private event lost on the way (the venue's test seam drops it) is
 * recovered as live recovers it: the tracker sees the jump in sequence, the journal owes a fill
 * read-back, the fill is read back from the venue and reaches the journal and the report once.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Fill, OrderStatusEvent } from '../../src/protocol/index.ts';
import { resolveBacktestConfig } from '../../src/replay/backtest/config.ts';
import { runBacktest } from '../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../src/replay/backtest/sources.ts';
import { ReplayJournal } from '../../src/runtime/journal/index.ts';
import { marketMakerDocument, recordSession, temporaryFolder } from './backtest/helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;

beforeAll(async () => {
  folder = await temporaryFolder('private-gap');
  session = join(folder.path, 'session');
  await recordSession(session, { durationMs: 3 * 60_000 });
});

afterAll(async () => {
  await folder.remove();
});

afterEach(() => {
  vi.restoreAllMocks();
});

interface RecordedFill {
  readonly fillId: string;
  readonly sequence: number | null;
  readonly source: 'stream' | 'rest';
  readonly added: boolean;
}

/** A backtest of the market maker over the session, watching what its journal is given. */
async function backtest(dropPrivateSequences: readonly number[] = []) {
  const orderEvents: { readonly sequence: number; readonly applied: boolean }[] = [];
  const fills: RecordedFill[] = [];
  const readBacks: string[] = [];
  const recordOrderEvent = ReplayJournal.prototype.recordOrderEvent;
  vi.spyOn(ReplayJournal.prototype, 'recordOrderEvent').mockImplementation(function (
    this: ReplayJournal,
    event: OrderStatusEvent,
  ) {
    const applied = recordOrderEvent.call(this, event);
    orderEvents.push({ sequence: event.sequence, applied });
    return applied;
  });
  const recordFill = ReplayJournal.prototype.recordFill;
  vi.spyOn(ReplayJournal.prototype, 'recordFill').mockImplementation(function (
    this: ReplayJournal,
    fill: Fill,
    delivery: { readonly sequence: number | null; readonly source: 'stream' | 'rest' },
    eventAt?: string | null,
  ) {
    const added = recordFill.call(this, fill, delivery, eventAt);
    fills.push({
      fillId: fill.fill_id,
      sequence: delivery.sequence,
      source: delivery.source,
      added,
    });
    return added;
  });
  const requestFillReadBack = ReplayJournal.prototype.requestFillReadBack;
  vi.spyOn(ReplayJournal.prototype, 'requestFillReadBack').mockImplementation(function (
    this: ReplayJournal,
    reason: string,
  ) {
    readBacks.push(reason);
    return requestFillReadBack.call(this, reason);
  });
  const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
  const source = await openReplaySource(loaded.config.data, { cache: 'off' });
  const result = await runBacktest({
    config: loaded.config,
    strategies: loaded.strategies,
    source,
    dropPrivateSequences,
  });
  vi.restoreAllMocks();
  return { result, orderEvents, fills, readBacks };
}

describe('the private stream in a backtest', () => {
  it('gives the replay journal every order event, in sequence order, each applied once', async () => {
    const { result, orderEvents, fills, readBacks } = await backtest();
    expect(result.report.summary.fills).toBeGreaterThan(0);
    // Hundreds of order events of the market maker's quotes, every one recorded and applied.
    expect(orderEvents.length).toBeGreaterThan(50);
    expect(orderEvents.every((event) => event.applied)).toBe(true);
    const sequences = orderEvents.map((event) => event.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    // Every fill came by the stream with its sequence; nothing was owed a read-back.
    expect(fills.every((fill) => fill.source === 'stream' && fill.sequence !== null)).toBe(true);
    expect(readBacks).toEqual([]);
    // The report's fills are the kernel's: those the journal took, in the same order.
    expect(result.fills.map((fill) => fill.fill_id)).toEqual(
      fills.filter((fill) => fill.added).map((fill) => fill.fillId),
    );
  });

  it('recovers a dropped fill event by a read-back, into the journal and the report once', async () => {
    const whole = await backtest();
    // A fill in the middle of the run, so events follow it and show the gap.
    const streamed = whole.fills.filter((fill) => fill.source === 'stream');
    const lost = streamed[Math.floor(streamed.length / 2)]!;
    expect(lost.sequence).not.toBeNull();

    const gapped = await backtest([lost.sequence!]);
    // The tracker saw the jump and the journal owed a read-back for it.
    expect(gapped.readBacks).toEqual([
      `sequences ${lost.sequence} to ${lost.sequence} were not delivered`,
    ]);
    // The lost fill reached the journal once, read back over "REST", never by the stream.
    const taken = gapped.fills.filter((fill) => fill.fillId === lost.fillId && fill.added);
    expect(taken).toEqual([{ fillId: lost.fillId, sequence: null, source: 'rest', added: true }]);
    expect(
      gapped.fills.some((fill) => fill.fillId === lost.fillId && fill.source === 'stream'),
    ).toBe(false);
    // The report has every fill of the whole run once: the same ids, the same totals.
    const ids = gapped.result.fills.map((fill) => fill.fill_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(whole.result.fills.map((fill) => fill.fill_id).sort());
    expect(gapped.result.report.summary.fills).toBe(whole.result.report.summary.fills);
    expect(gapped.result.report.summary.net_pnl).toBe(whole.result.report.summary.net_pnl);
    expect(gapped.result.report.summary.ending_equity).toBe(
      whole.result.report.summary.ending_equity,
    );
  });
});
