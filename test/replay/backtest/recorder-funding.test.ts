/**
 * The recorder's funding: read from the market resource (the ticker frame has none), once at
 * the start and about once per funding interval, and written on the recorded tickers as the rate
 * the market showed for each funding time just before it.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoTimestamp, VirtualClock } from '../../../src/core/clock.ts';
import {
  DEFAULT_EMULATOR_CONFIG_INPUT,
  parseEmulatorConfig,
} from '../../../src/emulator/config.ts';
import { Exchange } from '../../../src/emulator/engine/exchange.ts';
import { MemoryStore } from '../../../src/emulator/store/memory-store.ts';
import type { Market } from '../../../src/protocol/index.ts';
import { openRecording, readRecording } from '../../../src/replay/format/recording.ts';
import { RecordedEventSchema, type TickerRecord } from '../../../src/replay/format/records.ts';
import { RecordingSink } from '../../../src/replay/format/recorder-sink.ts';
import { emulatorSourceUrl } from '../../../src/replay/recorder/emulator-session.ts';
import { Recorder } from '../../../src/replay/recorder/recorder.ts';
import { exchangeSource } from '../../../src/replay/recorder/sources.ts';
import { temporaryFolder } from './helpers.ts';

const INTERVAL = 60_000;
const INTERVALS = 5;
/** Mid-interval: the first funding time is 30 s away. */
const START = Date.UTC(2025, 0, 1) + 30_000;

let folder: Awaited<ReturnType<typeof temporaryFolder>>;

beforeAll(async () => {
  folder = await temporaryFolder('recorder-funding');
});

afterAll(async () => {
  await folder.remove();
});

describe('funding in a recording', () => {
  it('reads each market about once per funding interval and records the rate of each time', async () => {
    const clock = new VirtualClock(START);
    const config = parseEmulatorConfig({
      ...DEFAULT_EMULATOR_CONFIG_INPUT,
      simulation: { enabled: true, step_ms: 1000, funding_interval_ms: INTERVAL },
      markets: DEFAULT_EMULATOR_CONFIG_INPUT.markets.map((market) => ({
        ...market,
        simulation: { ...market.simulation, basis_volatility_bps: 20 },
      })),
    });
    const exchange = Exchange.open({ clock, config, store: new MemoryStore() });
    const directory = join(folder.path, 'session');
    const sink = await RecordingSink.create({
      directory,
      clock,
      source: { kind: 'emulator', baseUrl: emulatorSourceUrl('funding') },
      markets: exchange.listMarkets(),
      bookDepth: 3,
      bookIntervalMs: 10_000,
      privateEvents: false,
    });
    const source = exchangeSource({ exchange });
    const reads: number[] = [];
    // The rate the market showed at each ticker: the last one before a funding time is its rate.
    const shown: { t: number; market: Market }[] = [];
    exchange.onTicker((marketId) => {
      if (marketId === 'BTC-PERP')
        shown.push({ t: clock.now(), market: exchange.getMarket(marketId) });
    });
    const recorder = new Recorder({
      source: {
        ...source,
        getMarket: (marketId) => {
          reads.push(clock.now());
          return source.getMarket!(marketId);
        },
      },
      sink,
      clock,
      marketIds: ['BTC-PERP'],
      bookDepth: 3,
      bookIntervalMs: 10_000,
      tradesIntervalMs: 10_000,
      privateEvents: false,
      fundingLeadMs: 1,
    });
    exchange.start();
    recorder.start();
    await recorder.idle();
    const end = START + 30_000 + (INTERVALS - 1) * INTERVAL + 10_000;
    // Each step in two: a read due 1 ms before a funding time is answered before the step at it
    // (what the virtual-time session's driver does by settling after every timer).
    while (clock.now() < end) {
      clock.advanceBy(999);
      await recorder.idle();
      clock.advanceBy(1);
      await recorder.idle();
      await sink.idle();
    }
    await recorder.stop();
    exchange.stop();

    const fundingTimes = Array.from({ length: INTERVALS }, (_, k) => START + 30_000 + k * INTERVAL);
    // Bounded: the start read, one before each funding time, one after the first (to learn the
    // interval), and the one before the next time when it falls in the run.
    expect(reads[0]).toBe(START);
    expect(reads.length).toBeLessThanOrEqual(1 + INTERVALS + 1 + 1);
    // Per funding interval [Tₖ, Tₖ₊₁): the read 1 ms before Tₖ₊₁; before T₁ also the start read,
    // and in [T₁, T₂) also the read after T₁ that learns the next time (so the interval).
    expect(reads).toEqual([
      START,
      fundingTimes[0]! - 1,
      fundingTimes[0]!,
      ...fundingTimes.slice(1).map((time) => time - 1),
      ...(fundingTimes.at(-1)! + INTERVAL - 1 < end ? [fundingTimes.at(-1)! + INTERVAL - 1] : []),
    ]);

    const tickers: TickerRecord[] = [];
    const reader = readRecording(await openRecording(directory), { cache: 'off' });
    for await (const batch of reader.batches()) {
      for (const record of batch) {
        RecordedEventSchema.parse(record);
        if (record.k === 'ticker') tickers.push(record);
      }
    }
    // Before the first funding time's rate is read, tickers carry no funding.
    expect(
      tickers
        .filter((record) => record.t < fundingTimes[0]! - 1)
        .every((record) => record.d.funding_rate === undefined),
    ).toBe(true);
    for (const time of fundingTimes) {
      const rate = shown.filter((entry) => entry.t < time).at(-1)!.market.funding_rate;
      expect(rate).not.toBeNull();
      // From the ticker at the funding time until the next one: that time, at that rate.
      const carrying = tickers.filter((record) => record.t >= time && record.t < time + INTERVAL);
      expect(carrying.length).toBeGreaterThan(0);
      for (const record of carrying.filter((entry) => entry.t < Math.min(time + INTERVAL, end))) {
        expect(record.d).toMatchObject({ funding_time: isoTimestamp(time), funding_rate: rate });
        expect(record.d.next_funding_time).toBeUndefined();
      }
    }
  });
});
