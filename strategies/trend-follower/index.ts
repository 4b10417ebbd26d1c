/**
 * trend-follower: an EMA crossover on each market.
 *
 * Closing prices of candles built from trades (or, with `source: 'ticker'`, each mark) feed a
 * fast and a slow exponential moving average from the `trading-signals` library. When the fast
 * average crosses above the slow one the strategy targets a long position of `quantity`; when
 * it crosses below, a short one (or flat, with `allowShort: false`). Orders come from
 * `targetPosition`, so pending orders count and a flip is a reduce-only close plus an entry.
 *
 * Indicators are analysis, not money, so they run on the library's fast number classes; what
 * reaches an intent (the quantity) stays a decimal on the market's step grid.
 */
import { EMPTY, map, merge, mergeMap, type Observable } from 'rxjs';
import { EMA } from 'trading-signals';
import { z } from 'zod';
import {
  type Decimal,
  defineStrategy,
  type OrderIntent,
  parseDecimal,
  positiveDecimalString,
  smallestOrderQuantity,
  type StrategyContext,
  targetPosition,
} from 'paperbot/strategy';

const positiveDecimal = positiveDecimalString();

export const params = z
  .strictObject({
    /** Markets to trade; empty trades every market the runtime knows. */
    markets: z.array(z.string().min(1)).default([]),
    /** `candles`: closes of candles built from trades; `ticker`: every mark price. */
    source: z.enum(['candles', 'ticker']).default('candles'),
    interval: z.enum(['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w']).default('1m'),
    fastPeriod: z.int().min(1).default(9),
    slowPeriod: z.int().min(2).default(21),
    /** Position size; default the smallest order each market accepts at the price. */
    quantity: positiveDecimal.optional(),
    allowShort: z.boolean().default(true),
    /** Take a position on the first trend seen, rather than waiting for a crossover. */
    enterOnStart: z.boolean().default(false),
    maxSlippagePercent: positiveDecimal.optional(),
    leverage: z.int().min(1).max(200).optional(),
  })
  .refine((value) => value.fastPeriod < value.slowPeriod, {
    message: 'fastPeriod must be shorter than slowPeriod',
    path: ['fastPeriod'],
  });

export type TrendFollowerParams = z.output<typeof params>;

export const TREND_TAG = 'trend';

type Trend = 'up' | 'down';

function followMarket(
  ctx: StrategyContext<TrendFollowerParams>,
  settings: TrendFollowerParams,
  marketId: string,
): Observable<OrderIntent> {
  const market = ctx.market(marketId);
  const fast = new EMA(settings.fastPeriod);
  const slow = new EMA(settings.slowPeriod);
  let trend: Trend | null = null;

  const prices$: Observable<string> =
    settings.source === 'candles'
      ? ctx.candles$(marketId, settings.interval).pipe(map((candle) => candle.close))
      : ctx
          .ticker$(marketId)
          .pipe(
            mergeMap((ticker) =>
              ticker.data_status === 'live' && ticker.mark_price !== null
                ? [ticker.mark_price]
                : [],
            ),
          );

  const onPrice = (text: string): readonly OrderIntent[] => {
    const price: Decimal = parseDecimal(text);
    const value = Number(text);
    fast.add(value);
    slow.add(value);
    if (!fast.isStable || !slow.isStable) return [];
    const fastValue = fast.getResultOrThrow();
    const slowValue = slow.getResultOrThrow();
    if (fastValue === slowValue) return [];
    const next: Trend = fastValue > slowValue ? 'up' : 'down';
    const previous = trend;
    trend = next;
    if (previous === next || (previous === null && !settings.enterOnStart)) return [];
    const size =
      settings.quantity === undefined
        ? smallestOrderQuantity(market, price)
        : parseDecimal(settings.quantity);
    const target = next === 'up' ? size : settings.allowShort ? size.neg() : parseDecimal('0');
    ctx.logger.info('trend changed', { marketId, trend: next, fast: fastValue, slow: slowValue });
    return targetPosition(ctx, marketId, target, {
      tag: TREND_TAG,
      pending: 'tagged',
      referencePrice: price,
      maxSlippagePercent: settings.maxSlippagePercent,
      leverage: settings.leverage,
    });
  };

  return prices$.pipe(mergeMap(onPrice));
}

export default defineStrategy({
  name: 'trend-follower',
  description: 'EMA fast/slow crossover on candles built from trades; long, short or flat.',
  params,
  create: (ctx, settings) => {
    const markets = settings.markets.length > 0 ? settings.markets : ctx.marketIds();
    if (markets.length === 0) return EMPTY;
    return merge(...markets.map((marketId) => followMarket(ctx, settings, marketId)));
  },
});
