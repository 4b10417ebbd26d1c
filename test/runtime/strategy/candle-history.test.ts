import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../../src/core/clock.ts';
import { closedCandleHistory } from '../../../src/runtime/streams/candles.ts';
import { defineStrategy } from 'paperbot/strategy';
import { createStrategyHarness, TEST_START_TIME, testCandle } from 'paperbot/testing';
import { EMPTY } from 'rxjs';
import { z } from 'zod';
import smaTrend from './docs-example/sma-warmup.ts';

const MINUTE = 60_000;
const t0 = TEST_START_TIME;

/** `count` flat 1m candles at `close`, the last one closing exactly at `end`. */
function flatHistory(count: number, close: string, end: number) {
  return Array.from({ length: count }, (_, index) =>
    testCandle({ market_id: 'BTC-PERP', close }, '1m', end - (count - index) * MINUTE),
  );
}

describe('closedCandleHistory', () => {
  it('keeps the last count closed candles of the interval, oldest first, once per open time', () => {
    const at = (minutesBefore: number, close: string) =>
      testCandle({ market_id: 'BTC-PERP', close }, '1m', t0 - minutesBefore * MINUTE);
    const page = [
      at(0, '9'), // the bucket still open at t0
      at(1, '8'),
      at(3, '6'),
      at(2, '7'),
      at(2, '7'), // a duplicate open time
      testCandle({ market_id: 'BTC-PERP', close: '5' }, '5m', t0 - 5 * MINUTE), // another interval
    ];
    const kept = closedCandleHistory(page, '1m', t0, 2);
    expect(kept.map((candle) => candle.close)).toEqual(['7', '8']);
    expect(closedCandleHistory(page, '1m', t0, 10).map((candle) => candle.open_time)).toEqual([
      isoTimestamp(t0 - 3 * MINUTE),
      isoTimestamp(t0 - 2 * MINUTE),
      isoTimestamp(t0 - MINUTE),
    ]);
    // A candle counts as closed exactly at its end.
    expect(closedCandleHistory(page, '1m', t0 + MINUTE, 1)[0]?.close).toBe('9');
  });
});

describe('candle warm-up through the strategy harness', () => {
  it('starts candles$ with the history, so the indicator is ready for the first live candle', () => {
    const harness = createStrategyHarness({
      strategy: smaTrend,
      params: {},
      respond: 'accept',
      candleHistory: flatHistory(25, '100', t0),
    });
    expect(harness.logs.map((line) => line.message)).toContain('candle history loaded');
    // Flat at the average: no position wanted, nothing emitted from history alone.
    expect(harness.take()).toEqual([]);
    harness.at(t0 + 1_000).trade({ market_id: 'BTC-PERP', price: '105' });
    harness.advanceTo(t0 + MINUTE); // the clock closes the first live minute
    const intents = harness.take().map((stamped) => stamped.intent);
    expect(intents).toEqual([
      expect.objectContaining({
        kind: 'place',
        marketId: 'BTC-PERP',
        side: 'buy',
        quantity: '0.5',
      }),
    ]);
  });

  it('without history the same first candle is not enough for the indicator', () => {
    const harness = createStrategyHarness({ strategy: smaTrend, params: {}, respond: 'accept' });
    expect(harness.logs.map((line) => line.message)).toContain('less candle history than asked');
    harness.at(t0 + 1_000).trade({ market_id: 'BTC-PERP', price: '105' });
    harness.advanceTo(t0 + MINUTE);
    expect(harness.take()).toEqual([]);
  });

  it('gives ctx.candleHistory the closed candles asked for, and only those', () => {
    let seen: readonly string[] = [];
    const strategy = defineStrategy({
      name: 'peek',
      params: z.strictObject({}),
      candleHistory: () => [{ marketId: 'BTC-PERP', interval: '1m', count: 3 }],
      create: (ctx) => {
        seen = ctx.candleHistory('BTC-PERP', '1m').map((candle) => candle.open_time);
        return EMPTY;
      },
    });
    const open = testCandle({ market_id: 'BTC-PERP', close: '1' }, '1m', t0); // not closed yet
    createStrategyHarness({ strategy, candleHistory: [...flatHistory(5, '100', t0), open] });
    expect(seen).toEqual([3, 2, 1].map((minutes) => isoTimestamp(t0 - minutes * MINUTE)));
  });

  it.each([
    { count: 0, interval: '1m' },
    { count: 1001, interval: '1m' },
    { count: 1.5, interval: '1m' },
    { count: 5, interval: '2m' },
  ])('fails a strategy that asks for %j', (request) => {
    const strategy = defineStrategy({
      name: 'bad-history',
      params: z.strictObject({}),
      candleHistory: () => [{ marketId: 'BTC-PERP', ...request } as never],
      create: () => EMPTY,
    });
    const harness = createStrategyHarness({ strategy });
    expect(harness.status()).toBe('failed');
    expect(harness.failures[0]?.error).toMatchObject({ code: 'STRATEGY_INVALID_HISTORY' });
  });

  it('fails a strategy that asks for history of a market the runtime does not know', () => {
    const strategy = defineStrategy({
      name: 'unknown-market',
      params: z.strictObject({}),
      candleHistory: () => [{ marketId: 'NOPE-PERP', interval: '1m', count: 5 }],
      create: () => EMPTY,
    });
    const harness = createStrategyHarness({ strategy });
    expect(harness.status()).toBe('failed');
    expect(harness.failures[0]?.error).toMatchObject({ code: 'UNKNOWN_MARKET' });
  });
});
