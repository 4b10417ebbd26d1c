import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerRecordCommand } from '../../../src/cli/commands/record.ts';
import { parseDuration } from '../../../src/cli/options.ts';
import { VirtualClock } from '../../../src/core/clock.ts';
import { defaultEmulatorConfig } from '../../../src/emulator/config.ts';
import { Exchange } from '../../../src/emulator/engine/exchange.ts';
import { MemoryStore } from '../../../src/emulator/store/memory-store.ts';
import { openRecording, readRecording } from '../../../src/replay/format/recording.ts';
import type { RecordedEvent } from '../../../src/replay/format/records.ts';
import { RecordingSink } from '../../../src/replay/format/recorder-sink.ts';
import { emulatorSourceUrl } from '../../../src/replay/recorder/emulator-session.ts';
import { Recorder } from '../../../src/replay/recorder/recorder.ts';
import { clientSource, exchangeSource } from '../../../src/replay/recorder/sources.ts';
import { Environment, requestId } from '../../client/environment.ts';
import { until } from '../../client/helpers.ts';
import { recordSession, runCommand, SESSION_START, temporaryFolder } from './helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;

beforeAll(async () => {
  folder = await temporaryFolder('recorder');
});

afterAll(async () => {
  await folder.remove();
});

async function recordsOf(directory: string): Promise<RecordedEvent[]> {
  const records: RecordedEvent[] = [];
  const reader = readRecording(await openRecording(directory), { cache: 'off' });
  for await (const batch of reader.batches()) records.push(...batch);
  return records;
}

describe('recording the emulator through the client', () => {
  it("records tickers, book snapshots, each trade once, and the account's private events", async () => {
    const environment = await Environment.start();
    const directory = join(folder.path, 'client');
    try {
      const stream = environment.stream();
      const markets = await environment.rest.listMarkets();
      const sink = await RecordingSink.create({
        directory,
        clock: environment.clock,
        source: { kind: 'emulator', baseUrl: environment.emulator.baseUrl },
        markets,
        bookDepth: 5,
        bookIntervalMs: 1_000,
        privateEvents: true,
      });
      const recorder = new Recorder({
        source: clientSource({ rest: environment.rest, stream, privateEvents: true }),
        sink,
        clock: environment.clock,
        marketIds: ['BTC-PERP', 'ETH-PERP'],
        bookDepth: 5,
        bookIntervalMs: 1_000,
        tradesIntervalMs: 1_000,
        privateEvents: true,
      });
      recorder.start();
      await stream.connect();
      await environment.advance(3_000);
      const order = await environment.rest.placeOrder({
        request_id: requestId('record'),
        client_order_id: requestId('record'),
        market_id: 'BTC-PERP',
        side: 'buy',
        type: 'market',
        quantity: '0.01',
        leverage: 1,
        max_slippage_percent: '1',
        margin_mode: 'isolated',
      });
      await environment.advance(10_000);
      await until(
        () =>
          environment.emulator.exchange.getOrder(environment.accountId, order.order_id).status ===
          'FILLED',
        'the order to fill',
      );
      await environment.advance(2_000);
      await recorder.idle();
      const manifest = await recorder.stop();
      expect(manifest.complete).toBe(true);
      expect(manifest.settings).toEqual({
        book_depth: 5,
        book_interval_ms: 1_000,
        private_events: true,
      });

      const records = await recordsOf(directory);
      const count = (kind: string, market?: string) =>
        records.filter(
          (record) => record.k === kind && (market === undefined || record.m === market),
        ).length;
      expect(count('ticker', 'BTC-PERP')).toBeGreaterThanOrEqual(10);
      expect(count('ticker', 'SOL-PERP')).toBe(0);
      expect(count('book', 'ETH-PERP')).toBeGreaterThanOrEqual(10);
      const trades = records.filter((record) => record.k === 'trade');
      expect(trades.length).toBeGreaterThan(0);
      expect(new Set(trades.map((record) => record.d.trade_id)).size).toBe(trades.length);
      const books = records.filter((record) => record.k === 'book');
      expect(books.every((record) => record.d.bids.length <= 5 && record.d.asks.length <= 5)).toBe(
        true,
      );
      const fills = records.filter((record) => record.k === 'private' && record.d.type === 'fill');
      expect(fills.length).toBeGreaterThan(0);
      expect(
        fills.every(
          (record) =>
            record.k === 'private' &&
            record.d.type === 'fill' &&
            record.d.data.order_id === order.order_id,
        ),
      ).toBe(true);
      // Times never go back, and the manifest counts what the file holds.
      expect(
        records.every((record, index) => index === 0 || record.t >= records[index - 1]!.t),
      ).toBe(true);
      expect(manifest.counts.total).toBe(records.length);
      await stream.close();
    } finally {
      await environment.close();
    }
  });
});

describe('recording the emulator in this process', () => {
  it('gives the same bytes for the same seed', async () => {
    const first = join(folder.path, 'same-1');
    const second = join(folder.path, 'same-2');
    for (const directory of [first, second]) {
      await recordSession(directory, { durationMs: 60_000, compression: 'gzip' });
    }
    expect(await readFile(join(second, 'events.jsonl.gz'))).toEqual(
      await readFile(join(first, 'events.jsonl.gz')),
    );
    expect(await readFile(join(second, 'manifest.json'), 'utf8')).toBe(
      await readFile(join(first, 'manifest.json'), 'utf8'),
    );
    const manifest = (await openRecording(first)).manifest;
    expect(manifest.source).toEqual({ kind: 'emulator', base_url: emulatorSourceUrl(42) });
    expect(manifest.time_range).toEqual({ first_t: SESSION_START, last_t: SESSION_START + 60_000 });
  });

  it('leaves a readable file when interrupted before it is closed', async () => {
    const directory = join(folder.path, 'interrupted');
    const clock = new VirtualClock(SESSION_START);
    const store = new MemoryStore();
    const exchange = Exchange.open({ clock, config: defaultEmulatorConfig(), store });
    const sink = await RecordingSink.create({
      directory,
      clock,
      source: { kind: 'emulator', baseUrl: emulatorSourceUrl('interrupted') },
      markets: exchange.listMarkets(),
      bookDepth: 3,
      bookIntervalMs: 1_000,
      privateEvents: false,
    });
    const recorder = new Recorder({
      source: exchangeSource({ exchange }),
      sink,
      clock,
      marketIds: ['BTC-PERP'],
      bookDepth: 3,
      bookIntervalMs: 1_000,
      tradesIntervalMs: 1_000,
      privateEvents: false,
    });
    exchange.start();
    recorder.start();
    for (let second = 0; second < 30; second++) {
      clock.advanceBy(1_000);
      await recorder.idle();
      // The sink's timers start their writes at once: on virtual time they must be let finish
      // before the next second, or two manifest checkpoints would race.
      await sink.idle();
    }
    // The sink's own timers have flushed (every second) and checkpointed the manifest (every
    // 10 s); the process dies here, without `stop()` or `close()`.
    await sink.idle();
    exchange.stop();
    const recording = await openRecording(directory);
    expect(recording.manifest.complete).toBe(false);
    const records = await recordsOf(directory);
    expect(records.length).toBeGreaterThan(0);
    expect(records.filter((record) => record.k === 'ticker').length).toBeGreaterThanOrEqual(25);
    expect(recording.manifest.counts.total).toBeLessThanOrEqual(records.length);
  });
});

describe('paperbot record', () => {
  it('reads durations with units', () => {
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1500')).toBe(1_500);
    expect(() => parseDuration('ten minutes')).toThrow(/write a duration/);
  });

  it('records the emulator on virtual time with --emulator-virtual', async () => {
    const directory = join(folder.path, 'cli');
    const result = await runCommand(
      (program, print, printError) =>
        registerRecordCommand(program, { print, printError, interactive: false }),
      [
        'record',
        '--emulator-virtual',
        '--seed',
        '7',
        '--duration',
        '20s',
        '--markets',
        'SOL-PERP',
        '--book-depth',
        '4',
        '--out',
        directory,
      ],
    );
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^recorded \d+ records \(ticker 20, book 21, trade 0,/);
    const manifest = (await openRecording(directory)).manifest;
    expect(manifest).toMatchObject({
      complete: true,
      source: { kind: 'emulator', base_url: emulatorSourceUrl(7) },
      settings: { book_depth: 4, book_interval_ms: 1_000, private_events: false },
    });
    expect(manifest.markets.map((market) => market.market_id)).toEqual(['SOL-PERP']);
  });

  it('refuses to write into a folder that holds a recording', async () => {
    const directory = join(folder.path, 'cli');
    const result = await runCommand(
      (program, print, printError) =>
        registerRecordCommand(program, { print, printError, interactive: false }),
      ['record', '--emulator-virtual', '--duration', '5s', '--out', directory],
    );
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/not empty/);
  });
});
