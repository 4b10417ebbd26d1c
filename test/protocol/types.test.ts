/**
 * Type-level checks of what the client derives from the endpoint table. `tsc` enforces them
 * (the project type-checks test/); vitest runs the file so the suite lists it.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type {
  BodyInputOf,
  BodyOf,
  EndpointsWithBody,
  EndpointsWithPathParams,
  EndpointsWithQuery,
  Order,
  PathParamsOf,
  QueryInputOf,
  QueryOf,
  ResponseOf,
} from '../../src/protocol/index.ts';
import { buildPath } from '../../src/protocol/index.ts';

describe('types derived from the endpoint table', () => {
  it('names the endpoints with path parameters, a query, or a body', () => {
    expectTypeOf<EndpointsWithPathParams>().toEqualTypeOf<
      | 'getMarket'
      | 'getBook'
      | 'listTrades'
      | 'listCandles'
      | 'getOrderByClientId'
      | 'getOrder'
      | 'amendOrder'
      | 'cancelOrder'
      | 'closePosition'
      | 'getRequest'
    >();
    expectTypeOf<EndpointsWithQuery>().toEqualTypeOf<
      | 'getBook'
      | 'listTrades'
      | 'listCandles'
      | 'listPositions'
      | 'listOrders'
      | 'listFills'
      | 'listEvents'
    >();
    expectTypeOf<EndpointsWithBody>().toEqualTypeOf<
      | 'placeOrder'
      | 'amendOrder'
      | 'cancelOrder'
      | 'cancelAllOrders'
      | 'placeBatch'
      | 'simulateOrder'
      | 'closePosition'
      | 'setCancelAllAfter'
    >();
  });

  it('types parameters, queries, bodies and responses', () => {
    expectTypeOf<PathParamsOf<'getMarket'>>().toEqualTypeOf<{ market_id: string }>();
    expectTypeOf<QueryOf<'listEvents'>>().toEqualTypeOf<{
      after_sequence: number;
      limit: number;
    }>();
    expectTypeOf<QueryInputOf<'listEvents'>>().toEqualTypeOf<{
      after_sequence?: number;
      limit?: number;
    }>();
    expectTypeOf<BodyInputOf<'placeOrder'>['quantity']>().toEqualTypeOf<number | string>();
    expectTypeOf<BodyOf<'placeOrder'>['time_in_force']>().toEqualTypeOf<'GTC' | 'IOC' | 'FOK'>();
    expectTypeOf<BodyInputOf<'placeOrder'>['time_in_force']>().toEqualTypeOf<
      'GTC' | 'IOC' | 'FOK' | undefined
    >();
    expectTypeOf<ResponseOf<'placeOrder'>>().toEqualTypeOf<Order>();
    expectTypeOf<ResponseOf<'listMarkets'>[number]['mark_price']>().toEqualTypeOf<string | null>();
    expectTypeOf<QueryOf<'getTime'>>().toBeNever();
  });

  it('makes path parameters required exactly where the path has some', () => {
    expectTypeOf(buildPath<'getTime'>).parameters.toEqualTypeOf<
      ['getTime', params?: Record<string, never>]
    >();
    expectTypeOf(buildPath<'getOrder'>).parameters.toEqualTypeOf<
      ['getOrder', { order_id: string }]
    >();
  });
});
