/**
 * Latency calibrated from live: a session traded by the market maker on the emulator with 30 ms
 * ± 10 ms on the order leg (uniform 20..40 ms; responses and events 20 ms), its journal kept in
 * a SQLite file. `paperbot calibrate` fits the replay's latency to that journal; the same
 * strategy backtested over the recording with the calibrated latency diverges less from the live
 * fills than with the defaults (20 ms each leg).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { registerCalibrateCommand } from '../../../src/cli/commands/calibrate.ts';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import {
  divergenceOf,
  recordedPrivateEvents,
} from '../../../src/replay/backtest/divergence-run.ts';
import { runBacktest } from '../../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../../src/replay/backtest/sources.ts';
import {
  cancelAppliedTimes,
  fitLatency,
  journalSamples,
} from '../../../src/replay/calibrate/index.ts';
import type { EmulatorSessionResult } from '../../../src/replay/recorder/emulator-session.ts';
import type { DivergenceReport } from '../../../src/replay/report/divergence.ts';
import { loadStrategyDefinition } from '../../../src/runtime/strategy/index.ts';
import {
  marketMakerDocument,
  marketMakerTrading,
  recordSession,
  runCommand,
  temporaryFolder,
} from '../backtest/helpers.ts';

/** A taker on ETH-PERP: market orders on every crossing of two short averages of the marks. */
const TREND_PARAMS = {
  markets: ['ETH-PERP'],
  source: 'ticker',
  fastPeriod: 2,
  slowPeriod: 4,
  enterOnStart: true,
  leverage: 5,
} as const;

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;
let journal: string;
let live: EmulatorSessionResult;

const LIVE_LATENCY = {
  orderMs: 30,
  responseMs: 20,
  eventMs: 20,
  readMs: 0,
  jitterMs: 0,
  // 30 ms ± 10 ms on the order leg: uniform between the 0 and 1 quantiles.
  orderQuantiles: [20, 40],
};

beforeAll(async () => {
  folder = await temporaryFolder('calibrate');
  session = join(folder.path, 'live');
  journal = join(folder.path, 'journal.sqlite');
  const trading = await marketMakerTrading();
  const { definition } = await loadStrategyDefinition('trend-follower', {
    strategiesDirectory: 'strategies',
  });
  live = await recordSession(session, {
    marketIds: ['BTC-PERP', 'ETH-PERP'],
    durationMs: 6 * 60_000,
    trading: {
      ...trading,
      strategies: [
        ...trading.strategies,
        { id: 'trend-eth', definition, params: { ...TREND_PARAMS } },
      ],
      epoch: 'live1234',
      journalPath: journal,
      latency: LIVE_LATENCY,
    },
  });
}, 120_000);

afterAll(async () => {
  await folder.remove();
});

async function divergenceWith(latency: Record<string, unknown> | undefined) {
  const base = marketMakerDocument([session]);
  const document = {
    ...base,
    strategies: [
      ...(base.strategies as unknown[]),
      { id: 'trend-eth', name: 'trend-follower', params: { ...TREND_PARAMS } },
    ],
  };
  const loaded = await resolveBacktestConfig(
    latency === undefined ? document : { ...document, venue: { latency } },
  );
  const source = await openReplaySource([session]);
  const backtest = await runBacktest({
    config: loaded.config,
    strategies: loaded.strategies,
    source,
  });
  return divergenceOf({
    liveRecords: await recordedPrivateEvents(source),
    liveOrderIds: (orderId) => live.orderIds.get(orderId),
    backtest,
  });
}

/** Mean absolute fill time difference of the matched pairs, ms. */
function meanTimeDifference(report: DivergenceReport): number {
  const pairs = report.matched;
  return pairs.reduce((sum, pair) => sum + Math.abs(pair.time_difference_ms), 0) / pairs.length;
}

/** Live and backtest fills that found no partner. */
function unmatched(report: DivergenceReport): number {
  return report.summary.missing_in_backtest + report.summary.missing_in_live;
}

describe('paperbot calibrate', () => {
  it('fits each leg from the journal: the order leg spread over 20..40 ms, the others 20 ms', () => {
    const fit = fitLatency(journalSamples(journal));
    expect(fit.event.quantiles.every((value) => value === 20)).toBe(true);
    expect(fit.response.quantiles).toEqual(fit.event.quantiles);
    expect(fit.order.samples).toBeGreaterThanOrEqual(20);
    const order = fit.order.quantiles;
    expect(order[0]).toBeGreaterThanOrEqual(20);
    expect(order[order.length - 1]).toBeLessThanOrEqual(40);
    // Cancels sent with nothing else in flight: the measured mean was 26.9 ms on this session.
    expect(Math.abs(fit.order.mean - 30)).toBeLessThanOrEqual(4);
    // A distribution, not a mean: the spread is there.
    expect(order[order.length - 1]! - order[0]!).toBeGreaterThanOrEqual(12);
  });

  it("splits each round trip at the venue's time with the session's recording", async () => {
    const samples = journalSamples(journal);
    const applied = await cancelAppliedTimes(
      session,
      new Set(samples.cancels.flatMap((cancel) => cancel.orderId ?? [])),
    );
    const fit = fitLatency(samples, applied);
    expect(fit.split).toBe('recording');
    // Every measured cancel is in the recording; the way back measured is the injected 20 ms.
    expect(fit.order.samples).toBe(samples.roundTrips.length);
    expect(fit.response.quantiles.every((value) => value === 20)).toBe(true);
    // The way back is steady here, so the journal alone (event-leg split) gives the same order leg.
    expect(fit.order.quantiles).toEqual(fitLatency(samples).order.quantiles);
  });

  it('refuses to fit a leg from fewer than 10 samples, naming the leg', () => {
    const samples = journalSamples(journal);
    expect(() => fitLatency({ ...samples, roundTrips: samples.roundTrips.slice(0, 9) })).toThrow(
      /the order \(cancel round trips\) leg has 9 samples; at least 10 are needed/,
    );
  });

  it('refuses a file that is not a journal, naming it', async () => {
    const result = await runCommand(
      (program) => registerCalibrateCommand(program),
      ['calibrate', '--journal', join(folder.path, 'missing.sqlite')],
    );
    expect(result.code).not.toBe(0);
    expect(() => journalSamples(join(folder.path, 'missing.sqlite'))).toThrow(/missing\.sqlite/);
    // A file that is not a journal.
    expect(() => journalSamples(join(session, 'manifest.json'))).toThrow(/manifest\.json/);
  });

  it('writes a fragment that makes the backtest diverge less from live than the defaults', async () => {
    const out = join(folder.path, 'latency.yaml');
    const result = await runCommand(
      (program, print) => registerCalibrateCommand(program, { print }),
      ['calibrate', '--journal', journal, '--out', out],
    );
    expect(result.out).toBe(`wrote ${out}\n`);
    expect(result.code).toBe(0);
    const fragment = parse(await readFile(out, 'utf8')) as { latency: Record<string, unknown> };
    expect(fragment.latency).toMatchObject({ response_ms: 20, event_ms: 20 });

    const defaults = await divergenceWith(undefined);
    const calibrated = await divergenceWith(fragment.latency);
    const figures = {
      defaults: {
        matched: defaults.summary.matched,
        unmatched: unmatched(defaults),
        meanTimeMs: meanTimeDifference(defaults),
        identical: defaults.summary.identical,
        prices: defaults.summary.price_differences,
      },
      calibrated: {
        matched: calibrated.summary.matched,
        unmatched: unmatched(calibrated),
        meanTimeMs: meanTimeDifference(calibrated),
        identical: calibrated.summary.identical,
        prices: calibrated.summary.price_differences,
      },
    };
    // Measured: defaults 474 matched, 2 unmatched, 39.8 ms mean time difference; calibrated
    // 474 matched, 2 unmatched, 17.8 ms. The figure stated: the mean fill time difference at
    // least halved, and no fewer fills matched or identical.
    expect(figures.calibrated.matched).toBeGreaterThanOrEqual(figures.defaults.matched);
    expect(figures.calibrated.unmatched).toBeLessThanOrEqual(figures.defaults.unmatched);
    expect(figures.calibrated.identical).toBeGreaterThanOrEqual(figures.defaults.identical);
    expect(figures.calibrated.prices).toBeLessThanOrEqual(figures.defaults.prices);
    expect(figures.defaults.meanTimeMs).toBeGreaterThan(30);
    expect(figures.calibrated.meanTimeMs).toBeLessThanOrEqual(figures.defaults.meanTimeMs / 2);
  });
});
