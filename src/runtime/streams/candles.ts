/**
 * Candles built from public trades, on the injected clock.
 *
 * The interface serves candles over REST only, and strategies want them as a stream, so the
 * runtime aggregates the trade stream itself. A bucket is `[open_time, open_time + interval)`,
 * aligned to the Unix epoch in UTC; weeks start on Monday 00:00 UTC, as exchanges number them.
 * A candle is emitted once, when it closes: when a trade of a later bucket arrives, or when the
 * clock reaches the bucket's end (plus an optional grace for trades still in flight). A bucket
 * without trades has no candle, as on the venue.
 */
import { Observable } from 'rxjs';
import { type Clock, isoTimestamp, type TimerHandle } from '../../core/clock.ts';
import { type Decimal, parseDecimal, toWire, ZERO } from '../../core/decimal.ts';
import { PaperbotError } from '../../core/errors.ts';
import {
  type Candle,
  type CandleInterval,
  parseTimestamp,
  type PublicTrade,
} from '../../protocol/index.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
/** 1970-01-01 was a Thursday; the first Monday is four days later. */
const FIRST_MONDAY = 4 * DAY;

export const CANDLE_INTERVALS: readonly CandleInterval[] = [
  '1m',
  '5m',
  '15m',
  '30m',
  '1h',
  '4h',
  '1d',
  '1w',
];

export const CANDLE_INTERVAL_MILLISECONDS: Readonly<Record<CandleInterval, number>> = {
  '1m': MINUTE,
  '5m': 5 * MINUTE,
  '15m': 15 * MINUTE,
  '30m': 30 * MINUTE,
  '1h': HOUR,
  '4h': 4 * HOUR,
  '1d': DAY,
  '1w': WEEK,
};

export function isCandleInterval(value: string): value is CandleInterval {
  return Object.hasOwn(CANDLE_INTERVAL_MILLISECONDS, value);
}

/** Epoch milliseconds of the start of the bucket that holds `epochMs`. */
export function candleBucketStart(epochMs: number, interval: CandleInterval): number {
  const length = CANDLE_INTERVAL_MILLISECONDS[interval];
  const offset = interval === '1w' ? FIRST_MONDAY : 0;
  return Math.floor((epochMs - offset) / length) * length + offset;
}

export interface CandlesFromTradesOptions {
  readonly interval: CandleInterval;
  readonly clock: Clock;
  /**
   * How long after a bucket's end the clock may run before the candle closes without a trade
   * of the next bucket. Live feeds deliver trades with some latency; replay and tests use 0.
   */
  readonly graceMs?: number;
  /** Called with each trade that belongs to a bucket already closed; such trades are dropped. */
  readonly onLateTrade?: (trade: PublicTrade) => void;
}

interface OpenBucket {
  readonly start: number;
  readonly marketId: string;
  readonly routeId: string;
  readonly open: Decimal;
  high: Decimal;
  low: Decimal;
  close: Decimal;
  volume: Decimal;
  /** Trade ids seen in this bucket: a trade delivered twice (resubscription) counts once. */
  readonly tradeIds: Set<string>;
  timer: TimerHandle | undefined;
}

function tradeTime(trade: PublicTrade): number {
  const time = parseTimestamp(trade.occurred_at);
  if (time === null) {
    throw new PaperbotError('INVALID_TIMESTAMP', `trade ${trade.trade_id} has no valid time`, {
      details: { occurredAt: trade.occurred_at },
    });
  }
  return time;
}

/**
 * Aggregates one market's trades into closed candles of one interval. Trades are expected in
 * time order, as the venue delivers them; a trade for a bucket that already closed is late
 * and dropped (reported through `onLateTrade`).
 */
export function candlesFromTrades(
  trades$: Observable<PublicTrade>,
  options: CandlesFromTradesOptions,
): Observable<Candle> {
  const { interval, clock } = options;
  const length = CANDLE_INTERVAL_MILLISECONDS[interval];
  const graceMs = Math.max(0, options.graceMs ?? 0);

  return new Observable<Candle>((subscriber) => {
    let bucket: OpenBucket | null = null;
    let lastClosedStart = Number.NEGATIVE_INFINITY;

    const close = (): void => {
      const closing = bucket;
      if (closing === null) return;
      bucket = null;
      clock.clearTimeout(closing.timer);
      lastClosedStart = closing.start;
      subscriber.next(
        Object.freeze({
          market_id: closing.marketId,
          route_id: closing.routeId,
          interval,
          open_time: isoTimestamp(closing.start),
          open: toWire(closing.open),
          high: toWire(closing.high),
          low: toWire(closing.low),
          close: toWire(closing.close),
          volume: toWire(closing.volume),
        }),
      );
    };

    const open = (start: number, trade: PublicTrade, price: Decimal): OpenBucket => {
      const opened: OpenBucket = {
        start,
        marketId: trade.market_id,
        routeId: trade.route_id,
        open: price,
        high: price,
        low: price,
        close: price,
        volume: ZERO,
        tradeIds: new Set(),
        timer: undefined,
      };
      // A trade whose bucket the clock has already passed still waits for the timer, so a
      // burst of such trades (a backfill) makes one candle rather than one per trade.
      const delay = Math.max(0, start + length + graceMs - clock.now());
      opened.timer = clock.setTimeout(() => {
        if (bucket === opened) close();
      }, delay);
      return opened;
    };

    const subscription = trades$.subscribe({
      next(trade) {
        let start: number;
        let price: Decimal;
        let quantity: Decimal;
        try {
          start = candleBucketStart(tradeTime(trade), interval);
          price = parseDecimal(trade.price);
          quantity = parseDecimal(trade.quantity);
        } catch (error) {
          subscriber.error(error);
          return;
        }
        if (start <= lastClosedStart || (bucket !== null && start < bucket.start)) {
          options.onLateTrade?.(trade);
          return;
        }
        if (bucket !== null && start > bucket.start) {
          close();
          if (subscriber.closed) return;
        }
        if (bucket === null) bucket = open(start, trade, price);
        if (bucket.tradeIds.has(trade.trade_id)) return;
        bucket.tradeIds.add(trade.trade_id);
        if (price.gt(bucket.high)) bucket.high = price;
        if (price.lt(bucket.low)) bucket.low = price;
        bucket.close = price;
        bucket.volume = bucket.volume.plus(quantity);
      },
      error(error) {
        subscriber.error(error);
      },
      complete() {
        // The bucket in progress has not closed, so it is not a candle yet.
        subscriber.complete();
      },
    });

    return () => {
      subscription.unsubscribe();
      if (bucket !== null) clock.clearTimeout(bucket.timer);
      bucket = null;
    };
  });
}

/**
 * The warm-up a strategy gets from a list of candles (the service's page, or a recording's):
 * the last `count` candles that closed by `nowMs`, oldest first, one per open time. The
 * service's page may hold the bucket still open; it is left out, as the stream would.
 */
export function closedCandleHistory(
  candles: readonly Candle[],
  interval: CandleInterval,
  nowMs: number,
  count: number,
): Candle[] {
  const length = CANDLE_INTERVAL_MILLISECONDS[interval];
  const byOpenTime = new Map<number, Candle>();
  for (const candle of candles) {
    const openTime = parseTimestamp(candle.open_time);
    if (openTime === null || candle.interval !== interval || openTime + length > nowMs) continue;
    byOpenTime.set(openTime, candle);
  }
  return [...byOpenTime.entries()]
    .sort(([left], [right]) => left - right)
    .slice(-count)
    .map(([, candle]) => candle);
}
