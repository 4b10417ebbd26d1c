/**
 * The open orders' sums kept event by event (new order, update, end) equal the sums taken from
 * scratch over the orders held, whatever the sequence: prices drawn from a few values so that
 * updates at the same price, ties for the highest price and its removal all happen often.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDecimal } from '../../../src/core/decimal.ts';
import type { Side } from '../../../src/runtime/intents.ts';
import { OrderSumsKeeper, sumOrders } from '../../../src/runtime/risk/order-sums.ts';
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
            const before = keeper.current();
            const beforeWire = wireSums(before);
            keeper.set(String(key), view);
            if (view === null) held.delete(key);
            else held.set(key, view);
            expect([...keeper.orders()]).toEqual([...held.values()]);
            expect(wireSums(keeper.current())).toEqual(wireSums(sumOrders(held.values())));
            for (const id of ['a', 'b', null]) {
              expect(keeper.hasClientOrderId(id)).toBe(
                [...held.values()].some((order) => order.clientOrderId === id),
              );
            }
            // A snapshot's sums do not move with later events.
            expect(wireSums(before)).toEqual(beforeWire);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
