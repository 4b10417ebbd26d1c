/**
 * A recording's events as Parquet files (`paperbot export --parquet DIR RECORDING`), one file per
 * record kind with typed columns, read in file order and written in row groups, so a recording
 * of any length is exported in bounded memory:
 *
 * - `tickers.parquet`: time, market_id, mark_price, index_price, last_price, data_status,
 *   funding_rate, next_funding_time;
 * - `trades.parquet`: time, market_id, trade_id, route_id, side, price, quantity, occurred_at;
 * - `books.parquet`: one row per level of each snapshot: time, market_id, route_id, sequence,
 *   observed_at, side (`bid` or `ask`), level (0 is the best), price, quantity, order_count;
 * - `private.parquet`: time, market_id, type, channel, sequence, event_id, occurred_at, and the
 *   event's `data` as a JSON document (the account's own events: fills, orders, positions...);
 * - `gaps.parquet`: time, market_id, stream, reason.
 *
 * `time` is the record's time (the `t` a backtest replays at). Every file is written, empty
 * when the recording has no record of its kind, so a notebook can rely on all five.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  openRecording,
  type RecordedEvent,
  RecordingReader,
  type RecordKind,
} from '../format/index.ts';
import { PaperbotError } from '../../core/errors.ts';
import { type ParquetColumn, ParquetTable, type ParquetTableOptions } from './table.ts';

const TIME: ParquetColumn = { name: 'time', type: 'timestamp', nullable: false };

export const TICKER_COLUMNS: readonly ParquetColumn[] = [
  TIME,
  { name: 'market_id', type: 'string', nullable: false },
  { name: 'mark_price', type: 'decimal' },
  { name: 'index_price', type: 'decimal' },
  { name: 'last_price', type: 'decimal' },
  { name: 'data_status', type: 'string' },
  { name: 'funding_rate', type: 'decimal' },
  { name: 'next_funding_time', type: 'timestamp' },
];

export const TRADE_EVENT_COLUMNS: readonly ParquetColumn[] = [
  TIME,
  { name: 'market_id', type: 'string', nullable: false },
  { name: 'trade_id', type: 'string' },
  { name: 'route_id', type: 'string' },
  { name: 'side', type: 'string' },
  { name: 'price', type: 'decimal', nullable: false },
  { name: 'quantity', type: 'decimal', nullable: false },
  { name: 'occurred_at', type: 'timestamp' },
];

export const BOOK_COLUMNS: readonly ParquetColumn[] = [
  TIME,
  { name: 'market_id', type: 'string', nullable: false },
  { name: 'route_id', type: 'string' },
  { name: 'sequence', type: 'int' },
  { name: 'observed_at', type: 'timestamp' },
  { name: 'side', type: 'string', nullable: false },
  { name: 'level', type: 'int', nullable: false },
  { name: 'price', type: 'decimal', nullable: false },
  { name: 'quantity', type: 'decimal', nullable: false },
  { name: 'order_count', type: 'int' },
];

export const PRIVATE_COLUMNS: readonly ParquetColumn[] = [
  TIME,
  { name: 'market_id', type: 'string' },
  { name: 'type', type: 'string', nullable: false },
  { name: 'channel', type: 'string' },
  { name: 'sequence', type: 'int' },
  { name: 'event_id', type: 'string' },
  { name: 'occurred_at', type: 'timestamp' },
  { name: 'data', type: 'json' },
];

export const GAP_COLUMNS: readonly ParquetColumn[] = [
  TIME,
  { name: 'market_id', type: 'string' },
  { name: 'stream', type: 'string', nullable: false },
  { name: 'reason', type: 'string' },
];

/** The file of each record kind. */
export const EXPORT_FILES: Readonly<Record<RecordKind, string>> = {
  ticker: 'tickers.parquet',
  trade: 'trades.parquet',
  book: 'books.parquet',
  private: 'private.parquet',
  gap: 'gaps.parquet',
};

const COLUMNS: Readonly<Record<RecordKind, readonly ParquetColumn[]>> = {
  ticker: TICKER_COLUMNS,
  trade: TRADE_EVENT_COLUMNS,
  book: BOOK_COLUMNS,
  private: PRIVATE_COLUMNS,
  gap: GAP_COLUMNS,
};

export interface ExportOptions extends ParquetTableOptions {
  /** Only records of these markets (records without a market are dropped too). */
  readonly markets?: readonly string[];
}

export interface ExportResult {
  /** Rows written per file, keyed by record kind (books: one row per level). */
  readonly rows: Readonly<Record<RecordKind, number>>;
  /** Records read. */
  readonly records: number;
  readonly paths: Readonly<Record<RecordKind, string>>;
}

type Tables = Readonly<Record<RecordKind, ParquetTable>>;

function writeRecord(tables: Tables, record: RecordedEvent): void {
  switch (record.k) {
    case 'ticker': {
      const d = record.d;
      tables.ticker.row([
        record.t,
        record.m,
        d.mark_price,
        d.index_price,
        d.last_price,
        d.data_status,
        d.funding_rate ?? null,
        d.next_funding_time ?? null,
      ]);
      return;
    }
    case 'trade': {
      const d = record.d;
      tables.trade.row([
        record.t,
        record.m,
        d.trade_id,
        d.route_id,
        d.side,
        d.price,
        d.quantity,
        d.occurred_at,
      ]);
      return;
    }
    case 'book': {
      const d = record.d;
      const sides = [
        ['bid', d.bids],
        ['ask', d.asks],
      ] as const;
      for (const [side, levels] of sides) {
        levels.forEach((level, index) => {
          tables.book.row([
            record.t,
            record.m,
            d.route_id,
            d.sequence,
            d.observed_at,
            side,
            index,
            level.price,
            level.quantity,
            level.order_count,
          ]);
        });
      }
      return;
    }
    case 'private': {
      const d = record.d;
      tables.private.row([
        record.t,
        record.m ?? null,
        d.type,
        d.channel,
        d.sequence,
        d.event_id,
        d.occurred_at,
        d.data,
      ]);
      return;
    }
    case 'gap':
      tables.gap.row([record.t, record.m ?? null, record.d.stream, record.d.reason]);
      return;
  }
}

/**
 * Writes the recording in `recordingDirectory` as Parquet files into `outDirectory` (created
 * when missing). The recording is checked against its manifest as a backtest checks it (a
 * damaged one is refused); nothing is written beside it.
 */
export async function exportRecordingParquet(
  recordingDirectory: string,
  outDirectory: string,
  options: ExportOptions = {},
): Promise<ExportResult> {
  const recording = await openRecording(resolve(recordingDirectory));
  const recorded = new Set(recording.manifest.markets.map((market) => market.market_id));
  const unknown = (options.markets ?? []).filter((market) => !recorded.has(market));
  if (unknown.length > 0) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `${recordingDirectory} recorded no market ${unknown.join(', ')} (it has ${[...recorded].join(', ')})`,
    );
  }
  const reader = new RecordingReader(recording, {
    cache: 'off',
    ...(options.markets === undefined ? {} : { markets: options.markets }),
  });
  const folder = resolve(outDirectory);
  mkdirSync(folder, { recursive: true });
  const kinds = Object.keys(EXPORT_FILES) as RecordKind[];
  const tableOptions =
    options.rowGroupRows === undefined ? {} : { rowGroupRows: options.rowGroupRows };
  const tables = Object.fromEntries(
    kinds.map((kind) => [
      kind,
      new ParquetTable(join(folder, EXPORT_FILES[kind]), COLUMNS[kind], tableOptions),
    ]),
  ) as Record<RecordKind, ParquetTable>;
  let records = 0;
  try {
    for await (const batch of reader.batches()) {
      for (const record of batch) writeRecord(tables, record);
      records += batch.length;
    }
  } finally {
    for (const kind of kinds) tables[kind].close();
  }
  return {
    records,
    rows: Object.fromEntries(kinds.map((kind) => [kind, tables[kind].rows])) as Record<
      RecordKind,
      number
    >,
    paths: Object.fromEntries(kinds.map((kind) => [kind, tables[kind].path])) as Record<
      RecordKind,
      string
    >,
  };
}
