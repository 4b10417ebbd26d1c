import { appendFile, readFile, utimes, writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.ts';
import {
  BlockEncoder,
  createBlockDecoder,
  encodeRecordLine,
  openRecording,
  type RecordedEvent,
  type Recording,
  type RecordingReadOptions,
  RecordingSink,
  readCacheHeader,
  readRecording,
} from '../../src/replay/format/index.ts';
import { MARKET_IDS, market, mixedRecords, ticker, withTemporaryDirectory } from './fixtures.ts';

describe('binary codec', () => {
  it('decodes exactly what was encoded, key order and all (property)', () => {
    const json = fc.jsonValue({ maxDepth: 4 });
    const encoder = new BlockEncoder();
    const decoder = createBlockDecoder();
    fc.assert(
      fc.property(fc.array(json, { maxLength: 20 }), (values) => {
        // JSON semantics: what JSON.parse would give back for the recorded line.
        const expected = values.map((value) => JSON.parse(JSON.stringify(value)) as unknown);
        const decoded = decoder.decode(encoder.encode(expected));
        expect(decoded.map((value) => JSON.stringify(value))).toEqual(
          expected.map((value) => JSON.stringify(value)),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a __proto__ key as an own property, never as the prototype', () => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as unknown;
    const [decoded] = createBlockDecoder().decode(new BlockEncoder().encode([value])) as [
      Record<string, unknown>,
    ];
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(Object.keys(decoded)).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(decoded)).toBe('{"__proto__":{"polluted":true},"a":1}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reuses compiled shapes across blocks and decodes many blocks in a row', () => {
    const encoder = new BlockEncoder();
    const decoder = createBlockDecoder();
    const records = mixedRecords({ count: 900 });
    for (let start = 0; start < records.length; start += 300) {
      const block = records.slice(start, start + 300);
      expect(decoder.decode(encoder.encode(block))).toEqual(block);
    }
  });

  it('refuses a damaged block instead of returning garbage', () => {
    const block = new BlockEncoder().encode(mixedRecords({ count: 20 }));
    const truncated = block.subarray(0, block.length - 5);
    expect(() => createBlockDecoder().decode(truncated)).toThrow(
      expect.objectContaining({ code: 'RECORDING_CACHE_CORRUPT' }),
    );
    const badTag = Buffer.from(block);
    badTag[badTag.length - 1] = 0xee;
    expect(() => createBlockDecoder().decode(badTag)).toThrow(
      expect.objectContaining({ code: 'RECORDING_CACHE_CORRUPT' }),
    );
  });
});

async function recordSession(
  directory: string,
  records: readonly RecordedEvent[],
  compression: 'none' | 'gzip' = 'none',
): Promise<Recording> {
  const sink = await RecordingSink.create({
    compression,
    directory,
    clock: new VirtualClock(0),
    source: { kind: 'emulator', baseUrl: 'http://127.0.0.1:8080' },
    markets: MARKET_IDS.map(market),
    bookDepth: 10,
    bookIntervalMs: 1_000,
    privateEvents: true,
  });
  for (const record of records) sink.append(record);
  await sink.close();
  return openRecording(directory);
}

async function drain(recording: Recording, options: RecordingReadOptions = {}) {
  const reader = readRecording(recording, { batchSize: 500, ...options });
  const lines: string[] = [];
  for await (const batch of reader.batches()) lines.push(...batch.map(encodeRecordLine));
  return { lines, summary: reader.summary! };
}

describe('events cache', () => {
  it('is built on the first read and used by the next, with identical records', async () => {
    await withTemporaryDirectory(async (directory) => {
      const records = mixedRecords({ count: 2_500 });
      const recording = await recordSession(directory, records);
      const first = await drain(recording);
      expect(first.summary.cache).toBe('built');
      const header = await readCacheHeader(recording.cachePath);
      expect(header).toMatchObject({
        records: 2_500,
        blocks: 5,
        torn_tail: null,
      });
      const second = await drain(recording);
      expect(second.summary.cache).toBe('read');
      expect(second.lines).toEqual(records.map(encodeRecordLine));
      expect(second.lines.join('')).toBe(await readFile(recording.eventsPath, 'utf8'));
      expect(second.summary).toMatchObject({
        records: 2_500,
        tornTail: null,
        delivered: 2_500,
      });
    });
  });

  it('serves gzip sessions too, keyed by the compressed file', async () => {
    await withTemporaryDirectory(async (directory) => {
      const records = mixedRecords({ count: 1_200 });
      const recording = await recordSession(directory, records, 'gzip');
      expect((await drain(recording)).summary.cache).toBe('built');
      const second = await drain(recording);
      expect(second.summary.cache).toBe('read');
      expect(second.lines).toEqual(records.map(encodeRecordLine));
    });
  });

  it('is not used when the cache file is cut short', async () => {
    await withTemporaryDirectory(async (directory) => {
      const recording = await recordSession(directory, mixedRecords({ count: 600 }));
      await drain(recording);
      const bytes = await readFile(recording.cachePath);
      await writeFile(recording.cachePath, bytes.subarray(0, bytes.length - 100));
      expect(await readCacheHeader(recording.cachePath)).toBeNull();
      const again = await drain(recording);
      expect(again.summary.cache).toBe('built');
      expect(again.lines).toHaveLength(600);
    });
  });

  it('is not used once the events file has changed, and is rebuilt', async () => {
    await withTemporaryDirectory(async (directory) => {
      const records = mixedRecords({ count: 300 });
      const recording = await recordSession(directory, records);
      await drain(recording);
      const extra = encodeRecordLine({
        ...records[0]!,
        t: records.at(-1)!.t + 1,
      } as RecordedEvent);
      await appendFile(recording.eventsPath, extra);
      const after = await drain(recording);
      expect(after.summary.cache).toBe('built');
      expect(after.lines).toHaveLength(301);
      expect((await drain(recording)).summary.cache).toBe('read');
    });
  });

  it('checks the hash when the size matches but the mtime does not', async () => {
    await withTemporaryDirectory(async (directory) => {
      const records = mixedRecords({ count: 200 });
      const recording = await recordSession(directory, records);
      await drain(recording);
      // Same size, one character different, different mtime: the hash must catch it.
      const text = await readFile(recording.eventsPath, 'utf8');
      const altered = text.replace('"BTC-USD"', '"BTC-USE"');
      expect(altered.length).toBe(text.length);
      await writeFile(recording.eventsPath, altered);
      await utimes(recording.eventsPath, 1_000, 1_000);
      const after = await drain(recording, { verify: false });
      expect(after.summary.cache).toBe('built');
      expect(after.lines.join('')).toBe(altered);
      // Same bytes, touched: the hash matches and the cache is used.
      await utimes(recording.eventsPath, 2_000, 2_000);
      expect((await drain(recording, { verify: false })).summary.cache).toBe('read');
    });
  });

  it('keeps the torn-tail report of the events file it was built from', async () => {
    await withTemporaryDirectory(async (directory) => {
      const recording = await recordSession(directory, mixedRecords({ count: 100 }));
      await appendFile(recording.eventsPath, '{"v":1,"t":9');
      const built = await drain(recording);
      const read = await drain(recording);
      expect(read.summary.cache).toBe('read');
      expect(read.summary.tornTail).toEqual(built.summary.tornTail);
      expect(read.summary.tornTail).toMatchObject({
        reason: 'unterminated-line',
        droppedBytes: 12,
      });
    });
  });

  it('is left alone in mode off and ignored in mode rebuild', async () => {
    await withTemporaryDirectory(async (directory) => {
      const recording = await recordSession(directory, [
        { v: 1, t: 1, k: 'ticker', m: 'BTC-USD', d: ticker('BTC-USD', '1') },
      ]);
      expect((await drain(recording, { cache: 'off' })).summary.cache).toBe('skipped');
      expect(await readCacheHeader(recording.cachePath)).toBeNull();
      await drain(recording);
      expect((await drain(recording, { cache: 'rebuild' })).summary.cache).toBe('built');
    });
  });

  it('is not written when the reader stops early', async () => {
    await withTemporaryDirectory(async (directory) => {
      const recording = await recordSession(directory, mixedRecords({ count: 2_000 }));
      const reader = readRecording(recording, { batchSize: 100 });
      for await (const _ of reader.batches()) break;
      expect(reader.summary).toBeNull();
      expect(await readCacheHeader(recording.cachePath)).toBeNull();
    });
  });
});
