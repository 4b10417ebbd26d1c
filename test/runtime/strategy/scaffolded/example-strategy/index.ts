/**
 * example-strategy: keeps one post-only limit bid `offsetTicks` ticks below the mark of each market.
 * A starting point: replace `bidBelowMark` with your own logic.
 */
import { filter, merge, mergeMap, type Observable } from 'rxjs';
import { z } from 'zod';
import {
  defineStrategy,
  limitOrder,
  type OrderIntent,
  offsetByTicks,
  parseDecimal,
  priceOnTick,
  type StrategyContext,
  smallestOrderQuantity,
} from 'paperbot/strategy';

export const TAG = 'example-strategy-bid';

export const params = z.strictObject({
  /** Markets to trade; empty means every market the runtime knows. */
  markets: z.array(z.string().min(1)).default([]),
  /** How far below the mark the bid rests, in ticks. */
  offsetTicks: z.int().min(1).default(5),
});

export type Params = z.output<typeof params>;

function bidBelowMark(
  ctx: StrategyContext<Params>,
  settings: Params,
  marketId: string,
): Observable<OrderIntent> {
  const market = ctx.market(marketId);
  return ctx.ticker$(marketId).pipe(
    filter((ticker) => ticker.data_status === 'live' && ticker.mark_price !== null),
    // Only when no bid of ours is open or in flight.
    filter(() => ctx.openOrders(marketId).every((order) => order.tag !== TAG)),
    mergeMap((ticker) => {
      const mark = parseDecimal(ticker.mark_price ?? '0');
      const below = offsetByTicks(market, mark, -settings.offsetTicks);
      const price = priceOnTick(market, below, 'buy');
      if (price.lte(0)) return [];
      const quantity = smallestOrderQuantity(market, price);
      return [limitOrder({ marketId, side: 'buy', quantity, price, postOnly: true, tag: TAG })];
    }),
  );
}

export default defineStrategy({
  name: 'example-strategy',
  description: 'Keeps one post-only bid below the mark.',
  params,
  create: (ctx, settings) => {
    const markets = settings.markets.length > 0 ? settings.markets : ctx.marketIds();
    return merge(...markets.map((marketId) => bidBelowMark(ctx, settings, marketId)));
  },
});
