/**
 * The market-data side of a venue, as the runtime consumes it. The live venue builds it from the
 * stream client (ticker) and REST polling (book, trades); the replay venue builds it from
 * recorded sessions on virtual time. Strategy, gate and executor code never knows which.
 */
import { map, type Observable } from 'rxjs';
import type {
  Book,
  Candle,
  CandleInterval,
  Market,
  PublicTrade,
  TickerData,
} from '../../protocol/index.ts';

/**
 * A ticker update of one market: the data of a `market:<id>:ticker` frame plus the frame's
 * `occurred_at`. Prices are decimal strings or null (missing metrics are null, never zero).
 * Strategy authors import it from the strategy API, which re-exports it.
 */
export type Ticker = TickerData & { readonly occurred_at: string };

export interface MarketDataVenue {
  /** The markets the venue lists, loaded before the kernel starts. */
  markets(): readonly Market[];
  /** Hot; a new subscriber gets the latest ticker first, then updates. */
  ticker$(marketId: string): Observable<Ticker>;
  /**
   * Each ticker's arrival as its market's id, at the place among `ticker$`'s subscribers a
   * ticker subscriber would have (a new subscriber hears of the latest first), for a listener
   * that reads the ticker only when it needs it (`latestTicker` then gives the one that arrived
   * last). The kernel's one ticker path, live and in replay: a replay then builds no ticker
   * object nobody reads.
   */
  tickerArrivals$(marketId: string): Observable<string>;
  /** The latest ticker, the object `ticker$` gives for it; undefined before the first. */
  latestTicker(marketId: string): Ticker | undefined;
  /** Hot; a new subscriber gets the latest book first, then updates. */
  book$(marketId: string): Observable<Book>;
  /** Hot; each public trade once, in time order. */
  trades$(marketId: string): Observable<PublicTrade>;
  /**
   * Up to `count` closed candles that ended by now, oldest first (strategies' warm-up): the
   * service's candle history live, the recording's in a replay. Absent when there is none.
   */
  candleHistory?(
    marketId: string,
    interval: CandleInterval,
    count: number,
  ): Promise<readonly Candle[]>;
}

/**
 * `tickerArrivals$` and `latestTicker` over a `ticker$`, for a market data that keeps no latest
 * ticker of its own (test doubles): the latest is noted as each arrival is heard.
 */
export class TickerArrivals {
  private readonly latest = new Map<string, Ticker>();

  constructor(private readonly ticker$: (marketId: string) => Observable<Ticker>) {}

  arrivals$(marketId: string): Observable<string> {
    return this.ticker$(marketId).pipe(
      map((ticker) => {
        this.latest.set(marketId, ticker);
        return marketId;
      }),
    );
  }

  latestTicker(marketId: string): Ticker | undefined {
    return this.latest.get(marketId);
  }
}
