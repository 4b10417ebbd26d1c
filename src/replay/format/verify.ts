/**
 * `paperbot verify DIR`: checks a recording without replaying it. Every record is read and
 * checked as a replay would (time order, values) and also against the record schema; then the
 * count, byte length and SHA-256 against the manifest, and whether `events.cache` is the cache
 * of this events file. Nothing is written: the cache is neither built nor touched.
 */
import { PaperbotError } from '../../core/errors.ts';
import { cacheMatches, readCacheHeader } from './cache.ts';
import type { DamageReport } from './integrity.ts';
import { openRecording, readRecording } from './recording.ts';

/** `none`: no cache file; `matches`: its key is this events file; `stale`: rebuilt on next use. */
export type CacheState = 'none' | 'matches' | 'stale';

export interface VerifyResult {
  readonly directory: string;
  readonly manifestVersion: number;
  readonly complete: boolean;
  readonly records: number;
  readonly firstT: number | null;
  readonly lastT: number | null;
  readonly damage: DamageReport;
  readonly cache: CacheState;
}

export async function verifyRecording(directory: string): Promise<VerifyResult> {
  const recording = await openRecording(directory);
  const reader = readRecording(recording, { cache: 'off', verify: true, damage: 'skip' });
  let records = 0;
  let firstT: number | null = null;
  let lastT: number | null = null;
  let stopped: string | null = null;
  try {
    for await (const batch of reader.batches()) {
      for (const record of batch) {
        firstT ??= record.t;
        lastT = record.t;
      }
      records += batch.length;
    }
  } catch (error) {
    // A line that is not a record at all stops the read: named, with what was read before it.
    if (!(error instanceof PaperbotError)) throw error;
    stopped = `reading stopped: ${error.message}`;
  }
  const summary = reader.summary;
  const damage: DamageReport =
    summary !== null
      ? summary.damage
      : { recording: directory, problems: [stopped ?? 'not read'], skipped: [], notes: [] };
  const header = await readCacheHeader(recording.cachePath);
  const cache: CacheState =
    header === null
      ? 'none'
      : (await cacheMatches(header, recording.eventsPath, { verifyHash: true }))
        ? 'matches'
        : 'stale';
  return {
    directory,
    manifestVersion: recording.manifest.version,
    complete: recording.manifest.complete,
    records,
    firstT,
    lastT,
    damage,
    cache,
  };
}
