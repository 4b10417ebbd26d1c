/**
 * The live market data offers the kernel's one ticker path, as the replay's does: each ticker's
 * arrival (its market id) with the latest ticker read on demand, the same object `ticker$`
 * hands on, marked stale when the stream connection drops.
 */
import { BehaviorSubject, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { RestClient, StreamClient } from '../../../src/client/index.ts';
import { VirtualClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { LiveMarketData } from '../../../src/runtime/live/market-data.ts';
import type { Ticker } from '../../../src/runtime/strategy/types.ts';
import { testTicker } from '../../../src/runtime/testing/fixtures.ts';

function marketData() {
  const frames = new Subject<{ data: Omit<Ticker, 'occurred_at'>; occurred_at: string }>();
  const state$ = new BehaviorSubject<string>('live');
  const stream = {
    get state() {
      return state$.value;
    },
    state$,
    ticker$: (marketId: string) => {
      if (marketId !== 'BTC-PERP') throw new Error(`unexpected market ${marketId}`);
      return frames;
    },
  } as unknown as StreamClient;
  const rest = {} as unknown as RestClient;
  const data = new LiveMarketData({
    rest,
    stream,
    clock: new VirtualClock(0),
    logger: silentLogger,
    bookPollMs: 1_000,
    tradesPollMs: 1_000,
  });
  const push = (mark: string) => {
    const { occurred_at, ...fields } = testTicker({ market_id: 'BTC-PERP', mark_price: mark });
    frames.next({ data: fields, occurred_at });
  };
  return { data, push, state$ };
}

describe('live ticker arrivals', () => {
  it('tells each arrival and gives the latest ticker, the one ticker$ hands on', () => {
    const { data, push, state$ } = marketData();
    expect(data.latestTicker('BTC-PERP')).toBeUndefined();
    const arrivals: string[] = [];
    const tickers: Ticker[] = [];
    data.tickerArrivals$('BTC-PERP').subscribe((marketId) => arrivals.push(marketId));
    data.ticker$('BTC-PERP').subscribe((ticker) => tickers.push(ticker));
    push('100');
    push('101');
    expect(arrivals).toEqual(['BTC-PERP', 'BTC-PERP']);
    expect(data.latestTicker('BTC-PERP')).toBe(tickers[1]);
    expect(data.latestTicker('BTC-PERP')?.mark_price).toBe('101');

    // The connection drops: the latest ticker is repeated stale, and that is an arrival too.
    state$.next('reconnecting');
    expect(arrivals).toHaveLength(3);
    expect(data.latestTicker('BTC-PERP')?.data_status).toBe('stale');
    expect(data.latestTicker('BTC-PERP')).toBe(tickers[2]);

    // A late listener hears of the latest at once, as a late ticker$ subscriber gets it.
    const late: string[] = [];
    data.tickerArrivals$('BTC-PERP').subscribe((marketId) => late.push(marketId));
    expect(late).toEqual(['BTC-PERP']);
    data.close();
  });
});
