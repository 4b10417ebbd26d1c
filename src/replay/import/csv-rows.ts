/**
 * Streams the rows of a CSV file (plain, or gzip when the name ends in `.gz`) with their line
 * numbers, and maps the columns a layout names to fields. Nothing is held but the current row.
 */
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import { PaperbotError } from '../../core/errors.ts';

export interface CsvRow {
  /** The line the row starts on, counting from 1 (the header, when there is one, is line 1). */
  readonly line: number;
  readonly fields: Readonly<Record<string, string>>;
}

export interface ColumnLayout {
  /** Field name to column: a header name, or a 0-based index when the file has no header. */
  readonly columns: Readonly<Record<string, string>>;
  /** Whether the file's first line names the columns. */
  readonly header: boolean;
  /**
   * Headerless layouts only: a first line equal to these names is skipped as a header (public
   * dumps come both with and without one).
   */
  readonly optionalHeader?: readonly string[];
}

/** A row the importer drops, with the reason counted in the report. */
export class SkipRow {
  constructor(readonly reason: string) {}
}

/** Yields the mapped rows of `path`; `onBlank` counts rows with no fields (skipped). */
export async function* readCsvRows(
  path: string,
  layout: ColumnLayout,
  onHeaderSkipped: () => void = () => undefined,
): AsyncGenerator<CsvRow> {
  const input = createReadStream(path);
  const parser = parse({
    info: true,
    skip_empty_lines: true,
    trim: true,
    relax_column_count: true,
  });
  const stream = path.endsWith('.gz')
    ? input.pipe(createGunzip()).pipe(parser)
    : input.pipe(parser);
  input.on('error', (error) => parser.destroy(error));
  let indices: Array<[string, number]> | null = null;
  let first = true;
  try {
    for await (const item of stream as AsyncIterable<{
      record: string[];
      info: { lines: number };
    }>) {
      const { record, info } = item;
      if (first) {
        first = false;
        if (layout.header) {
          indices = headerIndices(path, layout.columns, record);
          onHeaderSkipped();
          continue;
        }
        indices = positionalIndices(path, layout.columns);
        if (
          layout.optionalHeader !== undefined &&
          layout.optionalHeader.every((name, index) => record[index] === name)
        ) {
          onHeaderSkipped();
          continue;
        }
      }
      const fields: Record<string, string> = {};
      for (const [name, index] of indices!) {
        const value = record[index];
        if (value === undefined) {
          throw new PaperbotError(
            'IMPORT_INVALID_ROW',
            `${path} line ${info.lines}: no column ${index} (${name}); the row has ${record.length}`,
            { details: { path, line: info.lines } },
          );
        }
        fields[name] = value;
      }
      yield { line: info.lines, fields };
    }
  } catch (cause) {
    if (cause instanceof PaperbotError) throw cause;
    throw new PaperbotError('IMPORT_READ_FAILED', `${path}: ${(cause as Error).message}`, {
      cause,
    });
  } finally {
    input.destroy();
  }
}

function headerIndices(
  path: string,
  columns: Readonly<Record<string, string>>,
  header: readonly string[],
): Array<[string, number]> {
  const missing: string[] = [];
  const result = Object.entries(columns).map(([name, column]): [string, number] => {
    const index = header.indexOf(column);
    if (index < 0) missing.push(`${name}=${column}`);
    return [name, index];
  });
  if (missing.length > 0) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `${path}: the header (${header.join(',')}) has no column for ${missing.join(', ')}`,
    );
  }
  return result;
}

function positionalIndices(
  path: string,
  columns: Readonly<Record<string, string>>,
): Array<[string, number]> {
  return Object.entries(columns).map(([name, column]) => {
    if (!/^\d+$/.test(column)) {
      throw new PaperbotError(
        'INVALID_ARGUMENT',
        `${path}: without a header, column ${name}=${column} must be a 0-based index`,
      );
    }
    return [name, Number(column)];
  });
}
