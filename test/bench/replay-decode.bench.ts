/**
 * Decode throughput of recorded sessions: records per second read from JSONL, from JSONL.gz,
 * from the binary cache, the cost of building the cache on a first replay, and the cache's
 * blocks decoded from memory (no file read). The file is ~200k records of the default mix (50%
 * tickers, 10% books of depth 10, 38% trades, 2% private events). `RECORDS=<n>` changes the size.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { VirtualClock } from '../../src/core/clock.ts';
import {
  BlockEncoder,
  type CacheMode,
  createBlockDecoder,
  openRecording,
  type Recording,
  RecordingSink,
  readRecording,
} from '../../src/replay/format/index.ts';
import { CACHE_BLOCK_RECORDS } from '../../src/replay/format/cache.ts';
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

/** The cache's blocks for the records of a recording, encoded in memory as a replay would. */
async function encodedBlocks(recording: Recording): Promise<Uint8Array[]> {
  const encoder = new BlockEncoder();
  const blocks: Uint8Array[] = [];
  for await (const batch of readRecording(recording, { cache: 'off' }).batches()) {
    for (let start = 0; start < batch.length; start += CACHE_BLOCK_RECORDS) {
      // Copied into buffers of their own, aligned as the cache reader's are.
      blocks.push(new Uint8Array(encoder.encode(batch.slice(start, start + CACHE_BLOCK_RECORDS))));
    }
  }
  return blocks;
}

function decodeAll(blocks: readonly Uint8Array[]): number {
  const decoder = createBlockDecoder();
  let count = 0;
  for (const block of blocks) count += decoder.decode(block).length;
  if (count !== RECORDS) throw new Error(`decoded ${count} records, expected ${RECORDS}`);
  return count;
}

export default async function run(): Promise<void> {
  await withTemporaryDirectory(async (directory) => {
    const plain = await record(join(directory, 'plain'), 'none');
    const gzip = await record(join(directory, 'gzip'), 'gzip');
    const blocks = await encodedBlocks(plain);
    const cacheBytes = (await readFile(join(directory, 'plain', 'events.jsonl'))).length;
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
      })
      .add('cache blocks decoded in memory', () => decodeAll(blocks));
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
    const cacheSize = (await readFile(plain.cachePath)).length;
    console.log(
      `JSONL ${(cacheBytes / 1e6).toFixed(1)} MB, cache ${(cacheSize / 1e6).toFixed(1)} MB`,
    );
  });
}
