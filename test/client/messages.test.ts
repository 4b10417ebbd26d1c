import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  interpretResponse,
  ReadingMonitor,
  RestClient,
  type VenueError,
} from '../../src/client/index.ts';
import { checkedQueryString, checkPathParams } from '../../src/client/request-parts.ts';
import {
  BookQuery,
  OrderRequest,
  type OrderRequestInput,
  PositionPathParams,
  validateWire,
} from '../../src/protocol/index.ts';
import * as fixtures from '../protocol/fixtures.ts';
import { envelope } from './helpers.ts';

function thrown(action: () => unknown): VenueError {
  try {
    action();
  } catch (error) {
    return error as VenueError;
  }
  throw new Error('expected an error');
}

// Strict reading: today's exact checks (tolerant reading: test/client/tolerant-reading.test.ts).
const context = { serverNowMs: Date.UTC(2025, 0, 1), reading: new ReadingMonitor('strict') };

describe('interpretResponse', () => {
  it('parses a success body with the strict schema, defaults applied', () => {
    const order = interpretResponse(
      'getOrder',
      { status: 200, headers: {}, text: JSON.stringify(fixtures.order()) },
      context,
    );
    expect(order.order_id).toBe('ord-1');
    expect(order.provenance).toBeNull();
  });

  it('turns an unknown field into MALFORMED_RESPONSE with status, excerpt, request id and issues', () => {
    const body = { ...fixtures.order(), surprise: 1 };
    const error = thrown(() =>
      interpretResponse(
        'getOrder',
        {
          status: 200,
          headers: { 'svc-request-id': 'req_9' },
          text: JSON.stringify(body),
        },
        context,
      ),
    );
    expect(error.code).toBe('MALFORMED_RESPONSE');
    expect(error.httpStatus).toBe(200);
    expect(error.serverRequestId).toBe('req_9');
    expect(error.bodyExcerpt).toContain('surprise');
    expect(error.details.issues).toEqual([
      {
        type: 'extra_forbidden',
        loc: ['body', 'surprise'],
        msg: 'Extra inputs are not permitted',
      },
    ]);
    expect(error.outcome).toBeNull();
    expect(error.retryable).toBe(false);
  });

  it('turns a wrong type into MALFORMED_RESPONSE', () => {
    const body = { ...fixtures.order(), filled_quantity: 0 };
    const error = thrown(() =>
      interpretResponse(
        'getOrder',
        { status: 200, headers: {}, text: JSON.stringify(body) },
        context,
      ),
    );
    expect(error.code).toBe('MALFORMED_RESPONSE');
    expect(error.details.issues).toMatchObject([{ loc: ['body', 'filled_quantity'] }]);
  });

  it('turns broken JSON and an unexpected success status into MALFORMED_RESPONSE', () => {
    expect(
      thrown(() =>
        interpretResponse('getTime', { status: 200, headers: {}, text: '{"epoch' }, context),
      ).code,
    ).toBe('MALFORMED_RESPONSE');
    const wrongStatus = thrown(() =>
      interpretResponse(
        'placeOrder',
        { status: 200, headers: {}, text: JSON.stringify(fixtures.order()) },
        context,
      ),
    );
    expect(wrongStatus.code).toBe('MALFORMED_RESPONSE');
    expect(wrongStatus.outcome).toBe('unknown');
  });

  it('keeps the envelope: code, message, retryable, details, status and request id', () => {
    const error = thrown(() =>
      interpretResponse(
        'getOrder',
        {
          status: 404,
          headers: { 'svc-request-id': 'header-id' },
          text: JSON.stringify(envelope('ORDER_NOT_FOUND', 'no such order', false, { id: 'x' })),
        },
        context,
      ),
    );
    expect(error).toMatchObject({
      code: 'ORDER_NOT_FOUND',
      source: 'service',
      retryable: false,
      httpStatus: 404,
      serverRequestId: 'req_stub_1',
      details: { id: 'x' },
      endpoint: 'getOrder',
    });
    expect(error.message).toContain('no such order');
  });

  it('reads Retry-After of a 429', () => {
    const error = thrown(() =>
      interpretResponse(
        'getAccount',
        {
          status: 429,
          headers: { 'retry-after': '2' },
          text: JSON.stringify(envelope('RATE_LIMITED', 'slow down', true)),
        },
        context,
      ),
    );
    expect(error).toMatchObject({
      code: 'RATE_LIMITED',
      retryable: true,
      retryAfterMs: 2_000,
    });
  });

  it('says what a refusal means for a mutation', () => {
    const outcome = (status: number, code: string) =>
      thrown(() =>
        interpretResponse(
          'placeOrder',
          {
            status,
            headers: {},
            text: JSON.stringify(envelope(code, 'm', true)),
          },
          context,
        ),
      ).outcome;
    expect(outcome(409, 'IDEMPOTENCY_CONFLICT')).toBe('rejected');
    expect(outcome(429, 'RATE_LIMITED')).toBe('rejected');
    expect(outcome(409, 'ORDER_CONFIRMATION_PENDING')).toBe('unknown');
    expect(outcome(503, 'EXECUTION_UNAVAILABLE')).toBe('unknown');
  });

  it('reads the alternative 422 validation body as INVALID_REQUEST issues', () => {
    const error = thrown(() =>
      interpretResponse(
        'placeOrder',
        {
          status: 422,
          headers: {},
          text: JSON.stringify({
            detail: [{ loc: ['body', 'quantity'], msg: 'bad', type: 'value_error' }],
          }),
        },
        context,
      ),
    );
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.details.issues).toEqual([
      { type: 'value_error', loc: ['body', 'quantity'], msg: 'bad' },
    ]);
  });

  it('turns an HTML error page into MALFORMED_RESPONSE, retryable for a read behind a gateway', () => {
    const html = '<html><body><h1>502 Bad Gateway</h1></body></html>';
    const read = thrown(() =>
      interpretResponse('getAccount', { status: 502, headers: {}, text: html }, context),
    );
    expect(read).toMatchObject({
      code: 'MALFORMED_RESPONSE',
      httpStatus: 502,
      retryable: true,
    });
    expect(read.bodyExcerpt).toBe(html);
    const mutation = thrown(() =>
      interpretResponse('placeOrder', { status: 502, headers: {}, text: html }, context),
    );
    expect(mutation).toMatchObject({ retryable: false, outcome: 'unknown' });
    const notFound = thrown(() =>
      interpretResponse('getAccount', { status: 404, headers: {}, text: html }, context),
    );
    expect(notFound.retryable).toBe(false);
  });

  it('refuses redirects', () => {
    const error = thrown(() =>
      interpretResponse(
        'placeOrder',
        {
          status: 307,
          headers: { location: 'https://elsewhere.example/v1/orders' },
          text: '',
        },
        context,
      ),
    );
    expect(error).toMatchObject({
      code: 'REDIRECT_REFUSED',
      httpStatus: 307,
      outcome: 'unknown',
    });
  });

  it('cuts long bodies to an excerpt', () => {
    const error = thrown(() =>
      interpretResponse('getTime', { status: 500, headers: {}, text: 'x'.repeat(10_000) }, context),
    );
    expect(error.bodyExcerpt?.length).toBeLessThan(600);
  });
});

describe('request checks', () => {
  // Nothing is sent: `prepare` and `fromStoredPath` only check and serialize.
  const client = new RestClient({ baseUrl: 'http://127.0.0.1:9' });
  afterAll(() => client.close());

  it('refuses a bad body locally with the issues the service gives', () => {
    const body = {
      ...fixtures.marketOrder(),
      quantity: '-1',
      leverage: 500,
      extra: true,
    };
    const error = thrown(() =>
      client.prepare('placeOrder', { body: body as unknown as OrderRequestInput }),
    );
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.source).toBe('local');
    expect(error.message).toBe(
      'placeOrder: the body does not match the endpoint contract (body.quantity: Input should be greater than 0; body.leverage: Input should be less than or equal to 200; body.extra: Extra inputs are not permitted)',
    );
    const expected = validateWire(OrderRequest, body, 'body');
    expect(expected.success).toBe(false);
    expect(error.details.issues).toEqual(expected.success ? [] : expected.issues);
  });

  it('checks query parameters as the text the service will see', () => {
    expect(checkedQueryString('getBook', { depth: 5, route_id: 'svc-paper' })).toBe(
      '?route_id=svc-paper&depth=5',
    );
    expect(checkedQueryString('getBook', {})).toBe('');
    const error = thrown(() => checkedQueryString('getBook', { depth: 1.5 }));
    const expected = validateWire(BookQuery, { depth: '1.5' }, 'query');
    expect(error.details.issues).toEqual(expected.success ? [] : expected.issues);
    expect(
      thrown(() => checkedQueryString('getBook', { depth: 201 })).details.issues,
    ).toMatchObject([{ loc: ['query', 'depth'], type: 'less_than_equal' }]);
  });

  it('checks path parameters', () => {
    const error = thrown(() => checkPathParams('closePosition', { position_id: '..' }));
    const expected = validateWire(PositionPathParams, { position_id: '..' }, 'path');
    expect(error.details.issues).toEqual(expected.success ? [] : expected.issues);
  });

  it('serializes numbers as canonical decimal strings', () => {
    const { bodyBytes, body } = client.prepare('placeOrder', {
      body: { ...fixtures.limitOrder(), quantity: 0.1, price: 65000.5 } as OrderRequestInput,
    });
    const wire = JSON.parse(new TextDecoder().decode(bodyBytes));
    expect(wire.quantity).toBe('0.1');
    expect(wire.price).toBe('65000.5');
    expect(wire.time_in_force).toBe('GTC');
    // The prepared body is the one the bytes encode.
    expect(body).toEqual(wire);
  });

  it('reads stored bytes back to the same body, and refuses bytes that are not a body', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.constantFrom('buy' as const, 'sell' as const),
        fc.stringMatching(/^[A-Za-z0-9:_-]{8,40}$/),
        (quantity, side, requestId) => {
          const prepared = client.prepare('placeOrder', {
            body: {
              ...fixtures.limitOrder(),
              request_id: requestId,
              quantity,
              side,
            } as OrderRequestInput,
          });
          const stored = client.fromStoredPath('placeOrder', prepared.path, prepared.bodyBytes);
          expect(stored.requestId).toBe(requestId);
          expect(stored.bodySha256).toBe(prepared.bodySha256);
          // Serializing the stored body gives the same bytes: the wire form is a fixed point.
          expect(client.prepare('placeOrder', { body: stored.body }).bodyBytes).toEqual(
            prepared.bodyBytes,
          );
        },
      ),
      { numRuns: 50 },
    );
    expect(
      thrown(() => client.fromStoredPath('placeOrder', '/v1/orders', new Uint8Array([0xff])))
        .details.issues,
    ).toEqual([{ type: 'json_invalid', loc: ['body'], msg: 'JSON decode error' }]);
    const refused = thrown(() =>
      client.fromStoredPath('cancelOrder', '/v1/orders/o-1/cancel', new TextEncoder().encode('{}')),
    );
    expect(refused.code).toBe('INVALID_REQUEST');
    expect(refused.source).toBe('local');
  });
});
