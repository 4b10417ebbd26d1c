/**
 * A strategy's own orders keep the decimals of an order's texts and the views `open()` gives
 * while they do not change. Whatever the intents, outcomes and order updates, `open()` answers
 * as a strategy that asks only at the end (no view kept before), and every view holds the
 * decimals of the texts the venue sent last.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDecimal, toWire } from '../../../src/core/decimal.ts';
import type { Order } from '../../../src/protocol/index.ts';
import type { OrderIntent } from '../../../src/runtime/intents.ts';
import { OwnOrders } from '../../../src/runtime/strategy/own-orders.ts';
import { order, stamp } from '../execution/fixtures.ts';

type Step =
  | { readonly kind: 'place'; readonly price: string }
  | { readonly kind: 'cancel' | 'amend'; readonly target: number; readonly price: string }
  | { readonly kind: 'accepted' | 'rejected'; readonly target: number }
  | {
      readonly kind: 'order';
      readonly target: number;
      readonly status: Order['status'];
      readonly price: string;
      readonly quantity: string;
      readonly filled: string;
    }
  | { readonly kind: 'read' };

const target = fc.integer({ min: 1, max: 4 });
const price = fc.constantFrom('100', '100.0', '100.5', '101');
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('place' as const), price }), weight: 2 },
  fc.record({ kind: fc.constantFrom('cancel' as const, 'amend' as const), target, price }),
  fc.record({ kind: fc.constantFrom('accepted' as const, 'rejected' as const), target }),
  {
    arbitrary: fc.record({
      kind: fc.constant('order' as const),
      target,
      status: fc.constantFrom('PENDING', 'OPEN', 'PARTIALLY_FILLED', 'OPEN', 'CANCELLED'),
      price,
      quantity: fc.constantFrom('0.01', '0.010', '0.02'),
      filled: fc.constantFrom('0', '0.005', '0.0050', '0.01'),
    }),
    weight: 4,
  },
  fc.record({ kind: fc.constant('read' as const) }),
);

/** A plain copy of what a strategy reads of its open orders. */
function readable(orders: OwnOrders) {
  return orders.open().map((open) => ({
    ...open,
    price: open.price === null ? null : toWire(open.price),
    quantity: toWire(open.quantity),
    filledQuantity: toWire(open.filledQuantity),
    remainingQuantity: toWire(open.remainingQuantity),
  }));
}

/** Every open order updated by the venue holds the decimals of the texts it sent last. */
function checkTexts(orders: OwnOrders, applied: ReadonlyMap<string, Texts>): void {
  for (const open of orders.open()) {
    const last = applied.get(open.clientOrderId);
    if (last === undefined) continue;
    expect(toWire(open.filledQuantity)).toBe(toWire(parseDecimal(last.filled)));
    expect(toWire(open.quantity)).toBe(toWire(parseDecimal(last.quantity)));
    expect(toWire(open.price!)).toBe(toWire(parseDecimal(last.price)));
  }
}

interface Texts {
  readonly price: string;
  readonly quantity: string;
  readonly filled: string;
}

/** Applies the steps; gives the texts of the last order update applied, by client order id. */
function apply(orders: OwnOrders, steps: readonly Step[]): Map<string, Texts> {
  let sequence = 1;
  const applied = new Map<string, Texts>();
  const stamped = new Map<number, ReturnType<typeof stamp>>();
  const zero = () => parseDecimal('0');
  for (const item of steps) {
    switch (item.kind) {
      case 'place':
      case 'cancel':
      case 'amend': {
        const number = sequence++;
        const previous = item.kind === 'place' ? undefined : stamped.get(item.target);
        if (item.kind !== 'place' && previous === undefined) break;
        const clientOrderId = previous?.clientOrderId ?? '';
        const intent: OrderIntent =
          item.kind === 'place'
            ? {
                kind: 'place',
                marketId: 'BTC-PERP',
                side: 'buy',
                type: 'limit',
                quantity: '0.01',
                price: item.price,
              }
            : item.kind === 'cancel'
              ? { kind: 'cancel', clientOrderId }
              : { kind: 'amend', clientOrderId, price: item.price };
        const made = stamp(intent, number);
        stamped.set(number, made);
        orders.recordIntent(made, zero);
        break;
      }
      case 'accepted':
      case 'rejected': {
        const made = stamped.get(item.target);
        if (made === undefined) break;
        orders.applyOutcome(
          item.kind === 'accepted'
            ? { status: 'accepted', intent: made, orderId: `o-${item.target}` }
            : { status: 'rejected', intent: made, code: 'X', message: 'no' },
        );
        break;
      }
      case 'order': {
        const made = stamped.get(item.target);
        if (made === undefined || made.clientOrderId === null) break;
        orders.applyOrder(
          order({
            order_id: `o-${item.target}`,
            client_order_id: made.clientOrderId,
            status: item.status,
            price: item.price,
            quantity: item.quantity,
            filled_quantity: item.filled,
          }),
        );
        applied.set(made.clientOrderId, item);
        checkTexts(orders, applied);
        break;
      }
      case 'read':
        orders.open();
        break;
    }
  }
  return applied;
}

describe('own orders', () => {
  it('answer as orders read only at the end, with the decimals of the last texts', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 50 }), (steps) => {
        const asked = new OwnOrders('strategy-a:');
        const unasked = new OwnOrders('strategy-a:');
        const applied = apply(asked, steps);
        // `read` steps take no sequence: both runs stamp the same intents.
        apply(
          unasked,
          steps.filter((item) => item.kind !== 'read'),
        );
        expect(readable(asked)).toEqual(readable(unasked));
        checkTexts(asked, applied);
      }),
      { numRuns: 400 },
    );
  });
});
