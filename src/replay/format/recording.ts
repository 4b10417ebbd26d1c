/**
 * A recorded session on disk (`manifest.json` + `events.jsonl[.gz]` + optional `events.cache`)
 * and the reader replay uses: batches of records in file order, from the cache when it matches
 * the events file, otherwise from the JSONL (building the cache on the way, by default).
 */
import { stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { PaperbotError } from '../../core/errors.ts';
import { type CacheFile, CacheWriter, cacheMatches, openCacheFile } from './cache.ts';
import {
  DEFAULT_VERIFIED_RECORDS,
  EventLogReader,
  type ReadOptions,
  type ReadSummary,
} from './event-log-reader.ts';
import {
  CACHE_FILE,
  RecordCounter,
  type RecordingManifest,
  readManifest,
  withCounts,
  withIntegrity,
  writeManifest,
} from './manifest.ts';
import { type DamagePolicy, type DamageReport, isDamaged, RecordingCheck } from './integrity.ts';
import { type RecordedEvent, type RecordKind, verifyRecord } from './records.ts';

export interface Recording {
  readonly directory: string;
  readonly manifest: RecordingManifest;
  readonly eventsPath: string;
  readonly cachePath: string;
}

export async function openRecording(directory: string): Promise<Recording> {
  const manifest = await readManifest(directory);
  const eventsPath = join(directory, manifest.events_file);
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(eventsPath);
  } catch (cause) {
    throw new PaperbotError('RECORDING_NOT_FOUND', `${eventsPath} is missing`, {
      cause,
    });
  }
  // Refused at once: a FIFO or a device would block or never end.
  if (!info.isFile()) {
    throw new PaperbotError(
      'USER_FILE_NOT_REGULAR',
      `events file ${eventsPath} is not a regular file`,
      {
        details: { path: eventsPath },
      },
    );
  }
  return {
    directory,
    manifest,
    eventsPath,
    cachePath: join(directory, CACHE_FILE),
  };
}

/**
 * `auto`: read the cache when it matches, else read the events file and build the cache;
 * `off`: read the events file, never touch the cache;
 * `rebuild`: read the events file and build the cache even when one matches.
 */
export type CacheMode = 'auto' | 'off' | 'rebuild';

export interface RecordingReadOptions extends ReadOptions {
  readonly cache?: CacheMode;
  /** Rehash the events file even when size and mtime match the cache's key. */
  readonly verifyCacheHash?: boolean;
  /** Only records of these markets (records without a market are dropped too). */
  readonly markets?: readonly string[];
  readonly kinds?: readonly RecordKind[];
  /**
   * Records of these kinds read from the cache may come with their `d` decoded only when first
   * read (`DeferredRecord`, `record-templates.ts`): a replay skips building what nobody looks at.
   * Records read from the events file are always whole.
   */
  readonly deferredKinds?: readonly RecordKind[];
  /**
   * `refuse` (default): a recording that is not what its manifest claims stops the read with
   * `RECORDING_DAMAGED`; `skip`: damaged records are dropped and reported in `summary.damage`.
   */
  readonly damage?: DamagePolicy;
}

/**
 * `read`: records came from the cache; `built`: from the events file, and a cache was written;
 * `skipped`: from the events file, no cache written (mode `off`, or the read stopped early, or
 * the file changed while being read).
 */
export type CacheUse = 'read' | 'built' | 'skipped';

export interface RecordingSummary extends ReadSummary {
  readonly cache: CacheUse;
  /** Records handed out after the market and kind filters. */
  readonly delivered: number;
  /** What the checks against the manifest found (problems, skipped records, notes). */
  readonly damage: DamageReport;
}

export class RecordingReader {
  private result: RecordingSummary | null = null;

  constructor(
    readonly recording: Recording,
    private readonly options: RecordingReadOptions = {},
  ) {}

  get summary(): RecordingSummary | null {
    return this.result;
  }

  async *batches(): AsyncGenerator<readonly RecordedEvent[]> {
    const markets = this.options.markets ? new Set(this.options.markets) : null;
    const kinds = this.options.kinds ? new Set<string>(this.options.kinds) : null;
    let delivered = 0;
    const filter = (batch: RecordedEvent[]): readonly RecordedEvent[] => {
      if (!markets && !kinds) return batch;
      return batch.filter(
        (record) =>
          (!kinds || kinds.has(record.k)) &&
          (!markets || (record.m !== undefined && markets.has(record.m))),
      );
    };
    const mode = this.options.cache ?? 'auto';
    const verify = this.options.verify ?? DEFAULT_VERIFIED_RECORDS;
    const verifyLimit = verify === true ? Number.POSITIVE_INFINITY : verify === false ? 0 : verify;
    const check = new RecordingCheck(
      this.recording.directory,
      this.recording.manifest,
      this.recording.eventsPath,
      this.options.damage ?? 'refuse',
    );
    await check.checkSize();
    const cacheFile = mode === 'auto' ? await this.matchingCache() : null;
    if (cacheFile) {
      const header = cacheFile.header;
      // The cache's header says what the events file held when it was built: checked against
      // the manifest before a record is replayed.
      const summary = {
        records: header.records,
        fileBytes: header.source.size,
        tornTail: header.torn_tail,
        decreasingTimes: header.decreasing_times,
      };
      try {
        check.finish(summary, { sha256: header.source.sha256, size: header.source.size });
      } catch (error) {
        await cacheFile.close();
        throw error;
      }
      // The read that built the cache checked its leading records already: the cache holds
      // the same records, so only those past that point are left to check.
      let index = header.verified_records;
      let start = 0;
      const deferred = this.options.deferredKinds;
      for await (const batch of cacheFile.batches(
        deferred === undefined ? {} : { deferredKinds: deferred },
      )) {
        for (let i = index - start; i < batch.length && index < verifyLimit; i++, index++) {
          verifyRecord(batch[i], index + 1);
        }
        start += batch.length;
        const out = filter(batch);
        delivered += out.length;
        if (out.length > 0) yield out;
      }
      this.result = { ...summary, cache: 'read', delivered, damage: check.report() };
      return;
    }

    const reader = new EventLogReader(
      this.recording.eventsPath,
      this.recording.manifest.compression,
      { ...this.options, check: check.checkRecord },
    );
    // The cache is an optimization: a folder where it cannot be written (read-only data) is
    // replayed from the events file all the same.
    const writer =
      mode === 'off' ? null : await CacheWriter.create(this.recording.cachePath).catch(() => null);
    if (writer || check.hasIntegrity) reader.enableHashing();
    let finished = false;
    try {
      for await (const batch of reader.batches()) {
        writer?.add(batch);
        const out = filter(batch);
        delivered += out.length;
        if (out.length > 0) yield out;
      }
      check.finish(reader.summary!, reader.digest());
      finished = true;
    } finally {
      if (!finished) await writer?.abort();
    }
    const summary = reader.summary!;
    const damage = check.report();
    let cache: CacheUse = 'skipped';
    // A cache holds only what a read found sound: a damaged recording is read from its file.
    if (writer && isDamaged(damage)) {
      await writer.abort();
    } else if (writer) {
      const digest = reader.digest();
      const info = await stat(this.recording.eventsPath);
      if (digest && info.size === digest.size) {
        const source = {
          file: basename(this.recording.eventsPath),
          size: digest.size,
          mtime_ms: info.mtimeMs,
          sha256: digest.sha256,
        };
        const build = { ...summary, verifiedRecords: Math.min(verifyLimit, summary.records) };
        cache = await writer.finish(source, build).then(
          (): CacheUse => 'built',
          (): CacheUse => 'skipped',
        );
      } else {
        await writer.abort();
      }
    }
    this.result = { ...summary, cache, delivered, damage };
  }

  async *records(): AsyncGenerator<RecordedEvent> {
    for await (const batch of this.batches()) yield* batch;
  }

  private async matchingCache(): Promise<CacheFile | null> {
    const file = await openCacheFile(this.recording.cachePath);
    if (!file) return null;
    const matches = await cacheMatches(file.header, this.recording.eventsPath, {
      verifyHash: this.options.verifyCacheHash ?? false,
    }).catch(async (error: unknown) => {
      await file.close();
      throw error;
    });
    if (matches) return file;
    await file.close();
    return null;
  }
}

export function readRecording(
  recording: Recording,
  options: RecordingReadOptions = {},
): RecordingReader {
  return new RecordingReader(recording, options);
}

/**
 * Recounts a session from its events file (after an interruption the manifest's counts lag) and
 * optionally rewrites the manifest; a closed recording's `files` entry (bytes, SHA-256) is made
 * anew from the file too. `complete` is left as it was: a recount does not make an interrupted
 * recording complete.
 */
export async function recountRecording(
  directory: string,
  options: { readonly write?: boolean } = {},
): Promise<{
  readonly manifest: RecordingManifest;
  readonly summary: ReadSummary;
}> {
  const recording = await openRecording(directory);
  const reader = new EventLogReader(recording.eventsPath, recording.manifest.compression, {
    verify: false,
  });
  reader.enableHashing();
  const counter = new RecordCounter();
  for await (const batch of reader.batches()) for (const record of batch) counter.add(record);
  // A closed recording's manifest also says what its file is: the recount makes it say so again.
  const digest = reader.digest();
  const manifest =
    recording.manifest.complete && digest !== null
      ? withIntegrity(recording.manifest, counter.snapshot(), {
          bytes: digest.size,
          sha256: digest.sha256,
        })
      : withCounts(recording.manifest, counter.snapshot(), recording.manifest.complete);
  if (options.write) await writeManifest(directory, manifest);
  return { manifest, summary: reader.summary! };
}
