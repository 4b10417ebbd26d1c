/**
 * grid: a static grid of post-only limit orders around a reference price, re-armed after
 * each fill.
 *
 * Lines sit every `spacingTicks` ticks from the reference: buys on the `levels` lines below,
 * sells on the `levels` lines above, the reference line empty. When the buy on line k fills,
 * a sell goes on line k+1; when the sell on line k fills, a buy goes on line k-1. So each
 * line alternates between buying and selling, one line's spacing apart, and exactly one line
 * is empty at any time: the one that filled last.
 *
 * The reference is `referencePrice` or the first live mark, on the tick grid. At start the
 * strategy cancels any of its own orders left from an earlier run, then lays the grid.
 */
import { EMPTY, filter, merge, mergeMap, type Observable, take } from 'rxjs';
import { z } from 'zod';
import {
  cancelOrder,
  type Decimal,
  defineStrategy,
  limitOrder,
  nearestTick,
  offsetByTicks,
  type OrderIntent,
  parseDecimal,
  positiveDecimalString,
  smallestOrderQuantity,
  type StrategyContext,
} from 'paperbot/strategy';

const positiveDecimal = positiveDecimalString();

export const params = z.strictObject({
  /** Markets to run a grid on; empty runs one on every market the runtime knows. */
  markets: z.array(z.string().min(1)).default([]),
  /** Lines on each side of the reference. */
  levels: z.int().min(1).max(50).default(3),
  /** Distance between lines, in ticks. */
  spacingTicks: z.int().min(1).default(10),
  /** Order size; default the smallest order the market accepts at the lowest line. */
  quantity: positiveDecimal.optional(),
  /** Centre of the grid; default the first live mark. */
  referencePrice: positiveDecimal.optional(),
  leverage: z.int().min(1).max(200).optional(),
  marginMode: z.enum(['cross', 'isolated']).optional(),
});

export type GridParams = z.output<typeof params>;

/** Tags carry the line and side: `grid:-2:buy`. */
export function gridTag(line: number, side: 'buy' | 'sell'): string {
  return `grid:${line}:${side}`;
}

export function parseGridTag(
  tag: string | undefined,
): { line: number; side: 'buy' | 'sell' } | null {
  const match = /^grid:(-?\d+):(buy|sell)$/.exec(tag ?? '');
  if (match === null) return null;
  return { line: Number(match[1]), side: match[2] as 'buy' | 'sell' };
}

function runGrid(
  ctx: StrategyContext<GridParams>,
  settings: GridParams,
  marketId: string,
): Observable<OrderIntent> {
  const market = ctx.market(marketId);
  if (market.priceTick === null) {
    ctx.logger.warn('market has no price tick; no grid on it', { marketId });
    return EMPTY;
  }
  let reference: Decimal | null = null;
  let size: Decimal | null = null;

  const order = (line: number, side: 'buy' | 'sell'): OrderIntent[] => {
    if (reference === null || size === null) return [];
    if (Math.abs(line) > settings.levels) return [];
    const price = offsetByTicks(market, reference, line * settings.spacingTicks);
    if (price.lte(0)) return [];
    return [
      limitOrder({
        marketId,
        side,
        quantity: size,
        price,
        timeInForce: 'GTC',
        postOnly: true,
        leverage: settings.leverage,
        marginMode: settings.marginMode,
        tag: gridTag(line, side),
      }),
    ];
  };

  const lay = (centre: Decimal): OrderIntent[] => {
    reference = nearestTick(market, centre);
    const lowest = offsetByTicks(market, reference, -settings.levels * settings.spacingTicks);
    size =
      settings.quantity === undefined
        ? smallestOrderQuantity(market, lowest.gt(0) ? lowest : reference)
        : parseDecimal(settings.quantity);
    ctx.logger.info('laying grid', {
      marketId,
      reference: reference.toFixed(),
      size: size.toFixed(),
    });
    const leftovers = ctx
      .openOrders(marketId)
      .filter((open) => !open.cancelRequested)
      .map((open) => cancelOrder(open.clientOrderId));
    const lines: OrderIntent[] = [];
    for (let line = 1; line <= settings.levels; line++) {
      lines.push(...order(-line, 'buy'), ...order(line, 'sell'));
    }
    return [...leftovers, ...lines];
  };

  const start$: Observable<OrderIntent> =
    settings.referencePrice !== undefined
      ? ctx.timer(0).pipe(mergeMap(() => lay(parseDecimal(settings.referencePrice ?? '0'))))
      : ctx.ticker$(marketId).pipe(
          filter((ticker) => ticker.data_status === 'live' && ticker.mark_price !== null),
          take(1),
          mergeMap((ticker) => lay(parseDecimal(ticker.mark_price ?? '0'))),
        );

  const rearm$ = ctx.ownOrders$.pipe(
    filter((update) => update.order.market_id === marketId && update.order.status === 'FILLED'),
    mergeMap((update) => {
      const filled = parseGridTag(update.tag);
      if (filled === null) return [];
      return filled.side === 'buy' ? order(filled.line + 1, 'sell') : order(filled.line - 1, 'buy');
    }),
  );

  return merge(start$, rearm$);
}

export default defineStrategy({
  name: 'grid',
  description: 'Static grid of post-only limit orders around a reference, re-armed after fills.',
  params,
  create: (ctx, settings) => {
    const markets = settings.markets.length > 0 ? settings.markets : ctx.marketIds();
    return merge(...markets.map((marketId) => runGrid(ctx, settings, marketId)));
  },
});
