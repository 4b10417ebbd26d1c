// The candle warm-up example of docs/strategies.md, kept here so that it compiles and its test runs.
import { mergeMap } from 'rxjs';
import { SMA } from 'trading-signals';
import { z } from 'zod';
import { defineStrategy, targetPosition } from 'paperbot/strategy';

export default defineStrategy({
  name: 'sma-trend',
  description: 'Long while the 1m close is above its simple moving average, flat below it.',
  params: z.strictObject({
    market: z.string().default('BTC-PERP'),
    period: z.int().min(2).max(200).default(20),
    quantity: z.string().default('0.5'),
  }),
  // Load `period` closed 1m candles before the strategy starts: the average is ready at once.
  candleHistory: (params) => [{ marketId: params.market, interval: '1m', count: params.period }],
  create(ctx, params) {
    const sma = new SMA(params.period);
    return ctx.candles$(params.market, '1m').pipe(
      mergeMap((candle) => {
        sma.add(Number(candle.close));
        if (!sma.isStable) return [];
        const target = Number(candle.close) > sma.getResultOrThrow() ? params.quantity : '0';
        return targetPosition(ctx, params.market, target, { tag: 'sma-trend' });
      }),
    );
  },
});
