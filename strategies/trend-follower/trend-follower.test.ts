import { describe, expect, it } from 'vitest';
import { parseDecimal, type StampedIntent } from 'paperbot/strategy';
import { createStrategyHarness, type StrategyHarness, TEST_START_TIME } from 'paperbot/testing';
import trendFollower, { TREND_TAG, type TrendFollowerParams } from './index.ts';

const MARKET = 'BTC-PERP';
const MINUTE = 60_000;

/** One trade a minute at each price; the candle of minute i closes when minute i+1 trades. */
function tradeMinutes(harness: StrategyHarness<TrendFollowerParams>, prices: string[]): void {
  const first = Math.floor((harness.now() - TEST_START_TIME) / MINUTE) + 1;
  prices.forEach((price, index) => {
    harness
      .at(TEST_START_TIME + (first + index) * MINUTE + 5_000)
      .trade({ market_id: MARKET, price });
  });
}

function summary(intents: readonly StampedIntent[]) {
  return intents.map((stamped) =>
    stamped.intent.kind === 'place'
      ? [stamped.intent.side, stamped.intent.quantity, stamped.intent.reduceOnly === true]
      : [stamped.intent.kind],
  );
}

const falling = ['110', '108', '106', '104', '102', '100'];
const rising = ['103', '107', '112', '118'];

describe('trend-follower', () => {
  it('goes long when the fast EMA crosses above the slow one, on closed candles', () => {
    const harness = createStrategyHarness({
      strategy: trendFollower,
      params: { fastPeriod: 2, slowPeriod: 4, quantity: '0.5' },
    });
    tradeMinutes(harness, falling);
    expect(harness.take()).toEqual([]);
    tradeMinutes(harness, rising);
    const intents = harness.take();
    expect(summary(intents)).toEqual([['buy', '0.5', false]]);
    expect(intents[0]?.intent).toMatchObject({ type: 'market', tag: TREND_TAG });
    // The signal came from a candle that closed, not from the trade that opened the next one.
    expect(intents[0]?.emittedAt).toBeGreaterThan(TEST_START_TIME + 7 * MINUTE);
  });

  it('flips to short with a reduce-only close and a new entry when the trend turns down', () => {
    const harness = createStrategyHarness({
      strategy: trendFollower,
      params: { fastPeriod: 2, slowPeriod: 4, quantity: '0.5' },
    });
    tradeMinutes(harness, falling);
    tradeMinutes(harness, rising);
    const [entry] = harness.take();
    harness.accept(entry!).fillIntent(entry!, { price: '112' });
    expect(harness.position(MARKET).quantity.toFixed()).toBe('0.5');
    tradeMinutes(harness, ['110', '104', '97', '90']);
    expect(summary(harness.take())).toEqual([
      ['sell', '0.5', true],
      ['sell', '0.5', false],
    ]);
  });

  it('goes flat instead of short when shorting is not allowed', () => {
    const harness = createStrategyHarness({
      strategy: trendFollower,
      params: { fastPeriod: 2, slowPeriod: 4, quantity: '0.5', allowShort: false },
    });
    tradeMinutes(harness, falling);
    tradeMinutes(harness, rising);
    const [entry] = harness.take();
    harness.fillIntent(entry!, { price: '112' });
    tradeMinutes(harness, ['110', '104', '97', '90']);
    expect(summary(harness.take())).toEqual([['sell', '0.5', true]]);
  });

  it('does not order twice while its entry is still pending', () => {
    const harness = createStrategyHarness({
      strategy: trendFollower,
      params: { fastPeriod: 2, slowPeriod: 4, quantity: '0.5', source: 'ticker' },
    });
    for (const price of [...falling, ...rising]) harness.advanceBy(1_000).mark(MARKET, price);
    expect(summary(harness.take())).toEqual([['buy', '0.5', false]]);
    // Down and up again before the entry filled: the pending buy still counts.
    for (const price of ['100', '90', '80', '95', '110', '130']) {
      harness.advanceBy(1_000).mark(MARKET, price);
    }
    expect(summary(harness.take())).toEqual([
      ['sell', '1', false],
      ['buy', '1', false],
    ]);
  });

  it('with {} params sizes the smallest order the market accepts', () => {
    const harness = createStrategyHarness({
      strategy: trendFollower,
      params: { fastPeriod: 2, slowPeriod: 4, enterOnStart: true },
    });
    tradeMinutes(harness, falling);
    const [entry] = harness.take();
    expect(entry?.intent).toMatchObject({ side: 'sell', type: 'market' });
    // The averages are ready after four closes (the fourth, 104, closes when 102 trades).
    // Minimum notional 10 at 104 is 0.0961..., rounded up to the 0.001 step.
    const quantity = entry?.intent.kind === 'place' ? entry.intent.quantity : '';
    expect(quantity).toBe('0.097');
    expect(parseDecimal(quantity).times('104').gte(10)).toBe(true);
  });

  it('refuses a fast period that is not shorter than the slow one', () => {
    expect(() =>
      createStrategyHarness({ strategy: trendFollower, params: { fastPeriod: 5, slowPeriod: 5 } }),
    ).toThrow(/fastPeriod: fastPeriod must be shorter than slowPeriod/);
  });
});
