/**
 * The host checks an intent's shape once for all intents that differ only in their prices,
 * quantities, client order ids and tags. Whatever the intent and whatever was checked before it, the
 * answer (the copy, its key order, or the problems) must be that of a fresh check.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OrderIntent } from '../../../src/runtime/intents.ts';
import { checkIntent } from '../../../src/runtime/strategy/intent-check.ts';

const decimal = fc.constantFrom<unknown>(
  '0.5',
  '0.50',
  '+0.5',
  '.5',
  '5.',
  '00.10',
  '42000.5',
  '7',
  '0.0001',
  '1000000000.1',
  '-1',
  '0',
  'abc',
  '1e3',
  1.25,
  null,
);
const identifier = fc.constantFrom<unknown>(
  'mm:epoch:1',
  'x',
  '',
  'y'.repeat(100),
  'z'.repeat(101),
  7,
);
const field = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: undefined });

const placeIntent = fc.record(
  {
    kind: fc.constantFrom<unknown>('place', 'amend', 'cancel'),
    marketId: fc.constantFrom<unknown>('BTC-PERP', '', 'ETH-PERP'),
    side: fc.constantFrom<unknown>('buy', 'sell', 'up'),
    type: fc.constantFrom<unknown>('limit', 'market'),
    quantity: decimal,
    price: field(decimal),
    timeInForce: field(fc.constantFrom<unknown>('GTC', 'IOC')),
    postOnly: field(fc.boolean()),
    leverage: field(fc.constantFrom<unknown>(1, 5, 0, 1.5)),
    marginMode: field(fc.constantFrom<unknown>('cross', 'isolated')),
    maxSlippagePercent: field(fc.constantFrom<unknown>('0.5', '3')),
    tag: field(
      fc.constantFrom<unknown>(
        'mm-bid',
        '2025-01-15T12:00:00.125Z',
        '',
        't'.repeat(100),
        't'.repeat(101),
        3,
      ),
    ),
  },
  { requiredKeys: ['kind'] },
);

const otherIntent = fc.oneof(
  fc.record(
    {
      kind: fc.constantFrom<unknown>('cancel', 'amend', 'place'),
      clientOrderId: identifier,
      price: field(decimal),
      quantity: field(decimal),
      tag: field(fc.constantFrom<unknown>('mm-bid', 'x'.repeat(101))),
    },
    { requiredKeys: ['kind'] },
  ),
  fc.record(
    {
      kind: fc.constantFrom<unknown>('cancel_all', 'close_position'),
      marketId: field(fc.constantFrom<unknown>('BTC-PERP', '')),
      quantityPercent: field(decimal),
    },
    { requiredKeys: ['kind'] },
  ),
);

/** A fresh check: the schema's answer, its data without undefined fields, in its key order. */
function expected(value: unknown): unknown {
  const result = OrderIntent.safeParse(value);
  if (!result.success) return { ok: false };
  const copy = Object.fromEntries(
    Object.entries(result.data).filter(([, field]) => field !== undefined),
  );
  return { ok: true, keys: Object.keys(copy), copy };
}

function actual(value: unknown): unknown {
  const checked = checkIntent(value);
  if (!checked.ok) return { ok: false };
  return { ok: true, keys: Object.keys(checked.intent), copy: checked.intent };
}

/** One intent shape and variants of it that differ in their amounts and client order ids. */
const variants = fc
  .record({
    kind: fc.constantFrom('place', 'amend', 'cancel'),
    type: fc.constantFrom('limit', 'market'),
    postOnly: field(fc.boolean()),
    tag: field(fc.constantFrom('mm-bid', 'mm-ask')),
  })
  .chain((template) =>
    fc.array(
      fc.record({ amount: decimal, price: decimal, clientOrderId: identifier }).map((variant) =>
        template.kind === 'place'
          ? {
              kind: 'place',
              marketId: 'BTC-PERP',
              side: 'buy',
              type: template.type,
              quantity: variant.amount,
              price: variant.price,
              postOnly: template.postOnly,
              tag: template.tag,
            }
          : template.kind === 'amend'
            ? { kind: 'amend', clientOrderId: variant.clientOrderId, price: variant.price }
            : { kind: 'cancel', clientOrderId: variant.clientOrderId, tag: template.tag },
      ),
      { minLength: 2, maxLength: 12 },
    ),
  );

describe('checked intents', () => {
  it('answer for each variant of one intent as a fresh check would (property)', () => {
    fc.assert(
      fc.property(variants, (intents) => {
        for (const intent of intents) expect(actual(intent)).toEqual(expected(intent));
      }),
      { numRuns: 400 },
    );
  });

  it('answer as a fresh check would, whatever was checked before (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(placeIntent, otherIntent), { maxLength: 30 }), (intents) => {
        for (const intent of intents) expect(actual(intent)).toEqual(expected(intent));
      }),
      { numRuns: 500 },
    );
  });

  it('give a copy, not the strategy own object', () => {
    const intent = { kind: 'cancel', clientOrderId: 'mm:epoch:42' };
    checkIntent({ kind: 'cancel', clientOrderId: 'mm:epoch:41' });
    const checked = checkIntent(intent);
    expect(checked).toEqual({ ok: true, intent });
    expect(checked.ok && checked.intent).not.toBe(intent);
  });
});
