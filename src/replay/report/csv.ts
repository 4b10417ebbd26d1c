/**
 * The report as CSV files for spreadsheets and notebooks (`paperbot backtest --csv DIR`):
 * `trades.csv`, `fills.csv` and `equity.csv`, one row per trade, fill and equity sample, with
 * the JSON report's field names as headers and its decimal strings as values. Deterministic
 * like the report.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { BacktestReport } from './report.ts';

function field(value: string | number | boolean | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function csv(
  heads: readonly string[],
  rows: Iterable<readonly (string | number | boolean | null)[]>,
): string {
  const lines = [heads.join(',')];
  for (const row of rows) lines.push(row.map(field).join(','));
  return `${lines.join('\n')}\n`;
}

export function tradesCsv(report: BacktestReport): string {
  return csv(
    [
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
    ],
    report.trades.map((trade) => [
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
    ]),
  );
}

export function fillsCsv(report: BacktestReport): string {
  return csv(
    [
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
    ],
    report.fills.map((fill) => [
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
    ]),
  );
}

export function equityCsv(report: BacktestReport): string {
  return csv(
    ['t', 'equity', 'drawdown'],
    report.equity.map((point) => [point.t, point.equity, point.drawdown]),
  );
}

/** Writes the three files into `directory` (created when missing); returns their paths. */
export async function writeReportCsv(directory: string, report: BacktestReport): Promise<string[]> {
  const folder = resolve(directory);
  await mkdir(folder, { recursive: true });
  const files: [string, string][] = [
    ['trades.csv', tradesCsv(report)],
    ['fills.csv', fillsCsv(report)],
    ['equity.csv', equityCsv(report)],
  ];
  const written: string[] = [];
  for (const [name, text] of files) {
    const path = join(folder, name);
    await writeFile(path, text);
    written.push(path);
  }
  return written;
}
