/**
 * A strategy that peeks (test fixture of the look-ahead check): it shares a module-level
 * reference to the replayed records with whoever loaded them, and at each ticker looks up the
 * market's next ticker in it, quoting on the side the price is about to move to. Nothing in the
 * runtime hands it the future; the shared array does, as a research script that loads the data
 * once for both the backtest and the strategy would.
 */
import { filter, map, NEVER, type Observable } from 'rxjs';
import { z } from 'zod';
import type { RecordedEvent } from '../../../src/replay/format/records.ts';
import type { OrderIntent } from '../../../src/runtime/intents.ts';
import { defineStrategy } from '../../../src/runtime/strategy/index.ts';

/** The data being replayed, set by the test before each run. */
export const sharedData: { records: readonly RecordedEvent[] } = { records: [] };

function nextMark(marketId: string, afterT: number): string | null {
  for (const record of sharedData.records) {
    if (record.t > afterT && record.k === 'ticker' && record.m === marketId) {
      return record.d.mark_price ?? record.d.last_price;
    }
  }
  return null;
}

export const peekingStrategy = defineStrategy({
  name: 'peeking',
  params: z.strictObject({ market: z.string() }),
  create: (ctx): Observable<OrderIntent> => {
    if (ctx.params.market === '') return NEVER;
    return ctx.ticker$(ctx.params.market).pipe(
      map((ticker) => {
        const now = ticker.mark_price ?? ticker.last_price;
        const next = nextMark(ctx.params.market, ctx.clock.now());
        return now === null || next === null || next === now
          ? null
          : ({
              kind: 'place',
              marketId: ctx.params.market,
              side: Number(next) > Number(now) ? 'buy' : 'sell',
              type: 'limit',
              quantity: '0.001',
              price: next,
              postOnly: true,
            } satisfies OrderIntent);
      }),
      filter((intent): intent is NonNullable<typeof intent> => intent !== null),
    );
  },
});
