/**
 * Replay at scale: memory over millions of events (`npm run bench -- replay-long`, run only
 * when named). `--events N` (or `EVENTS=N`) sets the length; 10,000,000 by default (issue 29's
 * "memory flat over 10 M events"), several minutes of CPU per strategy. `--only noop` or `--only mm` runs one of the two strategies;
 * `--every N` prints memory every N events instead of every million. `--data DIR` keeps the
 * recorded hour in DIR (recorded there when missing, reused when present), sparing the minute
 * of recording on the next run; `--snapshots DIR` writes a V8 heap snapshot into DIR at every
 * step, to compare what grows (Chrome DevTools, "Comparison").
 *
 * The data: one hour of the emulator at live density, recorded here on virtual time with a
 * fixed seed (stepping every 100 ms, books of 10 levels and trades every 100 ms, ~70 events per
 * virtual second for three markets; not committed), then replayed hour after hour, each copy one
 * span later, until the length is reached. Each copy is read anew from the recording's binary
 * cache batch by batch as the replay asks, so the data held is one batch whatever the length: what
 * grows is the replay.
 *
 * Printed every million events: RSS, the V8 heap in use after a full garbage collection (when
 * the collector can be called, which the bench arranges), and the CPU time of that million
 * (process.cpuUsage, user + system: the machine may be shared, so wall time would mislead).
 * Then the RSS and heap slopes per million, least squares over every million after the first,
 * and the growth between the first and the last million.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { NEVER } from 'rxjs';
import { z } from 'zod';
import { defaultEmulatorConfig } from '../../src/emulator/config.ts';
import { loadBacktestConfig, type ResolvedStrategy } from '../../src/replay/backtest/config.ts';
import { runBacktest } from '../../src/replay/backtest/runner.ts';
import { openReplaySource, type ReplaySource } from '../../src/replay/backtest/sources.ts';
import type { RecordedEvent } from '../../src/replay/format/records.ts';
import { recordEmulatorSession } from '../../src/replay/recorder/emulator-session.ts';
import { defineStrategy } from '../../src/runtime/strategy/index.ts';
import { withTemporaryDirectory } from '../replay/fixtures.ts';

const MILLION = 1_000_000;

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? undefined : process.argv[index + 1];
}

const EVENTS = Number(option('events') ?? process.env.EVENTS ?? 10 * MILLION);
/** Memory and CPU are printed every this many events (a million unless `--every N`). */
const EVERY = Number(option('every') ?? process.env.EVERY ?? MILLION);
const ONLY = option('only') ?? process.env.ONLY ?? 'all';
/** Where the recorded hour is kept between runs (a temporary directory otherwise). */
const DATA = option('data') ?? process.env.DATA;
/** Where heap snapshots go, one per step (none unless given). */
const SNAPSHOTS = option('snapshots') ?? process.env.SNAPSHOTS;

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as (() => void) | undefined;

const idle = defineStrategy({
  name: 'idle',
  description: 'Does nothing: subscribes to nothing, emits nothing.',
  params: z.strictObject({}),
  create: () => NEVER,
});

const NOOP: readonly ResolvedStrategy[] = [
  { id: 'noop', name: 'idle', definition: idle, rawParams: {}, params: {} },
];

/**
 * `record` moved `shift` ms later. A deferred record (`DeferredRecord`, binary-codec.ts) keeps
 * its body encoded behind a getter, so the copy keeps its prototype and `d` still decodes on
 * first read, as in a replay of the files themselves.
 */
function later(record: RecordedEvent, shift: number): RecordedEvent {
  const copy = Object.create(Object.getPrototypeOf(record) as object | null) as RecordedEvent;
  return Object.assign(copy, record, { t: record.t + shift });
}

/**
 * The recorded hour again and again, each copy one span later, until `total`: every copy is read
 * anew from the recording (its binary cache), as a replay of days of files reads them, so the
 * data in memory is one batch, not the hour (held decoded, the hour alone was ~200 MB of heap).
 */
function loopedSource(hour: ReplaySource, span: number, total: number): ReplaySource {
  return {
    ...hour,
    directories: ['(emulator, looped)'],
    expectedRecords: total,
    batches: async function* (options) {
      let emitted = 0;
      for (let copy = 0; emitted < total; copy++) {
        const shift = copy * span;
        for await (const read of hour.batches(options)) {
          const count = Math.min(read.length, total - emitted);
          const batch: RecordedEvent[] = new Array<RecordedEvent>(count);
          for (let index = 0; index < count; index++) batch[index] = later(read[index]!, shift);
          emitted += count;
          yield batch;
          if (emitted >= total) return;
        }
      }
    },
  };
}

/** Whether `directory` holds a recording that was closed (its manifest says complete). */
async function isCompleteRecording(directory: string): Promise<boolean> {
  try {
    const manifest = JSON.parse(await readFile(join(directory, 'manifest.json'), 'utf8')) as {
      complete?: unknown;
    };
    return manifest.complete === true;
  } catch {
    return false;
  }
}

interface Sample {
  readonly million: number;
  readonly rssMb: number;
  readonly heapMb: number;
  /** The V8 heap's reserved size (used, free and fragmented). */
  readonly heapTotalMb: number;
  /** Memory outside the V8 heap that V8 knows of (array buffers, SQLite is not in it). */
  readonly externalMb: number;
  readonly cpuMs: number;
}

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

function megabytes(bytes: number): number {
  return bytes / (1024 * 1024);
}

/** Least-squares slope of `y` over the million index. */
function slope(samples: readonly Sample[], y: (sample: Sample) => number): number {
  const n = samples.length;
  if (n < 2) return 0;
  const meanX = samples.reduce((sum, sample) => sum + sample.million, 0) / n;
  const meanY = samples.reduce((sum, sample) => sum + y(sample), 0) / n;
  let numerator = 0;
  let denominator = 0;
  for (const sample of samples) {
    numerator += (sample.million - meanX) * (y(sample) - meanY);
    denominator += (sample.million - meanX) ** 2;
  }
  return numerator / denominator;
}

async function measure(
  task: string,
  strategies: readonly ResolvedStrategy[],
  source: ReplaySource,
  config: Awaited<ReturnType<typeof loadBacktestConfig>>['config'],
): Promise<void> {
  collectGarbage?.();
  const startRss = megabytes(process.memoryUsage().rss);
  const samples: Sample[] = [];
  let nextMillion = EVERY;
  let lastCpu = cpuMs();
  const startCpu = lastCpu;
  const onProgress = (delivered: number) => {
    if (delivered < nextMillion) return;
    collectGarbage?.();
    const now = cpuMs();
    const memory = process.memoryUsage();
    samples.push({
      million: nextMillion / MILLION,
      rssMb: megabytes(memory.rss),
      heapMb: megabytes(memory.heapUsed),
      heapTotalMb: megabytes(memory.heapTotal),
      externalMb: megabytes(memory.external),
      cpuMs: now - lastCpu,
    });
    // Each step as it comes too: a run stopped early still shows how far it got.
    const step = samples[samples.length - 1]!;
    console.log(
      `${(delivered / MILLION).toFixed(2)} M events: RSS ${step.rssMb.toFixed(0)} MB, heap ` +
        `${step.heapMb.toFixed(1)} MB (total ${step.heapTotalMb.toFixed(0)} MB), external ` +
        `${step.externalMb.toFixed(1)} MB, ${(step.cpuMs / 1000).toFixed(1)} s CPU`,
    );
    if (SNAPSHOTS !== undefined)
      writeHeapSnapshot(join(SNAPSHOTS, `${task.split(' ')[0]}-${delivered}.heapsnapshot`));
    lastCpu = cpuMs();
    nextMillion += EVERY;
  };
  const result = await runBacktest({ config, strategies, source, onProgress });
  const totalCpu = cpuMs() - startCpu;
  const endRss = megabytes(process.memoryUsage().rss);
  const intents = result.counters.intents;
  console.log(`\n${task}`);
  console.table(
    samples.map((sample) => ({
      'events (M)': sample.million,
      'RSS MB': sample.rssMb.toFixed(0),
      'heap MB (after gc)': sample.heapMb.toFixed(1),
      'heap total MB': sample.heapTotalMb.toFixed(0),
      'external MB': sample.externalMb.toFixed(1),
      'CPU s': (sample.cpuMs / 1000).toFixed(1),
      'events/s (CPU)': Math.round(EVERY / (sample.cpuMs / 1000)).toLocaleString('en-US'),
    })),
  );
  // The first step includes the warm-up (JIT, first allocations): slopes start after it.
  const steady = samples.slice(1);
  const first = samples[0];
  const last = samples[samples.length - 1];
  console.table([
    {
      events: result.records.toLocaleString('en-US'),
      intents: intents.toLocaleString('en-US'),
      'intents per 1,000 events': ((intents * 1000) / result.records).toFixed(1),
      'events/s (CPU)': Math.round(result.records / (totalCpu / 1000)).toLocaleString('en-US'),
      'µs CPU per intent': intents === 0 ? '' : ((totalCpu * 1000) / intents).toFixed(1),
      'RSS start MB': startRss.toFixed(0),
      'RSS end MB': endRss.toFixed(0),
      'RSS first→last step MB':
        first === undefined || last === undefined ? '' : (last.rssMb - first.rssMb).toFixed(0),
      'RSS slope MB per M events': slope(steady, (sample) => sample.rssMb).toFixed(1),
      'heap slope MB per M events': slope(steady, (sample) => sample.heapMb).toFixed(2),
    },
  ]);
}

export default async function run(): Promise<void> {
  if (SNAPSHOTS !== undefined) await mkdir(SNAPSHOTS, { recursive: true });
  await withTemporaryDirectory(async (directory) => {
    const loaded = await loadBacktestConfig('config/backtest.yaml');
    const hourPath = DATA ?? join(directory, 'live-density-1h');
    const base = defaultEmulatorConfig();
    const recordCpu = cpuMs();
    const recorded = DATA !== undefined && (await isCompleteRecording(DATA));
    // A recording cut short is recorded again from the start.
    if (!recorded) await rm(hourPath, { recursive: true, force: true });
    if (!recorded)
      await recordEmulatorSession({
        directory: hourPath,
        seed: 42,
        startMs: Date.UTC(2025, 0, 1),
        durationMs: 60 * 60_000,
        emulatorConfig: { ...base, simulation: { ...base.simulation, step_ms: 100 } },
        bookDepth: 10,
        bookIntervalMs: 100,
        tradesIntervalMs: 100,
      });
    const hour = await openReplaySource([hourPath]);
    let count = 0;
    let firstT = Number.NaN;
    let lastT = Number.NaN;
    for await (const batch of hour.batches()) {
      if (count === 0 && batch.length > 0) firstT = batch[0]!.t;
      if (batch.length > 0) lastT = batch[batch.length - 1]!.t;
      count += batch.length;
    }
    const span = lastT - firstT + 1_000;
    console.log(
      `${recorded ? 'reused' : 'recorded'} one hour at live density: ${count.toLocaleString('en-US')} events ` +
        `(${((cpuMs() - recordCpu) / 1000).toFixed(1)} s CPU); replaying ` +
        `${EVENTS.toLocaleString('en-US')} events` +
        (collectGarbage === undefined ? ' (no gc hook: heap figures include garbage)' : ''),
    );
    if (ONLY === 'all' || ONLY === 'noop') {
      await measure('no-op', NOOP, loopedSource(hour, span, EVENTS), loaded.config);
    }
    if (ONLY === 'all' || ONLY === 'mm') {
      await measure(
        'market maker (config/backtest.yaml)',
        loaded.strategies,
        loopedSource(hour, span, EVENTS),
        loaded.config,
      );
    }
    if (DATA === undefined) await rm(hourPath, { recursive: true, force: true });
  });
}
