import { appendFile, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.ts';
import {
  BlockEncoder,
  createBlockDecoder,
  DeferredRecord,
  HOST_LITTLE_ENDIAN,
  MAX_ARRAY_ITEMS,
  MAX_DEPTH,
  MAX_TABLE_STRINGS,
  MAX_TEMPLATE_SIZE,
  encodeRecordLine,
  openRecording,
  type RecordedEvent,
  type Recording,
  type RecordingReadOptions,
  RECORD_KINDS,
  RecordingSink,
  readCacheHeader,
  readRecording,
  writeManifest,
  bookRecord,
  gapRecord,
  privateRecord,
  tickerRecord,
  tradeRecord,
} from '../../src/replay/format/index.ts';
import {
  book,
  fillEvent,
  MARKET_IDS,
  market,
  mixedRecords,
  orderStatusEvent,
  publicTrade,
  START_MS,
  ticker,
  withTemporaryDirectory,
} from './fixtures.ts';

/** JSON semantics: what reading the value's JSON line would give. */
function viaJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/** Deep equality that also tells -0 from 0 and own keys in order, as the JSONL decoder gives. */
function expectSameValues(actual: readonly unknown[], expected: readonly unknown[]): void {
  expect(actual).toStrictEqual(expected);
  expect(actual.map((value) => JSON.stringify(value))).toEqual(
    expected.map((value) => JSON.stringify(value)),
  );
  const keyOrders = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(keyOrders)
      : value !== null && typeof value === 'object'
        ? Object.entries(value).map(([key, field]) => [key, keyOrders(field)])
        : value;
  expect(actual.map(keyOrders)).toStrictEqual(expected.map(keyOrders));
}

/** A copy of a block whose header word `index` is changed (host byte order, as written). */
function withHeaderWord(block: Uint8Array, index: number, value: number): Uint8Array {
  const copy = new Uint8Array(block);
  new Uint32Array(copy.buffer, 0, 10)[index] = value;
  return copy;
}

const corrupt = expect.objectContaining({ code: 'RECORDING_CACHE_CORRUPT' });

describe('binary codec', () => {
  it('decodes exactly what was encoded, key order and all, block after block (property)', () => {
    const json = fc.jsonValue({ maxDepth: 4 });
    const encoder = new BlockEncoder();
    const decoder = createBlockDecoder();
    fc.assert(
      fc.property(fc.array(json, { maxLength: 20 }), (values) => {
        const expected = values.map(viaJson);
        expectSameValues(decoder.decode(encoder.encode(expected)), expected);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every number, string and key as JSON.parse gives them', () => {
    const lines = [
      '{"zero":0,"negativeZero":-0,"list":[-0,0,-0.0]}',
      '{"edges":[2147483647,-2147483648,2147483648,-2147483649,4294967296]}',
      '{"floats":[0.1,-1.5,1e300,5e-324,-1.7976931348623157e308,9007199254740993,1e21]}',
      '{"strings":["","a\\u0000b","\\ud800","\\udc00x","😀","é","line\\nbreak","\\u2028"]}',
      '{"2":"b","1":"a","z":1,"a":2,"":3,"\\"quote\\"":4,"back\\\\slash":5,"\\u2028":6}',
      '{"constants":[true,false,null,[],{},[[]],[{}]]}',
      '[1,"two",null]',
      '"a string record"',
      '12.5',
      'null',
    ];
    const values = lines.map((line) => JSON.parse(line) as unknown);
    expectSameValues(createBlockDecoder().decode(new BlockEncoder().encode(values)), values);
    const decoded = createBlockDecoder().decode(new BlockEncoder().encode(values));
    expect(Object.is((decoded[0] as { negativeZero: number }).negativeZero, -0)).toBe(true);
  });

  it('keeps a __proto__ key as an own property, never as the prototype', () => {
    const value = JSON.parse(
      '{"a":1,"nested":{"__proto__":{"polluted":true},"b":[{"__proto__":null}]}}',
    ) as unknown;
    const [decoded] = createBlockDecoder().decode(new BlockEncoder().encode([value])) as [
      { nested: Record<string, unknown> },
    ];
    expect(Object.getPrototypeOf(decoded.nested)).toBe(Object.prototype);
    expect(Object.keys(decoded.nested)).toEqual(['__proto__', 'b']);
    expect(JSON.stringify(decoded)).toBe(JSON.stringify(value));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('keeps values past the template limits as JSON text, decoded the same', () => {
    let deep: unknown = 'bottom';
    for (let level = 0; level < MAX_DEPTH + 5; level++) deep = { level, next: [deep] };
    const long = Array.from({ length: MAX_ARRAY_ITEMS + 1 }, (_, index) => ({ index }));
    const wide = Object.fromEntries(
      Array.from({ length: MAX_TEMPLATE_SIZE }, (_, index) => [`key${index}`, index]),
    );
    const values = [deep, { long }, { wide }, { fine: [1, 2, 3] }].map(viaJson);
    expectSameValues(createBlockDecoder().decode(new BlockEncoder().encode(values)), values);
  });

  it('starts a new string table when the table is full, and falls back past the templates', () => {
    const encoder = new BlockEncoder({ maxTableStrings: 10, maxTemplates: 3 });
    const decoder = createBlockDecoder();
    const rounds = 6;
    for (let round = 0; round < rounds; round++) {
      // Each block brings new strings and new structures.
      const values = Array.from({ length: 8 }, (_, index) =>
        viaJson({ round, index, text: `s${round}-${index}`, [`key${round % 4}`]: [index] }),
      );
      expectSameValues(decoder.decode(encoder.encode(values)), values);
    }
  });

  it('starts a new string table past MAX_TABLE_STRINGS strings by default (bounded memory)', () => {
    const encoder = new BlockEncoder();
    const decoder = createBlockDecoder();
    const perBlock = Math.ceil(MAX_TABLE_STRINGS / 2) + 1;
    const newTable = (block: Uint8Array) => (new Uint32Array(block.buffer, 0, 10)[2]! & 2) !== 0;
    const seen: boolean[] = [];
    for (let round = 0; round < 3; round++) {
      // Every string is new: two blocks fill the table past its bound.
      const values = Array.from({ length: perBlock }, (_, index) => ({ s: `${round}:${index}` }));
      const block = new Uint8Array(encoder.encode(values));
      seen.push(newTable(block));
      expectSameValues(decoder.decode(block), values);
    }
    expect(seen).toEqual([true, false, true]);
  });

  it('decodes many blocks of records, reusing templates across them', () => {
    const encoder = new BlockEncoder();
    const decoder = createBlockDecoder();
    const records = mixedRecords({ count: 900 });
    for (let start = 0; start < records.length; start += 300) {
      const block = records.slice(start, start + 300);
      expectSameValues(decoder.decode(encoder.encode(block)), block);
    }
  });

  it('defers the body of the named kinds: the same records once read, built once', () => {
    const encoder = new BlockEncoder();
    const decoder = createBlockDecoder({ deferredKinds: ['book', 'trade'] });
    const records = mixedRecords({ count: 900 });
    const decoded: unknown[] = [];
    for (let start = 0; start < records.length; start += 300) {
      decoded.push(...decoder.decode(encoder.encode(records.slice(start, start + 300))));
    }
    const kinds = new Set<string>();
    for (let index = 0; index < records.length; index++) {
      const expected = records[index]!;
      const actual = decoded[index] as RecordedEvent;
      const deferred = actual instanceof DeferredRecord;
      expect(deferred).toBe(expected.k === 'book' || expected.k === 'trade');
      if (deferred) kinds.add(actual.k);
      expect([actual.v, actual.t, actual.k, actual.m]).toEqual([
        expected.v,
        expected.t,
        expected.k,
        expected.m,
      ]);
      // Read in a later block's time: the body comes from its own block's columns.
      expect(actual.d).toStrictEqual(expected.d);
      expect(actual.d).toBe(actual.d);
      expect(encodeRecordLine(actual)).toBe(encodeRecordLine(expected));
    }
    expect([...kinds].sort()).toEqual(['book', 'trade']);
  });

  it('gives deferred records JSON.stringify writes as recorded, read or not, any key order', () => {
    const reordered = { d: { price: '1.5', side: 'buy' }, m: 'BTC-USD', k: 'trade', t: 5, v: 1 };
    const values = [reordered, ...mixedRecords({ count: 60 })];
    const decoded = createBlockDecoder({ deferredKinds: ['trade', 'book'] }).decode(
      new BlockEncoder().encode(values),
    );
    expect(decoded[0]).toBeInstanceOf(DeferredRecord);
    expect(decoded.map((value) => JSON.stringify(value))).toEqual(
      values.map((value) => JSON.stringify(value)),
    );
  });

  it('decodes a block that is not 8-byte aligned in its buffer', () => {
    const records = mixedRecords({ count: 50 });
    const block = new BlockEncoder().encode(records);
    const shifted = new Uint8Array(block.length + 3);
    shifted.set(block, 3);
    expectSameValues(createBlockDecoder().decode(shifted.subarray(3)), records);
  });

  it('refuses a damaged block instead of returning garbage', () => {
    const encoder = new BlockEncoder();
    const block = new Uint8Array(encoder.encode(mixedRecords({ count: 20 })));
    const decode = (bytes: Uint8Array) => () => createBlockDecoder().decode(bytes);
    expect(decode(block.subarray(0, block.length - 8))).toThrow(corrupt);
    expect(decode(block.subarray(0, 12))).toThrow(corrupt);
    // Header words: 1 records, 3 new strings, 5 new templates, 7 references, 9 floats.
    expect(decode(withHeaderWord(block, 1, 21))).toThrow(corrupt);
    expect(decode(withHeaderWord(block, 3, 0))).toThrow(corrupt);
    expect(decode(withHeaderWord(block, 5, 0))).toThrow(corrupt);
    expect(decode(withHeaderWord(block, 7, 1))).toThrow(corrupt);
    expect(decode(withHeaderWord(block, 9, 3))).toThrow(corrupt);
    // A template index or a string index out of range.
    const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
    const word = (index: number) => view.getUint32(index * 4, HOST_LITTLE_ENDIAN);
    const recordsAt = 40 + word(9) * 8;
    const badTemplate = new Uint8Array(block);
    new DataView(badTemplate.buffer).setUint32(recordsAt, 999, HOST_LITTLE_ENDIAN);
    expect(decode(badTemplate)).toThrow(corrupt);
    const referencesAt = recordsAt + word(1) * 4;
    const badString = new Uint8Array(block);
    new DataView(badString.buffer).setInt32(referencesAt, 1 << 20, HOST_LITTLE_ENDIAN);
    expect(decode(badString)).toThrow(corrupt);
    // A negative one, and the first past the table (its new strings: the block starts it).
    for (const reference of [-1, word(3)]) {
      const bad = new Uint8Array(block);
      new DataView(bad.buffer).setInt32(referencesAt + 4 * 7, reference, HOST_LITTLE_ENDIAN);
      expect(decode(bad)).toThrow(corrupt);
    }
    const lastString = new Uint8Array(block);
    new DataView(lastString.buffer).setInt32(referencesAt, word(3) - 1, HOST_LITTLE_ENDIAN);
    expect(() => createBlockDecoder().decode(lastString)).not.toThrow();
    // A block that continues a sequence cannot be decoded without the blocks before it.
    const next = encoder.encode(mixedRecords({ count: 5, startMs: 0 }));
    expect(decode(next)).toThrow(corrupt);
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

/**
 * The session as an interrupted recording (`complete: false`, no `files` entry): its events
 * file may grow or tear, so these tests change it to exercise the cache's key. A closed
 * recording whose file changes is refused instead (test/replay/damaged-recordings.test.ts).
 */
async function interrupted(recording: Recording): Promise<Recording> {
  const { files: _files, ...manifest } = recording.manifest;
  await writeManifest(recording.directory, { ...manifest, complete: false });
  return openRecording(recording.directory);
}

async function collect(recording: Recording, options: RecordingReadOptions = {}) {
  const reader = readRecording(recording, options);
  const records: RecordedEvent[] = [];
  for await (const batch of reader.batches()) records.push(...batch);
  return { records, summary: reader.summary! };
}

async function drain(recording: Recording, options: RecordingReadOptions = {}) {
  const reader = readRecording(recording, { batchSize: 500, ...options });
  const lines: string[] = [];
  for await (const batch of reader.batches()) lines.push(...batch.map(encodeRecordLine));
  return { lines, summary: reader.summary! };
}

describe('events cache', () => {
  it('gives the records the JSONL gives, for every record kind and payload variant', async () => {
    await withTemporaryDirectory(async (directory) => {
      const t = START_MS;
      const thinBook = { ...book('ETH-USD', 3_000, 3, 7, t), sequence: null, checksum: 'abc' };
      const emptyBook = { ...book('SOL-USD', 150, 0, 8, t), oracle: null };
      const records: RecordedEvent[] = [
        tickerRecord(t, ticker('BTC-USD', '65000.5')),
        tickerRecord(t + 1, { ...ticker('ETH-USD', '3000'), last_price: null }),
        bookRecord(t + 2, book('BTC-USD', 65_000, 10, 1, t)),
        bookRecord(t + 3, thinBook),
        bookRecord(t + 4, emptyBook),
        tradeRecord(t + 5, publicTrade('BTC-USD', 1, '65000.5', t)),
        tradeRecord(t + 6, publicTrade('SOL-USD', 2, '150.25', t)),
        privateRecord(t + 7, fillEvent(1, 'BTC-USD', '65000.5', t)),
        privateRecord(t + 8, orderStatusEvent(2, t)),
        gapRecord(t + 9, 'book', 'resync after a sequence gap', 'BTC-USD'),
        gapRecord(t + 10, 'private', 'reconnected'),
        ...mixedRecords({ count: 1_500, startMs: t + 11 }),
      ];
      const recording = await recordSession(directory, records);
      const fromJsonl = await collect(recording, { cache: 'off' });
      const built = await collect(recording);
      const fromCache = await collect(recording);
      expect(built.summary.cache).toBe('built');
      expect(fromCache.summary.cache).toBe('read');
      expect(new Set(fromCache.records.map((record) => record.k))).toEqual(new Set(RECORD_KINDS));
      expectSameValues(fromCache.records, fromJsonl.records);
      expectSameValues(fromJsonl.records, records);
    });
  });

  it('gives what JSON.parse gives for any JSON payload of an unverified file', async () => {
    await withTemporaryDirectory(async (directory) => {
      const recording = await interrupted(
        await recordSession(directory, mixedRecords({ count: 10 })),
      );
      const payloads = [
        '{"negativeZero":-0,"big":9007199254740993,"tiny":5e-324,"int32":[2147483647,-2147483648]}',
        '{"text":"nul \\u0000 and lone \\ud800 and 😀","escaped":"\\u2028\\"\\\\"}',
        '{"__proto__":{"polluted":true},"2":"b","1":"a"}',
        `{"long":[${Array.from({ length: 300 }, (_, index) => index).join(',')}]}`,
        '[1,[2,[3,[4]]],{"a":{}}]',
        '"just text"',
      ];
      const lines = payloads.map(
        (payload, index) => `{"v":1,"t":${START_MS + index},"k":"gap","d":${payload}}\n`,
      );
      await writeFile(recording.eventsPath, lines.join(''));
      const options = { verify: false } as const;
      const fromJsonl = await collect(recording, { ...options, cache: 'off' });
      expect((await collect(recording, options)).summary.cache).toBe('built');
      const fromCache = await collect(recording, options);
      expect(fromCache.summary.cache).toBe('read');
      expectSameValues(fromCache.records, fromJsonl.records);
      expectSameValues(
        fromCache.records,
        lines.map((line) => JSON.parse(line) as unknown),
      );
    });
  });

  it('checks the records the building read did not, when asked to', async () => {
    await withTemporaryDirectory(async (directory) => {
      const recording = await interrupted(
        await recordSession(directory, mixedRecords({ count: 40 })),
      );
      // Record 30 has a valid header and sound values but a payload the schema refuses.
      const lines = (await readFile(recording.eventsPath, 'utf8')).split('\n');
      const { t } = JSON.parse(lines[29]!) as { t: number };
      lines[29] = `{"v":1,"t":${t},"k":"ticker","m":"BTC-USD","d":{"market_id":"BTC-USD","mark_price":null,"index_price":null,"last_price":null}}`;
      await writeFile(recording.eventsPath, lines.join('\n'));
      expect((await collect(recording, { verify: 10 })).summary.cache).toBe('built');
      expect(await readCacheHeader(recording.cachePath)).toMatchObject({ verified_records: 10 });
      // The cache holds what the JSONL holds: the same record fails the same check.
      const cached = collect(recording, { verify: true });
      await expect(cached).rejects.toMatchObject({
        code: 'RECORDING_INVALID',
        details: { line: 30 },
      });
      const within = await collect(recording, { verify: 20 });
      expect(within.summary.cache).toBe('read');
      expect(within.records).toHaveLength(40);
    });
  });

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

  it('reads a cache larger than its read window, deferred records included, as the JSONL gives', async () => {
    await withTemporaryDirectory(async (directory) => {
      const records = mixedRecords({ count: 30_000 });
      const recording = await recordSession(directory, records);
      await drain(recording);
      // The reader takes 1 MiB at a time: this cache spans several windows, so blocks start
      // in one window and records read later keep theirs.
      const header = await readCacheHeader(recording.cachePath);
      expect(header?.bytes).toBeGreaterThan(2 * (1 << 20));
      const whole = await drain(recording);
      expect(whole.summary.cache).toBe('read');
      expect(whole.lines).toEqual(records.map(encodeRecordLine));
      const deferred = await drain(recording, { deferredKinds: ['book', 'trade'] });
      expect(deferred.lines).toEqual(records.map(encodeRecordLine));
    });
  });

  it('hands out deferred book and trade records when asked, the same once read', async () => {
    await withTemporaryDirectory(async (directory) => {
      const records = mixedRecords({ count: 2_500 });
      const recording = await recordSession(directory, records);
      await drain(recording);
      const deferred = await drain(recording, { deferredKinds: ['book', 'trade'] });
      expect(deferred.summary.cache).toBe('read');
      expect(deferred.lines).toEqual(records.map(encodeRecordLine));
      // From the events file (no cache yet) records are always whole.
      const fresh = await recordSession(join(directory, 'fresh'), records);
      const reader = readRecording(fresh, { deferredKinds: ['book', 'trade'] });
      for await (const batch of reader.batches()) {
        for (const record of batch) expect(record).not.toBeInstanceOf(DeferredRecord);
      }
      expect(reader.summary?.cache).toBe('built');
    });
  });

  it('gives each reader its own records, for readers one after another or at once', async () => {
    await withTemporaryDirectory(async (directory) => {
      const large = mixedRecords({ count: 3_000 });
      const small = mixedRecords({ count: 700, startMs: START_MS + 1 });
      const big = await recordSession(`${directory}/large`, large);
      const little = await recordSession(`${directory}/small`, small);
      await drain(big);
      await drain(little);
      // A larger file, then a smaller one, then the larger again.
      for (const [recording, records] of [
        [big, large],
        [little, small],
        [big, large],
      ] as const) {
        const again = await drain(recording);
        expect(again.summary.cache).toBe('read');
        expect(again.lines).toEqual(records.map(encodeRecordLine));
      }
      // Two readers at once, their batches taken in turn.
      const readers = [readRecording(big), readRecording(little)];
      const iterators = readers.map((reader) => reader.batches()[Symbol.asyncIterator]());
      const lines: string[][] = [[], []];
      let open = [0, 1];
      while (open.length > 0) {
        const still: number[] = [];
        for (const index of open) {
          const next = await iterators[index]!.next();
          if (next.done) continue;
          for (const record of next.value) lines[index]!.push(encodeRecordLine(record));
          still.push(index);
        }
        open = still;
      }
      expect(readers.map((reader) => reader.summary?.cache)).toEqual(['read', 'read']);
      expect(lines).toEqual([large.map(encodeRecordLine), small.map(encodeRecordLine)]);
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
      const recording = await interrupted(await recordSession(directory, records));
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
      const recording = await interrupted(await recordSession(directory, records));
      await drain(recording);
      // Same size, one character different, different mtime: the hash must catch it.
      const text = await readFile(recording.eventsPath, 'utf8');
      const altered = text.replace('"live"', '"evil"');
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
      const recording = await interrupted(
        await recordSession(directory, mixedRecords({ count: 100 })),
      );
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
