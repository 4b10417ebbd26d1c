/**
 * The rows of one input in time order, each with its timestamp parsed. A row earlier than the
 * one before it is refused with both lines named, unless sorting was asked for: then the rows are
 * held (at most `maxSortedRows`) and sorted by time, stable, so rows of equal time keep their
 * file order and the result is the same on every run.
 */
import { PaperbotError } from '../../core/errors.ts';
import {
  type ColumnLayout,
  type CsvLimits,
  type CsvRow,
  DEFAULT_CSV_LIMITS,
  readCsvRows,
} from './csv-rows.ts';
import { atRow } from './rows.ts';
import { parseTimestamp, type TimeUnit } from './timestamps.ts';

export const DEFAULT_MAX_SORTED_ROWS = 5_000_000;

export interface TimedRow extends CsvRow {
  readonly t: number;
}

export interface OrderedRowsOptions {
  readonly path: string;
  readonly layout: ColumnLayout;
  readonly timeUnit: TimeUnit;
  readonly sort: boolean;
  readonly maxSortedRows?: number;
  /** Caps on the file (defaults: `DEFAULT_CSV_LIMITS`); tests lower them. */
  readonly csvLimits?: Partial<CsvLimits>;
}

/** What the rows are counted in: header lines skipped, rows handed on. */
export interface RowCounts {
  headerLines: number;
  rowsRead: number;
}

export async function* readOrderedRows(
  options: OrderedRowsOptions,
  counts: RowCounts,
): AsyncGenerator<TimedRow> {
  const { path } = options;
  const rows = readCsvRows(path, options.layout, () => counts.headerLines++, {
    ...DEFAULT_CSV_LIMITS,
    ...options.csvLimits,
  });
  const timed = async function* (): AsyncGenerator<TimedRow> {
    for await (const row of rows) {
      const t = atRow(path, row.line, () =>
        parseTimestamp(row.fields.timestamp ?? '', options.timeUnit),
      );
      yield { ...row, t };
    }
  };
  if (!options.sort) {
    let previous: TimedRow | null = null;
    for await (const row of timed()) {
      if (previous !== null && row.t < previous.t) {
        throw new PaperbotError(
          'IMPORT_TIME_BACKWARDS',
          `${path} line ${row.line}: time goes backwards (${row.t} ms after ${previous.t} ms on line ${previous.line}); pass --sort to sort the rows`,
          { details: { path, line: row.line, previousLine: previous.line } },
        );
      }
      previous = row;
      counts.rowsRead++;
      yield row;
    }
    return;
  }
  const limit = options.maxSortedRows ?? DEFAULT_MAX_SORTED_ROWS;
  const held: TimedRow[] = [];
  for await (const row of timed()) {
    if (held.length >= limit) {
      throw new PaperbotError(
        'IMPORT_TOO_LARGE_TO_SORT',
        `${path}: more than ${limit} rows to sort in memory; sort the file first (for example with sort -t, -k)`,
      );
    }
    held.push(row);
  }
  // Array.prototype.sort is stable: equal times keep file order.
  held.sort((a, b) => a.t - b.t);
  for (const row of held) {
    counts.rowsRead++;
    yield row;
  }
}
