/**
 * The market maker as it was before its requote moved to bounds and cached offsets (kept as
 * the reference its differential test compares the strategy with; not a strategy to run).
 */
import { EMPTY, filter, map, merge, mergeMap, type Observable } from 'rxjs';
import { z } from 'zod';
import {
  cancelOrder,
  type Decimal,
  defineStrategy,
  limitOrder,
  type OrderIntent,
  parseDecimal,
  positiveDecimalString,
  priceOnTick,
  smallestOrderQuantity,
  type StrategyContext,
  type Ticker,
} from 'paperbot/strategy';

const positiveDecimal = positiveDecimalString();

export const params = z.strictObject({
  /** Markets to quote; empty quotes every market the runtime knows. */
  markets: z.array(z.string().min(1)).default([]),
  /** Distance of each quote from the mark, in ticks. */
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
  anchorMark: Decimal | null;
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
  const state: QuoteState = { anchorMark: null, position: null };
  const refreshDistance = tick.times(settings.refreshTicks);

  const pullQuotes = (): OrderIntent[] => {
    state.anchorMark = null;
    return ctx
      .openOrders(marketId)
      .filter((order) => (order.tag === BID_TAG || order.tag === ASK_TAG) && !order.cancelRequested)
      .map((order) => cancelOrder(order.clientOrderId));
  };

  const requote = (ticker: Ticker | null): OrderIntent[] => {
    if (ticker === null || ticker.data_status !== 'live' || ticker.mark_price === null) {
      return pullQuotes();
    }
    const mark = parseDecimal(ticker.mark_price);
    const position = ctx.position(marketId).quantity;
    const moved =
      state.anchorMark === null || mark.minus(state.anchorMark).abs().gte(refreshDistance);
    const positionChanged = state.position === null || !state.position.eq(position);
    if (!moved && !positionChanged) return [];
    state.anchorMark = mark;
    state.position = position;

    const size =
      settings.quantity === undefined
        ? smallestOrderQuantity(market, mark)
        : parseDecimal(settings.quantity);
    const inventory = position.div(size);
    const rawSkew = Math.round(Number(inventory.toFixed(6)) * settings.skewTicksPerQuote);
    const skew = Math.max(-settings.maxSkewTicks, Math.min(settings.maxSkewTicks, rawSkew));
    const limit = settings.maxInventoryQuotes;
    const wanted = [
      {
        tag: BID_TAG,
        side: 'buy' as const,
        price: priceOnTick(market, mark.minus(tick.times(settings.halfSpreadTicks + skew)), 'buy'),
        allowed: inventory.lt(limit),
      },
      {
        tag: ASK_TAG,
        side: 'sell' as const,
        price: priceOnTick(market, mark.plus(tick.times(settings.halfSpreadTicks - skew)), 'sell'),
        allowed: inventory.gt(-limit),
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
      if (quote.allowed && !keep && quote.price.gt(0)) {
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
  ).pipe(mergeMap((ticker) => requote(ticker)));
}

export default defineStrategy({
  name: 'market-maker-reference',
  description: 'Post-only bid and ask around the mark, skewed against inventory.',
  params,
  create: (ctx, settings) => {
    const markets = settings.markets.length > 0 ? settings.markets : ctx.marketIds();
    return merge(...markets.map((marketId) => quoteMarket(ctx, settings, marketId)));
  },
});
