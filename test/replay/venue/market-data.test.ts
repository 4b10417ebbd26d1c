import { describe, expect, it } from 'vitest';
import { RecordedMarketData } from '../../../src/replay/venue/market-data.ts';
import type { TickerData } from '../../../src/protocol/index.ts';
import type { Ticker } from '../../../src/runtime/strategy/types.ts';
import { testMarket } from '../../../src/runtime/testing/fixtures.ts';

const T0 = Date.UTC(2025, 0, 1, 10, 0, 0);

function tickerData(marketId: string, mark: string): TickerData {
  return {
    market_id: marketId,
    mark_price: mark,
    index_price: mark,
    last_price: mark,
    data_status: 'live',
  };
}

describe('recorded market data: ticker arrivals without the ticker', () => {
  it('tells arrivals in their place among ticker subscribers; the latest read is the object ticker$ gives', () => {
    const market = testMarket();
    const data = new RecordedMarketData([market]);
    const id = market.market_id;
    expect(data.latestTicker(id)).toBeUndefined();
    const seen: string[] = [];
    const given: Ticker[] = [];
    const read: (Ticker | undefined)[] = [];
    data.tickerArrivals$(id).subscribe((marketId) => {
      seen.push(`arrival ${marketId}`);
      read.push(data.latestTicker(marketId));
    });
    data.ticker$(id).subscribe((ticker) => {
      seen.push(`ticker ${ticker.mark_price}`);
      given.push(ticker);
    });
    data.ticker(id, tickerData(id, '100.5'), T0);
    data.ticker(id, tickerData(id, '101'), T0 + 1_000);
    expect(seen).toEqual([`arrival ${id}`, 'ticker 100.5', `arrival ${id}`, 'ticker 101']);
    expect(read).toEqual(given);
    expect(read[1]).toBe(given[1]);
    expect(data.latestTicker(id)).toBe(given[1]);
    expect(given[1]).toEqual({
      ...tickerData(id, '101'),
      occurred_at: '2025-01-01T10:00:01.000Z',
    });
    // A late arrivals subscriber hears of the latest at once.
    const late: string[] = [];
    data.tickerArrivals$(id).subscribe((marketId) => late.push(marketId));
    expect(late).toEqual([id]);
  });

  it('builds no ticker object while only arrivals are heard, and the one read later is the same', () => {
    const market = testMarket();
    const data = new RecordedMarketData([market]);
    const id = market.market_id;
    let arrivals = 0;
    data.tickerArrivals$(id).subscribe(() => arrivals++);
    data.ticker(id, tickerData(id, '99'), T0);
    const first = data.latestTicker(id);
    expect(data.latestTicker(id)).toBe(first);
    data.ticker(id, tickerData(id, '98'), T0 + 500);
    expect(arrivals).toBe(2);
    const second = data.latestTicker(id)!;
    expect(second).not.toBe(first);
    expect(second.mark_price).toBe('98');
    expect(second.occurred_at).toBe('2025-01-01T10:00:00.500Z');
    const subscriber: Ticker[] = [];
    data.ticker$(id).subscribe((ticker) => subscriber.push(ticker));
    expect(subscriber[0]).toBe(second);
    expect(() => data.latestTicker('NOPE')).toThrow();
  });
});
