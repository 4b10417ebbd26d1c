/**
 * The intent builders write decimals as canonical wire text, from decimal strings and from
 * big.js values alike, and leave out the options that were not given.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDecimal, toWire } from '../../../src/core/decimal.ts';
import { limitOrder, marketOrder } from '../../../src/runtime/strategy/builders.ts';

describe('intent builders', () => {
  it('write decimal strings as toWire writes the parsed value', () => {
    const texts = fc
      .tuple(
        fc.constantFrom('', '+', '-'),
        fc.stringMatching(/^\d{0,20}$/),
        fc.option(fc.stringMatching(/^\d{0,40}$/), { nil: null }),
      )
      .map(([sign, whole, fraction]) => `${sign}${whole}${fraction === null ? '' : `.${fraction}`}`)
      .filter((text) => /\d/.test(text));
    fc.assert(
      fc.property(texts, texts, (price, quantity) => {
        const order = limitOrder({ marketId: 'BTC-PERP', side: 'buy', price, quantity });
        expect(order.price).toBe(toWire(parseDecimal(price)));
        expect(order.quantity).toBe(toWire(parseDecimal(quantity)));
      }),
      { numRuns: 2000 },
    );
  });

  it('take big.js values, refuse text that is not a decimal, and leave out what was not given', () => {
    expect(
      limitOrder({
        marketId: 'BTC-PERP',
        side: 'sell',
        price: parseDecimal('100.500'),
        quantity: '.5',
      }),
    ).toEqual({
      kind: 'place',
      marketId: 'BTC-PERP',
      side: 'sell',
      type: 'limit',
      price: '100.5',
      quantity: '0.5',
    });
    for (const bad of ['1e3', 'abc', '', '1,5']) {
      expect(() => marketOrder({ marketId: 'BTC-PERP', side: 'buy', quantity: bad })).toThrow(
        expect.objectContaining({ code: 'INVALID_DECIMAL' }),
      );
    }
  });
});
