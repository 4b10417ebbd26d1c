import fc from 'fast-check';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { isoTimestamp, VirtualClock } from '../../../src/core/clock.ts';
import { Candle, type CandleInterval, type PublicTrade } from '../../../src/protocol/index.ts';
import {
  CANDLE_INTERVAL_MILLISECONDS,
  CANDLE_INTERVALS,
  candleBucketStart,
  candlesFromTrades,
} from '../../../src/runtime/streams/candles.ts';

const MONDAY = Date.UTC(2024, 0, 1);
const MINUTE = 60_000;

let tradeNumber = 0;
function trade(at: number, price: string, quantity = '1', tradeId?: string): PublicTrade {
  tradeNumber += 1;
  return {
    trade_id: tradeId ?? `t${tradeNumber}`,
    market_id: 'BTC-PERP',
    route_id: 'svc-paper',
    price,
    quantity,
    side: 'buy',
    occurred_at: isoTimestamp(at),
  };
}

function setup(interval: CandleInterval, start = MONDAY, graceMs = 0) {
  const clock = new VirtualClock(start);
  const trades = new Subject<PublicTrade>();
  const candles: Candle[] = [];
  const late: PublicTrade[] = [];
  const subscription = candlesFromTrades(trades, {
    interval,
    clock,
    graceMs,
    onLateTrade: (value) => late.push(value),
  }).subscribe((candle) => candles.push(candle));
  /** Delivers a trade when the clock reads its time, as a live feed would. */
  const at = (time: number, price: string, quantity = '1', tradeId?: string) => {
    clock.advanceTo(Math.max(time, clock.now()));
    trades.next(trade(time, price, quantity, tradeId));
  };
  return { clock, trades, candles, late, subscription, at };
}

describe('candleBucketStart', () => {
  it('puts every instant in the bucket that holds it, aligned to UTC (weeks from Monday)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        fc.constantFrom(...CANDLE_INTERVALS),
        (time, interval) => {
          const start = candleBucketStart(time, interval);
          const length = CANDLE_INTERVAL_MILLISECONDS[interval];
          expect(start).toBeLessThanOrEqual(time);
          expect(time).toBeLessThan(start + length);
          if (interval === '1w') {
            expect(new Date(start).getUTCDay()).toBe(1);
            expect(Math.abs(start % 86_400_000)).toBe(0);
          } else {
            expect(start % length).toBe(0);
          }
        },
      ),
    );
  });

  it('starts a new bucket exactly at the end of the previous one', () => {
    for (const interval of CANDLE_INTERVALS) {
      const start = candleBucketStart(MONDAY, interval);
      const length = CANDLE_INTERVAL_MILLISECONDS[interval];
      expect(start).toBe(MONDAY);
      expect(candleBucketStart(MONDAY + length - 1, interval)).toBe(MONDAY);
      expect(candleBucketStart(MONDAY + length, interval)).toBe(MONDAY + length);
      expect(candleBucketStart(MONDAY - 1, interval)).toBe(MONDAY - length);
    }
  });
});

describe('candlesFromTrades', () => {
  it('closes a candle when a trade of the next bucket arrives, with exact OHLCV', () => {
    const { candles, at } = setup('1m');
    at(MONDAY + 1_000, '100.1', '0.1');
    at(MONDAY + 20_000, '101.3', '0.2');
    at(MONDAY + 30_000, '99.7', '0.3');
    at(MONDAY + MINUTE - 1, '100.2', '0.4');
    expect(candles).toEqual([]);
    at(MONDAY + MINUTE, '100.5', '1');
    expect(candles).toEqual([
      {
        market_id: 'BTC-PERP',
        route_id: 'svc-paper',
        interval: '1m',
        open_time: '2024-01-01T00:00:00.000Z',
        open: '100.1',
        high: '101.3',
        low: '99.7',
        close: '100.2',
        volume: '1',
      },
    ]);
    expect(Candle.safeParse(candles[0]).success).toBe(true);
    expect(Object.isFrozen(candles[0])).toBe(true);
  });

  it('closes a candle when the clock reaches the end of its bucket, not before', () => {
    const { clock, candles, at } = setup('5m');
    at(MONDAY + 10_000, '10');
    clock.advanceTo(MONDAY + 5 * MINUTE - 1);
    expect(candles).toHaveLength(0);
    clock.advanceTo(MONDAY + 5 * MINUTE);
    expect(candles.map((candle) => candle.open_time)).toEqual(['2024-01-01T00:00:00.000Z']);
    // The next trade opens the next bucket; nothing is emitted twice.
    at(MONDAY + 5 * MINUTE + 1, '11');
    clock.advanceTo(MONDAY + 10 * MINUTE);
    expect(candles.map((candle) => [candle.open_time, candle.close])).toEqual([
      ['2024-01-01T00:00:00.000Z', '10'],
      ['2024-01-01T00:05:00.000Z', '11'],
    ]);
  });

  it.each(CANDLE_INTERVALS)('aggregates %s buckets on virtual time', (interval) => {
    const length = CANDLE_INTERVAL_MILLISECONDS[interval];
    const { clock, candles, at } = setup(interval);
    at(MONDAY, '5', '2');
    at(MONDAY + length - 1, '7', '3');
    at(MONDAY + length + 1, '6', '1');
    expect(candles).toHaveLength(1);
    expect(candles[0]).toMatchObject({
      interval,
      open_time: isoTimestamp(MONDAY),
      open: '5',
      high: '7',
      low: '5',
      close: '7',
      volume: '5',
    });
    clock.advanceTo(MONDAY + 2 * length);
    expect(candles).toHaveLength(2);
    expect(candles[1]).toMatchObject({ open_time: isoTimestamp(MONDAY + length), volume: '1' });
  });

  it('leaves buckets without trades out', () => {
    const { clock, candles, at } = setup('1m');
    at(MONDAY + 1, '1');
    at(MONDAY + 3 * MINUTE + 5, '2');
    clock.advanceTo(MONDAY + 10 * MINUTE);
    expect(candles.map((candle) => candle.open_time)).toEqual([
      '2024-01-01T00:00:00.000Z',
      '2024-01-01T00:03:00.000Z',
    ]);
  });

  it('waits the grace period for trades in flight', () => {
    const { clock, candles, trades } = setup('1m', MONDAY, 500);
    trades.next(trade(MONDAY + 100, '1'));
    clock.advanceTo(MONDAY + MINUTE + 200);
    trades.next(trade(MONDAY + MINUTE - 10, '3'));
    expect(candles).toHaveLength(0);
    clock.advanceTo(MONDAY + MINUTE + 500);
    expect(candles).toHaveLength(1);
    expect(candles[0]).toMatchObject({ close: '3', volume: '2' });
  });

  it('drops and reports trades of a bucket already closed, and counts a repeated trade once', () => {
    const { clock, candles, late, at, trades } = setup('1m');
    at(MONDAY + 1, '1', '1', 'same');
    trades.next(trade(MONDAY + 2, '1', '1', 'same'));
    clock.advanceTo(MONDAY + MINUTE);
    expect(candles[0]?.volume).toBe('1');
    const stale = trade(MONDAY + 3, '9');
    trades.next(stale);
    expect(late).toEqual([stale]);
    at(MONDAY + MINUTE + 1, '2');
    clock.advanceTo(MONDAY + 2 * MINUTE);
    expect(candles.map((candle) => candle.high)).toEqual(['1', '2']);
  });

  it('groups a burst of trades whose bucket the clock has already passed into one candle', () => {
    const { clock, candles, trades } = setup('1m', MONDAY + 10 * MINUTE);
    trades.next(trade(MONDAY + 1, '1'));
    trades.next(trade(MONDAY + 2, '2'));
    expect(candles).toHaveLength(0);
    clock.advanceBy(0);
    expect(candles).toHaveLength(1);
    expect(candles[0]).toMatchObject({ open: '1', close: '2', volume: '2' });
  });

  it('keeps decimal arithmetic exact', () => {
    const { clock, candles, at } = setup('1m');
    at(MONDAY, '0.1', '0.1');
    at(MONDAY + 1, '0.2', '0.2');
    clock.advanceTo(MONDAY + MINUTE);
    expect(candles[0]).toMatchObject({ volume: '0.3', high: '0.2', low: '0.1' });
  });

  it('releases its timer when unsubscribed', () => {
    const { clock, subscription, at } = setup('1h');
    at(MONDAY + 5, '1');
    expect(clock.pendingTimers()).toBe(1);
    subscription.unsubscribe();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('turns a malformed trade into an error notification', () => {
    const clock = new VirtualClock(MONDAY);
    const trades = new Subject<PublicTrade>();
    const errors: unknown[] = [];
    candlesFromTrades(trades, { interval: '1m', clock }).subscribe({
      error: (error) => errors.push(error),
    });
    trades.next({ ...trade(MONDAY, '1'), price: 'abc' });
    expect(errors).toHaveLength(1);
    expect((errors[0] as { code: string }).code).toBe('INVALID_DECIMAL');
  });
});
