/**
 * Streams the rows of a CSV file (plain, or gzip when the name ends in `.gz`) with their line
 * numbers, and maps the columns a layout names to fields. Nothing is held but the current row.
 *
 * The file is opened as every user-named file is (`src/core/user-file.ts`): a FIFO or a device
 * such as `/dev/zero` is refused at once. A gzip file's decompressed bytes and every row's
 * length are capped (a gzip bomb, or a line of gigabytes, is refused, not held), and a damaged
 * or cut gzip stream is an error naming the file. A UTF-8 byte order mark is dropped before the
 * header is matched.
 */
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { PaperbotError } from '../../core/errors.ts';
import { type GzipEnd, gunzipAtMost, openUserFile } from '../../core/user-file.ts';

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

export interface CsvLimits {
  /** The largest file read (on disk). */
  readonly maxFileBytes: number;
  /** Bytes a gzip file may decompress to. */
  readonly maxDecompressedBytes: number;
  /** The longest row, in characters: far above any real row of prices and quantities. */
  readonly maxRowCharacters: number;
}

export const DEFAULT_CSV_LIMITS: CsvLimits = {
  maxFileBytes: 2 ** 42,
  maxDecompressedBytes: 2 ** 40,
  maxRowCharacters: 1 << 20,
};

/** A row the importer drops, with the reason counted in the report. */
export class SkipRow {
  constructor(readonly reason: string) {}
}

/** The file's bytes, decompressed when it is gzip; a damaged or cut stream throws. */
async function* csvBytes(path: string, limits: CsvLimits): AsyncGenerator<Buffer> {
  const file = await openUserFile(path, {
    what: 'CSV file',
    maxBytes: limits.maxFileBytes,
  });
  try {
    if (!path.endsWith('.gz')) {
      yield* file.chunks();
      return;
    }
    const end: { value: GzipEnd } = { value: 'complete' };
    yield* gunzipAtMost(
      file.chunks(),
      {
        maxBytes: limits.maxDecompressedBytes,
        tooLarge: () =>
          new PaperbotError(
            'IMPORT_READ_FAILED',
            `${path} decompresses to more than ${limits.maxDecompressedBytes} bytes`,
            { details: { path, limit_bytes: limits.maxDecompressedBytes } },
          ),
      },
      end,
    );
    if (end.value !== 'complete') {
      throw new PaperbotError(
        'IMPORT_READ_FAILED',
        end.value === 'truncated'
          ? `${path} is a gzip stream cut short (the file is incomplete)`
          : `${path} is a damaged gzip stream (it does not decompress)`,
        { details: { path } },
      );
    }
  } finally {
    await file.close();
  }
}

/** Yields the mapped rows of `path`; `onHeaderSkipped` counts header lines skipped. */
export async function* readCsvRows(
  path: string,
  layout: ColumnLayout,
  onHeaderSkipped: () => void = () => undefined,
  limits: CsvLimits = DEFAULT_CSV_LIMITS,
): AsyncGenerator<CsvRow> {
  const input = Readable.from(csvBytes(path, limits), { objectMode: false });
  const parser = parse({
    bom: true,
    info: true,
    skip_empty_lines: true,
    trim: true,
    relax_column_count: true,
    max_record_size: limits.maxRowCharacters,
  });
  input.on('error', (error) => parser.destroy(error));
  const stream = input.pipe(parser);
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
    const code = (cause as { code?: unknown }).code;
    if (code === 'CSV_MAX_RECORD_SIZE') {
      throw new PaperbotError(
        'IMPORT_READ_FAILED',
        `${path}: a row is longer than ${limits.maxRowCharacters} characters (line ${String((cause as { lines?: unknown }).lines ?? '?')})`,
        { cause, details: { path, limit_characters: limits.maxRowCharacters } },
      );
    }
    throw new PaperbotError('IMPORT_READ_FAILED', `${path}: ${(cause as Error).message}`, {
      cause,
    });
  } finally {
    input.destroy();
    parser.destroy();
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
