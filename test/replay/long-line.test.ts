/**
 * Reading a line spread over many chunks stays linear in its length: the reader keeps the
 * chunks and joins them once at the newline (it used to append chunk by chunk, copying the
 * line again each time: a 64 MB line took 8.6 s, 128 MB 25.7 s). Timed as a ratio of the same
 * work at two sizes, not as a duration: a line of 4N bytes must take about 4 times a line of N
 * (the quadratic copy made it about 16); the best of three runs each.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLogReader } from '../../src/replay/format/index.ts';
import { temporaryFolder } from './backtest/helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;

beforeAll(async () => {
  folder = await temporaryFolder('long-line');
});

afterAll(async () => {
  await folder.remove();
});

/** A gzip events file of one valid gap record whose reason is `bytes` long. */
async function longLineFile(bytes: number): Promise<string> {
  const path = join(folder.path, `line-${bytes}.jsonl.gz`);
  const line = `{"v":1,"t":1,"k":"gap","d":{"stream":"trade","reason":"${'r'.repeat(bytes)}"}}\n`;
  await writeFile(path, gzipSync(line, { level: 1 }));
  return path;
}

async function bestReadMs(path: string): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    const reader = new EventLogReader(path, 'gzip', { verify: false });
    let records = 0;
    for await (const batch of reader.batches()) records += batch.length;
    expect(records).toBe(1);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

describe('a long line', () => {
  it('takes time linear in its length (4N vs N: a ratio well under 16)', async () => {
    // Above a few MiB: smaller strings take another, faster path in V8 and skew the ratio.
    const size = 6 << 20;
    const short = await bestReadMs(await longLineFile(size));
    const long = await bestReadMs(await longLineFile(4 * size));
    expect(long / short).toBeLessThan(8);
  }, 120_000);

  it('is refused past the line cap instead of being held', async () => {
    const path = await longLineFile(2 << 20);
    const reader = new EventLogReader(path, 'gzip', { verify: false, maxLineBytes: 1 << 20 });
    await expect(
      (async () => {
        for await (const _batch of reader.batches()) {
          // drain
        }
      })(),
    ).rejects.toMatchObject({
      code: 'RECORDING_INVALID',
      message: `${path} line 1 is longer than ${1 << 20} bytes`,
    });
  });
});
