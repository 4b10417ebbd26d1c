import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.ts';
import {
  checkRecordHeader,
  EVENTS_FILE,
  EVENTS_FILE_GZIP,
  EventLogReader,
  encodeRecordLine,
  gapRecord,
  MANIFEST_FILE,
  openRecording,
  privateRecord,
  type RecordedEvent,
  RecordingManifest,
  RecordingSink,
  type RecordingSinkOptions,
  readManifest,
  readRecording,
  recountRecording,
  sanitizeBaseUrl,
  tickerRecord,
  verifyRecord,
} from '../../src/replay/format/index.ts';
import {
  book,
  fillEvent,
  MARKET_IDS,
  market,
  mixedRecords,
  orderStatusEvent,
  START_MS,
  ticker,
  withTemporaryDirectory,
} from './fixtures.ts';

function sinkOptions(
  directory: string,
  clock: VirtualClock,
  overrides: Partial<RecordingSinkOptions> = {},
): RecordingSinkOptions {
  return {
    directory,
    clock,
    source: { kind: 'emulator', baseUrl: 'http://127.0.0.1:8080' },
    markets: MARKET_IDS.map(market),
    bookDepth: 5,
    bookIntervalMs: 1_000,
    privateEvents: true,
    ...overrides,
  };
}

async function readAll(directory: string, options = {}) {
  const recording = await openRecording(directory);
  const reader = readRecording(recording, { cache: 'off', ...options });
  const records: RecordedEvent[] = [];
  for await (const batch of reader.batches()) records.push(...batch);
  return { records, summary: reader.summary!, recording };
}

describe('records', () => {
  it('puts the keys in format order, with m only when the record concerns one market', () => {
    expect(encodeRecordLine(tickerRecord(5, ticker('BTC-USD', '1.5')))).toBe(
      '{"v":1,"t":5,"k":"ticker","m":"BTC-USD","d":{"market_id":"BTC-USD","mark_price":"1.5","index_price":"1.5","last_price":"1.5","data_status":"live"}}\n',
    );
    const account = privateRecord(7, orderStatusEvent(3, 7));
    expect(Object.keys(account)).toEqual(['v', 't', 'k', 'd']);
    const fill = privateRecord(7, fillEvent(4, 'ETH-USD', '10', 7));
    expect(Object.keys(fill)).toEqual(['v', 't', 'k', 'm', 'd']);
    expect(fill.m).toBe('ETH-USD');
    expect(Object.keys(gapRecord(1, 'book', 'resync'))).toEqual(['v', 't', 'k', 'd']);
  });

  it('verifies every generated kind against the protocol schemas', () => {
    for (const [index, record] of mixedRecords({ count: 2_000 }).entries()) {
      expect(verifyRecord(JSON.parse(JSON.stringify(record)), index + 1)).toEqual(record);
    }
  });

  it('refuses a record whose m does not match its payload', () => {
    const record = { ...tickerRecord(1, ticker('BTC-USD', '1')), m: 'ETH-USD' };
    expect(() => verifyRecord(record, 9)).toThrow(
      expect.objectContaining({ code: 'RECORDING_INVALID' }),
    );
  });

  it('verifies a private event as the client reads it: fields a service adds are kept, the order event stays exact', () => {
    const fill = privateRecord(7, fillEvent(4, 'ETH-USD', '10', 7));
    const added = JSON.parse(JSON.stringify(fill));
    added.d.partition = 3;
    added.d.data.liquidity = 'maker';
    expect(verifyRecord(added, 1)).toBe(added);
    const missing = JSON.parse(JSON.stringify(fill));
    delete missing.d.data.fee;
    expect(() => verifyRecord(missing, 2)).toThrow(/d\.data\.fee/);
    const order = JSON.parse(JSON.stringify(privateRecord(7, orderStatusEvent(3, 7))));
    order.d.data.extra = true;
    expect(() => verifyRecord(order, 3)).toThrow(
      expect.objectContaining({ code: 'RECORDING_INVALID' }),
    );
  });

  it('refuses other versions and unknown kinds even without verification', () => {
    expect(() => checkRecordHeader({ v: 2, t: 1, k: 'ticker' }, 3)).toThrow(
      expect.objectContaining({ code: 'RECORDING_UNSUPPORTED_VERSION' }),
    );
    expect(() => checkRecordHeader({ v: 1, t: 1, k: 'candle' }, 3)).toThrow(
      expect.objectContaining({ code: 'RECORDING_INVALID' }),
    );
    expect(() => checkRecordHeader([1], 3)).toThrow(
      expect.objectContaining({ code: 'RECORDING_INVALID' }),
    );
  });
});

describe('manifest', () => {
  it('keeps scheme, host and path of the source, never credentials or a query', () => {
    expect(sanitizeBaseUrl('https://key:secret@practice.example.com/api/?token=abc#x')).toBe(
      'https://practice.example.com/api/',
    );
    expect(sanitizeBaseUrl('http://127.0.0.1:8080/')).toBe('http://127.0.0.1:8080');
  });

  it('reports every problem of a bad manifest with its path', async () => {
    await withTemporaryDirectory(async (directory) => {
      await writeFile(
        join(directory, MANIFEST_FILE),
        JSON.stringify({
          format: 'paperbot-recording',
          version: 1,
          complete: 'yes',
        }),
      );
      const error = await readManifest(directory).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'RECORDING_INVALID_MANIFEST' });
      const paths = (error as { details: { issues: { path: string }[] } }).details.issues.map(
        (issue) => issue.path,
      );
      expect(paths).toEqual(expect.arrayContaining(['complete', 'markets', 'counts']));
    });
  });

  it('refuses a manifest of another version', async () => {
    await withTemporaryDirectory(async (directory) => {
      await writeFile(join(directory, MANIFEST_FILE), JSON.stringify({ version: 3 }));
      await expect(readManifest(directory)).rejects.toMatchObject({
        code: 'RECORDING_UNSUPPORTED_VERSION',
      });
    });
  });
});

describe('RecordingSink and the readers', () => {
  for (const compression of ['none', 'gzip'] as const) {
    it(`round-trips records byte for byte (${compression})`, async () => {
      await withTemporaryDirectory(async (directory) => {
        const clock = new VirtualClock(START_MS);
        const sink = await RecordingSink.create(
          sinkOptions(directory, clock, {
            compression,
            bookDepth: 10,
            flushCharacters: 10_000,
          }),
        );
        const records = mixedRecords({ count: 3_000 });
        for (const record of records) sink.append(record);
        const manifest = await sink.close();

        const expectedFile = compression === 'gzip' ? EVENTS_FILE_GZIP : EVENTS_FILE;
        expect(manifest.events_file).toBe(expectedFile);
        const bytes = await readFile(join(directory, expectedFile));
        const text = compression === 'gzip' ? gunzipSync(bytes).toString() : bytes.toString();
        expect(text).toBe(records.map(encodeRecordLine).join(''));

        const { records: read, summary } = await readAll(directory, {
          verify: true,
        });
        expect(read.map((record) => JSON.stringify(record))).toEqual(
          records.map((record) => JSON.stringify(record)),
        );
        expect(summary).toMatchObject({
          records: 3_000,
          tornTail: null,
          decreasingTimes: 0,
        });
      });
    });
  }

  it('writes a manifest with counts per kind and per market, and the time range', async () => {
    await withTemporaryDirectory(async (directory) => {
      const clock = new VirtualClock(START_MS);
      const sink = await RecordingSink.create(sinkOptions(directory, clock));
      sink.ticker(ticker('BTC-USD', '1'));
      clock.advanceBy(10);
      sink.book(book('ETH-USD', 100, 3, 1, clock.now()));
      sink.trade({
        trade_id: 't',
        market_id: 'ETH-USD',
        route_id: 'svc-paper',
        price: '100',
        quantity: '1',
        side: 'buy',
        occurred_at: '2025-03-01T12:00:00.000Z',
      });
      sink.privateEvent(orderStatusEvent(1, clock.now()));
      sink.privateEvent(fillEvent(2, 'BTC-USD', '1', clock.now()));
      clock.advanceBy(5);
      sink.gap('ticker', 'disconnected');
      const manifest = await sink.close();
      expect(RecordingManifest.parse(manifest)).toEqual(manifest);
      expect(manifest.complete).toBe(true);
      expect(manifest.time_range).toEqual({
        first_t: START_MS,
        last_t: START_MS + 15,
      });
      expect(manifest.counts).toEqual({
        total: 6,
        by_kind: { ticker: 1, book: 1, trade: 1, private: 2, gap: 1 },
        by_market: {
          'BTC-USD': { ticker: 1, book: 0, trade: 0, private: 1, gap: 0 },
          'ETH-USD': { ticker: 0, book: 1, trade: 1, private: 0, gap: 0 },
        },
      });
      expect(manifest.markets.map((item) => item.market_id)).toEqual([...MARKET_IDS]);
      expect(manifest.settings).toEqual({
        book_depth: 5,
        book_interval_ms: 1_000,
        private_events: true,
      });
      expect(manifest.created_at).toBe('2025-03-01T12:00:00.000Z');
      expect(await readManifest(directory)).toEqual(manifest);
    });
  });

  it('trims books to the configured depth and keeps times from decreasing', async () => {
    await withTemporaryDirectory(async (directory) => {
      const clock = new VirtualClock(START_MS);
      const sink = await RecordingSink.create(sinkOptions(directory, clock, { bookDepth: 2 }));
      sink.book(book('BTC-USD', 100, 6, 1, START_MS), START_MS + 50);
      sink.ticker(ticker('BTC-USD', '1'), START_MS + 20);
      await sink.close();
      const { records } = await readAll(directory);
      const first = records[0]!;
      expect(first.k === 'book' && [first.d.bids.length, first.d.asks.length]).toEqual([2, 2]);
      expect(records.map((record) => record.t)).toEqual([START_MS + 50, START_MS + 50]);
    });
  });

  it('refuses a folder that already holds files', async () => {
    await withTemporaryDirectory(async (directory) => {
      await writeFile(join(directory, 'other.txt'), 'x');
      await expect(
        RecordingSink.create(sinkOptions(directory, new VirtualClock(0))),
      ).rejects.toMatchObject({ code: 'RECORDING_EXISTS' });
    });
  });

  it('refuses private events when recording without a key', async () => {
    await withTemporaryDirectory(async (directory) => {
      const sink = await RecordingSink.create(
        sinkOptions(directory, new VirtualClock(0), { privateEvents: false }),
      );
      expect(() => sink.privateEvent(orderStatusEvent(1, 0))).toThrow(
        expect.objectContaining({ code: 'RECORDING_INVALID_OPTIONS' }),
      );
      await sink.close();
    });
  });

  it('never stores credentials of the source URL', async () => {
    await withTemporaryDirectory(async (directory) => {
      const sink = await RecordingSink.create(
        sinkOptions(directory, new VirtualClock(0), {
          source: {
            kind: 'live',
            baseUrl: 'https://user:hunter2@svc.example/?key=abc',
          },
        }),
      );
      await sink.close();
      const text = await readFile(join(directory, MANIFEST_FILE), 'utf8');
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain('key=abc');
      expect(JSON.parse(text).source).toEqual({
        kind: 'live',
        base_url: 'https://svc.example',
      });
    });
  });

  it('flushes and checkpoints the manifest on its clock while recording', async () => {
    await withTemporaryDirectory(async (directory) => {
      const clock = new VirtualClock(START_MS);
      const sink = await RecordingSink.create(
        sinkOptions(directory, clock, {
          flushIntervalMs: 100,
          manifestIntervalMs: 1_000,
        }),
      );
      sink.ticker(ticker('BTC-USD', '1'));
      sink.ticker(ticker('ETH-USD', '2'));
      // Nothing written before the flush timer: lines wait in the buffer.
      expect((await readFile(join(directory, EVENTS_FILE))).length).toBe(0);
      clock.advanceBy(100);
      await sink.flush();
      const written = (await readFile(join(directory, EVENTS_FILE), 'utf8')).split('\n');
      expect(written).toHaveLength(3);
      expect((await readManifest(directory)).counts.total).toBe(0);
      clock.advanceBy(900);
      await sink.idle();
      const checkpoint = await readManifest(directory);
      expect(checkpoint.complete).toBe(false);
      expect(checkpoint.counts.total).toBe(2);
      const final = await sink.close();
      expect(final.complete).toBe(true);
      expect(clock.pendingTimers()).toBe(0);
    });
  });

  it('writes one manifest checkpoint at a time when virtual time jumps over several', async () => {
    await withTemporaryDirectory(async (directory) => {
      const clock = new VirtualClock(START_MS);
      const errors: unknown[] = [];
      const sink = await RecordingSink.create(
        sinkOptions(directory, clock, {
          manifestIntervalMs: 1_000,
          onError: (error) => errors.push(error),
        }),
      );
      for (let second = 0; second < 20; second++) {
        sink.ticker(ticker('BTC-USD', String(second + 1)));
        // Ten checkpoints start within one synchronous step: each writes the same temporary file.
        if (second % 10 === 9) clock.advanceBy(10_000);
      }
      await sink.idle();
      expect(errors).toEqual([]);
      expect((await readManifest(directory)).counts.total).toBe(20);
      const final = await sink.close();
      expect(final.counts.total).toBe(20);
    });
  });

  it('recounts an interrupted session from its events file', async () => {
    await withTemporaryDirectory(async (directory) => {
      const clock = new VirtualClock(START_MS);
      const sink = await RecordingSink.create(sinkOptions(directory, clock));
      const records = mixedRecords({ count: 500 });
      for (const record of records) sink.append(record);
      await sink.flush();
      // The process dies here: no close, the manifest still says 0 records.
      expect((await readManifest(directory)).counts.total).toBe(0);
      const { manifest } = await recountRecording(directory, { write: true });
      expect(manifest.counts.total).toBe(500);
      expect(manifest.complete).toBe(false);
      expect(manifest.time_range).toEqual({
        first_t: records[0]!.t,
        last_t: records[499]!.t,
      });
      expect((await readManifest(directory)).counts.total).toBe(500);
      await sink.close();
    });
  });

  it('filters by market and kind', async () => {
    await withTemporaryDirectory(async (directory) => {
      const sink = await RecordingSink.create(sinkOptions(directory, new VirtualClock(0)));
      const records = mixedRecords({ count: 600 });
      for (const record of records) sink.append(record);
      await sink.close();
      const { records: read, summary } = await readAll(directory, {
        markets: ['ETH-USD'],
        kinds: ['ticker', 'trade'],
      });
      const expected = records.filter(
        (record) => record.m === 'ETH-USD' && (record.k === 'ticker' || record.k === 'trade'),
      );
      expect(read).toEqual(expected);
      expect(summary.delivered).toBe(expected.length);
      expect(summary.records).toBe(600);
    });
  });

  it('reports a complete line that is not JSON as damage, with its line number', async () => {
    await withTemporaryDirectory(async (directory) => {
      const path = join(directory, 'events.jsonl');
      const good = encodeRecordLine(tickerRecord(1, ticker('BTC-USD', '1')));
      await writeFile(path, `${good}{"v":1,"t":\n${good}`);
      const reader = new EventLogReader(path, 'none');
      const consume = async () => {
        for await (const _ of reader.batches()) {
          // draining
        }
      };
      await expect(consume()).rejects.toMatchObject({
        code: 'RECORDING_INVALID',
        details: { line: 2 },
      });
    });
  });

  it('verifies only the first records unless asked for all', async () => {
    await withTemporaryDirectory(async (directory) => {
      const path = join(directory, 'events.jsonl');
      const good = encodeRecordLine(tickerRecord(1, ticker('BTC-USD', '1')));
      const bad = `${JSON.stringify({ v: 1, t: 2, k: 'ticker', m: 'BTC-USD', d: { price: 'x' } })}\n`;
      await writeFile(path, good + good + bad);
      const drain = async (verify: boolean | number) => {
        const reader = new EventLogReader(path, 'none', { verify });
        let count = 0;
        for await (const batch of reader.batches()) count += batch.length;
        return count;
      };
      expect(await drain(2)).toBe(3);
      await expect(drain(true)).rejects.toMatchObject({
        code: 'RECORDING_INVALID',
        details: { line: 3 },
      });
    });
  });

  it('leaves nothing but the manifest and the events file in a session folder', async () => {
    await withTemporaryDirectory(async (directory) => {
      const sink = await RecordingSink.create(sinkOptions(directory, new VirtualClock(0)));
      sink.ticker(ticker('BTC-USD', '1'));
      await sink.close();
      expect((await readdir(directory)).sort()).toEqual([EVENTS_FILE, MANIFEST_FILE]);
    });
  });
});
