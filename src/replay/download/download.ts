/**
 * `paperbot download`: a service's history as a recording. For each market it reads
 * `GET /v1/markets/{id}/candles` and `/trades` through the client, keeps what falls in
 * [since, until), writes the trades as the recording's events (with its manifest, as the
 * recorder does) and the closed candles as `candles.json` (what backtests and warm-up read).
 *
 * The interface has no paging for these two endpoints: each serves only its newest records (at
 * most 1,000 candles, 500 trades). One request per market and endpoint is therefore the whole
 * download; history older than what the service serves is reported, never invented.
 */
import { type Clock, isoTimestamp } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import type { Candle, CandleInterval, Market, PublicTrade } from '../../protocol/index.ts';
import { closedCandleHistory } from '../../runtime/streams/candles.ts';
import {
  CANDLE_HISTORY_FORMAT,
  type CandleHistory,
  writeCandleHistory,
} from '../format/candle-history.ts';
import type { Compression, RecordingManifest } from '../format/manifest.ts';
import { RecordingSink } from '../format/recorder-sink.ts';
import { MAX_TRADES_PAGE } from '../recorder/recorder.ts';

/** The interface's largest candle page (practice-trading-service.md, the candles row). */
export const MAX_CANDLES_PAGE = 1000;
/** The largest trades page: the recorder's. */
export { MAX_TRADES_PAGE };
/** Markets in one download, at most: each costs two requests. */
export const MAX_DOWNLOAD_MARKETS = 50;

/** What the download reads; the real client's methods, narrowed. */
export interface DownloadSource {
  listMarkets(): Promise<Market[]>;
  listCandles(marketId: string, interval: CandleInterval, limit: number): Promise<Candle[]>;
  listTrades(marketId: string, limit: number): Promise<PublicTrade[]>;
}

export interface DownloadOptions {
  readonly source: DownloadSource;
  readonly sourceInfo: { readonly kind: 'emulator' | 'live'; readonly baseUrl: string };
  readonly directory: string;
  readonly clock: Clock;
  readonly marketIds: readonly string[];
  readonly interval: CandleInterval;
  readonly sinceMs: number;
  /** Exclusive; null: up to now. */
  readonly untilMs: number | null;
  readonly compression?: Compression;
  /** History asked for that the service no longer serves, and other notes. */
  readonly onWarning?: (message: string) => void;
}

export interface MarketDownload {
  readonly marketId: string;
  readonly candles: number;
  readonly trades: number;
  /** The oldest candle and trade the service served (null: none). */
  readonly firstCandleMs: number | null;
  readonly firstTradeMs: number | null;
}

export interface DownloadResult {
  readonly manifest: RecordingManifest;
  readonly history: CandleHistory;
  readonly markets: readonly MarketDownload[];
}

function timeOf(text: string): number {
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : Number.NaN;
}

export async function downloadHistory(options: DownloadOptions): Promise<DownloadResult> {
  const { clock, source } = options;
  const now = clock.now();
  const until = Math.min(options.untilMs ?? now, now);
  if (!(options.sinceMs < until)) {
    throw new PaperbotError('INVALID_ARGUMENT', '--since must be before --until and before now');
  }
  if (options.marketIds.length === 0 || options.marketIds.length > MAX_DOWNLOAD_MARKETS) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `--markets must name 1 to ${MAX_DOWNLOAD_MARKETS} markets`,
    );
  }
  const listed = await source.listMarkets();
  const missing = options.marketIds.filter((id) => !listed.some((m) => m.market_id === id));
  if (missing.length > 0) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `--markets: no market ${missing.join(', ')} (the venue lists ${listed.map((m) => m.market_id).join(', ')})`,
    );
  }
  const markets = options.marketIds.map((id) => listed.find((m) => m.market_id === id)!);
  const inWindow = (ms: number) => ms >= options.sinceMs && ms < until;

  const candles: CandleHistory['candles'] = {};
  const trades: PublicTrade[] = [];
  const summaries: MarketDownload[] = [];
  for (const market of markets) {
    const id = market.market_id;
    const page = await source.listCandles(id, options.interval, MAX_CANDLES_PAGE);
    // Closed by `until` (the bucket still open is left out), and opened at or after `since`.
    const closed = closedCandleHistory(page, options.interval, until, MAX_CANDLES_PAGE).filter(
      (candle) => inWindow(timeOf(candle.open_time)),
    );
    candles[id] = { [options.interval]: closed };
    const newestFirst = await source.listTrades(id, MAX_TRADES_PAGE);
    const kept = newestFirst
      .filter((trade) => trade.market_id === id && inWindow(timeOf(trade.occurred_at)))
      .reverse();
    trades.push(...kept);
    const firstCandleMs = page.length > 0 ? timeOf(page[0]!.open_time) : null;
    const firstTradeMs =
      newestFirst.length > 0 ? timeOf(newestFirst[newestFirst.length - 1]!.occurred_at) : null;
    for (const [what, first, full] of [
      ['candles', firstCandleMs, page.length >= MAX_CANDLES_PAGE],
      ['trades', firstTradeMs, newestFirst.length >= MAX_TRADES_PAGE],
    ] as const) {
      if (first !== null && first > options.sinceMs && full) {
        options.onWarning?.(
          `${id}: the service serves ${what} from ${isoTimestamp(first)} only (its newest page); ` +
            `nothing earlier, down to --since ${isoTimestamp(options.sinceMs)}, was downloaded`,
        );
      }
    }
    summaries.push({
      marketId: id,
      candles: closed.length,
      trades: kept.length,
      firstCandleMs,
      firstTradeMs,
    });
  }

  const history: CandleHistory = {
    format: CANDLE_HISTORY_FORMAT,
    version: 1,
    recorded_at: isoTimestamp(until),
    candles,
  };
  const sink = await RecordingSink.create({
    directory: options.directory,
    clock,
    source: options.sourceInfo,
    markets,
    bookDepth: 1,
    bookIntervalMs: 1000,
    privateEvents: false,
    compression: options.compression ?? 'none',
  });
  trades.sort((left, right) => timeOf(left.occurred_at) - timeOf(right.occurred_at));
  for (const trade of trades) sink.trade(trade, timeOf(trade.occurred_at));
  const manifest = await sink.close();
  await writeCandleHistory(options.directory, history);
  return { manifest, history, markets: summaries };
}
