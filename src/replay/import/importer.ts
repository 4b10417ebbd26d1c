/**
 * `paperbot import`: CSV files people already hold into one recorded session (manifest.json and
 * events.jsonl[.gz]), through the format's own writer and counter. Each input streams in time
 * order (ordered-rows.ts); the inputs are merged by time, ties in the order the inputs were
 * given. The output is deterministic: the manifest's `created_at` is the first record's time
 * and its source names the first input's file name, so the same files give the same bytes.
 */
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isoTimestamp } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import {
  type Compression,
  type CountsSnapshot,
  encodeRecordLine,
  EVENTS_FILE,
  EVENTS_FILE_GZIP,
  EventLogWriter,
  newManifest,
  RecordCounter,
  type RecordKind,
  withIntegrity,
  writeManifest,
} from '../format/index.ts';
import { type BookInput, importBook } from './book.ts';
import type { CsvLimits } from './csv-rows.ts';
import { type CandleInput, importCandles } from './candles.ts';
import { GridCheck, marketOf, type MarketSpec } from './market-spec.ts';
import { type ImportedRecord, InputTally } from './rows.ts';
import { importTrades, type TradeInput } from './trades.ts';

export type ImportInput =
  | ({ readonly kind: 'trades' } & TradeInput)
  | ({ readonly kind: 'candles' } & CandleInput)
  | ({ readonly kind: 'book' } & BookInput);

export interface ImportOptions {
  readonly out: string;
  readonly market: MarketSpec;
  readonly inputs: readonly ImportInput[];
  readonly compression: Compression;
  /** Caps on every input file (defaults: `DEFAULT_CSV_LIMITS`); tests lower them. */
  readonly csvLimits?: Partial<CsvLimits>;
}

export interface ImportReport {
  readonly out: string;
  readonly inputs: readonly InputTally[];
  readonly records: number;
  readonly byKind: Readonly<Record<RecordKind, number>>;
  readonly firstT: number | null;
  readonly lastT: number | null;
}

const FLUSH_EVERY_LINES = 10_000;

export async function importRecording(options: ImportOptions): Promise<ImportReport> {
  if (options.inputs.length === 0) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      'nothing to import: give --trades, --candles or --book',
    );
  }
  await refuseNonEmpty(options.out);
  const grid = new GridCheck(options.market);
  const tallies = options.inputs.map((input) => new InputTally(input.path, input.kind));
  const sources = options.inputs.map((given, index) => {
    const tally = tallies[index]!;
    const input =
      options.csvLimits === undefined ? given : { ...given, csvLimits: options.csvLimits };
    switch (input.kind) {
      case 'trades':
        return importTrades(input, options.market, grid, tally);
      case 'candles':
        return importCandles(input, options.market, grid, tally);
      case 'book':
        return importBook(input, options.market, grid, tally);
    }
  });
  // Written beside the target and renamed into place when whole: a refused file leaves nothing.
  const partial = `${options.out}.partial-import`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  try {
    const counts = await writeSession(partial, options, sources, tallies);
    // An input with no rows is a wrong file, not an empty market: an empty recording would
    // replay to an empty report with exit 0.
    const empty = tallies.filter((tally) => tally.rowsRead === 0);
    if (empty.length > 0) {
      throw new PaperbotError(
        'IMPORT_EMPTY',
        `${empty.map((tally) => tally.path).join(', ')}: no data rows${empty.some((tally) => tally.headerLines > 0) ? ' (only a header)' : ''}; nothing to import`,
        { details: { paths: empty.map((tally) => tally.path) } },
      );
    }
    await rmdir(options.out).catch(() => undefined);
    await rename(partial, options.out);
    return {
      out: options.out,
      inputs: tallies,
      records: counts.total,
      byKind: counts.byKind,
      firstT: counts.firstT,
      lastT: counts.lastT,
    };
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw error;
  }
}

async function writeSession(
  directory: string,
  options: ImportOptions,
  sources: ReadonlyArray<AsyncGenerator<ImportedRecord>>,
  tallies: readonly InputTally[],
): Promise<CountsSnapshot> {
  const eventsFile = options.compression === 'gzip' ? EVENTS_FILE_GZIP : EVENTS_FILE;
  const writer = await EventLogWriter.create(join(directory, eventsFile), options.compression);
  const counter = new RecordCounter();
  try {
    let sinceFlush = 0;
    for await (const { source, item } of mergeByTime(sources)) {
      writer.append(encodeRecordLine(item.record));
      counter.add(item.record);
      tallies[source]!.recordsWritten++;
      if (++sinceFlush >= FLUSH_EVERY_LINES) {
        sinceFlush = 0;
        await writer.flush();
      }
    }
  } finally {
    await writer.close();
  }
  const counts = counter.snapshot();
  const depth = options.inputs.find((input) => input.kind === 'book');
  const candles = options.inputs.find((input) => input.kind === 'candles');
  const manifest = newManifest({
    createdAtMs: counts.firstT ?? 0,
    compression: options.compression,
    source: {
      kind: 'imported',
      baseUrl: `file:///${encodeURIComponent(basename(options.inputs[0]!.path))}`,
    },
    bookDepth: depth?.kind === 'book' ? depth.depth : 1,
    bookIntervalMs: depth?.kind === 'book' ? depth.intervalMs : 1000,
    privateEvents: false,
    markets: [marketOf(options.market, counts.firstT ?? 0)],
    ...(candles?.kind === 'candles' ? { candleIntervalMs: candles.intervalMs } : {}),
  });
  await writeManifest(directory, withIntegrity(manifest, counts, writer.written()));
  return counts;
}

async function refuseNonEmpty(directory: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(directory);
  } catch {
    return; // missing: created later
  }
  if (entries.length > 0) {
    throw new PaperbotError('INVALID_ARGUMENT', `--out ${directory} exists and is not empty`);
  }
}

/** K-way merge by `t`; on equal times the earlier source first, each source in its own order. */
async function* mergeByTime(
  sources: ReadonlyArray<AsyncGenerator<ImportedRecord>>,
): AsyncGenerator<{ source: number; item: ImportedRecord }> {
  try {
    const heads: Array<ImportedRecord | null> = [];
    for (const source of sources) {
      const next = await source.next();
      heads.push(next.done === true ? null : next.value);
    }
    yield* mergeHeads(sources, heads);
  } finally {
    // An error or an early stop closes every input's file.
    await Promise.all(sources.map((source) => source.return(undefined)));
  }
}

async function* mergeHeads(
  sources: ReadonlyArray<AsyncGenerator<ImportedRecord>>,
  heads: Array<ImportedRecord | null>,
): AsyncGenerator<{ source: number; item: ImportedRecord }> {
  for (;;) {
    let best = -1;
    for (let index = 0; index < heads.length; index++) {
      const head = heads[index];
      if (head && (best < 0 || head.record.t < heads[best]!.record.t)) best = index;
    }
    if (best < 0) return;
    yield { source: best, item: heads[best]! };
    const next = await sources[best]!.next();
    heads[best] = next.done === true ? null : next.value;
  }
}

/** The report as text: per input, rows read, skipped by reason, records written. */
export function formatImportReport(report: ImportReport): string {
  const lines: string[] = [];
  for (const input of report.inputs) {
    lines.push(
      `${input.kind} ${input.path}: ${input.rowsRead} rows read, ${input.skippedRows} skipped, ${input.recordsWritten} records written${input.headerLines > 0 ? ' (header line skipped)' : ''}`,
    );
    for (const [reason, entry] of input.skipped) {
      lines.push(`  skipped ${entry.count}: ${reason} (first on line ${entry.firstLine})`);
    }
  }
  const kinds = (Object.entries(report.byKind) as Array<[RecordKind, number]>)
    .filter(([, count]) => count > 0)
    .map(([kind, count]) => `${count} ${kind}`)
    .join(', ');
  lines.push(
    `wrote ${report.records} records (${kinds || 'none'}) to ${report.out}${report.firstT === null ? '' : `, ${isoTimestamp(report.firstT)} to ${isoTimestamp(report.lastT!)}`}`,
  );
  return `${lines.join('\n')}\n`;
}
