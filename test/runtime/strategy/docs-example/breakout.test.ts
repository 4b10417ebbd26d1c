// The tests of docs/strategies.md, kept here so that they run.
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { marketOrder } from 'paperbot/strategy';
import {
  createStrategyHarness,
  strategyIntents$,
  TEST_START_TIME,
  testTrade,
} from 'paperbot/testing';
import breakout from './breakout.ts';

const MINUTE = 60_000;

describe('breakout', () => {
  it('buys when a close breaks the previous high, and goes flat below the low', () => {
    const harness = createStrategyHarness({ strategy: breakout, params: {}, respond: 'accept' });
    const t0 = TEST_START_TIME;
    // Minute 0: high 101. Minute 1 closes at 102: a breakout.
    harness.at(t0 + 1_000).trade({ market_id: 'BTC-PERP', price: '100' });
    harness.at(t0 + 2_000).trade({ market_id: 'BTC-PERP', price: '101' });
    harness.at(t0 + MINUTE + 1_000).trade({ market_id: 'BTC-PERP', price: '102' });
    harness.advanceTo(t0 + 2 * MINUTE); // the clock closes minute 1
    const [buy] = harness.take();
    expect(buy?.intent).toEqual({
      kind: 'place',
      marketId: 'BTC-PERP',
      side: 'buy',
      type: 'market',
      quantity: '0.5',
      tag: 'breakout',
    });
    expect(buy?.requestId).toBe('test:e1:1');

    harness.fillIntent(buy!, { price: '102' });
    expect(harness.position('BTC-PERP').quantity.toFixed()).toBe('0.5');

    // Minute 2 closes at 99, under minute 1's low of 102: back to flat, reduce-only.
    harness.at(t0 + 2 * MINUTE + 1_000).trade({ market_id: 'BTC-PERP', price: '99' });
    harness.advanceTo(t0 + 3 * MINUTE);
    expect(harness.take().map((stamped) => stamped.intent)).toEqual([
      {
        kind: 'place',
        marketId: 'BTC-PERP',
        side: 'sell',
        type: 'market',
        quantity: '0.5',
        reduceOnly: true,
        tag: 'breakout',
      },
    ]);
  });

  it('emits at the frame where the clock closes the breakout candle (marbles)', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ hot, expectObservable }) => {
      const trade = (price: string, at: number) =>
        testTrade({ market_id: 'BTC-PERP', price, trade_id: `t${at}` }, at);
      // Trades at 0 s (100) and 60 s (102); the second candle closes at 120 s.
      const trades = hot('a 59999ms b', { a: trade('100', 0), b: trade('102', 60_000) });
      const intents = strategyIntents$({
        strategy: breakout,
        scheduler,
        trades: { 'BTC-PERP': trades },
      });
      expectObservable(intents, '^ 150s !').toBe('120s x', {
        x: marketOrder({ marketId: 'BTC-PERP', side: 'buy', quantity: '0.5', tag: 'breakout' }),
      });
    });
  });
});
