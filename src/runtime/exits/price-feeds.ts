/**
 * The price feeds live exits watch: one subscription per market and source (`mark` from the
 * ticker, `last` from trades, `bid_ask` from the book's best levels), opened when the first
 * waiting exit needs it and closed when none does. Each price is kept and handed to `onPrices`
 * (which must not throw: a throw would break the market feed).
 */
import type { Subscription } from 'rxjs';
import { type Decimal, parseDecimal } from '../../core/decimal.ts';
import type { MarketDataVenue } from '../streams/market-data.ts';
import { observedPrice } from './trigger.ts';
import type { EmulatedExit, TriggerSource } from './types.ts';

/** The latest prices of one feed: a ticker's or trade's price, or the book's best bid and ask. */
export interface FeedSides {
  bid?: Decimal | undefined;
  ask?: Decimal | undefined;
  price?: Decimal;
}

interface Feed {
  readonly subscription: Subscription;
  readonly sides: FeedSides;
}

function feedKey(marketId: string, source: TriggerSource): string {
  return `${source}|${marketId}`;
}

export class PriceFeeds {
  private readonly feeds = new Map<string, Feed>();

  constructor(
    private readonly marketData: Pick<MarketDataVenue, 'markets' | 'ticker$' | 'book$' | 'trades$'>,
    private readonly onPrices: (marketId: string, source: TriggerSource, sides: FeedSides) => void,
  ) {}

  /** The latest prices of a market's source, when a feed is open for it. */
  sides(marketId: string, source: TriggerSource): FeedSides | undefined {
    return this.feeds.get(feedKey(marketId, source))?.sides;
  }

  /** The price an exit watches now, when its feed has one. */
  priceOf(exit: EmulatedExit): Decimal | undefined {
    const sides = this.sides(exit.marketId, exit.source);
    return sides === undefined ? undefined : observedPriceOf(exit, sides);
  }

  /**
   * Opens the feed a waiting exit watches, unless it is open. False when the feed was stopped
   * before it opened (`isStopped`: a hot source may answer synchronously and fire everything).
   */
  open(exit: EmulatedExit, isStopped: () => boolean): boolean {
    const key = feedKey(exit.marketId, exit.source);
    if (this.feeds.has(key)) return false;
    const sides: FeedSides = {};
    const marketId = exit.marketId;
    const source = exit.source;
    const onPrices = () => this.onPrices(marketId, source, sides);
    let subscription: Subscription;
    switch (source) {
      case 'mark':
        subscription = this.marketData.ticker$(marketId).subscribe((ticker) => {
          if (ticker.mark_price === null) return;
          sides.price = parseDecimal(ticker.mark_price);
          onPrices();
        });
        break;
      case 'last':
        subscription = this.marketData.trades$(marketId).subscribe((trade) => {
          sides.price = parseDecimal(trade.price);
          onPrices();
        });
        break;
      case 'bid_ask':
        subscription = this.marketData.book$(marketId).subscribe((book) => {
          const bid = book.bids[0];
          const ask = book.asks[0];
          sides.bid = bid === undefined ? undefined : parseDecimal(bid.price);
          sides.ask = ask === undefined ? undefined : parseDecimal(ask.price);
          onPrices();
        });
        break;
    }
    if (isStopped()) {
      subscription.unsubscribe();
      return false;
    }
    this.feeds.set(key, { subscription, sides });
    return true;
  }

  /** Closes the feeds no waiting exit of `live` watches any more. */
  closeUnused(live: Iterable<EmulatedExit>): void {
    const used = new Set<string>();
    for (const exit of live) {
      if (exit.state === 'waiting') used.add(feedKey(exit.marketId, exit.source));
    }
    for (const [key, feed] of this.feeds) {
      if (used.has(key)) continue;
      feed.subscription.unsubscribe();
      this.feeds.delete(key);
    }
  }

  /** Closes every feed. */
  close(): void {
    for (const feed of this.feeds.values()) feed.subscription.unsubscribe();
    this.feeds.clear();
  }
}

/** The price `sides` give an exit on its source. */
export function observedPriceOf(exit: EmulatedExit, sides: FeedSides): Decimal | undefined {
  return observedPrice(exit.source, exit.side, {
    mark: sides.price,
    last: sides.price,
    bid: sides.bid,
    ask: sides.ask,
  });
}
