/**
 * The recorded sessions a backtest replays: opened with the format's reader, merged by time,
 * optionally limited to some markets, and described by what the manifests say (markets, book
 * depth, record counts).
 */
import { PaperbotError } from '../../core/errors.ts';
import type { Candle, CandleInterval, Market } from '../../protocol/index.ts';
import {
  type CacheMode,
  type CandleHistory,
  type DamagePolicy,
  type DamageReport,
  mergeByTime,
  openRecording,
  type Recording,
  readCandleHistory,
  readRecording,
  type RecordingReader,
} from '../format/index.ts';
import type { RecordedEvent } from '../format/records.ts';

export interface ReplaySource {
  /** The session folders, in the order given. */
  readonly directories: readonly string[];
  /** Markets to replay: the sessions' markets (first description wins), filtered. */
  readonly markets: readonly Market[];
  /**
   * The smallest recorded book depth: a snapshot side with fewer levels than this was shown
   * whole; with more sessions of different depths, the smaller keeps queue estimates cautious.
   */
  readonly bookDepth: number;
  /** Records the manifests count for the replayed markets (an interrupted session's may lag). */
  readonly expectedRecords: number;
  /** Whether any session recorded private events (a live session's own account). */
  readonly hasPrivateEvents: boolean;
  readonly recordings: readonly Recording[];
  /** The sessions' candle histories (`candles.json`) merged; null when none has one. */
  readonly candleHistory: CandleHistory | null;
  /** Records in time order, in batches. */
  batches(options?: BatchOptions): AsyncIterable<readonly RecordedEvent[]>;
  /**
   * What the last read's checks found in each session against its manifest (problems and
   * records skipped under `damage: 'skip'`, and notes); empty before a read has ended.
   */
  damage(): readonly DamageReport[];
}

export interface BatchOptions {
  /**
   * Book and trade records may come with their `d` decoded only when first read (from a
   * session's binary cache; `DeferredRecord` in `format/record-templates.ts`). The replay venue
   * reads a snapshot or a trade only when something needs it, so most are never built.
   */
  readonly deferred?: boolean;
}

/** The kinds whose bodies a deferred read leaves encoded until read. */
const DEFERRED_KINDS = ['book', 'trade'] as const;

export interface OpenSourceOptions {
  /** Replay only these markets (null: all). */
  readonly markets?: readonly string[] | null;
  readonly cache?: CacheMode;
  /**
   * `refuse` (default): a session that is not what its manifest claims stops the replay
   * (`RECORDING_DAMAGED`); `skip` (`--allow-damaged`): its damaged records are skipped and
   * reported.
   */
  readonly damage?: DamagePolicy;
}

export async function openReplaySource(
  directories: readonly string[],
  options: OpenSourceOptions = {},
): Promise<ReplaySource> {
  if (directories.length === 0) {
    throw new PaperbotError('BACKTEST_NO_DATA', 'no recorded session to replay');
  }
  const recordings = await Promise.all(directories.map((directory) => openRecording(directory)));
  const histories = await Promise.all(directories.map((directory) => readCandleHistory(directory)));
  const markets: Market[] = [];
  const seen = new Set<string>();
  for (const recording of recordings) {
    for (const market of recording.manifest.markets) {
      if (seen.has(market.market_id)) continue;
      seen.add(market.market_id);
      markets.push(market);
    }
  }
  const wanted = options.markets ?? null;
  if (wanted !== null) {
    const missing = wanted.filter((id) => !seen.has(id));
    if (missing.length > 0) {
      throw new PaperbotError(
        'BACKTEST_UNKNOWN_MARKET',
        `no recorded session has ${missing.join(', ')} (recorded: ${[...seen].join(', ') || 'none'})`,
        { details: { missing, recorded: [...seen] } },
      );
    }
  }
  const replayed =
    wanted === null ? markets : markets.filter((market) => wanted.includes(market.market_id));
  const replayedIds = new Set(replayed.map((market) => market.market_id));
  let expectedRecords = 0;
  for (const recording of recordings) {
    const counts = recording.manifest.counts;
    if (wanted === null) {
      expectedRecords += counts.total;
      continue;
    }
    for (const [marketId, byKind] of Object.entries(counts.by_market)) {
      if (!replayedIds.has(marketId)) continue;
      expectedRecords += byKind.ticker + byKind.book + byKind.trade + byKind.private + byKind.gap;
    }
  }
  const bookDepth = Math.min(
    ...recordings.map((recording) => recording.manifest.settings.book_depth),
  );
  const readOptions = {
    ...(wanted === null ? {} : { markets: wanted }),
    ...(options.cache === undefined ? {} : { cache: options.cache }),
    ...(options.damage === undefined ? {} : { damage: options.damage }),
  };
  let readers: RecordingReader[] = [];
  return {
    directories: [...directories],
    markets: replayed,
    bookDepth,
    expectedRecords,
    hasPrivateEvents: recordings.some((recording) => recording.manifest.settings.private_events),
    recordings,
    candleHistory: mergeCandleHistories(histories),
    batches: (batchOptions = {}) => {
      readers = recordings.map((recording) =>
        readRecording(recording, {
          ...readOptions,
          ...(batchOptions.deferred === true ? { deferredKinds: DEFERRED_KINDS } : {}),
        }),
      );
      return mergeByTime(readers.map((reader) => reader.batches()));
    },
    damage: () => readers.flatMap((reader) => (reader.summary ? [reader.summary.damage] : [])),
  };
}

/** One history holding every session's candles (the replay keeps the closed ones, once each). */
function mergeCandleHistories(histories: readonly (CandleHistory | null)[]): CandleHistory | null {
  const present = histories.filter((history) => history !== null);
  const [first] = present;
  if (first === undefined) return null;
  const candles: Record<string, Partial<Record<CandleInterval, Candle[]>>> = {};
  for (const history of present) {
    for (const [marketId, byInterval] of Object.entries(history.candles)) {
      const merged = (candles[marketId] ??= {});
      for (const [interval, list] of Object.entries(byInterval) as [CandleInterval, Candle[]][]) {
        merged[interval] = [...(merged[interval] ?? []), ...list];
      }
    }
  }
  return { ...first, candles };
}

/** A time window of a replay, `fromMs` included, `toMs` excluded (searches' held-out split). */
export interface ReplayWindow {
  readonly fromMs: number;
  readonly toMs: number;
}

/** The source's records inside `window` only; the expected count stays the manifests' bound. */
export function windowedSource(source: ReplaySource, window: ReplayWindow): ReplaySource {
  return {
    ...source,
    batches: async function* (options?: BatchOptions) {
      for await (const batch of source.batches(options)) {
        const inside = batch.filter(
          (record) => record.t >= window.fromMs && record.t < window.toMs,
        );
        if (inside.length > 0) yield inside;
        if (batch.length > 0 && batch[batch.length - 1]!.t >= window.toMs) return;
      }
    },
  };
}

/** The first and last record times over the sessions' manifests (null when all are empty). */
export function recordedTimeRange(
  source: ReplaySource,
): { readonly firstT: number; readonly lastT: number } | null {
  const firsts = source.recordings.flatMap((recording) =>
    recording.manifest.time_range.first_t === null ? [] : [recording.manifest.time_range.first_t],
  );
  const lasts = source.recordings.flatMap((recording) =>
    recording.manifest.time_range.last_t === null ? [] : [recording.manifest.time_range.last_t],
  );
  if (firsts.length === 0 || lasts.length === 0) return null;
  return { firstT: Math.min(...firsts), lastT: Math.max(...lasts) };
}

/** Records already in memory (benchmarks and tests), as one session. */
export function memorySource(options: {
  readonly markets: readonly Market[];
  readonly bookDepth: number;
  readonly records: readonly RecordedEvent[];
  readonly batchSize?: number;
  readonly name?: string;
  readonly candleHistory?: CandleHistory;
}): ReplaySource {
  const batchSize = options.batchSize ?? 4096;
  const records = options.records;
  return {
    directories: [options.name ?? '(memory)'],
    markets: options.markets,
    bookDepth: options.bookDepth,
    expectedRecords: records.length,
    hasPrivateEvents: records.some((record) => record.k === 'private'),
    recordings: [],
    candleHistory: options.candleHistory ?? null,
    damage: () => [],
    batches: async function* () {
      for (let start = 0; start < records.length; start += batchSize) {
        yield records.slice(start, start + batchSize);
      }
    },
  };
}
