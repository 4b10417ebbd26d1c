/**
 * The kernel's one ticker path, live and in replay: each market's ticker arrivals
 * (`MarketDataVenue.tickerArrivals$`), when the last one came (the intent latency's tick), and
 * which markets' latest ticker the risk snapshot has not taken yet. The ticker itself is read
 * (`latestTicker`) only when the next intent needs a snapshot, so a replay builds no ticker
 * object for the kernel between intents. The kernel subscribes before any strategy, so it hears
 * of a ticker before a strategy can act on it, and the latest read then is the one a
 * subscription to `ticker$` would have handed it.
 */
import type { Subscription } from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import type { MarketDataVenue } from '../streams/market-data.ts';
import type { Ticker } from '../strategy/types.ts';

/**
 * A market's last ticker arrival, written in place: a map of times would box a new number per
 * ticker (times are past the small-integer range).
 */
interface LastTick {
  readonly marketId: string;
  at: number;
  received: boolean;
  /** Listed in `unread`: the risk snapshot has not taken this ticker yet. */
  unread: boolean;
}

export class MarketTicks {
  private readonly lastTicks = new Map<string, LastTick>();
  /** Markets whose latest ticker the risk snapshot has not taken yet. */
  private readonly unread: LastTick[] = [];

  constructor(
    private readonly marketData: MarketDataVenue,
    private readonly clock: Clock,
  ) {}

  /** Listens to the arrivals of every market the market data lists. */
  watch(): Subscription[] {
    const subscriptions: Subscription[] = [];
    for (const market of this.marketData.markets()) {
      const marketId = market.market_id;
      const lastTick: LastTick = { marketId, at: 0, received: false, unread: false };
      this.lastTicks.set(marketId, lastTick);
      subscriptions.push(
        this.marketData.tickerArrivals$(marketId).subscribe(() => {
          lastTick.at = this.clock.now();
          lastTick.received = true;
          if (!lastTick.unread) {
            lastTick.unread = true;
            this.unread.push(lastTick);
          }
        }),
      );
    }
    return subscriptions;
  }

  /** When the market's last ticker arrived; null before the first. */
  lastAt(marketId: string): number | null {
    const tick = this.lastTicks.get(marketId);
    return tick?.received === true ? tick.at : null;
  }

  /** Hands on the latest ticker of each market that had one since the last call. */
  takeUnread(onTicker: (ticker: Ticker) => void): void {
    const unread = this.unread;
    if (unread.length === 0) return;
    for (let index = 0; index < unread.length; index++) {
      const lastTick = unread[index]!;
      lastTick.unread = false;
      const ticker = this.marketData.latestTicker(lastTick.marketId);
      if (ticker !== undefined) onTicker(ticker);
    }
    unread.length = 0;
  }
}
