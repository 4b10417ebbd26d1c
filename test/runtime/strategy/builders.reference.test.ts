/**
 * `limitOrder` and `cancelOrder` build their intents field by field: the same intents, with the
 * same keys in the same order (the journal writes them as they are), as the builders that
 * dropped the undefined fields of a full literal, kept here as the reference.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDecimal, toWire } from '../../../src/core/decimal.ts';
import {
  cancelOrder,
  type LimitOrderOptions,
  limitOrder,
} from '../../../src/runtime/strategy/builders.ts';

function compact(value: object): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) if (field !== undefined) result[key] = field;
  return result;
}

const amountText = (value: LimitOrderOptions['price']) =>
  typeof value === 'string' ? toWire(parseDecimal(value)) : toWire(value);

function referenceLimitOrder(options: LimitOrderOptions): Record<string, unknown> {
  return compact({
    kind: 'place',
    marketId: options.marketId,
    side: options.side,
    type: 'limit',
    quantity: amountText(options.quantity),
    price: amountText(options.price),
    timeInForce: options.timeInForce,
    postOnly: options.postOnly,
    reduceOnly: options.reduceOnly,
    leverage: options.leverage,
    marginMode: options.marginMode,
    tag: options.tag,
  });
}

const amount = fc.oneof(
  fc.constantFrom('1', '0.500', '+2.', '60000.5', '.25'),
  fc.constantFrom('3', '0.001', '59987.30').map(parseDecimal),
);

const options: fc.Arbitrary<LimitOrderOptions> = fc.record(
  {
    marketId: fc.constantFrom('BTC-PERP', 'ETH-PERP'),
    side: fc.constantFrom('buy' as const, 'sell' as const),
    quantity: amount,
    price: amount,
    timeInForce: fc.constantFrom('GTC' as const, 'IOC' as const, undefined),
    postOnly: fc.constantFrom(true, false, undefined),
    reduceOnly: fc.constantFrom(true, false, undefined),
    leverage: fc.constantFrom(1, 5, undefined),
    marginMode: fc.constantFrom('cross' as const, 'isolated' as const, undefined),
    tag: fc.constantFrom('mm-bid', '', undefined),
  },
  { requiredKeys: ['marketId', 'side', 'quantity', 'price'] },
);

describe('builders (against the compacted literals they were)', () => {
  it('limitOrder: the same fields in the same order', () => {
    fc.assert(
      fc.property(options, (given) => {
        const built = limitOrder(given);
        const wanted = referenceLimitOrder(given);
        expect(built).toEqual(wanted);
        expect(Object.keys(built)).toEqual(Object.keys(wanted));
        expect(JSON.stringify(built)).toBe(JSON.stringify(wanted));
      }),
      { numRuns: 1000 },
    );
  });

  it('cancelOrder: the same fields in the same order', () => {
    for (const tag of ['t', '', undefined]) {
      const built = cancelOrder('mm-1', tag);
      const wanted = compact({ kind: 'cancel', clientOrderId: 'mm-1', tag });
      expect(JSON.stringify(built)).toBe(JSON.stringify(wanted));
      expect(Object.keys(built)).toEqual(Object.keys(wanted));
    }
  });
});
