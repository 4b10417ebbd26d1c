/**
 * market-maker: quotes a post-only bid and ask around the mark (or the index) of each market.
 *
 * - The quotes sit `halfSpreadTicks` ticks either side of the anchor, on the tick grid (the bid
 *   rounded down, the ask up). The anchor is the mark, or with `anchor: index` the index price:
 *   a perpetual's mark swings around its index (the premium), so quotes far enough from the
 *   index are filled when the mark has swung out and tends to come back, not only when the
 *   price has moved on for good.
 * - Inventory skew: both quotes shift against the position, `skewTicksPerQuote` ticks for each
 *   quote-sized unit held (long: lower, to sell more readily; short: higher), at most
 *   `maxSkewTicks`. Beyond `maxInventoryQuotes` quote sizes it stops quoting the side that
 *   would add to the position.
 * - It requotes when the anchor has moved `refreshTicks` ticks from where it last quoted, or when
 *   the position changes; a quote whose price is no longer wanted is cancelled by its client
 *   order id, and a new one placed.
 * - When the feed is not live (stale, unavailable, or no mark) it pulls its quotes.
 */
import { EMPTY, filter, map, merge, Observable, type OperatorFunction } from 'rxjs';
import { z } from 'zod';
import {
  cancelOrder,
  type Decimal,
  decimal,
  defineStrategy,
  limitOrder,
  type OrderIntent,
  parseDecimal,
  positiveDecimalString,
  priceOnTick,
  smallestOrderQuantity,
  type StrategyContext,
  type Ticker,
  ZERO,
} from 'paperbot/strategy';

const positiveDecimal = positiveDecimalString();

export const params = z.strictObject({
  /** Markets to quote; empty quotes every market the runtime knows. */
  markets: z.array(z.string().min(1)).default([]),
  /** What the quotes are placed around: the mark, or the index price (the mark without premium). */
  anchor: z.enum(['mark', 'index']).default('mark'),
  /** Distance of each quote from the anchor, in ticks. */
  halfSpreadTicks: z.int().min(1).default(5),
  /** Quote size; default the smallest order each market accepts at the mark. */
  quantity: positiveDecimal.optional(),
  /** Ticks both quotes move against the position per quote-sized unit held. */
  skewTicksPerQuote: z.int().min(0).default(1),
  maxSkewTicks: z.int().min(0).default(10),
  /** Requote when the mark moves this many ticks from where the quotes were set. */
  refreshTicks: z.int().min(1).default(2),
  /** Stop quoting the side that adds to the position beyond this many quote sizes. */
  maxInventoryQuotes: z.int().min(1).default(5),
  leverage: z.int().min(1).max(200).optional(),
  marginMode: z.enum(['cross', 'isolated']).optional(),
});

export type MarketMakerParams = z.output<typeof params>;

export const BID_TAG = 'mm-bid';
export const ASK_TAG = 'mm-ask';

interface QuoteState {
  /**
   * The mark has moved `refreshTicks` once it reaches either bound: the mark of the last quote,
   * less and plus that distance.
   */
  lowerBound: Decimal | null;
  upperBound: Decimal | null;
  position: Decimal | null;
}

function quoteMarket(
  ctx: StrategyContext<MarketMakerParams>,
  settings: MarketMakerParams,
  marketId: string,
): Observable<OrderIntent> {
  const market = ctx.market(marketId);
  const tick = market.priceTick;
  if (tick === null) {
    ctx.logger.warn('market has no price tick; not quoting it', { marketId });
    return EMPTY;
  }
  const state: QuoteState = { lowerBound: null, upperBound: null, position: null };
  const refreshDistance = tick.times(settings.refreshTicks);
  // The inventory bounds as decimals once, not parsed from numbers on every requote.
  const inventoryHigh = decimal(settings.maxInventoryQuotes);
  const inventoryLow = decimal(-settings.maxInventoryQuotes);
  // A quote's distance from the mark, by its tick count: at most 2 * maxSkewTicks + 1 of them.
  const offsets = new Map<number, Decimal>();
  const offset = (ticks: number): Decimal => {
    let value = offsets.get(ticks);
    if (value === undefined) {
      value = tick.times(ticks);
      offsets.set(ticks, value);
    }
    return value;
  };

  const pullQuotes = (): OrderIntent[] => {
    state.lowerBound = null;
    state.upperBound = null;
    return ctx
      .openOrders(marketId)
      .filter((order) => (order.tag === BID_TAG || order.tag === ASK_TAG) && !order.cancelRequested)
      .map((order) => cancelOrder(order.clientOrderId));
  };

  const requote = (ticker: Ticker | null): OrderIntent[] => {
    if (ticker === null || ticker.data_status !== 'live' || ticker.mark_price === null) {
      return pullQuotes();
    }
    // The anchor (named `mark` below): the index when asked for and known, else the mark.
    const mark = parseDecimal(
      settings.anchor === 'index' && ticker.index_price !== null
        ? ticker.index_price
        : ticker.mark_price,
    );
    const position = ctx.position(marketId).quantity;
    // |mark - anchor| >= distance, as two comparisons against bounds set once per requote.
    const moved =
      state.lowerBound === null ||
      state.upperBound === null ||
      mark.lte(state.lowerBound) ||
      mark.gte(state.upperBound);
    const positionChanged =
      state.position === null || (state.position !== position && !state.position.eq(position));
    if (!moved && !positionChanged) return [];
    state.lowerBound = mark.minus(refreshDistance);
    state.upperBound = mark.plus(refreshDistance);
    state.position = position;

    const size =
      settings.quantity === undefined
        ? smallestOrderQuantity(market, mark)
        : parseDecimal(settings.quantity);
    // No position (often): no division to 36 places. A zero size still divides (and throws).
    const inventory = position.eq(ZERO) && !size.eq(ZERO) ? ZERO : position.div(size);
    // No inventory (often): no skew, without printing the zero to read it back.
    const rawSkew =
      inventory === ZERO
        ? 0
        : Math.round(Number(inventory.toFixed(6)) * settings.skewTicksPerQuote);
    const skew = Math.max(-settings.maxSkewTicks, Math.min(settings.maxSkewTicks, rawSkew));
    const wanted = [
      {
        tag: BID_TAG,
        side: 'buy' as const,
        price: priceOnTick(market, mark.minus(offset(settings.halfSpreadTicks + skew)), 'buy'),
        allowed: inventory.lt(inventoryHigh),
      },
      {
        tag: ASK_TAG,
        side: 'sell' as const,
        price: priceOnTick(market, mark.plus(offset(settings.halfSpreadTicks - skew)), 'sell'),
        allowed: inventory.gt(inventoryLow),
      },
    ];

    const intents: OrderIntent[] = [];
    // Read once: the intents below are emitted after both quotes are decided.
    const open = ctx.openOrders(marketId);
    for (const quote of wanted) {
      const live = open.filter((order) => order.tag === quote.tag && !order.cancelRequested);
      let keep = false;
      for (const order of live) {
        const current = quote.allowed && order.price !== null && order.price.eq(quote.price);
        if (current && !keep) keep = true;
        else intents.push(cancelOrder(order.clientOrderId));
      }
      if (quote.allowed && !keep && quote.price.gt(ZERO)) {
        intents.push(
          limitOrder({
            marketId,
            side: quote.side,
            quantity: size,
            price: quote.price,
            timeInForce: 'GTC',
            postOnly: true,
            leverage: settings.leverage,
            marginMode: settings.marginMode,
            tag: quote.tag,
          }),
        );
      }
    }
    return intents;
  };

  return merge(
    ctx.ticker$(marketId),
    ctx.positions$.pipe(
      filter((position) => position.market_id === marketId),
      map(() => ctx.lastTicker(marketId)),
    ),
  ).pipe(map(requote), eachOf());
}

/**
 * The items of each list, one by one and in order, as `mergeAll` hands on an array, without
 * an inner observable and subscription for every list (a requote's few intents, or none).
 */
function eachOf<T>(): OperatorFunction<readonly T[], T> {
  return (source) =>
    new Observable<T>((subscriber) =>
      source.subscribe({
        next: (items) => {
          for (const item of items) subscriber.next(item);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
}

export default defineStrategy({
  name: 'market-maker',
  description: 'Post-only bid and ask around the mark, skewed against inventory.',
  params,
  create: (ctx, settings) => {
    const markets = settings.markets.length > 0 ? settings.markets : ctx.marketIds();
    return merge(...markets.map((marketId) => quoteMarket(ctx, settings, marketId)));
  },
});
