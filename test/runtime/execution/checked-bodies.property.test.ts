/**
 * The shared serializer checks a body once for all bodies that differ only in their ids (and, for
 * orders, in canonical prices and quantities). Whatever
 * the body and whatever was serialized before it, the bytes (or the refusal) must be those of
 * the endpoint's schema and normalization applied to this very body.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AmendOrderRequest,
  CancelAllRequest,
  CancelOrderRequest,
  ClosePositionRequest,
  normalizeAmendOrderRequest,
  normalizeClosePositionRequest,
  normalizeOrderRequest,
  OrderRequest,
  toServiceIssues,
} from '../../../src/protocol/index.ts';
import { prepareCommand } from '../../../src/signing/index.ts';
import type { VenueCommand } from '../../../src/runtime/venue.ts';

const identifier = fc.constantFrom(
  'alpha:epoch:1',
  'alpha:epoch:22',
  'beta-epoch_333',
  'short',
  'has space in it',
  'x'.repeat(81),
  '',
);
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
  '999999999.99',
  '1000000000',
  '1000000000.1',
  '-1',
  '0',
  '-0.0',
  'abc',
  '1e3',
  1.25,
  2,
  0,
);
const field = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: undefined });

const orderBody = fc.record(
  {
    request_id: identifier,
    client_order_id: identifier,
    market_id: fc.constantFrom<unknown>('BTC-PERP', 'ETH-PERP', 'X', null),
    side: fc.constantFrom<unknown>('buy', 'sell', 'up'),
    type: fc.constantFrom<unknown>('limit', 'market'),
    quantity: decimal,
    price: field(fc.oneof(decimal, fc.constant(null))),
    leverage: fc.constantFrom<unknown>(1, 2, 0, 1.5, '2'),
    time_in_force: field(fc.constantFrom<unknown>('GTC', 'IOC')),
    post_only: field(fc.boolean()),
    reduce_only: field(fc.boolean()),
    margin_mode: field(fc.constantFrom<unknown>('cross', 'isolated')),
    max_slippage_percent: field(fc.constantFrom<unknown>('0.5', '3', null)),
    extra: fc.constant<unknown>(1),
  },
  { requiredKeys: ['request_id'] },
);

const command: fc.Arbitrary<VenueCommand> = fc.oneof(
  orderBody.map((body) => ({ endpoint: 'placeOrder', body }) as unknown as VenueCommand),
  orderBody.map((body) => ({ endpoint: 'simulateOrder', body }) as unknown as VenueCommand),
  fc
    .record(
      { request_id: identifier, quantity: field(decimal), price: field(decimal) },
      { requiredKeys: ['request_id'] },
    )
    .map(
      (body) =>
        ({ endpoint: 'amendOrder', params: { order_id: 'o-1' }, body }) as unknown as VenueCommand,
    ),
  fc
    .record({ request_id: identifier, client_order_id: identifier }, { requiredKeys: [] })
    .map(
      (body) =>
        ({ endpoint: 'cancelOrder', params: { order_id: 'o-1' }, body }) as unknown as VenueCommand,
    ),
  fc
    .record(
      { request_id: identifier, market_id: field(fc.constantFrom<unknown>('BTC-PERP', null)) },
      { requiredKeys: ['request_id'] },
    )
    .map((body) => ({ endpoint: 'cancelAllOrders', body }) as unknown as VenueCommand),
  fc
    .record(
      {
        request_id: identifier,
        client_order_id: identifier,
        quantity_percent: field(decimal),
        max_slippage_percent: field(decimal),
      },
      { requiredKeys: ['request_id'] },
    )
    .map(
      (body) =>
        ({
          endpoint: 'closePosition',
          params: { position_id: 'position-1' },
          body,
        }) as unknown as VenueCommand,
    ),
);

/** What the endpoint's schema and normalization make of this body, checked afresh. */
function expected(command: VenueCommand): unknown {
  const [schema, normalize] = {
    placeOrder: [OrderRequest, normalizeOrderRequest],
    simulateOrder: [OrderRequest, normalizeOrderRequest],
    amendOrder: [AmendOrderRequest, normalizeAmendOrderRequest],
    cancelOrder: [CancelOrderRequest, (body: unknown) => body],
    cancelAllOrders: [CancelAllRequest, (body: unknown) => body],
    closePosition: [ClosePositionRequest, normalizeClosePositionRequest],
  }[command.endpoint as 'placeOrder'] as unknown as [
    typeof OrderRequest,
    (body: unknown) => unknown,
  ];
  const parsed = schema.safeParse(command.body);
  if (!parsed.success) {
    return { refused: toServiceIssues(parsed.error, 'body', command.body) };
  }
  return { body: JSON.stringify(normalize(parsed.data)) };
}

function actual(command: VenueCommand): unknown {
  try {
    const prepared = prepareCommand(command);
    const text = new TextDecoder().decode(prepared.bodyBytes);
    // The body an in-process venue takes is the object the bytes encode, keys in order.
    if (JSON.stringify(prepared.body) !== text) return { bodyObject: prepared.body, text };
    return { body: text };
  } catch (error) {
    return { refused: (error as { details: { issues: unknown } }).details.issues };
  }
}

/** A valid limit or market order and variants of it that differ in their ids and amounts. */
const orderVariants = fc
  .record({
    type: fc.constantFrom('limit', 'market'),
    time_in_force: field(fc.constantFrom('GTC', 'IOC')),
    post_only: field(fc.boolean()),
    endpoint: fc.constantFrom('placeOrder', 'simulateOrder'),
  })
  .chain((template) =>
    fc
      .array(
        fc.record({
          request_id: identifier,
          client_order_id: identifier,
          quantity: decimal,
          price: fc.oneof(decimal, fc.constant(null)),
          simulate: fc.boolean(),
        }),
        { minLength: 2, maxLength: 12 },
      )
      .map((variants) =>
        variants.map(
          (variant) =>
            ({
              endpoint: variant.simulate ? 'simulateOrder' : template.endpoint,
              body: {
                request_id: variant.request_id,
                client_order_id: variant.client_order_id,
                market_id: 'BTC-PERP',
                side: 'buy',
                type: template.type,
                quantity: variant.quantity,
                ...(template.type === 'limit'
                  ? { price: variant.price }
                  : { max_slippage_percent: '0.5' }),
                leverage: 2,
                time_in_force: template.time_in_force,
                post_only: template.post_only,
              },
            }) as unknown as VenueCommand,
        ),
      ),
  );

describe('checked bodies', () => {
  it('serialize each variant of one order as a fresh check would (property)', () => {
    fc.assert(
      fc.property(orderVariants, (commands) => {
        for (const next of commands) expect(actual(next)).toEqual(expected(next));
      }),
      { numRuns: 400 },
    );
  });

  it('serialize as a fresh check would, whatever was serialized before (property)', () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 30 }), (commands) => {
        for (const next of commands) expect(actual(next)).toEqual(expected(next));
      }),
      { numRuns: 400 },
    );
  });
});
