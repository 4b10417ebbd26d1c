import { describe, expect, it } from 'vitest';
import { isOnIncrement, parseDecimal, type StampedIntent } from 'paperbot/strategy';
import { createStrategyHarness, testOrder } from 'paperbot/testing';
import grid, { gridTag, parseGridTag } from './index.ts';

const MARKET = 'BTC-PERP';

function lines(intents: readonly StampedIntent[]) {
  return intents.flatMap((stamped) =>
    stamped.intent.kind === 'place'
      ? [[stamped.intent.tag, stamped.intent.side, stamped.intent.price]]
      : [],
  );
}

function byTag(intents: readonly StampedIntent[], tag: string): StampedIntent {
  const found = intents.find((stamped) => stamped.intent.tag === tag);
  if (!found) throw new Error(`no intent tagged ${tag}`);
  return found;
}

describe('grid', () => {
  it('lays buys below and sells above the first mark, on the tick grid', () => {
    const harness = createStrategyHarness({ strategy: grid, params: {}, respond: 'accept' });
    harness.mark(MARKET, '100.2');
    const laid = harness.take();
    expect(lines(laid)).toEqual([
      ['grid:-1:buy', 'buy', '95'],
      ['grid:1:sell', 'sell', '105'],
      ['grid:-2:buy', 'buy', '90'],
      ['grid:2:sell', 'sell', '110'],
      ['grid:-3:buy', 'buy', '85'],
      ['grid:3:sell', 'sell', '115'],
    ]);
    for (const stamped of laid) {
      expect(stamped.intent).toMatchObject({ type: 'limit', postOnly: true, timeInForce: 'GTC' });
      const price = stamped.intent.kind === 'place' ? stamped.intent.price : undefined;
      expect(isOnIncrement(parseDecimal(price ?? ''), parseDecimal('0.5'))).toBe(true);
    }
    // Default size: the minimum notional of 10 at the lowest line (85), up to the step.
    expect(laid[0]?.intent).toMatchObject({ quantity: '0.118' });
    harness.advanceBy(60_000).mark(MARKET, '120');
    expect(harness.take()).toEqual([]);
  });

  it('re-arms: a filled buy puts a sell one line up, whose fill puts the buy back', () => {
    const harness = createStrategyHarness({
      strategy: grid,
      params: { referencePrice: '100', levels: 2, spacingTicks: 4, quantity: '1' },
      respond: 'accept',
    });
    harness.advanceBy(0);
    const laid = harness.take();
    expect(lines(laid).map(([tag, , price]) => `${tag}@${price}`)).toEqual([
      'grid:-1:buy@98',
      'grid:1:sell@102',
      'grid:-2:buy@96',
      'grid:2:sell@104',
    ]);

    harness.fillIntent(byTag(laid, gridTag(-1, 'buy')));
    const takeProfit = harness.take();
    expect(lines(takeProfit)).toEqual([['grid:0:sell', 'sell', '100']]);

    harness.fillIntent(takeProfit[0]!);
    expect(lines(harness.take())).toEqual([['grid:-1:buy', 'buy', '98']]);
    expect(harness.position(MARKET).quantity.toFixed()).toBe('0');

    harness.fillIntent(byTag(laid, gridTag(2, 'sell')));
    expect(lines(harness.take())).toEqual([['grid:1:buy', 'buy', '102']]);
  });

  it('does not re-arm on a partial fill', () => {
    const harness = createStrategyHarness({
      strategy: grid,
      params: { referencePrice: '100', quantity: '1' },
      respond: 'accept',
    });
    harness.advanceBy(0);
    const laid = harness.take();
    harness.fillIntent(byTag(laid, gridTag(-1, 'buy')), { quantity: '0.4' });
    expect(harness.take()).toEqual([]);
    harness.fillIntent(byTag(laid, gridTag(-1, 'buy')));
    expect(lines(harness.take())).toEqual([['grid:0:sell', 'sell', '100']]);
  });

  it('cancels orders left from an earlier run before laying the grid', () => {
    const harness = createStrategyHarness({
      strategy: grid,
      params: { referencePrice: '100', levels: 1 },
      startSequence: 20,
      orders: [
        testOrder({
          order_id: 'o-3',
          market_id: MARKET,
          client_order_id: 'test:e1:3',
          price: '90',
        }),
      ],
    });
    harness.advanceBy(0);
    const intents = harness.take();
    expect(intents[0]?.intent).toEqual({ kind: 'cancel', clientOrderId: 'test:e1:3' });
    expect(lines(intents.slice(1)).map(([tag]) => tag)).toEqual(['grid:-1:buy', 'grid:1:sell']);
  });

  it('reads its tags back', () => {
    expect(parseGridTag(gridTag(-3, 'buy'))).toEqual({ line: -3, side: 'buy' });
    expect(parseGridTag('mm-bid')).toBeNull();
    expect(parseGridTag(undefined)).toBeNull();
  });
});
