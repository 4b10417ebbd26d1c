/**
 * The manifest of a recorded session (`manifest.json`): what was recorded, from where, over
 * which time range, and how many records of each kind. It is rewritten whole (write to a
 * temporary file, then rename) while recording and at close, so a reader never sees half a
 * manifest. Counts in the manifest of an interrupted session lag the events file; the events
 * file is the truth and `recountRecording` rebuilds them from it.
 */
import { mkdir, open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { isoTimestamp } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import { describeSchemaIssues, schemaIssuesOf } from '../../core/schema-issues.ts';
import { readUserFile } from '../../core/user-file.ts';
import { Market } from '../../protocol/index.ts';
import type { RecordedEvent, RecordKind } from './records.ts';

export const MANIFEST_FILE = 'manifest.json';
export const EVENTS_FILE = 'events.jsonl';
export const EVENTS_FILE_GZIP = 'events.jsonl.gz';
export const CACHE_FILE = 'events.cache';
export const MANIFEST_FORMAT = 'paperbot-recording';
/**
 * 2: the manifest of a closed recording also holds `files`, what its events file must be (record
 * count, byte length, SHA-256, first and last time), so a reader can tell a damaged file from a
 * whole one. Version 1 manifests (no `files`) still read; their files are checked line by line
 * only. Records themselves stay at version 1 (`FORMAT_VERSION`, records.ts).
 */
export const MANIFEST_VERSION = 2;
export const MANIFEST_VERSIONS = [1, 2] as const;
/** Far above any manifest (a few KiB per market); a larger file is not one. */
const MANIFEST_MAX_BYTES = 16 << 20;

export const Compression = z.enum(['none', 'gzip']);
export type Compression = z.infer<typeof Compression>;

const Count = z.int().min(0);

export const KindCounts = z.strictObject({
  ticker: Count,
  book: Count,
  trade: Count,
  private: Count,
  gap: Count,
});
export type KindCounts = z.infer<typeof KindCounts>;

/** What one file of a closed recording is: checked before and while it is read. */
export const FileIntegrity = z.strictObject({
  records: Count,
  /** Bytes on disk (compressed bytes for gzip). */
  bytes: Count,
  /** SHA-256 (hex) of the bytes on disk. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  first_t: z.int().nullable(),
  last_t: z.int().nullable(),
});
export type FileIntegrity = z.infer<typeof FileIntegrity>;

export const RecordingManifest = z.strictObject({
  format: z.literal(MANIFEST_FORMAT),
  version: z.union([z.literal(1), z.literal(MANIFEST_VERSION)]),
  /** When recording started (RFC 3339 UTC, from the recorder's clock). */
  created_at: z.string(),
  /** False while recording and after an interruption; true once closed cleanly. */
  complete: z.boolean(),
  events_file: z.enum([EVENTS_FILE, EVENTS_FILE_GZIP]),
  compression: Compression,
  source: z.strictObject({
    kind: z.enum(['emulator', 'live', 'imported']),
    /** Scheme, host, port and path only: credentials, query and fragment are removed. */
    base_url: z.string(),
  }),
  settings: z.strictObject({
    book_depth: z.int().min(1),
    book_interval_ms: z.int().min(1),
    private_events: z.boolean(),
    /**
     * An import from candles of this interval (each candle four trades, its open first at the
     * candle's time): the taker model fills at candle opens only. Absent otherwise.
     */
    candle_interval_ms: z.int().min(1).optional(),
  }),
  /** The markets recorded, as the service described them when recording started. */
  markets: z.array(Market),
  time_range: z.strictObject({
    first_t: z.int().nullable(),
    last_t: z.int().nullable(),
  }),
  counts: z.strictObject({
    total: Count,
    by_kind: KindCounts,
    /** Records that name a market; account-wide private events and gaps appear only above. */
    by_market: z.record(z.string(), KindCounts),
  }),
  /** By file name; written when the recording is closed (absent while recording, and in v1). */
  files: z.record(z.string(), FileIntegrity).optional(),
});
export type RecordingManifest = z.infer<typeof RecordingManifest>;

/**
 * The base URL as it may be stored: a URL can carry a user, a password or a token in its query,
 * and none of that belongs in a recording.
 */
export function sanitizeBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch (cause) {
    throw new PaperbotError('RECORDING_INVALID_SOURCE', 'the source base URL is not a URL', {
      cause,
    });
  }
  return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
}

function zeroCounts(): Record<RecordKind, number> {
  return { ticker: 0, book: 0, trade: 0, private: 0, gap: 0 };
}

export interface CountsSnapshot {
  readonly firstT: number | null;
  readonly lastT: number | null;
  readonly total: number;
  readonly byKind: KindCounts;
  readonly byMarket: Readonly<Record<string, KindCounts>>;
}

/** Counts records as they are written or read, for the manifest. */
export class RecordCounter {
  private firstT: number | null = null;
  private lastT: number | null = null;
  private total = 0;
  private readonly byKind = zeroCounts();
  private readonly byMarket = new Map<string, Record<RecordKind, number>>();

  add(record: RecordedEvent): void {
    if (this.firstT === null) this.firstT = record.t;
    this.lastT = record.t;
    this.total++;
    this.byKind[record.k]++;
    if (record.m !== undefined) {
      let counts = this.byMarket.get(record.m);
      if (!counts) {
        counts = zeroCounts();
        this.byMarket.set(record.m, counts);
      }
      counts[record.k]++;
    }
  }

  snapshot(): CountsSnapshot {
    // Sorted market keys: the same records always give the same manifest bytes.
    const byMarket: Record<string, KindCounts> = {};
    for (const market of [...this.byMarket.keys()].sort()) {
      byMarket[market] = { ...this.byMarket.get(market)! };
    }
    return {
      firstT: this.firstT,
      lastT: this.lastT,
      total: this.total,
      byKind: { ...this.byKind },
      byMarket,
    };
  }
}

export function withCounts(
  manifest: RecordingManifest,
  counts: CountsSnapshot,
  complete: boolean,
): RecordingManifest {
  return {
    ...manifest,
    complete,
    time_range: { first_t: counts.firstT, last_t: counts.lastT },
    counts: {
      total: counts.total,
      by_kind: counts.byKind,
      by_market: counts.byMarket,
    },
  };
}

/** The manifest of a closed recording: its counts, and what its events file is. */
export function withIntegrity(
  manifest: RecordingManifest,
  counts: CountsSnapshot,
  written: { readonly bytes: number; readonly sha256: string },
): RecordingManifest {
  return {
    ...withCounts(manifest, counts, true),
    files: {
      [manifest.events_file]: {
        records: counts.total,
        bytes: written.bytes,
        sha256: written.sha256,
        first_t: counts.firstT,
        last_t: counts.lastT,
      },
    },
  };
}

export interface NewManifestOptions {
  readonly createdAtMs: number;
  readonly compression: Compression;
  readonly source: {
    readonly kind: 'emulator' | 'live' | 'imported';
    readonly baseUrl: string;
  };
  readonly bookDepth: number;
  readonly bookIntervalMs: number;
  readonly privateEvents: boolean;
  readonly markets: readonly Market[];
  /** An import from candles: their interval (`settings.candle_interval_ms`). */
  readonly candleIntervalMs?: number;
}

export function newManifest(options: NewManifestOptions): RecordingManifest {
  const empty = new RecordCounter().snapshot();
  return withCounts(
    {
      format: MANIFEST_FORMAT,
      version: MANIFEST_VERSION,
      created_at: isoTimestamp(options.createdAtMs),
      complete: false,
      events_file: options.compression === 'gzip' ? EVENTS_FILE_GZIP : EVENTS_FILE,
      compression: options.compression,
      source: {
        kind: options.source.kind,
        base_url: sanitizeBaseUrl(options.source.baseUrl),
      },
      settings: {
        book_depth: options.bookDepth,
        book_interval_ms: options.bookIntervalMs,
        private_events: options.privateEvents,
        ...(options.candleIntervalMs === undefined
          ? {}
          : { candle_interval_ms: options.candleIntervalMs }),
      },
      markets: [...options.markets],
      time_range: { first_t: null, last_t: null },
      counts: { total: 0, by_kind: empty.byKind, by_market: {} },
    },
    empty,
    false,
  );
}

export function serializeManifest(manifest: RecordingManifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** Writes the manifest whole: temporary file, fsync, rename. */
export async function writeManifest(directory: string, manifest: RecordingManifest): Promise<void> {
  await mkdir(directory, { recursive: true });
  const target = join(directory, MANIFEST_FILE);
  const temporary = `${target}.tmp`;
  const handle = await open(temporary, 'w', 0o644);
  try {
    await handle.writeFile(serializeManifest(manifest));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, target);
}

/** Reads and checks `manifest.json`: every problem reported at once, with its path. */
export async function readManifest(directory: string): Promise<RecordingManifest> {
  const path = join(directory, MANIFEST_FILE);
  let text: string;
  try {
    text = (
      await readUserFile(path, {
        what: 'recording manifest',
        maxBytes: MANIFEST_MAX_BYTES,
        codes: { notFound: 'RECORDING_NOT_FOUND' },
      })
    ).toString('utf8');
  } catch (cause) {
    if (cause instanceof PaperbotError && cause.code !== 'RECORDING_NOT_FOUND') throw cause;
    throw new PaperbotError('RECORDING_NOT_FOUND', `no recording manifest at ${path}`, { cause });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new PaperbotError('RECORDING_INVALID_MANIFEST', `${path} is not JSON`, { cause });
  }
  const version = (value as { version?: unknown } | null)?.version;
  if (!(MANIFEST_VERSIONS as readonly unknown[]).includes(version)) {
    throw new PaperbotError(
      'RECORDING_UNSUPPORTED_VERSION',
      `${path}: recording version ${JSON.stringify(version)} is not supported (this reader reads versions ${MANIFEST_VERSIONS.join(' and ')})`,
      { details: { version } },
    );
  }
  const result = RecordingManifest.safeParse(value);
  if (!result.success) {
    const issues = schemaIssuesOf(result.error);
    throw new PaperbotError(
      'RECORDING_INVALID_MANIFEST',
      `${path}: ${describeSchemaIssues(issues).join('; ')}`,
      { details: { issues } },
    );
  }
  return result.data;
}
