// The example of docs/strategies.md, kept here so that it compiles and its test runs.
import { map, mergeMap, pairwise } from 'rxjs';
import { z } from 'zod';
import { defineStrategy, parseDecimal, targetPosition } from 'paperbot/strategy';

export default defineStrategy({
  name: 'breakout',
  description: 'Long while 1m closes break the previous high; flat when they break the low.',
  params: z.strictObject({
    market: z.string().default('BTC-PERP'),
    quantity: z.string().default('0.5'),
  }),
  create: (ctx, params) =>
    ctx.candles$(params.market, '1m').pipe(
      pairwise(),
      map(([previous, current]) => {
        const close = parseDecimal(current.close);
        if (close.gt(parseDecimal(previous.high))) return params.quantity;
        if (close.lt(parseDecimal(previous.low))) return '0';
        return null;
      }),
      mergeMap((target) =>
        target === null ? [] : targetPosition(ctx, params.market, target, { tag: 'breakout' }),
      ),
    ),
});
