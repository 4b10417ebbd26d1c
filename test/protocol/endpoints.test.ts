import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allowedMethods,
  BatchOrderRequest,
  buildPath,
  buildQueryString,
  type EndpointDefinition,
  type EndpointName,
  EventsQuery,
  endpointNames,
  endpoints,
  matchEndpoint,
  OrderRequest,
  queryRecord,
  WEBSOCKET_PATH,
} from '../../src/protocol/index.ts';

/**
 * The interface's endpoint table, row by row: method, path, auth, success status. The
 * WebSocket upgrade row (GET /v1/ws) is checked apart: it is a stream, not a request.
 */
const interfaceRows: Array<[string, string, 'none' | 'signed', number]> = [
  ['GET', '/v1/time', 'none', 200],
  ['GET', '/v1/status', 'none', 200],
  ['GET', '/v1/routes', 'none', 200],
  ['GET', '/v1/markets', 'none', 200],
  ['GET', '/v1/markets/{market_id}', 'none', 200],
  ['GET', '/v1/markets/{market_id}/book', 'none', 200],
  ['GET', '/v1/markets/{market_id}/trades', 'none', 200],
  ['GET', '/v1/markets/{market_id}/candles', 'none', 200],
  ['GET', '/v1/account', 'signed', 200],
  ['GET', '/v1/accounts', 'signed', 200],
  ['GET', '/v1/positions', 'signed', 200],
  ['GET', '/v1/orders', 'signed', 200],
  ['POST', '/v1/orders', 'signed', 202],
  ['GET', '/v1/orders/by-client-id/{client_order_id}', 'signed', 200],
  ['GET', '/v1/orders/{order_id}', 'signed', 200],
  ['PATCH', '/v1/orders/{order_id}', 'signed', 202],
  ['POST', '/v1/orders/{order_id}/cancel', 'signed', 202],
  ['POST', '/v1/orders/cancel-all', 'signed', 202],
  ['POST', '/v1/orders/batch', 'signed', 202],
  ['POST', '/v1/orders/simulate', 'signed', 200],
  ['POST', '/v1/positions/{position_id}/close', 'signed', 202],
  ['PUT', '/v1/cancel-all-after', 'signed', 200],
  ['GET', '/v1/requests/{request_id}', 'signed', 200],
  ['GET', '/v1/fills', 'signed', 200],
  ['GET', '/v1/routes/readiness', 'signed', 200],
  ['GET', '/v1/events', 'signed', 200],
  ['GET', '/health', 'none', 200],
  ['GET', '/ready', 'none', 200],
];

/** Contract section 3. */
const contractScopes: Record<string, string[]> = {
  'account:read': ['getAccount', 'listAccounts', 'listPositions', 'getRoutesReadiness'],
  'orders:read': ['listOrders', 'getOrderByClientId', 'getOrder', 'getRequest', 'listEvents'],
  'fills:read': ['listFills'],
  'orders:write': [
    'placeOrder',
    'simulateOrder',
    'amendOrder',
    'cancelOrder',
    'cancelAllOrders',
    'placeBatch',
    'closePosition',
    'setCancelAllAfter',
  ],
};

const definitions = endpoints as Readonly<Record<EndpointName, EndpointDefinition>>;

describe('the endpoint table', () => {
  it('has one entry per row of the interface, and nothing else', () => {
    const table = endpointNames.map((name) => {
      const { method, path, auth, successStatus } = definitions[name];
      return [method, path, auth, successStatus];
    });
    expect(table).toEqual(interfaceRows);
    expect(endpointNames).toEqual([
      'getTime',
      'getStatus',
      'listRoutes',
      'listMarkets',
      'getMarket',
      'getBook',
      'listTrades',
      'listCandles',
      'getAccount',
      'listAccounts',
      'listPositions',
      'listOrders',
      'placeOrder',
      'getOrderByClientId',
      'getOrder',
      'amendOrder',
      'cancelOrder',
      'cancelAllOrders',
      'placeBatch',
      'simulateOrder',
      'closePosition',
      'setCancelAllAfter',
      'getRequest',
      'listFills',
      'getRoutesReadiness',
      'listEvents',
      'health',
      'ready',
    ]);
    expect(WEBSOCKET_PATH).toBe('/v1/ws');
    expect(matchEndpoint('GET', WEBSOCKET_PATH)).toBeNull();
  });

  it('requires the contract scope on every signed endpoint and none on public ones', () => {
    for (const name of endpointNames) {
      const { auth, scope } = definitions[name];
      const expected = Object.entries(contractScopes).find(([, names]) => names.includes(name));
      expect(scope, name).toBe(expected?.[0] ?? null);
      expect(auth === 'signed', name).toBe(expected !== undefined);
    }
  });

  it('marks the state-changing order commands as mutations, each with a request_id body', () => {
    const mutations = endpointNames.filter((name) => definitions[name].mutation);
    expect(mutations).toEqual([
      'placeOrder',
      'amendOrder',
      'cancelOrder',
      'cancelAllOrders',
      'placeBatch',
      'closePosition',
      'setCancelAllAfter',
    ]);
    for (const name of [...mutations, 'simulateOrder' as const]) {
      const body = definitions[name].body;
      expect(body, name).not.toBeNull();
      const result = body!.safeParse({});
      expect(result.success).toBe(false);
      expect(
        result.error!.issues.some((issue) => issue.path[0] === 'request_id'),
        name,
      ).toBe(true);
    }
  });

  it('gives bodies only to POST, PATCH and PUT, and queries only to GET', () => {
    for (const name of endpointNames) {
      const { method, body, query } = definitions[name];
      expect(body === null, name).toBe(method === 'GET');
      if (query !== null) expect(method, name).toBe('GET');
    }
    expect(endpoints.placeOrder.body).toBe(OrderRequest);
    expect(endpoints.simulateOrder.body).toBe(OrderRequest);
    expect(endpoints.placeBatch.body).toBe(BatchOrderRequest);
    expect(endpoints.listEvents.query).toBe(EventsQuery);
  });

  it('declares a path-parameter schema with exactly the names in the path', () => {
    for (const name of endpointNames) {
      const { path, pathParams } = definitions[name];
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const empty = pathParams.safeParse({});
      expect(empty.success, name).toBe(names.length === 0);
      if (!empty.success) {
        expect(
          empty.error.issues.map((issue) => issue.path[0]),
          name,
        ).toEqual(names);
      }
    }
  });
});

describe('matchEndpoint and buildPath', () => {
  it('routes every template, literal segments before parameters', () => {
    expect(matchEndpoint('POST', '/v1/orders/batch')?.name).toBe('placeBatch');
    expect(matchEndpoint('POST', '/v1/orders/cancel-all')?.name).toBe('cancelAllOrders');
    expect(matchEndpoint('POST', '/v1/orders/simulate')?.name).toBe('simulateOrder');
    expect(matchEndpoint('GET', '/v1/orders/batch')).toMatchObject({
      name: 'getOrder',
      params: { order_id: 'batch' },
    });
    expect(matchEndpoint('GET', '/v1/routes/readiness')?.name).toBe('getRoutesReadiness');
    expect(matchEndpoint('GET', '/v1/orders/by-client-id/c-1')).toMatchObject({
      name: 'getOrderByClientId',
      params: { client_order_id: 'c-1' },
    });
    expect(matchEndpoint('PATCH', '/v1/orders/o-1')?.name).toBe('amendOrder');
    expect(matchEndpoint('POST', '/v1/orders/o-1/cancel')?.name).toBe('cancelOrder');
    expect(matchEndpoint('POST', '/v1/positions/pos-00000001/close')?.name).toBe('closePosition');
  });

  it('returns null for unknown paths, wrong methods, empty or malformed segments', () => {
    expect(matchEndpoint('GET', '/v1/nothing')).toBeNull();
    expect(matchEndpoint('DELETE', '/v1/orders/o-1')).toBeNull();
    expect(matchEndpoint('get', '/v1/time')).toBeNull();
    expect(matchEndpoint('GET', '/v1/markets/')).toBeNull();
    expect(matchEndpoint('GET', '/v1/markets//book')).toBeNull();
    expect(matchEndpoint('GET', '/v1/time/')).toBeNull();
    expect(matchEndpoint('GET', '/v1/markets/%E0%A4%A')).toBeNull();
  });

  it('lists the methods a path allows, for a 405 answer', () => {
    expect(allowedMethods('/v1/orders')).toEqual(['GET', 'POST']);
    expect(allowedMethods('/v1/orders/o-1')).toEqual(['GET', 'PATCH']);
    expect(allowedMethods('/v1/orders/batch')).toEqual(['GET', 'PATCH', 'POST']);
    expect(allowedMethods('/v1/nothing')).toEqual([]);
  });

  it('builds every path from its parameters and matches it back', () => {
    for (const name of endpointNames) {
      const { method, path } = definitions[name];
      const params = Object.fromEntries(
        [...path.matchAll(/\{(\w+)\}/g)].map((match) => [match[1]!, `value/${match[1]} ?#%`]),
      );
      const built = (buildPath as (name: EndpointName, params?: object) => string)(name, params);
      expect(built).not.toMatch(/[{} ?#]/);
      expect(matchEndpoint(method, built)).toEqual({ name, endpoint: definitions[name], params });
    }
    expect(buildPath('getTime')).toBe('/v1/time');
    expect(buildPath('getMarket', { market_id: 'BTC/USD' })).toBe('/v1/markets/BTC%2FUSD');
  });

  it('round-trips arbitrary ids (property)', () => {
    const id = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 60 })
      .filter((value) => value !== '.' && value !== '..');
    fc.assert(
      fc.property(id, id, (orderId, clientOrderId) => {
        const cancel = buildPath('cancelOrder', { order_id: orderId });
        expect(matchEndpoint('POST', cancel)).toMatchObject({
          name: 'cancelOrder',
          params: { order_id: orderId },
        });
        const byClient = buildPath('getOrderByClientId', { client_order_id: clientOrderId });
        expect(cancel.split('/')).toHaveLength(5);
        expect(matchEndpoint('GET', byClient)).toMatchObject({
          name: 'getOrderByClientId',
          params: { client_order_id: clientOrderId },
        });
        const parsed = endpoints.getOrderByClientId.pathParams.safeParse(
          matchEndpoint('GET', byClient)?.params,
        );
        expect(parsed.success).toBe(true);
      }),
    );
  });

  it('refuses parameters that cannot be sent as one path segment', () => {
    expect(() => buildPath('getOrder', { order_id: '' })).toThrow(RangeError);
    expect(() => buildPath('getOrder', { order_id: '.' })).toThrow(RangeError);
    expect(() => buildPath('getOrder', { order_id: '..' })).toThrow(RangeError);
    expect(() => buildPath('getOrder', { order_id: '\uD800' })).toThrow(URIError);
    expect(endpoints.getOrder.pathParams.safeParse({ order_id: '..' }).success).toBe(false);
    expect(endpoints.getOrder.pathParams.safeParse({ order_id: '...' }).success).toBe(true);
  });
});

describe('buildQueryString', () => {
  it('writes parameters in schema order, leaves undefined out, encodes names and values', () => {
    expect(buildQueryString('listOrders', { status: 'OPEN', limit: 10, cursor: 'a+b=/c' })).toBe(
      '?limit=10&cursor=a%2Bb%3D%2Fc&status=OPEN',
    );
    expect(buildQueryString('listOrders', { cursor: undefined })).toBe('');
    expect(buildQueryString('listOrders', undefined)).toBe('');
    expect(buildQueryString('listEvents', { after_sequence: 0 })).toBe('?after_sequence=0');
  });

  it('produces what the query schema parses back to the same values (property)', () => {
    const query = fc.record(
      {
        limit: fc.integer({ min: 1, max: 200 }),
        cursor: fc.string({ unit: 'grapheme', minLength: 1 }),
        market_id: fc.string({ unit: 'grapheme', minLength: 1 }),
        status: fc.constantFrom('OPEN' as const, 'FILLED' as const),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(query, (values) => {
        const text = buildQueryString('listOrders', values);
        const parsed = endpoints.listOrders.query.parse(
          queryRecord(new URLSearchParams(text.slice(1))),
        );
        expect(parsed).toEqual({ limit: 50, ...values });
      }),
    );
  });
});
