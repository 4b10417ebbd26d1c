/**
 * `MarketDataVenue` over the REST and stream clients.
 *
 * - `markets()`: GET /v1/markets, read once by `load` (before the kernel starts).
 * - `ticker$`: the stream's ticker channel, one subscription per market kept for as long as the
 *   venue runs, the latest ticker replayed to each new subscriber. When the stream connection
 *   drops, the latest ticker of each market is repeated with `data_status: 'stale'` (a silent
 *   feed must not look live to the gate or a strategy); the channel's fresh snapshot after the
 *   reconnect says `live` again.
 * - `book$`: GET book every `bookPollMs` on the clock, while anyone listens; the latest book is
 *   replayed to each new subscriber.
 * - `trades$`: GET trades every `tradesPollMs` on the clock, while anyone listens. The first read
 *   only sets where the stream starts (a hot stream has no history); after it, each trade not
 *   in the previous answer is emitted once, oldest first. Trades older than one already emitted
 *   are dropped, so the stream stays in time order.
 * - `candleHistory`: GET candles once per strategy request before the strategies start, the
 *   bucket still open left out.
 * Polls never overlap: the next one is scheduled when the previous one has answered.
 */
import { map, Observable, type Observer, ReplaySubject, Subject, type Subscription } from 'rxjs';
import type { RestClient, StreamClient } from '../../client/index.ts';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import type { Book, Candle, CandleInterval, Market, PublicTrade } from '../../protocol/index.ts';
import type { Logger } from '../../core/logger.ts';
import { MAX_CANDLE_HISTORY, type Ticker } from '../strategy/types.ts';
import { closedCandleHistory } from '../streams/candles.ts';
import type { MarketDataVenue } from '../streams/market-data.ts';
import { toVenueFailure } from '../venue-error.ts';

export interface LiveMarketDataOptions {
  readonly rest: RestClient;
  readonly stream: StreamClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly bookPollMs: number;
  readonly tradesPollMs: number;
  /** Levels per side of each book read. Default 20. */
  readonly bookDepth?: number;
  /** Trades per read; more trades than this between two reads are missed. Default 200. */
  readonly tradesLimit?: number;
}

/** A poll loop on the clock whose results go to the subscribers it has, while it has any. */
class Poller<T> {
  private readonly subject = new Subject<T>();
  private subscribers = 0;
  private timer: TimerHandle | undefined;
  private running = false;
  private inFlight: Promise<void> | null = null;
  private latest: T | undefined;
  private failures = 0;

  constructor(
    private readonly clock: Clock,
    private readonly periodMs: number,
    private readonly read: () => Promise<readonly T[]>,
    private readonly onFailure: (error: unknown, failures: number) => void,
    private readonly replayLatest: boolean,
  ) {}

  readonly stream$ = new Observable<T>((subscriber) => {
    if (this.replayLatest && this.latest !== undefined) subscriber.next(this.latest);
    const inner = this.subject.subscribe(subscriber as Observer<T>);
    this.subscribers += 1;
    if (this.subscribers === 1) this.begin();
    return () => {
      inner.unsubscribe();
      this.subscribers -= 1;
      if (this.subscribers === 0) this.end();
    };
  });

  async idle(): Promise<void> {
    while (this.inFlight !== null) await this.inFlight;
  }

  close(): void {
    this.end();
    this.subject.complete();
  }

  private begin(): void {
    if (this.running) return;
    this.running = true;
    if (this.inFlight === null) this.poll();
  }

  private end(): void {
    this.running = false;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private poll(): void {
    this.timer = undefined;
    this.inFlight = (async () => {
      try {
        const items = await this.read();
        this.failures = 0;
        if (!this.running) return;
        for (const item of items) {
          this.latest = item;
          this.subject.next(item);
        }
      } catch (error) {
        this.failures += 1;
        if (this.running) this.onFailure(toVenueFailure(error), this.failures);
      } finally {
        this.inFlight = null;
        if (this.running) this.timer = this.clock.setTimeout(() => this.poll(), this.periodMs);
      }
    })();
  }
}

/** New trades of a read, given the ids of the previous read, oldest first. */
export class TradeCursor {
  private previous: ReadonlySet<string> | null = null;
  private lastEmittedAt = Number.NEGATIVE_INFINITY;

  /** `newestFirst`: the trades as the venue answered (the interface lists the newest first). */
  next(newestFirst: readonly PublicTrade[]): {
    readonly trades: PublicTrade[];
    /** True when none of the previous read is in this one: trades may have been missed. */
    readonly gap: boolean;
  } {
    const previous = this.previous;
    this.previous = new Set(newestFirst.map((trade) => trade.trade_id));
    if (previous === null) {
      for (const trade of newestFirst) {
        this.lastEmittedAt = Math.max(this.lastEmittedAt, Date.parse(trade.occurred_at));
      }
      return { trades: [], gap: false };
    }
    const fresh = [...newestFirst]
      .reverse()
      .filter((trade) => !previous.has(trade.trade_id))
      .map((trade, index) => ({ trade, index, at: Date.parse(trade.occurred_at) }))
      .sort((left, right) => left.at - right.at || left.index - right.index);
    const trades: PublicTrade[] = [];
    for (const entry of fresh) {
      if (entry.at < this.lastEmittedAt) continue;
      this.lastEmittedAt = entry.at;
      trades.push(entry.trade);
    }
    const gap =
      previous.size > 0 &&
      newestFirst.length > 0 &&
      newestFirst.every((trade) => !previous.has(trade.trade_id));
    return { trades, gap };
  }
}

export class LiveMarketData implements MarketDataVenue {
  private readonly rest: RestClient;
  private readonly stream: StreamClient;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly options: LiveMarketDataOptions;
  private list: readonly Market[] | null = null;
  private readonly tickers = new Map<string, ReplaySubject<Ticker>>();
  private readonly latestTickers = new Map<string, Ticker>();
  private readonly tickerSubscriptions: Subscription[] = [];
  private connectionSubscription: Subscription | null = null;
  private readonly books = new Map<string, Poller<Book>>();
  private readonly trades = new Map<string, Poller<PublicTrade>>();
  private closed = false;

  constructor(options: LiveMarketDataOptions) {
    this.options = options;
    this.rest = options.rest;
    this.stream = options.stream;
    this.clock = options.clock;
    this.logger = options.logger;
    for (const [name, value] of [
      ['bookPollMs', options.bookPollMs],
      ['tradesPollMs', options.tradesPollMs],
    ] as const) {
      if (!(Number.isFinite(value) && value > 0)) {
        throw new PaperbotError('INVALID_CONFIG', `${name} must be a positive number of ms`);
      }
    }
  }

  /**
   * Reads the market list. `marketIds`: the markets to offer (every listed market when
   * omitted); one the venue does not list fails with `UNKNOWN_MARKET`.
   */
  async load(marketIds?: readonly string[]): Promise<void> {
    let listed: Market[];
    try {
      listed = await this.rest.listMarkets();
    } catch (error) {
      throw toVenueFailure(error);
    }
    if (marketIds === undefined) {
      this.list = Object.freeze(listed);
      return;
    }
    const missing = marketIds.filter((id) => !listed.some((market) => market.market_id === id));
    if (missing.length > 0) {
      throw new PaperbotError(
        'UNKNOWN_MARKET',
        `the venue does not list ${missing.join(', ')}; it lists ${listed.map((market) => market.market_id).join(', ')}`,
        { details: { missing } },
      );
    }
    this.list = Object.freeze(listed.filter((market) => marketIds.includes(market.market_id)));
  }

  markets(): readonly Market[] {
    if (this.list === null) {
      throw new PaperbotError('MARKETS_NOT_LOADED', 'the market list is read by start() first');
    }
    return this.list;
  }

  ticker$(marketId: string): Observable<Ticker> {
    let latest = this.tickers.get(marketId);
    if (latest === undefined) {
      latest = new ReplaySubject<Ticker>(1);
      this.tickers.set(marketId, latest);
      if (!this.closed) {
        this.watchConnection();
        const subject = latest;
        this.tickerSubscriptions.push(
          this.stream
            .ticker$(marketId)
            .pipe(
              map((frame): Ticker =>
                Object.freeze({ ...frame.data, occurred_at: frame.occurred_at }),
              ),
            )
            .subscribe({
              next: (ticker) => {
                this.latestTickers.set(marketId, ticker);
                subject.next(ticker);
              },
              complete: () => subject.complete(),
            }),
        );
      }
    }
    return latest.asObservable();
  }

  tickerArrivals$(marketId: string): Observable<string> {
    return this.ticker$(marketId).pipe(map(() => marketId));
  }

  /** The latest ticker of a market someone listens to (stale once the connection dropped). */
  latestTicker(marketId: string): Ticker | undefined {
    return this.latestTickers.get(marketId);
  }

  book$(marketId: string): Observable<Book> {
    let poller = this.books.get(marketId);
    if (poller === undefined) {
      poller = new Poller<Book>(
        this.clock,
        this.options.bookPollMs,
        async () => [
          await this.rest.getBook({ market_id: marketId }, { depth: this.options.bookDepth ?? 20 }),
        ],
        (error, failures) => this.pollFailed('book', marketId, error, failures),
        true,
      );
      this.books.set(marketId, poller);
    }
    return poller.stream$;
  }

  /** The service's candle history (`GET /v1/markets/{id}/candles`), closed candles only. */
  async candleHistory(
    marketId: string,
    interval: CandleInterval,
    count: number,
  ): Promise<readonly Candle[]> {
    // One more than asked: the newest candle on the page may be the bucket still open.
    const limit = Math.min(count + 1, MAX_CANDLE_HISTORY);
    const page = await this.rest.listCandles({ market_id: marketId }, { interval, limit });
    return closedCandleHistory(page, interval, this.clock.now(), count);
  }

  trades$(marketId: string): Observable<PublicTrade> {
    let poller = this.trades.get(marketId);
    if (poller === undefined) {
      const cursor = new TradeCursor();
      poller = new Poller<PublicTrade>(
        this.clock,
        this.options.tradesPollMs,
        async () => {
          const answer = await this.rest.listTrades(
            { market_id: marketId },
            { limit: this.options.tradesLimit ?? 200 },
          );
          const { trades, gap } = cursor.next(answer);
          if (gap) {
            this.logger.warn('trades arrived faster than they were read; some were missed', {
              marketId,
              tradesPollMs: this.options.tradesPollMs,
            });
          }
          return trades;
        },
        (error, failures) => this.pollFailed('trades', marketId, error, failures),
        false,
      );
      this.trades.set(marketId, poller);
    }
    return poller.stream$;
  }

  /** Resolves once no poll is under way. */
  async idle(): Promise<void> {
    await Promise.all([...this.books.values(), ...this.trades.values()].map((poll) => poll.idle()));
  }

  /** Stops polling and the ticker subscriptions; the streams complete. */
  close(): void {
    this.closed = true;
    this.connectionSubscription?.unsubscribe();
    this.connectionSubscription = null;
    for (const subscription of this.tickerSubscriptions.splice(0)) subscription.unsubscribe();
    for (const subject of this.tickers.values()) subject.complete();
    for (const poller of [...this.books.values(), ...this.trades.values()]) poller.close();
  }

  private watchConnection(): void {
    if (this.connectionSubscription !== null) return;
    let wasLive = this.stream.state === 'live';
    this.connectionSubscription = this.stream.state$.subscribe((state) => {
      const live = state === 'live';
      if (wasLive && !live) this.markTickersStale(state);
      wasLive = live;
    });
  }

  private markTickersStale(state: string): void {
    for (const [marketId, ticker] of this.latestTickers) {
      if (ticker.data_status !== 'live') continue;
      const stale: Ticker = Object.freeze({ ...ticker, data_status: 'stale' });
      this.latestTickers.set(marketId, stale);
      this.tickers.get(marketId)?.next(stale);
    }
    this.logger.warn('stream connection lost; tickers marked stale until it is back', { state });
  }

  private pollFailed(what: string, marketId: string, error: unknown, failures: number): void {
    // The first failure and then every tenth, so an outage does not flood the log.
    if (failures !== 1 && failures % 10 !== 0) return;
    this.logger.warn(`${what} read failed; polling goes on`, {
      marketId,
      failures,
      code: (error as { code?: unknown }).code,
      message: error instanceof Error ? error.message : String(error),
    });
  }
}
