/**
 * The report as CSV files for spreadsheets and notebooks (`paperbot backtest --csv DIR`):
 * `trades.csv`, `fills.csv` and `equity.csv`, one row per trade, fill and equity sample of the
 * whole run, with the JSON report's field names as headers and its decimal strings as values.
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

function field(value: Cell): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function line(cells: readonly Cell[]): string {
  return `${cells.map(field).join(',')}\n`;
}

export const TRADE_HEADS = [
  'market_id',
  'direction',
  'opened_at',
  'closed_at',
  'duration_ms',
  'opened_quantity',
  'closed_quantity',
  'entry_price',
  'exit_price',
  'mae',
  'mfe',
  'gross_pnl',
  'fees',
  'net_pnl',
] as const;

export function tradeRow(trade: ReportTrade): Cell[] {
  return [
    trade.market_id,
    trade.direction,
    trade.opened_at,
    trade.closed_at,
    trade.duration_ms,
    trade.opened_quantity,
    trade.closed_quantity,
    trade.entry_price,
    trade.exit_price,
    trade.mae,
    trade.mfe,
    trade.gross_pnl,
    trade.fees,
    trade.net_pnl,
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
