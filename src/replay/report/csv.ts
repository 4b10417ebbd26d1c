/**
 * The report as CSV files for spreadsheets and notebooks (`paperbot backtest --csv DIR`):
 * `trades.csv`, `fills.csv` and `equity.csv`, one row per trade, fill and equity sample of the
 * whole run, with the JSON report's field names as headers and its decimal strings as values.
 * Cells a spreadsheet would run as a formula are neutralised (`csvField`).
 *
 * The rows are written while the run goes (`ReportFiles`, fed by the report's collector), so a
 * run of any length keeps none of them in memory: fills and samples in time order, trades as they
 * close (those still open at the end last). Deterministic like the report.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ReportFiles } from './collector.ts';
import type { ReportEquityPoint, ReportFill, ReportTrade } from './report.ts';

/** Bytes gathered before a write. */
const FLUSH_BYTES = 64 * 1024;

type Cell = string | number | boolean | null;

/** A negative number: the one cell starting with `-` that a spreadsheet must read as it is. */
const NEGATIVE_NUMBER = /^-(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Whether a spreadsheet would read the cell as a formula (CSV injection): it starts with `=`,
 * `+`, `@`, a tab, a carriage return, or a `-` that does not begin a number. Identifiers come
 * from recordings and imported files, so a market id can be `=HYPERLINK(...)`.
 */
export function isFormulaLike(text: string): boolean {
  const first = text.charAt(0);
  if (first === '-') return !NEGATIVE_NUMBER.test(text);
  return first === '=' || first === '+' || first === '@' || first === '\t' || first === '\r';
}

/**
 * One cell. A formula-like cell is neutralised as OWASP recommends: prefixed with a single
 * quote (the spreadsheet shows it as text) and quoted; cells with `"`, `,` or a line break are
 * quoted.
 */
export function csvField(value: Cell): string {
  if (value === null) return '';
  const text = String(value);
  if (isFormulaLike(text)) return `"'${text.replaceAll('"', '""')}"`;
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function line(cells: readonly Cell[]): string {
  return `${cells.map(csvField).join(',')}\n`;
}

export const TRADE_HEADS = [
  'market_id',
  'direction',
  'status',
  'exit_reason',
  'opened_at',
  'closed_at',
  'duration_ms',
  'opened_quantity',
  'closed_quantity',
  'entry_price',
  'exit_price',
  'mark_price',
  'mae',
  'mfe',
  'gross_pnl',
  'unrealized_pnl',
  'fees',
  'net_pnl',
  'funding',
] as const;

export function tradeRow(trade: ReportTrade): Cell[] {
  return [
    trade.market_id,
    trade.direction,
    trade.status,
    trade.exit_reason,
    trade.opened_at,
    trade.closed_at,
    trade.duration_ms,
    trade.opened_quantity,
    trade.closed_quantity,
    trade.entry_price,
    trade.exit_price,
    trade.mark_price,
    trade.mae,
    trade.mfe,
    trade.gross_pnl,
    trade.unrealized_pnl,
    trade.fees,
    trade.net_pnl,
    trade.funding,
  ];
}

export const FILL_HEADS = [
  'occurred_at',
  'fill_id',
  'order_id',
  'strategy_id',
  'market_id',
  'side',
  'quantity',
  'price',
  'fee',
  'is_maker',
] as const;

export function fillRow(fill: ReportFill): Cell[] {
  return [
    fill.occurred_at,
    fill.fill_id,
    fill.order_id,
    fill.strategy_id,
    fill.market_id,
    fill.side,
    fill.quantity,
    fill.price,
    fill.fee,
    fill.is_maker,
  ];
}

export const EQUITY_HEADS = ['t', 'equity', 'drawdown'] as const;

export function equityRow(point: ReportEquityPoint): Cell[] {
  return [point.t, point.equity, point.drawdown];
}

/** One CSV file written a buffer at a time. */
class CsvFile {
  private readonly fd: number;
  private buffer = '';

  constructor(
    readonly path: string,
    heads: readonly string[],
  ) {
    this.fd = openSync(path, 'w');
    this.buffer = `${heads.join(',')}\n`;
  }

  row(cells: readonly Cell[]): void {
    this.buffer += line(cells);
    if (this.buffer.length >= FLUSH_BYTES) this.flush();
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }

  private flush(): void {
    if (this.buffer.length > 0) writeSync(this.fd, this.buffer);
    this.buffer = '';
  }
}

/** The three CSV files of a run, open for writing. */
export interface ReportCsv extends ReportFiles {
  /** Writes what is buffered and closes the files; returns their paths. */
  close(): string[];
}

/** Creates `directory` when missing and opens `trades.csv`, `fills.csv` and `equity.csv` in it. */
export function openReportCsv(directory: string): ReportCsv {
  const folder = resolve(directory);
  mkdirSync(folder, { recursive: true });
  const trades = new CsvFile(join(folder, 'trades.csv'), TRADE_HEADS);
  const fills = new CsvFile(join(folder, 'fills.csv'), FILL_HEADS);
  const equity = new CsvFile(join(folder, 'equity.csv'), EQUITY_HEADS);
  return reportFilesOf(trades, fills, equity);
}

/** One of the run's table files, written row by row: a CSV file or a Parquet table. */
export interface ReportTableFile {
  readonly path: string;
  row(cells: readonly Cell[]): void;
  close(): void;
}

/** The run's trades, fills and equity fed to their three files; `close` closes them once. */
export function reportFilesOf(
  trades: ReportTableFile,
  fills: ReportTableFile,
  equity: ReportTableFile,
): ReportFiles & { close(): string[] } {
  let closed = false;
  return {
    paths: { fills: fills.path, trades: trades.path, equity: equity.path },
    fill: (row) => fills.row(fillRow(row)),
    trade: (row) => trades.row(tradeRow(row)),
    equity: (row) => equity.row(equityRow(row)),
    close: () => {
      if (!closed) {
        closed = true;
        for (const file of [trades, fills, equity]) file.close();
      }
      return [trades.path, fills.path, equity.path];
    },
  };
}
