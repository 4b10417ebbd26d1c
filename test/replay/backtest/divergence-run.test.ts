import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerBacktestCommand } from '../../../src/cli/commands/backtest.ts';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import {
  divergenceOf,
  epochFreeKey,
  recordedPrivateEvents,
} from '../../../src/replay/backtest/divergence-run.ts';
import { runBacktest } from '../../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../../src/replay/backtest/sources.ts';
import type { EmulatorSessionResult } from '../../../src/replay/recorder/emulator-session.ts';
import {
  type DivergenceReport,
  formatDivergenceTable,
} from '../../../src/replay/report/divergence.ts';
import {
  marketMakerDocument,
  marketMakerTrading,
  recordSession,
  runCommand,
  temporaryFolder,
} from './helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;
let live: EmulatorSessionResult;

beforeAll(async () => {
  folder = await temporaryFolder('divergence');
  session = join(folder.path, 'live');
  // A live run against the emulator (on virtual time), recorded with its private events.
  live = await recordSession(session, {
    marketIds: ['BTC-PERP'],
    trading: { ...(await marketMakerTrading()), epoch: 'live1234' },
  });
});

afterAll(async () => {
  await folder.remove();
});

describe('divergence between a live session and its backtest', () => {
  it("records the live run's private events beside the public data", async () => {
    const source = await openReplaySource([session]);
    expect(source.hasPrivateEvents).toBe(true);
    const privateRecords = await recordedPrivateEvents(source);
    const fills = privateRecords.filter(
      (record) => record.k === 'private' && record.d.type === 'fill',
    );
    expect(live.fills.length).toBeGreaterThan(0);
    expect(fills).toHaveLength(live.fills.length);
  });

  it('matches fills by intent across the two runs and accounts for every fill', async () => {
    const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
    const source = await openReplaySource([session]);
    const backtest = await runBacktest({
      config: loaded.config,
      strategies: loaded.strategies,
      source,
    });
    const report: DivergenceReport = divergenceOf({
      liveRecords: await recordedPrivateEvents(source),
      liveOrderIds: (orderId) => live.orderIds.get(orderId),
      backtest,
    });
    const summary = report.summary;
    expect(summary.live_fills).toBe(live.fills.length);
    expect(summary.backtest_fills).toBe(backtest.fills.length);
    expect(summary.matched + summary.missing_in_backtest).toBe(summary.live_fills);
    expect(summary.matched + summary.missing_in_live).toBe(summary.backtest_fills);
    expect(summary.matched_without_order_key).toBe(0);
    // Pairs share the strategy's intent number, whatever each run's journal epoch.
    for (const pair of report.matched) {
      expect(epochFreeKey(pair.live.client_order_id)).toBe(pair.order_key);
      expect(epochFreeKey(pair.backtest.client_order_id)).toBe(pair.order_key);
    }
    // Same latency, same strategy, the live run's own trades in the public data: the fill model
    // reproduces what the emulator's matching did, fill for fill.
    expect(summary.matched).toBe(summary.live_fills);
    expect(summary.missing_in_live).toBe(0);
    expect(summary.identical).toBe(summary.matched);
  });

  it('lists where the fills part when the backtest assumes another latency', async () => {
    const loaded = await resolveBacktestConfig(
      marketMakerDocument([session], { venue: { latency: { order_ms: 400, response_ms: 400 } } }),
    );
    const source = await openReplaySource([session]);
    const backtest = await runBacktest({
      config: loaded.config,
      strategies: loaded.strategies,
      source,
    });
    const report = divergenceOf({
      liveRecords: await recordedPrivateEvents(source),
      liveOrderIds: (orderId) => live.orderIds.get(orderId),
      backtest,
    });
    const summary = report.summary;
    const differing = report.matched.filter((pair) => pair.differs.length > 0).length;
    expect(differing + summary.missing_in_backtest + summary.missing_in_live).toBeGreaterThan(0);
    expect(summary.identical + differing).toBe(summary.matched);
    const lines = formatDivergenceTable(report).split('\n');
    const rows = lines.slice(lines.findIndex((line) => line.startsWith('---')) + 1);
    expect(rows).toHaveLength(differing + summary.missing_in_backtest + summary.missing_in_live);
  });

  it('is what `paperbot backtest --divergence` prints', async () => {
    const config = join(folder.path, 'backtest.yaml');
    await writeFile(config, stringify(marketMakerDocument([session])));
    const result = await runCommand(
      (program, print, printError) =>
        registerBacktestCommand(program, { print, printError, interactive: false }),
      ['backtest', '--config', config, '--divergence', session, '--json'],
    );
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.out) as DivergenceReport;
    expect(report.schema).toBe('paperbot.divergence-report');
    // Without the live journal, fills are matched by sequence within market and side.
    expect(report.summary.live_fills).toBe(live.fills.length);
    expect(report.summary.matched_without_order_key).toBeGreaterThan(0);
  });

  it('refuses a session without private events', async () => {
    const publicOnly = join(folder.path, 'public');
    await recordSession(publicOnly, { durationMs: 30_000, marketIds: ['BTC-PERP'] });
    const config = join(folder.path, 'public.yaml');
    await writeFile(config, stringify(marketMakerDocument([publicOnly])));
    const result = await runCommand(
      (program, print, printError) =>
        registerBacktestCommand(program, { print, printError, interactive: false }),
      ['backtest', '--config', config, '--divergence', publicOnly],
    );
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/recorded no private events/);
  });
});
