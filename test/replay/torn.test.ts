/**
 * Interruption at any point: the events file is cut at a random byte (what a kill or a power
 * loss leaves), and the reader must return every record completed before the cut, in order and
 * unchanged, and report the tear.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EventLogReader,
  EventLogWriter,
  encodeRecordLine,
  type RecordedEvent,
} from '../../src/replay/format/index.ts';
import { mixedRecords } from './fixtures.ts';

/** Node's zlib default `chunkSize`: output is handed out one such buffer at a time. */
const GUNZIP_OUTPUT_BUFFER_BYTES = 16 * 1024;

interface Written {
  readonly bytes: Buffer;
  readonly lines: readonly string[];
  /** After each flush: file size and records written so far. */
  readonly flushes: readonly {
    readonly size: number;
    readonly records: number;
  }[];
}

async function writeInFlushes(
  path: string,
  compression: 'none' | 'gzip',
  records: readonly RecordedEvent[],
): Promise<Written> {
  const writer = await EventLogWriter.create(path, compression);
  const lines = records.map(encodeRecordLine);
  const flushes: { size: number; records: number }[] = [];
  for (let index = 0; index < lines.length; index++) {
    writer.append(lines[index]!);
    // Irregular flush points: 1 to 17 records apart.
    if ((index * 7) % 17 === 0) {
      await writer.flush();
      flushes.push({ size: (await stat(path)).size, records: index + 1 });
    }
  }
  await writer.close();
  return { bytes: await readFile(path), lines, flushes };
}

async function readCut(
  directory: string,
  written: Written,
  cut: number,
  compression: 'none' | 'gzip',
) {
  const path = join(directory, `cut-${compression}`);
  await writeFile(path, written.bytes.subarray(0, cut));
  const reader = new EventLogReader(path, compression, {
    verify: false,
    batchSize: 64,
  });
  const lines: string[] = [];
  for await (const batch of reader.batches()) {
    for (const record of batch) lines.push(encodeRecordLine(record));
  }
  return { lines, summary: reader.summary! };
}

describe('a torn events file', () => {
  let directory = '';
  const written: Partial<Record<'none' | 'gzip', Written>> = {};

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'paperbot-torn-'));
    const records = mixedRecords({ count: 400, bookDepth: 3 });
    written.none = await writeInFlushes(join(directory, 'plain.jsonl'), 'none', records);
    written.gzip = await writeInFlushes(join(directory, 'gzip.jsonl.gz'), 'gzip', records);
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('plain: returns exactly the lines whose newline is before the cut', async () => {
    const file = written.none!;
    const ends: number[] = [];
    let offset = 0;
    for (const line of file.lines) {
      offset += Buffer.byteLength(line);
      ends.push(offset);
    }
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: file.bytes.length }), async (cut) => {
        const { lines, summary } = await readCut(directory, file, cut, 'none');
        const complete = ends.filter((end) => end <= cut).length;
        expect(lines).toEqual(file.lines.slice(0, complete));
        const lastEnd = complete === 0 ? 0 : ends[complete - 1]!;
        if (cut === lastEnd) {
          expect(summary.tornTail).toBeNull();
        } else {
          expect(summary.tornTail).toEqual({
            offset: lastEnd,
            droppedBytes: cut - lastEnd,
            reason: 'unterminated-line',
          });
        }
      }),
      { numRuns: 150 },
    );
  });

  it('gzip: returns a prefix of the records, at least all flushed before the cut', async () => {
    const file = written.gzip!;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: file.bytes.length }), async (cut) => {
        const { lines, summary } = await readCut(directory, file, cut, 'gzip');
        expect(lines).toEqual(file.lines.slice(0, lines.length));
        const flushed = file.flushes.filter((flush) => flush.size <= cut).at(-1)?.records ?? 0;
        expect(lines.length).toBeGreaterThanOrEqual(flushed);
        if (cut === file.bytes.length) {
          expect(lines).toHaveLength(file.lines.length);
          expect(summary.tornTail).toBeNull();
        } else if (cut > 0) {
          expect(summary.tornTail?.reason).toBe('truncated-gzip');
        }
      }),
      { numRuns: 150 },
    );
  });

  it('gzip: a cut exactly at a flush point loses nothing written before it', async () => {
    const file = written.gzip!;
    for (const flush of file.flushes) {
      const { lines, summary } = await readCut(directory, file, flush.size, 'gzip');
      expect(lines).toEqual(file.lines.slice(0, flush.records));
      expect(summary.tornTail).toMatchObject({
        reason: 'truncated-gzip',
        droppedBytes: 0,
      });
    }
  });

  it('gzip: a damaged tail (zero-filled after a power loss) is reported, not thrown', async () => {
    const file = written.gzip!;
    const flush = file.flushes[Math.floor(file.flushes.length / 2)]!;
    const path = join(directory, 'garbage.jsonl.gz');
    await writeFile(path, Buffer.concat([file.bytes.subarray(0, flush.size), Buffer.alloc(4_096)]));
    const reader = new EventLogReader(path, 'gzip', { verify: false });
    const lines: string[] = [];
    for await (const batch of reader.batches()) lines.push(...batch.map(encodeRecordLine));
    // A prefix, missing at most the gzip decoder's last output buffer before the damage.
    expect(lines).toEqual(file.lines.slice(0, lines.length));
    const missing = file.lines.slice(lines.length, flush.records).join('');
    expect(Buffer.byteLength(missing)).toBeLessThanOrEqual(GUNZIP_OUTPUT_BUFFER_BYTES);
    expect(reader.summary!.tornTail?.reason).toBe('damaged-gzip');
  });

  it('an empty file (killed before the first flush) has no records and no tear', async () => {
    for (const compression of ['none', 'gzip'] as const) {
      const { lines, summary } = await readCut(directory, written[compression]!, 0, compression);
      expect(lines).toEqual([]);
      expect(summary.tornTail).toBeNull();
    }
  });
});
