/**
 * The smallest order quantity is cached per market as a range of prices that gave the same
 * answer: over any sequence of prices, a market asked again and again answers as a market asked
 * once (a new `MarketInfo`, so nothing cached) at each price.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDecimal, toWire } from '../../../src/core/decimal.ts';
import { marketInfoOf, smallestOrderQuantity } from '../../../src/runtime/strategy/index.ts';
import { testMarket } from '../../../src/runtime/testing/index.ts';

describe('smallestOrderQuantity', () => {
  it('answers as an uncached market whatever the prices, in any order', () => {
    const prices = fc.array(
      fc.oneof(
        // Around the prices where the quantity steps (notional 10 over quantities of 0.001).
        fc.integer({ min: 9_000, max: 11_000 }).map((units) => (units / 1000).toFixed(3)),
        fc.integer({ min: 1, max: 2_000_000 }).map((units) => (units / 100).toFixed(2)),
        fc.constantFrom('0', '10000', '9999.999', '5000', '3333.333', '3333.334'),
      ),
      { maxLength: 80 },
    );
    const markets = fc.record({
      minimum_notional: fc.constantFrom('10', '5', '0.1', null),
      minimum_quantity: fc.constantFrom('0.001', '0.002', '0.01', null),
      quantity_step: fc.constantFrom('0.001', '0.002', '0.5', null),
    });
    fc.assert(
      fc.property(markets, prices, (rules, texts) => {
        const market = testMarket(rules);
        const cached = marketInfoOf(market);
        for (const text of texts) {
          const price = parseDecimal(text);
          const expected = smallestOrderQuantity(marketInfoOf(market), price);
          expect(toWire(smallestOrderQuantity(cached, price))).toBe(toWire(expected));
        }
        expect(toWire(smallestOrderQuantity(cached, null))).toBe(
          toWire(smallestOrderQuantity(marketInfoOf(market), null)),
        );
      }),
      { numRuns: 300 },
    );
  });
});
