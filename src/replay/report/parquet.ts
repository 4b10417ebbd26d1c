/**
 * The report as Parquet files for pandas, Polars and DuckDB (`paperbot backtest --parquet DIR`):
 * `trades.parquet`, `fills.parquet` and `equity.parquet` with the very columns of the CSV files
 * (`csv.ts`: the same heads and row builders, so a column is defined once; here each head only
 * gains its type), written row by row while the run goes, in row groups. And
 * `sweep.parquet`, one row per sweep cell (`sweepRows`).
 *
 * Decimals stay the report's decimal strings (exact); times are UTC timestamps in milliseconds
 * (`../parquet/table.ts`).
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type ParquetColumn, type ParquetColumnType, ParquetTable } from '../parquet/table.ts';
import type { ReportFiles } from './collector.ts';
import { EQUITY_HEADS, FILL_HEADS, reportFilesOf, TRADE_HEADS } from './csv.ts';
import type { SweepCellFigures, SweepReportRow } from './sweep-html.ts';

/** Each CSV head's Parquet type: a column added to the CSV fails to compile until typed here. */
const TRADE_TYPES: Readonly<Record<(typeof TRADE_HEADS)[number], ParquetColumnType>> = {
  market_id: 'string',
  direction: 'string',
  status: 'string',
  exit_reason: 'string',
  opened_at: 'timestamp',
  closed_at: 'timestamp',
  duration_ms: 'int',
  opened_quantity: 'decimal',
  closed_quantity: 'decimal',
  entry_price: 'decimal',
  exit_price: 'decimal',
  mark_price: 'decimal',
  mae: 'decimal',
  mfe: 'decimal',
  gross_pnl: 'decimal',
  unrealized_pnl: 'decimal',
  fees: 'decimal',
  net_pnl: 'decimal',
  funding: 'decimal',
};

const FILL_TYPES: Readonly<Record<(typeof FILL_HEADS)[number], ParquetColumnType>> = {
  occurred_at: 'timestamp',
  fill_id: 'string',
  order_id: 'string',
  strategy_id: 'string',
  market_id: 'string',
  side: 'string',
  quantity: 'decimal',
  price: 'decimal',
  fee: 'decimal',
  is_maker: 'boolean',
};

const EQUITY_TYPES: Readonly<Record<(typeof EQUITY_HEADS)[number], ParquetColumnType>> = {
  t: 'timestamp',
  equity: 'decimal',
  drawdown: 'decimal',
};

function columnsOf<Head extends string>(
  heads: readonly Head[],
  types: Readonly<Record<Head, ParquetColumnType>>,
): ParquetColumn[] {
  return heads.map((name) => ({ name, type: types[name] }));
}

export const TRADE_COLUMNS = columnsOf(TRADE_HEADS, TRADE_TYPES);
export const FILL_COLUMNS = columnsOf(FILL_HEADS, FILL_TYPES);
export const EQUITY_COLUMNS = columnsOf(EQUITY_HEADS, EQUITY_TYPES);

/** The three Parquet files of a run, open for writing. */
export interface ReportParquet extends ReportFiles {
  /** Writes the last row groups and the footers; returns the files' paths. */
  close(): string[];
}

export interface ReportParquetOptions {
  /** Rows per row group (default: `DEFAULT_ROW_GROUP_ROWS`). */
  readonly rowGroupRows?: number;
}

function folderOf(directory: string): string {
  const folder = resolve(directory);
  mkdirSync(folder, { recursive: true });
  return folder;
}

/** Creates `directory` when missing and opens the trades, fills and equity files in it. */
export function openReportParquet(
  directory: string,
  options: ReportParquetOptions = {},
): ReportParquet {
  const folder = folderOf(directory);
  const trades = new ParquetTable(join(folder, 'trades.parquet'), TRADE_COLUMNS, options);
  const fills = new ParquetTable(join(folder, 'fills.parquet'), FILL_COLUMNS, options);
  const equity = new ParquetTable(join(folder, 'equity.parquet'), EQUITY_COLUMNS, options);
  return reportFilesOf(trades, fills, equity);
}

/** Several `ReportFiles` fed as one (`--csv` and `--parquet` together); paths are the first's. */
export function teeReportFiles(files: readonly ReportFiles[]): ReportFiles | null {
  const [first] = files;
  if (first === undefined) return null;
  if (files.length === 1) return first;
  return {
    paths: first.paths,
    fill: (row) => files.forEach((file) => file.fill(row)),
    trade: (row) => files.forEach((file) => file.trade(row)),
    equity: (row) => files.forEach((file) => file.equity(row)),
  };
}

/** The sweep file's figure columns: the cell's figures as `--sweep --json` prints them. */
const SWEEP_FIGURE_COLUMNS: readonly ParquetColumn[] = [
  { name: 'currency', type: 'string' },
  { name: 'net_pnl', type: 'decimal' },
  { name: 'return', type: 'decimal' },
  { name: 'sharpe', type: 'decimal' },
  { name: 'sortino', type: 'decimal' },
  { name: 'sharpe_period_ms', type: 'int' },
  { name: 'max_drawdown', type: 'decimal' },
  { name: 'fees', type: 'decimal' },
  { name: 'trades', type: 'int' },
  { name: 'win_rate', type: 'decimal' },
  { name: 'fills', type: 'int' },
];

function sweepFigureCells(figures: SweepCellFigures | null): (string | number | null)[] {
  if (figures === null) return SWEEP_FIGURE_COLUMNS.map(() => null);
  return [
    figures.currency,
    figures.net_pnl,
    figures.return,
    figures.sharpe,
    figures.sortino,
    figures.sharpe_period_ms,
    figures.max_drawdown,
    figures.fees,
    figures.trades,
    figures.win_rate,
    figures.fills,
  ];
}

/**
 * `sweep.parquet`: one row per cell in the order given (the grid's): `cell` (its index),
 * one `param_NAME` column per axis (the value as given on the command line), `status` (`ok` or
 * `error`), `error` (why the cell failed), then the figures (null for a failed cell). The rows
 * are the sweep comparison page's (`SweepReportRow`). Returns the path.
 */
export function writeSweepParquet(
  directory: string,
  axes: readonly string[],
  rows: readonly SweepReportRow[],
): string {
  const table = new ParquetTable(join(folderOf(directory), 'sweep.parquet'), [
    { name: 'cell', type: 'int', nullable: false },
    ...axes.map((axis): ParquetColumn => ({ name: `param_${axis}`, type: 'string' })),
    { name: 'status', type: 'string', nullable: false },
    { name: 'error', type: 'string' },
    ...SWEEP_FIGURE_COLUMNS,
  ]);
  try {
    rows.forEach((row, index) => {
      table.row([
        index,
        ...axes.map((axis) => row.parameters[axis] ?? null),
        row.figures === null ? 'error' : 'ok',
        row.error,
        ...sweepFigureCells(row.figures),
      ]);
    });
  } finally {
    table.close();
  }
  return table.path;
}
