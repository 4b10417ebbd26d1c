/**
 * Parquet out: `paperbot backtest --parquet DIR` (fills, trades, equity; with `--sweep`, one row
 * per cell) and `paperbot export --parquet DIR RECORDING` (a recording's events), read back with
 * DuckDB's Node package, an independent reader: row counts and sums (fees, PnL, quantities,
 * notional) against the JSON report, the CSV files and the recording itself.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerBacktestCommand } from '../../../src/cli/commands/backtest.ts';
import { registerExportCommand } from '../../../src/cli/commands/export.ts';
import { Big } from '../../../src/core/decimal.ts';
import { openRecording, RecordingReader } from '../../../src/replay/format/index.ts';
import { ParquetTable } from '../../../src/replay/parquet/table.ts';
import type { BacktestReport } from '../../../src/replay/report/report.ts';
import type { EmulatorSessionResult } from '../../../src/replay/recorder/emulator-session.ts';
import {
  marketMakerDocument,
  marketMakerTrading,
  recordSession,
  runCommand,
  temporaryFolder,
} from '../backtest/helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;
let live: EmulatorSessionResult;
let duck: DuckDBConnection;
let instance: DuckDBInstance;

beforeAll(async () => {
  folder = await temporaryFolder('parquet');
  session = join(folder.path, 'session');
  // Recorded while the market maker traded on it, so the account's private events are in it too.
  live = await recordSession(session, {
    durationMs: 90_000,
    trading: { ...(await marketMakerTrading()), epoch: 'live1234' },
  });
  instance = await DuckDBInstance.create(':memory:');
  duck = await instance.connect();
});

afterAll(async () => {
  duck?.closeSync();
  instance?.closeSync();
  await folder.remove();
});

type Row = Record<string, string | number | boolean | null>;

async function query(sql: string): Promise<Row[]> {
  return (await duck.runAndReadAll(sql)).getRowObjectsJson() as Row[];
}

/** `sql` with `'FILE'` quoted for DuckDB. */
function file(path: string): string {
  return `'${path.replaceAll("'", "''")}'`;
}

function sum(values: readonly string[]): InstanceType<typeof Big> {
  return values.reduce((total, value) => total.plus(value), new Big(0));
}

function expectSameDecimal(actual: unknown, expected: InstanceType<typeof Big> | string): void {
  expect(new Big(String(actual)).eq(expected), `${String(actual)} = ${expected.toString()}`).toBe(
    true,
  );
}

function backtest(args: readonly string[]) {
  return runCommand(
    (program, print, printError) =>
      registerBacktestCommand(program, { print, printError, interactive: false }),
    ['backtest', ...args],
  );
}

function exportCommand(args: readonly string[]) {
  return runCommand(
    (program, print, printError) => registerExportCommand(program, { print, printError }),
    ['export', ...args],
  );
}

describe('paperbot backtest --parquet', () => {
  it('writes fills, trades and equity that DuckDB reads back as the report counts and sums them', async () => {
    const config = join(folder.path, 'run.yaml');
    const out = join(folder.path, 'run-parquet');
    const csv = join(folder.path, 'run-csv');
    await writeFile(config, stringify(marketMakerDocument([session])));
    const result = await backtest(['--config', config, '--json', '--csv', csv, '--parquet', out]);
    expect(result.code, result.err).toBe(0);
    expect(result.err).toContain(
      `Parquet written to ${join(out, 'trades.parquet')}, ${join(out, 'fills.parquet')}, ${join(out, 'equity.parquet')}\n`,
    );
    const report = JSON.parse(result.out) as BacktestReport;
    const summary = report.summary;
    expect(summary.fills).toBeGreaterThan(0);
    expect(report.lists.fills_omitted).toBe(0);
    expect(report.lists.trades_omitted).toBe(0);

    const fills = join(out, 'fills.parquet');
    const [fillFigures] = await query(
      `SELECT count(*) AS n, sum(fee::DECIMAL(38,18)) AS fees,
              sum(quantity::DECIMAL(38,18)) AS quantity,
              sum(quantity::DECIMAL(38,10) * price::DECIMAL(38,10)) AS notional
       FROM ${file(fills)}`,
    );
    expect(Number(fillFigures!.n)).toBe(summary.fills);
    expectSameDecimal(fillFigures!.fees, summary.fees);
    expectSameDecimal(fillFigures!.quantity, sum(report.fills.map((fill) => fill.quantity)));
    expectSameDecimal(fillFigures!.notional, summary.traded_notional);
    // Typed columns: times are UTC timestamps, flags booleans, decimals their exact strings.
    const types = await query(`DESCRIBE SELECT * FROM ${file(fills)}`);
    expect(Object.fromEntries(types.map((row) => [row.column_name, row.column_type]))).toEqual({
      occurred_at: 'TIMESTAMP WITH TIME ZONE',
      fill_id: 'VARCHAR',
      order_id: 'VARCHAR',
      strategy_id: 'VARCHAR',
      market_id: 'VARCHAR',
      side: 'VARCHAR',
      quantity: 'VARCHAR',
      price: 'VARCHAR',
      fee: 'VARCHAR',
      is_maker: 'BOOLEAN',
    });
    // The same rows as fills.csv, in the same order, value for value.
    const csvFills = parse(await readFile(join(csv, 'fills.csv'), 'utf8'), {
      columns: true,
    }) as Record<string, string>[];
    const parquetFills = await query(
      `SELECT epoch_ms(occurred_at) AS ms, fill_id, quantity, price, fee, is_maker
       FROM ${file(fills)}`,
    );
    expect(
      parquetFills.map((row) => [
        row.ms,
        row.fill_id,
        row.quantity,
        row.price,
        row.fee,
        row.is_maker,
      ]),
    ).toEqual(
      csvFills.map((row) => [
        String(Date.parse(row.occurred_at!)),
        row.fill_id,
        row.quantity,
        row.price,
        row.fee,
        row.is_maker === 'true',
      ]),
    );

    const [tradeFigures] = await query(
      `SELECT count(*) AS n, sum(gross_pnl::DECIMAL(38,18)) AS gross,
              sum(unrealized_pnl::DECIMAL(38,18)) AS unrealized,
              sum(net_pnl::DECIMAL(38,18)) AS net,
              sum(fees::DECIMAL(38,18)) AS fees,
              count(*) FILTER (WHERE status = 'open') AS open
       FROM ${file(join(out, 'trades.parquet'))}`,
    );
    expect(Number(tradeFigures!.n)).toBe(report.lists.trades);
    expect(Number(tradeFigures!.n)).toBeGreaterThan(0);
    expect(Number(tradeFigures!.open)).toBe(summary.open_trades);
    expectSameDecimal(tradeFigures!.gross, summary.realized_gross_pnl);
    expectSameDecimal(tradeFigures!.unrealized, summary.unrealized_pnl);
    expectSameDecimal(tradeFigures!.net, sum(report.trades.map((trade) => trade.net_pnl)));
    expectSameDecimal(tradeFigures!.fees, sum(report.trades.map((trade) => trade.fees)));

    const [equity] = await query(
      `SELECT count(*) AS n, arg_max(equity, t) AS last
       FROM ${file(join(out, 'equity.parquet'))}`,
    );
    expect(Number(equity!.n)).toBe(report.lists.equity_samples);
    expectSameDecimal(equity!.last, summary.ending_equity);

    // Deterministic like the report: the same run writes the same bytes.
    const again = join(folder.path, 'run-parquet-again');
    expect((await backtest(['--config', config, '--parquet', again])).code).toBe(0);
    for (const name of ['trades.parquet', 'fills.parquet', 'equity.parquet']) {
      expect(
        (await readFile(join(again, name))).equals(await readFile(join(out, name))),
        name,
      ).toBe(true);
    }
  });

  it('writes one row per sweep cell with the figures --json prints', async () => {
    const config = join(folder.path, 'sweep.yaml');
    const out = join(folder.path, 'sweep-parquet');
    await writeFile(config, stringify(marketMakerDocument([session])));
    const result = await backtest([
      '--config',
      config,
      '--sweep',
      'halfSpreadTicks=5,9',
      '--workers',
      '1',
      '--json',
      '--parquet',
      out,
    ]);
    expect(result.code, result.err).toBe(0);
    expect(result.err).toBe(`Parquet written to ${join(out, 'sweep.parquet')}\n`);
    const cells = JSON.parse(result.out) as {
      raw: Record<string, string>;
      status: string;
      value: { net_pnl: string; fees: string; fills: number; trades: number };
    }[];
    const rows = await query(
      `SELECT cell, param_halfSpreadTicks AS p, status, net_pnl, fees, fills, trades
       FROM ${file(join(out, 'sweep.parquet'))} ORDER BY cell`,
    );
    expect(rows).toEqual(
      cells.map((cell, index) => ({
        cell: String(index),
        p: cell.raw.halfSpreadTicks,
        status: cell.status,
        net_pnl: cell.value.net_pnl,
        fees: cell.value.fees,
        fills: String(cell.value.fills),
        trades: String(cell.value.trades),
      })),
    );
    expect(rows.map((row) => row.p)).toEqual(['5', '9']);
  });

  it('is refused with --search', async () => {
    const config = join(folder.path, 'search.yaml');
    await writeFile(config, stringify(marketMakerDocument([session])));
    const result = await backtest([
      '--config',
      config,
      '--search',
      'halfSpreadTicks=5..9',
      '--parquet',
      join(folder.path, 'never'),
    ]);
    expect(result.code).toBe(2);
    expect(result.err).toContain('--parquet');
  });
});

describe('paperbot export --parquet', () => {
  it("writes each record kind's rows with the recording's counts and sums, in row groups", async () => {
    const out = join(folder.path, 'export');
    const result = await exportCommand(['--parquet', out, '--row-group-rows', '500', session]);
    // --markets keeps one market's records.
    const btc = join(folder.path, 'export-btc');
    expect((await exportCommand(['--parquet', btc, '--markets', 'BTC-PERP', session])).code).toBe(
      0,
    );
    const [btcMarkets] = await query(
      `SELECT list(DISTINCT market_id) AS markets FROM ${file(join(btc, 'trades.parquet'))}`,
    );
    expect(btcMarkets!.markets).toEqual(['BTC-PERP']);
    expect(result.code, result.err).toBe(0);

    // What the recording holds, read by paperbot's own reader.
    const counts = { ticker: 0, trade: 0, book: 0, private: 0, gap: 0 };
    let tradeQuantity = new Big(0);
    let bookQuantity = new Big(0);
    let records = 0;
    const reader = new RecordingReader(await openRecording(session), { cache: 'off' });
    for await (const batch of reader.batches()) {
      for (const record of batch) {
        records += 1;
        if (record.k === 'book') {
          counts.book += record.d.bids.length + record.d.asks.length;
          for (const level of [...record.d.bids, ...record.d.asks]) {
            bookQuantity = bookQuantity.plus(level.quantity);
          }
        } else {
          counts[record.k] += 1;
          if (record.k === 'trade') tradeQuantity = tradeQuantity.plus(record.d.quantity);
        }
      }
    }
    expect(result.out).toContain(`${records} records of ${session} exported:\n`);
    expect(counts.trade).toBeGreaterThan(10);
    expect(counts.book).toBeGreaterThan(1000);
    expect(counts.private).toBeGreaterThan(0);

    const files = {
      ticker: 'tickers.parquet',
      trade: 'trades.parquet',
      book: 'books.parquet',
      private: 'private.parquet',
      gap: 'gaps.parquet',
    } as const;
    for (const [kind, name] of Object.entries(files)) {
      const [row] = await query(`SELECT count(*) AS n FROM ${file(join(out, name))}`);
      expect(Number(row!.n), name).toBe(counts[kind as keyof typeof counts]);
      expect(result.out).toContain(
        `${join(out, name)}: ${counts[kind as keyof typeof counts]} rows`,
      );
    }
    const [trades] = await query(
      `SELECT sum(quantity::DECIMAL(38,18)) AS quantity, count(DISTINCT market_id) AS markets,
              min(time) = min(occurred_at) AS aligned
       FROM ${file(join(out, 'trades.parquet'))}`,
    );
    expectSameDecimal(trades!.quantity, tradeQuantity);
    expect(Number(trades!.markets)).toBe(2);
    const [books] = await query(
      `SELECT sum(quantity::DECIMAL(38,18)) AS quantity,
              count(*) FILTER (WHERE level = 0 AND side = 'bid') AS snapshots
       FROM ${file(join(out, 'books.parquet'))}`,
    );
    expectSameDecimal(books!.quantity, bookQuantity);
    expect(Number(books!.snapshots)).toBeGreaterThan(0);
    // The account's fills among the private events, their data as JSON.
    const [fills] = await query(
      `SELECT count(*) AS n, sum((data->>'fee')::DECIMAL(38,18)) AS fees,
              sum((data->>'quantity')::DECIMAL(38,18)) AS quantity
       FROM ${file(join(out, 'private.parquet'))} WHERE type = 'fill'`,
    );
    expect(live.fills.length).toBeGreaterThan(0);
    expect(Number(fills!.n)).toBe(live.fills.length);
    expectSameDecimal(fills!.fees, sum(live.fills.map((fill) => fill.fee)));
    expectSameDecimal(fills!.quantity, sum(live.fills.map((fill) => fill.quantity)));
    // Bounded memory: the 500-row groups are there in the file.
    const [groups] = await query(
      `SELECT count(DISTINCT row_group_id) AS n FROM parquet_metadata(${file(join(out, 'books.parquet'))})`,
    );
    expect(Number(groups!.n)).toBe(Math.ceil(counts.book / 500));
    // Typed columns.
    const types = await query(`DESCRIBE SELECT * FROM ${file(join(out, 'books.parquet'))}`);
    expect(types.map((row) => `${row.column_name}:${row.column_type}`)).toEqual([
      'time:TIMESTAMP WITH TIME ZONE',
      'market_id:VARCHAR',
      'route_id:VARCHAR',
      'sequence:BIGINT',
      'observed_at:TIMESTAMP WITH TIME ZONE',
      'side:VARCHAR',
      'level:BIGINT',
      'price:VARCHAR',
      'quantity:VARCHAR',
      'order_count:BIGINT',
    ]);
  });

  it('refuses a call without --parquet and a folder that is not a recording, naming it', async () => {
    const missing = await exportCommand([session]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('--parquet');
    const notRecording = join(folder.path, 'not-a-recording');
    const bad = await exportCommand(['--parquet', join(folder.path, 'x'), notRecording]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain(notRecording);
    const rows = await exportCommand([
      '--parquet',
      join(folder.path, 'x'),
      '--row-group-rows',
      '0',
      session,
    ]);
    expect(rows.code).toBe(1);
    expect(rows.err).toContain('--row-group-rows 0');
    const market = await exportCommand([
      '--parquet',
      join(folder.path, 'x'),
      '--markets',
      'DOGE-PERP',
      session,
    ]);
    expect(market.code).toBe(1);
    expect(market.err).toContain(
      `${session} recorded no market DOGE-PERP (it has BTC-PERP, ETH-PERP)`,
    );
  });
});

describe('ParquetTable', () => {
  it('refuses a cell of the wrong type, naming the file and column', () => {
    const path = join(folder.path, 'bad.parquet');
    const table = new ParquetTable(path, [{ name: 'quantity', type: 'decimal' }]);
    expect(() => table.row([true])).toThrow(`${path}: column quantity (decimal) cannot hold true`);
    table.close();
  });
});
