/**
 * Decode throughput of recorded sessions: records per second read from JSONL, from JSONL.gz,
 * from the binary cache, and the cost of building the cache on a first replay. The file is
 * ~200k records of the default mix (50% tickers, 10% books of depth 10, 38% trades, 2% private
 * events). `RECORDS=<n>` changes the size.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { VirtualClock } from '../../src/core/clock.ts';
import {
  type CacheMode,
  openRecording,
  type Recording,
  RecordingSink,
  readRecording,
} from '../../src/replay/format/index.ts';
import { MARKET_IDS, market, mixedRecords, withTemporaryDirectory } from '../replay/fixtures.ts';
import { printBench } from './report.ts';

const RECORDS = Number(process.env.RECORDS ?? 200_000);

async function record(directory: string, compression: 'none' | 'gzip'): Promise<Recording> {
  const sink = await RecordingSink.create({
    directory,
    clock: new VirtualClock(0),
    source: { kind: 'emulator', baseUrl: 'http://127.0.0.1:8080' },
    markets: MARKET_IDS.map(market),
    bookDepth: 10,
    bookIntervalMs: 1_000,
    privateEvents: true,
    compression,
  });
  for (const item of mixedRecords({ count: RECORDS })) sink.append(item);
  await sink.close();
  return openRecording(directory);
}

async function readAll(recording: Recording, cache: CacheMode): Promise<number> {
  const reader = readRecording(recording, { cache });
  let count = 0;
  for await (const batch of reader.batches()) count += batch.length;
  if (count !== RECORDS) throw new Error(`read ${count} records, expected ${RECORDS}`);
  return count;
}

export default async function run(): Promise<void> {
  await withTemporaryDirectory(async (directory) => {
    const plain = await record(join(directory, 'plain'), 'none');
    const gzip = await record(join(directory, 'gzip'), 'gzip');
    const bench = new Bench({ time: 0, iterations: 5, warmupIterations: 1 });
    bench
      .add('JSONL (no cache)', () => readAll(plain, 'off'))
      .add('JSONL.gz (no cache)', () => readAll(gzip, 'off'))
      .add('JSONL + build cache (first replay)', () => readAll(plain, 'rebuild'))
      .add('cache (later replays)', () => readAll(plain, 'auto'), {
        beforeAll: async () => {
          await rm(plain.cachePath, { force: true });
          await readAll(plain, 'rebuild');
        },
      });
    await bench.run();
    printBench(bench);
    const rows = bench.tasks.map((task) => {
      const result = task.result;
      if (!result || result.state !== 'completed')
        return { task: task.name, 'records/s': 'failed' };
      const seconds = result.latency.mean / 1000;
      return {
        task: task.name,
        'records/s': Math.round(RECORDS / seconds).toLocaleString('en-US'),
        'ms per file': result.latency.mean.toFixed(1),
      };
    });
    console.table(rows);
  });
}
