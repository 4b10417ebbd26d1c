/**
 * Replay throughput in events per second on one core through the whole pipeline: decode →
 * market-data streams → strategy → risk gate → executor (journal included) → simulated venue,
 * for a strategy that does nothing and for the market maker of config/backtest.yaml.
 *
 * Two data sets:
 * - the shipped sample (backtest-data/emulator-seed42-1h: one hour, three markets, ~7 events
 *   per virtual second), read from its file (decoding included, from the binary cache after
 *   the first read) and, repeated ten times over later hours, from memory;
 * - a denser session generated here, closer to a live feed: the emulator stepping every 100 ms
 *   instead of every second, its books and trades recorded every 100 ms (~70 events per virtual
 *   second for three markets), 20 minutes, from memory. The market maker places about as many
 *   intents per virtual second on both (the mark's noise per second does not depend on the
 *   step), so intents per event, and with them the market maker's events/s, depend on how dense
 *   the feed is.
 *
 * "replay" is the loop alone (records delivered, timers fired, commands answered); "whole run"
 * adds the kernel's start, its shutdown and the report. Times are CPU time (process.cpuUsage,
 * user + system), not wall time: the machine may be shared. RSS is read before and after each
 * measured round. `ROUNDS=<n>` sets the measured rounds of the market maker (3 by default) and
 * the no-op's (at least 31: a no-op replay of the sample takes about 15 to 20 ms, where one
 * scavenge more or less moves a single figure by a third, and about half the rounds have one;
 * with 11 rounds the median moved by a fifth from run to run); the median is reported.
 * Before them, warm-up rounds run until 250,000 events or 3 s, whichever comes first (the
 * first round also builds the decode cache of a file): a single cold round would time the JIT
 * compiling the hot path, not the replay a researcher running many replays sees.
 * `--only noop` or `--only mm` runs the rows of one strategy.
 */
import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { NEVER } from 'rxjs';
import { z } from 'zod';
import { defaultEmulatorConfig } from '../../src/emulator/config.ts';
import {
  type LoadedBacktestConfig,
  loadBacktestConfig,
  type ResolvedStrategy,
} from '../../src/replay/backtest/config.ts';
import { runBacktest } from '../../src/replay/backtest/runner.ts';
import {
  memorySource,
  openReplaySource,
  type ReplaySource,
} from '../../src/replay/backtest/sources.ts';
import type { RecordedEvent } from '../../src/replay/format/records.ts';
import { recordEmulatorSession } from '../../src/replay/recorder/emulator-session.ts';
import { defineStrategy } from '../../src/runtime/strategy/index.ts';
import { withTemporaryDirectory } from '../replay/fixtures.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const NOOP_ROUNDS = Math.max(ROUNDS, 31);

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? undefined : process.argv[index + 1];
}

const ONLY = option('only') ?? process.env.ONLY ?? 'all';
if (!['all', 'noop', 'mm'].includes(ONLY)) {
  throw new Error(`--only takes noop or mm, not ${ONLY}`);
}
const RUN_NOOP = ONLY !== 'mm';
const RUN_MM = ONLY !== 'noop';
const WARM_UP_EVENTS = 250_000;
const WARM_UP_MS = 3_000;
const SAMPLE = 'backtest-data/emulator-seed42-1h';

const idle = defineStrategy({
  name: 'idle',
  description: 'Does nothing: subscribes to nothing, emits nothing.',
  params: z.strictObject({}),
  create: () => NEVER,
});

const NOOP: readonly ResolvedStrategy[] = [
  { id: 'noop', name: 'idle', definition: idle, rawParams: {}, params: {} },
];

async function recordsOf(source: ReplaySource): Promise<RecordedEvent[]> {
  const records: RecordedEvent[] = [];
  for await (const batch of source.batches()) for (const record of batch) records.push(record);
  return records;
}

/** The records again `times` times, each copy one span later. */
function repeated(records: readonly RecordedEvent[], times: number): RecordedEvent[] {
  const first = records[0]!.t;
  const span = records[records.length - 1]!.t - first + 1_000;
  const out: RecordedEvent[] = [];
  for (let copy = 0; copy < times; copy++) {
    for (const record of records)
      out.push({ ...record, t: record.t + copy * span } as RecordedEvent);
  }
  return out;
}

interface Measurement {
  readonly task: string;
  readonly events: number;
  /** CPU time (user + system) of the replay alone and of the whole run. */
  readonly replayMs: number;
  readonly wholeMs: number;
  readonly intents: number;
  readonly rssStartMb: number;
  readonly rssEndMb: number;
}

/** CPU time of the process so far, user and system, in ms (the machine may be shared). */
function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

function rssMb(): number {
  return process.memoryUsage().rss / (1024 * 1024);
}

async function measure(
  task: string,
  loaded: LoadedBacktestConfig,
  strategies: readonly ResolvedStrategy[],
  source: () => Promise<ReplaySource>,
  paramOverrides?: Readonly<Record<string, Readonly<Record<string, unknown>>>>,
): Promise<Measurement> {
  const rounds: Measurement[] = [];
  const wanted = strategies === NOOP ? NOOP_ROUNDS : ROUNDS;
  let warmUpEvents = 0;
  const warmUpUntil = performance.now() + WARM_UP_MS;
  while (rounds.length < wanted) {
    const marks: Record<string, number> = {};
    const input = await source();
    const rssStartMb = rssMb();
    const started = cpuMs();
    const result = await runBacktest({
      config: loaded.config,
      strategies,
      source: input,
      ...(paramOverrides === undefined ? {} : { paramOverrides }),
      onPhase: (phase) => {
        marks[phase] = cpuMs();
      },
    });
    const ended = cpuMs();
    if (warmUpEvents === 0 || (warmUpEvents < WARM_UP_EVENTS && performance.now() < warmUpUntil)) {
      warmUpEvents += Math.max(result.records, 1);
      continue;
    }
    rounds.push({
      task,
      events: result.records,
      replayMs: marks.stopping! - marks.replaying!,
      wholeMs: ended - started,
      intents: result.counters.intents,
      rssStartMb,
      rssEndMb: rssMb(),
    });
  }
  rounds.sort((a, b) => a.replayMs - b.replayMs);
  return rounds[Math.floor(rounds.length / 2)]!;
}

function perSecond(events: number, ms: number): string {
  return Math.round((events / ms) * 1000).toLocaleString('en-US');
}

export default async function run(): Promise<void> {
  await withTemporaryDirectory(async (directory) => {
    const loaded = await loadBacktestConfig('config/backtest.yaml');
    const marketMaker = loaded.strategies;
    // A copy, so the decode cache the file runs build stays out of the repository.
    const samplePath = join(directory, 'sample');
    await cp(SAMPLE, samplePath, { recursive: true });
    const fromFile = () => openReplaySource([samplePath]);
    const inMemory = (records: readonly RecordedEvent[], from: ReplaySource) => async () =>
      memorySource({ markets: from.markets, bookDepth: from.bookDepth, records });
    // The per-intent cost under load: quotes a few ticks from the mark, requoted at every
    // ticker (the mark moves more than 4 ticks between most tickers of the emulator's data).
    const tight = Object.fromEntries(
      marketMaker.map((strategy) => [strategy.id, { halfSpreadTicks: 6, refreshTicks: 4 }]),
    );

    // The file runs first, while no large arrays of records are alive: garbage collection over
    // them would be charged to decoding.
    const results: Measurement[] = [];
    if (RUN_NOOP) results.push(await measure('no-op, sample, from file', loaded, NOOP, fromFile));
    if (RUN_MM) {
      results.push(await measure('market maker, sample, from file', loaded, marketMaker, fromFile));
      results.push(
        await measure(
          'market maker (requote every ticker), sample, from file',
          loaded,
          marketMaker,
          fromFile,
          tight,
        ),
      );
    }

    const sample = await fromFile();
    if (RUN_NOOP) {
      const tenHours = repeated(await recordsOf(sample), 10);
      results.push(
        await measure('no-op, sample x10, memory', loaded, NOOP, inMemory(tenHours, sample)),
      );
      tenHours.length = 0;
    }

    const densePath = join(directory, 'dense');
    const base = defaultEmulatorConfig();
    await recordEmulatorSession({
      directory: densePath,
      seed: 42,
      startMs: Date.UTC(2025, 0, 1),
      durationMs: 20 * 60_000,
      emulatorConfig: { ...base, simulation: { ...base.simulation, step_ms: 100 } },
      bookDepth: 10,
      bookIntervalMs: 100,
      tradesIntervalMs: 100,
    });
    const dense = await openReplaySource([densePath]);
    const denseRecords = await recordsOf(dense);
    if (RUN_NOOP) {
      results.push(
        await measure('no-op, dense, memory', loaded, NOOP, inMemory(denseRecords, dense)),
      );
    }
    if (RUN_MM) {
      results.push(
        await measure(
          'market maker, dense, memory',
          loaded,
          marketMaker,
          inMemory(denseRecords, dense),
        ),
      );
    }
    console.table(
      results.map((result) => ({
        task: result.task,
        events: result.events.toLocaleString('en-US'),
        intents: result.intents.toLocaleString('en-US'),
        'replay events/s (CPU)': perSecond(result.events, result.replayMs),
        'whole run events/s (CPU)': perSecond(result.events, result.wholeMs),
        'intents per 1,000 events': ((result.intents * 1000) / result.events).toFixed(0),
        'replay CPU ms': result.replayMs.toFixed(0),
        'µs CPU per intent':
          result.intents === 0 ? '' : ((result.replayMs * 1000) / result.intents).toFixed(0),
        'RSS start MB': result.rssStartMb.toFixed(0),
        'RSS end MB': result.rssEndMb.toFixed(0),
      })),
    );
    await rm(densePath, { recursive: true, force: true });
  });
}
