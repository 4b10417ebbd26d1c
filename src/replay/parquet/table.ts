/**
 * One Parquet file written row by row in bounded memory (hyparquet-writer, pure JavaScript):
 * rows are gathered column by column and written as a row group every `rowGroupRows` rows, and
 * the file writer hands its bytes to disk every megabyte, so a table of any length holds at most
 * one row group. Snappy-compressed; the footer is written by `close`.
 *
 * Column types (docs/backtesting.md, "Parquet"):
 * - `decimal`: the decimal string exactly as the JSON report and the CSV carry it (UTF8), so no
 *   price, quantity, fee or PnL is rounded through a float; readers cast it (DECIMAL(38,18)).
 * - `timestamp`: milliseconds since the epoch, UTC (INT64, logical TIMESTAMP(MILLIS, UTC));
 *   given as a number of milliseconds or an RFC 3339 string.
 * - `string`, `int` (INT64), `double`, `boolean`, `json` (a JSON document as UTF8, logical JSON).
 */
import { fileWriter, ParquetWriter } from 'hyparquet-writer';
import { PaperbotError } from '../../core/errors.ts';

export type ParquetColumnType =
  'string' | 'decimal' | 'timestamp' | 'int' | 'double' | 'boolean' | 'json';

export interface ParquetColumn {
  readonly name: string;
  readonly type: ParquetColumnType;
  /** Whether the column may hold nulls (default: true). */
  readonly nullable?: boolean;
}

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];

export type ParquetCell = string | number | boolean | bigint | null | undefined | object;

/** Rows per row group by default: a few megabytes of a report's or a recording's rows. */
export const DEFAULT_ROW_GROUP_ROWS = 50_000;

function schemaElement(column: ParquetColumn): SchemaElement {
  const repetition_type = column.nullable === false ? 'REQUIRED' : 'OPTIONAL';
  const name = column.name;
  switch (column.type) {
    case 'string':
    case 'decimal':
      return { name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type };
    case 'json':
      return { name, type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type };
    case 'timestamp':
      return {
        name,
        type: 'INT64',
        converted_type: 'TIMESTAMP_MILLIS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
        repetition_type,
      };
    case 'int':
      return { name, type: 'INT64', repetition_type };
    case 'double':
      return { name, type: 'DOUBLE', repetition_type };
    case 'boolean':
      return { name, type: 'BOOLEAN', repetition_type };
  }
}

/** A cell as the writer takes it for its column's type; throws on a value of another type. */
function cellValue(column: ParquetColumn, cell: ParquetCell, path: string): unknown {
  if (cell === null || cell === undefined) {
    if (column.nullable === false) {
      throw new PaperbotError('INVALID_ARGUMENT', `${path}: column ${column.name} is null`);
    }
    return null;
  }
  const wrong = (): PaperbotError =>
    new PaperbotError(
      'INVALID_ARGUMENT',
      `${path}: column ${column.name} (${column.type}) cannot hold ${JSON.stringify(cell)}`,
    );
  switch (column.type) {
    case 'string':
    case 'decimal':
      if (typeof cell === 'string') return cell;
      if (typeof cell === 'number' && column.type === 'decimal') return String(cell);
      throw wrong();
    case 'json':
      return cell;
    case 'timestamp': {
      const ms = typeof cell === 'string' ? Date.parse(cell) : cell;
      if (typeof ms !== 'number' || !Number.isFinite(ms)) throw wrong();
      return BigInt(Math.trunc(ms));
    }
    case 'int':
      if (typeof cell === 'bigint') return cell;
      if (typeof cell === 'number' && Number.isInteger(cell)) return BigInt(cell);
      throw wrong();
    case 'double':
      if (typeof cell === 'number') return cell;
      throw wrong();
    case 'boolean':
      if (typeof cell === 'boolean') return cell;
      throw wrong();
  }
}

export interface ParquetTableOptions {
  /** Rows per row group (default `DEFAULT_ROW_GROUP_ROWS`). */
  readonly rowGroupRows?: number;
}

/** A Parquet file open for rows; `close` writes the last row group and the footer. */
export class ParquetTable {
  private readonly writer: ParquetWriter;
  private readonly rowGroupRows: number;
  private columns: unknown[][];
  private buffered = 0;
  private written = 0;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly schema: readonly ParquetColumn[],
    options: ParquetTableOptions = {},
  ) {
    this.rowGroupRows = options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
    if (!Number.isInteger(this.rowGroupRows) || this.rowGroupRows < 1) {
      throw new PaperbotError('INVALID_ARGUMENT', `${path}: rowGroupRows must be at least 1`);
    }
    this.columns = schema.map(() => []);
    this.writer = new ParquetWriter({
      writer: fileWriter(path),
      schema: [
        { name: 'root', num_children: schema.length },
        ...schema.map((column) => schemaElement(column)),
      ],
      createdBy: 'paperbot (hyparquet-writer)',
    });
  }

  /** Rows handed to the table so far. */
  get rows(): number {
    return this.written + this.buffered;
  }

  /** One row, its cells in the order of the columns. */
  row(cells: readonly ParquetCell[]): void {
    if (this.closed) throw new PaperbotError('INVALID_ARGUMENT', `${this.path} is closed`);
    if (cells.length !== this.schema.length) {
      throw new PaperbotError(
        'INVALID_ARGUMENT',
        `${this.path}: a row of ${cells.length} cells for ${this.schema.length} columns`,
      );
    }
    for (let index = 0; index < cells.length; index += 1) {
      this.columns[index]!.push(cellValue(this.schema[index]!, cells[index], this.path));
    }
    this.buffered += 1;
    if (this.buffered >= this.rowGroupRows) this.flushRowGroup();
  }

  /** Writes what is buffered and the footer; later calls do nothing. */
  close(): void {
    if (this.closed) return;
    this.flushRowGroup();
    this.closed = true;
    void this.writer.finish();
  }

  private flushRowGroup(): void {
    if (this.buffered === 0) return;
    const columnData = this.schema.map((column, index) => ({
      name: column.name,
      data: this.columns[index]!,
    }));
    void this.writer.write({ columnData, rowGroupSize: this.buffered });
    this.written += this.buffered;
    this.buffered = 0;
    this.columns = this.schema.map(() => []);
  }
}
