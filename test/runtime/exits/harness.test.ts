/**
 * Emulated exits through the strategy harness on virtual time: the bracket strategy of
 * docs/strategies.md, driven tick by tick — the legs wait for the entry's fill, the stop-loss
 * fires on the trade at its level as a reduce-only market sell, and the take-profit is
 * cancelled with it.
 */
import { map, take } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  bracket,
  defineStrategy,
  limitOrder,
  parseDecimal,
  priceOnTick,
  trailingStop,
} from 'paperbot/strategy';
import { createStrategyHarness } from 'paperbot/testing';

// The example of docs/strategies.md, as printed there.
const bracketedDipBuyer = defineStrategy({
  name: 'bracketed-dip-buyer',
  description: 'Bids 1% under the mark once, with a 2% stop-loss and a 3% take-profit.',
  params: z.strictObject({ marketId: z.string(), quantity: z.string() }),
  create: (ctx, params) => {
    const market = ctx.market(params.marketId);
    return ctx.ticker$(params.marketId).pipe(
      take(1),
      map((ticker) => {
        const mark = parseDecimal(ticker.mark_price ?? '0');
        const entry = priceOnTick(market, mark.times('0.99'), 'buy');
        return bracket({
          entry: limitOrder({
            marketId: params.marketId,
            side: 'buy',
            quantity: params.quantity,
            price: entry,
          }),
          stopLoss: { triggerPrice: priceOnTick(market, entry.times('0.98'), 'sell') },
          takeProfit: { triggerPrice: priceOnTick(market, entry.times('1.03'), 'sell') },
          triggerSource: 'last',
        });
      }),
    );
  },
});

describe('emulated exits in the strategy harness', () => {
  it('runs the documented bracket: entry, legs on its fill, stop-loss fires, take-profit cancelled', () => {
    const harness = createStrategyHarness({
      strategy: bracketedDipBuyer,
      params: { marketId: 'BTC-PERP', quantity: '0.01' },
      respond: 'accept',
    });
    harness.mark('BTC-PERP', '100');
    const [stamped, entry] = harness.take();
    expect(stamped?.intent).toMatchObject({
      kind: 'bracket',
      entry: { type: 'limit', price: '99', side: 'buy' },
      stopLoss: { triggerPrice: '97.5' },
      takeProfit: { triggerPrice: '102' },
    });
    const id = stamped!.requestId;
    expect(entry).toMatchObject({ requestId: id, clientOrderId: id, intent: { kind: 'place' } });
    expect(harness.openOrders().map((order) => order.clientOrderId)).toEqual([id]);

    // Before the entry fills, a crossing trade fires nothing.
    harness.advanceBy(1_000).trade({ market_id: 'BTC-PERP', price: '90' });
    expect(harness.take()).toEqual([]);
    expect(harness.context.emulatedOrders().map((exit) => exit.state)).toEqual([
      'pending',
      'pending',
    ]);

    harness.advanceBy(1_000).fillIntent(entry!, { price: '99' });
    harness.advanceBy(1_000).trade({ market_id: 'BTC-PERP', price: '101.5' });
    harness.trade({ market_id: 'BTC-PERP', price: '97.6' });
    expect(harness.take()).toEqual([]);
    expect(harness.exits.waiting()).toMatchObject([
      { id: `${id}:sl`, triggerPrice: '97.5', price: '97.6', distance: '0.1' },
      { id: `${id}:tp`, triggerPrice: '102', price: '97.6', distance: '4.4' },
    ]);

    const firedAt = harness.advanceBy(1_000).now();
    harness.trade({ market_id: 'BTC-PERP', price: '97.5' });
    const [release] = harness.take();
    expect(release).toMatchObject({
      requestId: `${id}:sl:x`,
      emittedAt: firedAt,
      intent: { kind: 'place', side: 'sell', type: 'market', quantity: '0.01', reduceOnly: true },
    });
    expect(harness.context.emulatedOrders()).toMatchObject([
      { id: `${id}:sl`, state: 'released', triggerPrice: '97.5' },
      { id: `${id}:tp`, state: 'cancelled', reason: 'its one-cancels-other partner fired' },
    ]);
    harness.fillIntent(release!, { price: '97.5' });
    expect(harness.position('BTC-PERP').quantity.eq(0)).toBe(true);
    harness.trade({ market_id: 'BTC-PERP', price: '120' });
    expect(harness.take()).toEqual([]);
  });

  it('trails the mark on virtual time and fires on the pull-back', () => {
    const harness = createStrategyHarness({
      strategy: defineStrategy({
        name: 'trailer',
        description: 'guards a long with a trailing stop',
        params: z.strictObject({}),
        create: (ctx) =>
          ctx.timer(0).pipe(
            map(() =>
              trailingStop({
                marketId: 'BTC-PERP',
                side: 'sell',
                quantity: '1',
                offsetPercent: '5',
              }),
            ),
          ),
      }),
      positions: [],
      respond: 'accept',
    });
    harness.positionUpdate({
      market_id: 'BTC-PERP',
      side: 'long',
      quantity: '1',
      entry_price: '100',
    });
    harness.advanceBy(1);
    expect(harness.take()).toMatchObject([{ intent: { kind: 'exit' } }]);
    for (const price of ['100', '110', '120', '115', '114.5']) {
      harness.advanceBy(1_000).mark('BTC-PERP', price);
    }
    expect(harness.take()).toEqual([]);
    expect(harness.exits.waiting()).toMatchObject([{ triggerPrice: '114', distance: '0.5' }]);
    harness.advanceBy(1_000).mark('BTC-PERP', '113');
    expect(harness.take()).toMatchObject([
      { intent: { kind: 'place', side: 'sell', type: 'market', reduceOnly: true } },
    ]);
  });
});
