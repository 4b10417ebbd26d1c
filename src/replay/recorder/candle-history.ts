/**
 * Reads a source's candle history when a recording starts and writes it beside the manifest
 * (`candles.json`), so a replay can warm strategies up with the candles a live start would have
 * read. Best effort: a market or interval the source cannot serve is left out and reported.
 */
import { type Clock, isoTimestamp } from '../../core/clock.ts';
import type { Candle, CandleInterval } from '../../protocol/index.ts';
import { MAX_CANDLE_HISTORY } from '../../runtime/strategy/index.ts';
import { closedCandleHistory } from '../../runtime/streams/candles.ts';
import {
  CANDLE_HISTORY_FORMAT,
  type CandleHistory,
  writeCandleHistory,
} from '../format/candle-history.ts';
import type { RecorderSource } from './recorder.ts';

/** What `paperbot record` keeps by default: enough for common indicator lengths. */
export const DEFAULT_HISTORY_INTERVALS: readonly CandleInterval[] = ['1m', '5m', '15m', '1h'];
export const DEFAULT_HISTORY_LIMIT = 500;

export interface CandleHistoryRecording {
  readonly source: RecorderSource;
  readonly directory: string;
  readonly clock: Clock;
  readonly marketIds: readonly string[];
  readonly intervals: readonly CandleInterval[];
  /** Candles per market and interval, 1 to 1000 (the interface's limit). */
  readonly limit: number;
  readonly onError?: (error: unknown, context: string) => void;
}

/** Writes `candles.json`; resolves to what was written (null when the source has no candles). */
export async function recordCandleHistory(
  options: CandleHistoryRecording,
): Promise<CandleHistory | null> {
  const { source, clock } = options;
  if (source.listCandles === undefined || options.intervals.length === 0) return null;
  const now = clock.now();
  const candles: Record<string, Partial<Record<CandleInterval, Candle[]>>> = {};
  for (const marketId of options.marketIds) {
    const byInterval: Partial<Record<CandleInterval, Candle[]>> = {};
    for (const interval of options.intervals) {
      try {
        // One more than kept: the newest candle on the page may be the bucket still open.
        const limit = Math.min(options.limit + 1, MAX_CANDLE_HISTORY);
        const page = await source.listCandles(marketId, interval, limit);
        byInterval[interval] = closedCandleHistory(page, interval, now, options.limit);
      } catch (error) {
        options.onError?.(error, `candle history ${marketId} ${interval}`);
      }
    }
    candles[marketId] = byInterval;
  }
  const history: CandleHistory = {
    format: CANDLE_HISTORY_FORMAT,
    version: 1,
    recorded_at: isoTimestamp(now),
    candles,
  };
  await writeCandleHistory(options.directory, history);
  return history;
}
