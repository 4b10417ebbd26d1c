import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerBacktestCommand } from '../../../src/cli/commands/backtest.ts';
import { registerImportCommand } from '../../../src/cli/commands/import.ts';
import { readManifest, type RecordedEvent } from '../../../src/replay/format/index.ts';
import type { BacktestReport } from '../../../src/replay/report/report.ts';
import { marketMakerDocument, runCommand, temporaryFolder } from '../backtest/helpers.ts';
import { priceWalk, START_MS, tickText, writeBookUpdates, writeTrades } from './fixtures.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;

beforeAll(async () => {
  folder = await temporaryFolder('import');
});

afterAll(async () => {
  await folder.remove();
});

function paperbotImport(args: readonly string[]) {
  return runCommand(
    (program, print, printError) => registerImportCommand(program, { print, printError }),
    ['import', ...args],
  );
}

const MARKET = ['--market', 'BTC-PERP', '--tick', '0.1', '--step', '0.001', '--min-qty', '0.001'];

async function records(directory: string): Promise<RecordedEvent[]> {
  const text = await readFile(join(directory, 'events.jsonl'), 'utf8');
  return text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as RecordedEvent);
}

async function file(name: string, lines: readonly string[]): Promise<string> {
  const path = join(folder.path, name);
  await writeFile(path, `${lines.join('\n')}\n`);
  return path;
}

describe('paperbot import', () => {
  it('imports trades and L2 updates into a session the backtest replays', async () => {
    const trades = join(folder.path, 'trades.csv');
    const book = join(folder.path, 'book.csv');
    await writeTrades(trades, 120);
    await writeBookUpdates(book, 120);
    const out = join(folder.path, 'session');
    const result = await paperbotImport([
      '--out',
      out,
      ...MARKET,
      '--trades',
      trades,
      '--trade-columns',
      'timestamp=time,price=px,quantity=qty,side=side',
      '--book',
      book,
      '--depth',
      '5',
      '--interval',
      '1000',
    ]);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toContain(`book ${book}: 478 rows read, 0 skipped, 120 records written`);
    expect(result.out).toMatch(
      new RegExp(`trades ${trades}: 120 rows read, 0 skipped, \\d+ records written`),
    );

    const manifest = await readManifest(out);
    expect(manifest.complete).toBe(true);
    expect(manifest.source).toEqual({ kind: 'imported', base_url: 'file:///book.csv' });
    // The first record's time: the first trade's ticker, before the first snapshot at 1 s.
    expect(manifest.created_at).toBe(new Date(START_MS + 500).toISOString());
    expect(manifest.markets.map((market) => [market.market_id, market.price_tick])).toEqual([
      ['BTC-PERP', '0.1'],
    ]);
    expect(manifest.counts.by_kind.book).toBe(120);
    expect(manifest.counts.by_kind.trade).toBe(120);
    const written = await records(out);
    // Snapshots land on the interval grid with the book after every row up to then.
    const firstBook = written.find((record) => record.k === 'book')!;
    expect(firstBook.t).toBe(START_MS + 1000);
    expect(firstBook.d).toMatchObject({
      bids: [{ price: tickText(priceWalk(1)[0]! - 1), quantity: '5' }],
      asks: [{ price: tickText(priceWalk(1)[0]! + 1) }],
    });
    expect(written.map((record) => record.t)).toEqual(
      [...written.map((record) => record.t)].sort((a, b) => a - b),
    );

    const config = join(folder.path, 'backtest.yaml');
    await writeFile(config, stringify(marketMakerDocument([out])));
    const backtest = await runCommand(
      (program, print, printError) =>
        registerBacktestCommand(program, { print, printError, interactive: false }),
      ['backtest', '--config', config, '--json'],
    );
    expect(backtest.err).toBe('');
    expect(backtest.code).toBe(0);
    const report = JSON.parse(backtest.out) as BacktestReport;
    expect(report.summary.fills).toBeGreaterThan(0);
  });

  it('reads exchange trade dumps (binance layout, µs, with or without header) the same', async () => {
    const rows = [
      '7,100.5,0.25,25.125,1740787200000123,true,true',
      '8,100.6,0.5,50.3,1740787200001999,false,true',
      '9,100.6,0,0,1740787200002000,false,true',
    ];
    const plain = await file('dump.csv', rows);
    const headed = await file('dump-header.csv', [
      'id,price,qty,quote_qty,time,is_buyer_maker,is_best_match',
      ...rows,
    ]);
    for (const [name, path] of [
      ['dump-a', plain],
      ['dump-b', headed],
    ] as const) {
      const out = join(folder.path, name);
      const result = await paperbotImport([
        '--out',
        out,
        ...MARKET,
        '--trades',
        path,
        '--trade-layout',
        'binance-trades',
      ]);
      expect(result.code).toBe(0);
      expect(result.out).toContain('3 rows read, 1 skipped');
      expect(result.out).toContain('skipped 1: zero quantity (first on line');
      const trades = (await records(out)).filter((record) => record.k === 'trade');
      expect(trades.map((record) => [record.t, record.d])).toEqual([
        [
          1740787200000,
          {
            trade_id: '7',
            market_id: 'BTC-PERP',
            route_id: 'imported',
            price: '100.5',
            quantity: '0.25',
            side: 'sell',
            occurred_at: '2025-03-01T00:00:00.000Z',
          },
        ],
        [
          1740787200001,
          {
            trade_id: '8',
            market_id: 'BTC-PERP',
            route_id: 'imported',
            price: '100.6',
            quantity: '0.5',
            side: 'buy',
            occurred_at: '2025-03-01T00:00:00.001Z',
          },
        ],
      ]);
    }
    expect(await readFile(join(folder.path, 'dump-a', 'events.jsonl'), 'utf8')).toBe(
      await readFile(join(folder.path, 'dump-b', 'events.jsonl'), 'utf8'),
    );
  });

  it('refuses a price off the tick, naming the first offending row, and leaves nothing', async () => {
    const path = await file('off-tick.csv', [
      'timestamp,price,quantity,side',
      '2025-03-01T00:00:00Z,100.1,1,buy',
      '2025-03-01T00:00:01Z,100.15,1,buy',
      '2025-03-01T00:00:02Z,100.17,1,buy',
    ]);
    const out = join(folder.path, 'off-tick');
    const result = await paperbotImport(['--out', out, ...MARKET, '--trades', path]);
    expect(result.code).toBe(1);
    expect(result.err).toBe(
      `paperbot import: ${path} line 3: price 100.15 is not a multiple of the tick 0.1\n`,
    );
    await expect(stat(out)).rejects.toThrow();
    await expect(stat(`${out}.partial-import`)).rejects.toThrow();
  });

  it('refuses time going backwards unless asked to sort', async () => {
    const path = await file('backwards.csv', [
      'timestamp,price,quantity,side',
      '1740787202000,100.1,1,buy',
      '1740787201000,100.2,1,sell',
      '1740787203000,100.3,1,buy',
      '1740787201000,100.4,1,buy',
    ]);
    const refused = await paperbotImport([
      '--out',
      join(folder.path, 'back-a'),
      ...MARKET,
      '--trades',
      path,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(
      `${path} line 3: time goes backwards (1740787201000 ms after 1740787202000 ms on line 2); pass --sort`,
    );
    const out = join(folder.path, 'back-b');
    const sorted = await paperbotImport(['--out', out, ...MARKET, '--trades', path, '--sort']);
    expect(sorted.code).toBe(0);
    const trades = (await records(out)).filter((record) => record.k === 'trade');
    // Stable: the two rows at one time keep their file order.
    expect(trades.map((record) => (record.d as { price: string }).price)).toEqual([
      '100.2',
      '100.4',
      '100.1',
      '100.3',
    ]);
  });

  it('rebuilds book snapshots at depth and interval from snapshot rows', async () => {
    const path = await file('snapshots.csv', [
      't,s,p,q',
      '2025-03-01T00:00:00.100Z,bid,99.9,1',
      '2025-03-01T00:00:00.100Z,bid,99.8,2',
      '2025-03-01T00:00:00.100Z,bid,99.7,3',
      '2025-03-01T00:00:00.100Z,ask,100.1,4',
      '2025-03-01T00:00:00.600Z,bid,99.8,5',
      '2025-03-01T00:00:00.600Z,ask,100.0,6',
      '2025-03-01T00:00:00.600Z,ask,100.2,7',
      '2025-03-01T00:00:02.300Z,bid,99.5,8',
    ]);
    const out = join(folder.path, 'snapshots');
    const result = await paperbotImport([
      '--out',
      out,
      ...MARKET,
      '--book',
      path,
      '--book-mode',
      'snapshots',
      '--book-columns',
      'timestamp=t,side=s,price=p,quantity=q',
      '--depth',
      '2',
      '--interval',
      '500',
    ]);
    expect(result.code).toBe(0);
    const books = (await records(out)).map((record) => [
      record.t - START_MS,
      (record.d as { bids: Array<{ price: string; quantity: string }> }).bids.map(
        (level) => `${level.price}x${level.quantity}`,
      ),
      (record.d as { asks: Array<{ price: string; quantity: string }> }).asks.map(
        (level) => `${level.price}x${level.quantity}`,
      ),
    ]);
    expect(books).toEqual([
      [500, ['99.9x1', '99.8x2'], ['100.1x4']],
      [1000, ['99.8x5'], ['100x6', '100.2x7']],
      [2500, ['99.5x8'], []],
    ]);
  });

  it('turns candles into tickers and four trades on a fixed path, from a market file and gzip', async () => {
    const csv = [
      'timestamp,open,high,low,close,volume',
      `${START_MS},100.0,101.0,99.5,100.5,2`,
      `${START_MS + 60_000},100.5,100.6,99.0,99.1,0.002`,
    ].join('\n');
    const path = join(folder.path, 'candles.csv.gz');
    await writeFile(path, gzipSync(`${csv}\n`));
    const marketFile = await file('market.yaml', [
      'market_id: ETH-PERP',
      'price_tick: "0.1"',
      'quantity_step: "0.01"',
    ]);
    const out = join(folder.path, 'candles');
    const result = await paperbotImport([
      '--out',
      out,
      '--market-file',
      marketFile,
      '--candles',
      path,
      '--candle-interval',
      '60000',
    ]);
    expect(result.code).toBe(0);
    expect(result.out).toContain(
      'skipped 1: volume under four steps: tickers only (first on line 3)',
    );
    const written = await records(out);
    expect(
      written
        .filter((record) => record.k === 'trade')
        .map((record) => [
          record.t - START_MS,
          (record.d as { price: string }).price,
          (record.d as { quantity: string }).quantity,
          (record.d as { side: string }).side,
        ]),
    ).toEqual([
      [0, '100', '0.5', 'buy'],
      [15_000, '99.5', '0.5', 'sell'],
      [30_000, '101', '0.5', 'buy'],
      [45_000, '100.5', '0.5', 'sell'],
    ]);
    expect(
      written
        .filter((record) => record.k === 'ticker')
        .map((record) => (record.d as { mark_price: string }).mark_price),
    ).toEqual(['100', '99.5', '101', '100.5', '100.5', '100.6', '99', '99.1']);
    expect((await readManifest(out)).markets[0]!.market_id).toBe('ETH-PERP');
  });

  it('is deterministic and refuses bad arguments with exit 2', async () => {
    const trades = join(folder.path, 'det-trades.csv');
    await writeTrades(trades, 30);
    const args = [
      ...MARKET,
      '--trades',
      trades,
      '--trade-columns',
      'timestamp=time,price=px,quantity=qty,side=side',
      '--gzip',
    ];
    await paperbotImport(['--out', join(folder.path, 'det-a'), ...args]);
    await paperbotImport(['--out', join(folder.path, 'det-b'), ...args]);
    for (const name of ['manifest.json', 'events.jsonl.gz']) {
      expect(await readFile(join(folder.path, 'det-a', name))).toEqual(
        await readFile(join(folder.path, 'det-b', name)),
      );
    }
    const again = await paperbotImport(['--out', join(folder.path, 'det-a'), ...args]);
    expect(again.code).toBe(2);
    expect(again.err).toContain('exists and is not empty');
    const noTick = await paperbotImport([
      '--out',
      join(folder.path, 'x'),
      '--market',
      'A-B',
      '--trades',
      trades,
    ]);
    expect(noTick.code).toBe(2);
    expect(noTick.err).toContain('price_tick');
    expect(noTick.err).toContain('quantity_step');
  });
});
