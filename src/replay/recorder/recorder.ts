/**
 * The recorder: what `paperbot record` runs. It follows a source's public streams (and private
 * events when the source has an account) and feeds a `RecordingSink`:
 *
 * - tickers as they arrive (the stream's snapshot and updates), each with its market's funding
 *   as last read from the market resource when the source can read markets (`funding-reads.ts`:
 *   about one read per market per funding interval);
 * - book snapshots by polling the book at the configured depth every `bookIntervalMs`;
 * - public trades by polling the latest trades every `tradesIntervalMs`, each trade once (by
 *   `trade_id`); the first poll only sets the baseline, so history from before the recording
 *   is not replayed as if it happened at its start. A poll that finds none of the previous
 *   poll's trades among a full page may have missed some, and a `gap` record says so;
 * - private events, and `gap` records where a source reports lost continuity.
 *
 * Polls run on the injected clock; a poll still waiting when its next turn comes is not
 * doubled. A failed poll is a `gap` record and a report to `onError`, not the end of the
 * recording. `stop()` waits for polls under way, then closes the sink (final manifest).
 */
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { isPaperbotError } from '../../core/errors.ts';
import type {
  Book,
  Candle,
  CandleInterval,
  Market,
  PrivateEvent,
  PublicTrade,
  TickerData,
} from '../../protocol/index.ts';
import type { RecordingManifest } from '../format/manifest.ts';
import type { RecordedStream } from '../format/records.ts';
import type { RecordingSink } from '../format/recorder-sink.ts';
import { FundingReads } from './funding-reads.ts';

/** The largest page of trades the service returns. */
export const MAX_TRADES_PAGE = 500;

/** Funding rates are read this long before their funding time, unless told otherwise. */
export const DEFAULT_FUNDING_LEAD_MS = 1_000;
/** A market that shows no funding time to come is read again after this long. */
export const FUNDING_RETRY_MS = 60_000;

export type GapListener = (stream: RecordedStream, reason: string, marketId?: string) => void;

/** Where recorded data comes from: the client against a service, or an in-process emulator. */
export interface RecorderSource {
  onTicker(marketId: string, listener: (data: TickerData) => void): () => void;
  getBook(marketId: string, depth: number): Promise<Book>;
  /** The latest public trades, newest first. */
  listTrades(marketId: string, limit: number): Promise<PublicTrade[]>;
  /** The market resource (its funding); absent when the source has none: no funding recorded. */
  getMarket?(marketId: string): Promise<Market>;
  /** The market's candle history (for `candles.json`); absent when the source has none. */
  listCandles?(marketId: string, interval: CandleInterval, limit: number): Promise<Candle[]>;
  /** The account's private events; absent when the source has no account. */
  onPrivateEvent?(listener: (event: PrivateEvent) => void): () => void;
  /** Where the source lost continuity (a reconnect, a resync). */
  onGap?(listener: GapListener): () => void;
}

/** Receives what is recorded, as it is recorded (an in-process session's market data). */
export interface RecorderTap {
  ticker(marketId: string, data: TickerData, t: number): void;
  book(marketId: string, book: Book): void;
  trade(marketId: string, trade: PublicTrade): void;
}

export interface RecorderOptions {
  readonly source: RecorderSource;
  readonly sink: RecordingSink;
  readonly clock: Clock;
  readonly marketIds: readonly string[];
  readonly bookDepth: number;
  readonly bookIntervalMs: number;
  readonly tradesIntervalMs: number;
  /** Record the source's private events (the sink must have been created for them). */
  readonly privateEvents: boolean;
  readonly tradesLimit?: number;
  readonly tap?: RecorderTap;
  /** How long before a funding time its rate is read (default `DEFAULT_FUNDING_LEAD_MS`). */
  readonly fundingLeadMs?: number;
  /** A poll or write that failed; the recording goes on. */
  readonly onError?: (error: unknown, context: string) => void;
}

interface MarketPolls {
  readonly marketId: string;
  bookInFlight: boolean;
  tradesInFlight: boolean;
  /** Trade ids of the previous poll; null before the baseline. */
  seenTrades: Set<string> | null;
}

function describe(error: unknown): string {
  if (isPaperbotError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

export class Recorder {
  private readonly markets: MarketPolls[];
  private readonly timers: TimerHandle[] = [];
  private readonly unsubscribers: (() => void)[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private stopping: Promise<RecordingManifest> | null = null;
  private readonly funding: FundingReads | null;

  constructor(private readonly options: RecorderOptions) {
    const { source } = options;
    this.funding =
      source.getMarket === undefined
        ? null
        : new FundingReads({
            marketIds: options.marketIds,
            readMarket: (marketId) => source.getMarket!(marketId),
            clock: options.clock,
            leadMs: options.fundingLeadMs ?? DEFAULT_FUNDING_LEAD_MS,
            retryMs: FUNDING_RETRY_MS,
            track: (work) => this.track(work),
            ...(options.onError === undefined ? {} : { onError: options.onError }),
          });
    this.markets = options.marketIds.map((marketId) => ({
      marketId,
      bookInFlight: false,
      tradesInFlight: false,
      seenTrades: null,
    }));
  }

  /** Subscribes and starts polling; the first book and trade polls happen at once. */
  start(): void {
    if (this.running || this.stopping !== null) return;
    this.running = true;
    const { source, sink, clock } = this.options;
    for (const market of this.markets) {
      this.unsubscribers.push(
        source.onTicker(market.marketId, (data) =>
          this.write('ticker', () => {
            const funding = this.funding?.onTicker(market.marketId) ?? null;
            sink.ticker(funding === null ? data : { ...data, ...funding });
            this.options.tap?.ticker(market.marketId, data, clock.now());
          }),
        ),
      );
    }
    if (this.options.privateEvents && source.onPrivateEvent !== undefined) {
      this.unsubscribers.push(
        source.onPrivateEvent((event) => this.write('private', () => sink.privateEvent(event))),
      );
    }
    if (source.onGap !== undefined) {
      this.unsubscribers.push(
        source.onGap((stream, reason, marketId) =>
          this.write('gap', () => sink.gap(stream, reason, marketId)),
        ),
      );
    }
    const pollBooks = () => {
      for (const market of this.markets) this.pollBook(market);
    };
    const pollTrades = () => {
      for (const market of this.markets) this.pollTrades(market);
    };
    this.funding?.start();
    pollBooks();
    pollTrades();
    this.timers.push(clock.setInterval(pollBooks, this.options.bookIntervalMs));
    this.timers.push(clock.setInterval(pollTrades, this.options.tradesIntervalMs));
  }

  /** Resolves once every poll started so far has finished. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Stops listening and polling, waits for polls under way, and closes the sink. */
  stop(): Promise<RecordingManifest> {
    this.stopping ??= (async () => {
      this.running = false;
      for (const timer of this.timers.splice(0)) this.options.clock.clearInterval(timer);
      this.funding?.stop();
      for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
      await this.idle();
      return this.options.sink.close();
    })();
    return this.stopping;
  }

  private write(context: string, work: () => void): void {
    if (!this.running) return;
    try {
      work();
    } catch (error) {
      this.options.onError?.(error, context);
    }
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  private pollBook(market: MarketPolls): void {
    if (market.bookInFlight || !this.running) return;
    market.bookInFlight = true;
    this.track(
      this.options.source
        .getBook(market.marketId, this.options.bookDepth)
        .then(
          (book) =>
            this.write('book', () => {
              this.options.sink.book(book);
              this.options.tap?.book(market.marketId, book);
            }),
          (error: unknown) => this.pollFailed(error, 'book', 'book', market.marketId),
        )
        .finally(() => {
          market.bookInFlight = false;
        }),
    );
  }

  private pollTrades(market: MarketPolls): void {
    if (market.tradesInFlight || !this.running) return;
    market.tradesInFlight = true;
    const limit = Math.min(MAX_TRADES_PAGE, this.options.tradesLimit ?? MAX_TRADES_PAGE);
    this.track(
      this.options.source
        .listTrades(market.marketId, limit)
        .then(
          (trades) => this.onTrades(market, trades, limit),
          (error: unknown) => this.pollFailed(error, 'trade', 'trades', market.marketId),
        )
        .finally(() => {
          market.tradesInFlight = false;
        }),
    );
  }

  /** A failed poll is told to `onError` and written as a gap of its kind. */
  private pollFailed(
    error: unknown,
    kind: 'book' | 'trade',
    poll: 'book' | 'trades',
    marketId: string,
  ): void {
    this.options.onError?.(error, `${poll} ${marketId}`);
    this.write('gap', () =>
      this.options.sink.gap(kind, `${poll} poll failed: ${describe(error)}`, marketId),
    );
  }

  private onTrades(market: MarketPolls, newestFirst: readonly PublicTrade[], limit: number): void {
    const previous = market.seenTrades;
    market.seenTrades = new Set(newestFirst.map((trade) => trade.trade_id));
    if (previous === null) return;
    const fresh: PublicTrade[] = [];
    for (const trade of newestFirst) {
      if (previous.has(trade.trade_id)) break;
      fresh.push(trade);
    }
    if (fresh.length === newestFirst.length && newestFirst.length >= limit && previous.size > 0) {
      this.write('gap', () =>
        this.options.sink.gap(
          'trade',
          `more than ${limit} trades between two polls; some may be missing`,
          market.marketId,
        ),
      );
    }
    this.write('trade', () => {
      for (let index = fresh.length - 1; index >= 0; index--) {
        this.options.sink.trade(fresh[index]!);
        this.options.tap?.trade(market.marketId, fresh[index]!);
      }
    });
  }
}
