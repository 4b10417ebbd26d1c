/**
 * The open orders' sums kept event by event (new order, update, end) equal the sums taken from
 * scratch over the orders held, whatever the sequence: prices drawn from a few values so that
 * updates at the same price, ties for the highest price and its removal all happen often.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDecimal } from '../../../src/core/decimal.ts';
import type { Side } from '../../../src/runtime/intents.ts';
import { OrderSumsKeeper, sameTerms, sumOrders } from '../../../src/runtime/risk/order-sums.ts';
import type { RiskOpenOrderView } from '../../../src/runtime/risk/view.ts';
import { wireSums } from './fixtures.ts';

const orderView: fc.Arbitrary<RiskOpenOrderView> = fc.record({
  clientOrderId: fc.constantFrom('a', 'b', null),
  marketId: fc.constantFrom('AAA-PERP', 'BBB-PERP'),
  side: fc.constantFrom<Side>('buy', 'sell'),
  price: fc.option(fc.constantFrom('100', '100.0', '101.5', '99').map(parseDecimal), {
    nil: null,
  }),
  remainingQuantity: fc.constantFrom('0', '0.001', '0.0010', '2.5', '7').map(parseDecimal),
  reduceOnly: fc.boolean(),
});

describe('OrderSumsKeeper', () => {
  it('counts two views of an order as the same terms only when every counted field is equal', () => {
    fc.assert(
      fc.property(orderView, orderView, (a, b) => {
        const equal =
          a.marketId === b.marketId &&
          a.side === b.side &&
          a.reduceOnly === b.reduceOnly &&
          a.clientOrderId === b.clientOrderId &&
          (a.price === null ? b.price === null : b.price !== null && a.price.eq(b.price)) &&
          a.remainingQuantity.eq(b.remainingQuantity);
        expect(sameTerms(a, b)).toBe(equal);
        expect(sameTerms(a, { ...a })).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps the sums of the orders it holds equal to sums from scratch after every event', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            key: fc.integer({ min: 0, max: 5 }),
            view: fc.option(orderView, { nil: null, freq: 3 }),
          }),
          { maxLength: 40 },
        ),
        (events) => {
          const keeper = new OrderSumsKeeper();
          const held = new Map<number, RiskOpenOrderView>();
          for (const { key, view } of events) {
            const before = keeper.live();
            const previous = held.get(key);
            const changed = keeper.set(String(key), view);
            // A view with the same terms as the one held changes nothing; the held one stays.
            const same =
              previous === undefined ? view === null : view !== null && sameTerms(previous, view);
            expect(changed).toBe(!same);
            if (view === null) held.delete(key);
            else if (!same) held.set(key, view);
            expect(
              [...keeper.orders()].every((order, index) => order === [...held.values()][index]),
            ).toBe(true);
            expect([...keeper.orders()]).toEqual([...held.values()]);
            expect(wireSums(keeper.live())).toEqual(wireSums(sumOrders(held.values())));
            for (const id of ['a', 'b', null]) {
              expect(keeper.hasClientOrderId(id)).toBe(
                [...held.values()].some((order) => order.clientOrderId === id),
              );
            }
            // The sums are kept in place: read live, never copied per event.
            expect(keeper.live()).toBe(before);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
