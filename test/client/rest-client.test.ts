/**
 * The REST client against small loopback servers written here: answers the emulator never
 * sends (unknown fields, wrong types, broken JSON, HTML error pages, redirects, hanging or
 * broken connections), and exact checks of what goes on the wire.
 */
import type { ServerResponse } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RestClient, type RestClientOptions, type VenueError } from '../../src/client/index.ts';
import { VirtualClock } from '../../src/core/clock.ts';
import { formatTimestamp } from '../../src/protocol/index.ts';
import {
  bodySha256Hex,
  buildCanonicalRequestInput,
  Credential,
  decodeBase64Strict,
  PrivateKey,
  verifySignature,
} from '../../src/signing/index.ts';
import * as fixtures from '../protocol/fixtures.ts';
import {
  AutoAdvanceClock,
  type CapturedRequest,
  envelope,
  json,
  START_MS,
  type StubServer,
  startStubServer,
  track,
  turn,
  until,
} from './helpers.ts';

let stub: StubServer;
let other: StubServer;
const clients: RestClient[] = [];

beforeAll(async () => {
  stub = await startStubServer();
  other = await startStubServer();
});

afterAll(async () => {
  await stub.close();
  await other.close();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  stub.requests.length = 0;
  other.requests.length = 0;
});

function credentialFor(baseUrl: string): Credential {
  return Credential.create({
    keyId: 'key_test_1',
    accountId: 'account-1',
    apiBaseUrl: baseUrl,
    wsUrl: `${baseUrl.replace('http', 'ws')}/v1/ws`,
    scopes: ['account:read', 'orders:read', 'fills:read', 'orders:write'],
    createdAt: '2025-01-01T00:00:00Z',
    expiresAt: null,
    privateKey: PrivateKey.generate(),
  });
}

function timeBody(epochMs: number) {
  return { server_time: formatTimestamp(epochMs), epoch_ms: epochMs };
}

interface Setup {
  readonly clock: VirtualClock;
  readonly clientClock: AutoAdvanceClock;
  readonly client: RestClient;
  readonly credential: Credential;
}

function setup(options: Partial<RestClientOptions> = {}, autoAdvanceMaxMs = 120_000): Setup {
  const clock = new VirtualClock(START_MS);
  const clientClock = new AutoAdvanceClock(clock, autoAdvanceMaxMs);
  const credential = credentialFor(stub.baseUrl);
  const client = new RestClient({
    credential,
    clock: clientClock,
    random: () => 0.5,
    requestTimeoutMs: 600_000,
    reading: 'strict',
    ...options,
  });
  clients.push(client);
  return { clock, clientClock, client, credential };
}

/** Answers /v1/time with the clock (plus `offsetMs`) and everything else with `rest`. */
function serve(
  clock: VirtualClock,
  rest: (request: CapturedRequest, response: ServerResponse) => void,
  offsetMs = 0,
) {
  stub.handle((request, response) => {
    if (request.url === '/v1/time') {
      json(response, 200, timeBody(clock.now() + offsetMs));
      return;
    }
    rest(request, response);
  });
}

async function failure(promise: Promise<unknown>): Promise<VenueError> {
  try {
    await promise;
  } catch (error) {
    return error as VenueError;
  }
  throw new Error('expected the call to fail');
}

function nonTimeRequests(): CapturedRequest[] {
  return stub.requests.filter((request) => request.url !== '/v1/time');
}

describe('malformed answers become typed errors', () => {
  const cases: Array<[string, (response: ServerResponse) => void, string]> = [
    [
      'an unknown field',
      (response) => json(response, 200, { ...fixtures.account(), bonus: '1' }),
      'MALFORMED_RESPONSE',
    ],
    [
      'a wrong type',
      (response) => json(response, 200, { ...fixtures.account(), total_equity: 1000 }),
      'MALFORMED_RESPONSE',
    ],
    ['broken JSON', (response) => json(response, 200, '{"account_id": "a",'), 'MALFORMED_RESPONSE'],
    [
      'an HTML error page',
      (response) => {
        response.writeHead(500, {
          'content-type': 'text/html',
          'svc-request-id': 'req_html',
        });
        response.end('<html><body>Internal Server Error</body></html>');
      },
      'MALFORMED_RESPONSE',
    ],
    [
      'an envelope with a wrong type',
      (response) =>
        json(response, 400, {
          error: {
            code: 'X',
            message: 1,
            request_id: 'r',
            retryable: false,
            details: {},
          },
        }),
      'MALFORMED_RESPONSE',
    ],
  ];

  for (const [name, answer, code] of cases) {
    it(`${name}`, async () => {
      const { clock, client } = setup();
      serve(clock, (_request, response) => answer(response));
      const error = await failure(client.getAccount());
      expect(error.code).toBe(code);
      expect(error.endpoint).toBe('getAccount');
      expect(error.httpStatus).not.toBeNull();
      expect(error.bodyExcerpt).not.toBeNull();
      expect(nonTimeRequests()).toHaveLength(1);
    });
  }

  it('keeps the server request id of an HTML page', async () => {
    const { clock, client } = setup();
    serve(clock, (_request, response) => {
      response.writeHead(500, {
        'content-type': 'text/html',
        'svc-request-id': 'req_html',
      });
      response.end('<h1>oops</h1>');
    });
    const error = await failure(client.getAccount());
    expect(error).toMatchObject({
      httpStatus: 500,
      serverRequestId: 'req_html',
      bodyExcerpt: '<h1>oops</h1>',
    });
  });

  it('refuses a body larger than the limit', async () => {
    const { clock, client } = setup({ maxResponseBytes: 1_000 });
    serve(clock, (_request, response) => json(response, 200, { pad: 'x'.repeat(5_000) }));
    expect((await failure(client.getAccount())).code).toBe('MALFORMED_RESPONSE');
  });
});

describe('retries', () => {
  it('retries a GET while the error is retryable, with backoff on the injected clock', async () => {
    const { clock, clientClock, client } = setup({
      retry: { maxAttempts: 4, initialDelayMs: 100 },
    });
    let calls = 0;
    serve(clock, (_request, response) => {
      calls += 1;
      if (calls < 3) json(response, 503, envelope('EXECUTION_UNAVAILABLE', 'busy', true));
      else json(response, 200, fixtures.account());
    });
    const account = await client.getAccount();
    expect(account.account_id).toBe('acct-1');
    expect(calls).toBe(3);
    expect(clientClock.waits.filter((wait) => wait < 600_000)).toEqual([75, 150]);
  });

  it('gives up after the last attempt and throws the last error', async () => {
    const { clock, client } = setup({ retry: { maxAttempts: 2 } });
    serve(clock, (_request, response) =>
      json(response, 503, envelope('EXECUTION_UNAVAILABLE', 'busy', true)),
    );
    expect((await failure(client.getAccount())).code).toBe('EXECUTION_UNAVAILABLE');
    expect(nonTimeRequests()).toHaveLength(2);
  });

  it('does not retry an error that is not retryable', async () => {
    const { clock, client } = setup();
    serve(clock, (_request, response) =>
      json(response, 404, envelope('ORDER_NOT_FOUND', 'none', false)),
    );
    expect((await failure(client.getOrder({ order_id: 'x' }))).code).toBe('ORDER_NOT_FOUND');
    expect(nonTimeRequests()).toHaveLength(1);
  });

  it('retries a gateway error page on a read', async () => {
    const { clock, client } = setup();
    let calls = 0;
    serve(clock, (_request, response) => {
      calls += 1;
      if (calls === 1) {
        response.writeHead(502, { 'content-type': 'text/html' });
        response.end('<html>Bad Gateway</html>');
      } else {
        json(response, 200, {
          status: 'ok',
          environment: 'practice',
          api_version: '1.0.0',
          server_time: formatTimestamp(clock.now()),
        });
      }
    });
    expect((await client.getStatus()).status).toBe('ok');
    expect(calls).toBe(2);
  });

  it('waits exactly for Retry-After on 429, in seconds or as an HTTP date', async () => {
    const { clock, clientClock, client } = setup();
    let calls = 0;
    serve(clock, (_request, response) => {
      calls += 1;
      if (calls === 1) {
        json(response, 429, envelope('RATE_LIMITED', 'slow', true), {
          'retry-after': '3',
        });
      } else if (calls === 2) {
        const at = new Date(clock.now() + 7_000).toUTCString();
        json(response, 429, envelope('RATE_LIMITED', 'slow', true), {
          'retry-after': at,
        });
      } else {
        json(response, 200, fixtures.account());
      }
    });
    const before = clock.now();
    await client.getAccount();
    expect(calls).toBe(3);
    expect(clientClock.waits.filter((wait) => wait < 600_000)).toEqual([3_000, 7_000]);
    expect(clock.now() - before).toBe(10_000);
  });

  it('does not wait for a Retry-After beyond the limit', async () => {
    const { clock, client } = setup({ retry: { maxRetryAfterMs: 5_000 } });
    serve(clock, (_request, response) =>
      json(response, 429, envelope('RATE_LIMITED', 'slow', true), {
        'retry-after': '60',
      }),
    );
    const error = await failure(client.getAccount());
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 60_000 });
    expect(nonTimeRequests()).toHaveLength(1);
  });

  it('never resends a mutation', async () => {
    const { clock, client } = setup();
    serve(clock, (_request, response) =>
      json(response, 503, envelope('EXECUTION_UNAVAILABLE', 'busy', true)),
    );
    const error = await failure(client.placeOrder(fixtures.marketOrder() as never));
    expect(error).toMatchObject({
      code: 'EXECUTION_UNAVAILABLE',
      outcome: 'unknown',
      retryable: true,
    });
    const rateLimited = setup();
    serve(rateLimited.clock, (_request, response) =>
      json(response, 429, envelope('RATE_LIMITED', 'slow', true), {
        'retry-after': '1',
      }),
    );
    const limited = await failure(rateLimited.client.placeOrder(fixtures.marketOrder() as never));
    expect(limited).toMatchObject({
      code: 'RATE_LIMITED',
      outcome: 'rejected',
      retryAfterMs: 1_000,
    });
    expect(nonTimeRequests().filter((request) => request.method === 'POST')).toHaveLength(2);
  });
});

describe('transport failures', () => {
  it("times out on the injected clock; a mutation's outcome is then unknown", async () => {
    const { clock, client } = setup({ requestTimeoutMs: 5_000, retry: { maxAttempts: 1 } }, 0);
    serve(clock, () => undefined);
    const pending = track(client.placeOrder(fixtures.marketOrder() as never));
    await until(() => nonTimeRequests().length === 1, 'the request to arrive');
    clock.advanceBy(4_999);
    await turn();
    expect(pending.settled()).toBe(false);
    clock.advanceBy(1);
    const error = await failure(pending.promise);
    expect(error).toMatchObject({
      code: 'REQUEST_TIMEOUT',
      outcome: 'unknown',
      retryable: false,
      source: 'transport',
    });
    expect(error.message).toContain('recover it by request id');
  });

  it('times out while the body is still arriving, and drops what came of it', async () => {
    const { clock, client } = setup({ requestTimeoutMs: 2_000, retry: { maxAttempts: 1 } }, 0);
    serve(clock, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"account_id":');
    });
    const pending = track(client.getAccount());
    await until(() => nonTimeRequests().length === 1, 'the request to arrive');
    await turn();
    expect(pending.settled()).toBe(false);
    clock.advanceBy(2_000);
    expect(await failure(pending.promise)).toMatchObject({
      code: 'REQUEST_TIMEOUT',
      retryable: true,
    });
  });

  it('times out a read as retryable', async () => {
    const { clock, client } = setup({ requestTimeoutMs: 1_000, retry: { maxAttempts: 1 } }, 0);
    serve(clock, () => undefined);
    const pending = track(client.getAccount());
    await until(() => nonTimeRequests().length === 1, 'the request to arrive');
    clock.advanceBy(1_000);
    expect(await failure(pending.promise)).toMatchObject({
      code: 'REQUEST_TIMEOUT',
      outcome: null,
      retryable: true,
    });
  });

  it('reports a connection broken after sending as TRANSPORT_FAILURE with an unknown outcome', async () => {
    const { clock, client } = setup();
    stub.handle((request, response) => {
      if (request.url === '/v1/time') json(response, 200, timeBody(clock.now()));
      else response.socket?.destroy();
    });
    const error = await failure(client.placeOrder(fixtures.marketOrder() as never));
    expect(error).toMatchObject({
      code: 'TRANSPORT_FAILURE',
      outcome: 'unknown',
      retryable: false,
    });
  });

  it('reports a refused connection as TRANSPORT_FAILURE, never sent', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const address = server.address() as AddressInfo;
        server.close(() => resolve(address.port));
      });
    });
    const clock = new VirtualClock(START_MS);
    const client = new RestClient({
      baseUrl: `http://127.0.0.1:${port}`,
      credential: credentialFor(`http://127.0.0.1:${port}`),
      clock,
      clockSync: 'manual',
      retry: { maxAttempts: 1 },
    });
    clients.push(client);
    const error = await failure(client.placeOrder(fixtures.marketOrder() as never));
    expect(error).toMatchObject({
      code: 'TRANSPORT_FAILURE',
      outcome: 'not_sent',
      retryable: true,
    });
    expect(error.details).toMatchObject({ transportCode: 'ECONNREFUSED' });
  });

  it('never follows a redirect, so signed headers stay on their origin', async () => {
    const { clock, client } = setup();
    other.handle((_request, response) => json(response, 200, fixtures.account()));
    serve(clock, (_request, response) => {
      response.writeHead(307, { location: `${other.baseUrl}/v1/account` });
      response.end();
    });
    const error = await failure(client.getAccount());
    expect(error).toMatchObject({ code: 'REDIRECT_REFUSED', httpStatus: 307 });
    expect(other.requests).toHaveLength(0);
  });

  it("aborts on the caller's signal", async () => {
    const { clock, client } = setup();
    serve(clock, () => undefined);
    const controller = new AbortController();
    const pending = client.getAccount({ signal: controller.signal });
    await until(() => nonTimeRequests().length === 1, 'the request to arrive');
    controller.abort();
    expect(await failure(pending)).toMatchObject({ code: 'REQUEST_ABORTED' });
    const already = new AbortController();
    already.abort();
    const error = await failure(
      client.placeOrder(fixtures.marketOrder() as never, {
        signal: already.signal,
      }),
    );
    expect(error).toMatchObject({
      code: 'REQUEST_ABORTED',
      outcome: 'not_sent',
    });
  });
});

describe('local checks', () => {
  it('refuses a bad request before sending', async () => {
    const { clock, client } = setup();
    serve(clock, (_request, response) => json(response, 500, {}));
    const error = await failure(
      client.placeOrder({ ...fixtures.marketOrder(), leverage: 0 } as never),
    );
    expect(error).toMatchObject({ code: 'INVALID_REQUEST', source: 'local' });
    expect(error.details.issues).toMatchObject([{ loc: ['body', 'leverage'] }]);
    await expect(client.getBook({ market_id: 'BTC-USD' }, { depth: 0 })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
    expect(stub.requests).toHaveLength(0);
  });

  it('needs a credential for signed endpoints', async () => {
    const client = new RestClient({ baseUrl: stub.baseUrl });
    clients.push(client);
    await expect(client.getAccount()).rejects.toMatchObject({
      code: 'CREDENTIAL_REQUIRED',
    });
    expect(stub.requests).toHaveLength(0);
  });

  it('refuses unsafe base URLs', () => {
    expect(() => new RestClient({ baseUrl: 'http://example.com' })).toThrow(
      expect.objectContaining({ code: 'UNSAFE_URL' }),
    );
  });
});

describe('clock', () => {
  it('corrects the signed timestamp by the offset measured from /v1/time', async () => {
    const { clock, client } = setup();
    serve(clock, (_request, response) => json(response, 200, fixtures.account()), 4_000);
    await client.getAccount();
    const signed = nonTimeRequests()[0] as CapturedRequest;
    expect(signed.headers['svc-timestamp']).toBe(String(clock.now() + 4_000));
    expect(client.clockOffset()?.offsetMs).toBe(4_000);
  });

  it('refuses to sign beyond half the signature window, and sends nothing signed', async () => {
    const { clock, client } = setup();
    serve(clock, (_request, response) => json(response, 200, fixtures.account()), -6_000);
    const error = await failure(client.placeOrder(fixtures.marketOrder() as never));
    expect(error).toMatchObject({ code: 'CLOCK_SKEW', outcome: 'not_sent' });
    expect(error.message).toContain('ahead of');
    expect(nonTimeRequests()).toHaveLength(0);
  });
});

describe('signing and resending', () => {
  function verify(request: CapturedRequest, credential: Credential): boolean {
    const input = buildCanonicalRequestInput({
      method: request.method,
      target: request.url,
      keyId: String(request.headers['svc-api-key']),
      timestampMs: Number(request.headers['svc-timestamp']),
      nonce: String(request.headers['svc-nonce']),
      body: request.body,
    });
    const signature = decodeBase64Strict(String(request.headers['svc-signature']));
    return signature !== null && verifySignature(credential.publicKey, input, signature);
  }

  it('signs the exact request target, query included', async () => {
    const { clock, client, credential } = setup();
    serve(clock, (_request, response) =>
      json(response, 200, {
        data: [],
        page: { next_cursor: null, has_more: false },
      }),
    );
    await client.listOrders({ limit: 5, status: 'OPEN', market_id: 'BTC USD' });
    const request = nonTimeRequests()[0] as CapturedRequest;
    expect(request.url).toBe('/v1/orders?limit=5&market_id=BTC%20USD&status=OPEN');
    expect(request.headers['svc-signature-version']).toBe('SVC1');
    expect(verify(request, credential)).toBe(true);
  });

  it('resends a mutation with the same request_id and body, and a fresh nonce, timestamp and signature', async () => {
    const { clock, client, credential } = setup();
    serve(clock, (request, response) => {
      const sent = JSON.parse(request.body.toString('utf8')) as Record<string, unknown>;
      json(response, 202, {
        ...fixtures.order(),
        request_id: sent.request_id,
        client_order_id: sent.client_order_id,
      });
    });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          request_id: fc.stringMatching(/^[A-Za-z0-9:_-]{8,80}$/),
          client_order_id: fc.stringMatching(/^[A-Za-z0-9:_-]{1,100}$/),
          side: fc.constantFrom('buy', 'sell'),
          quantity: fc.oneof(
            fc.integer({ min: 1, max: 1_000_000 }),
            fc.stringMatching(/^[1-9]\d{0,5}(?:\.\d{1,6})?$/),
          ),
          price: fc.stringMatching(/^[1-9]\d{0,6}(?:\.\d{1,4})?$/),
          leverage: fc.integer({ min: 1, max: 200 }),
        }),
        fc.integer({ min: 2, max: 4 }),
        fc.boolean(),
        async (fields, sends, fromStorage) => {
          stub.requests.length = 0;
          const body = {
            ...fields,
            market_id: 'BTC-USD',
            type: 'limit' as const,
          };
          const prepared = client.prepare('placeOrder', { body });
          const resend = fromStorage
            ? client.fromStoredMutation('placeOrder', {}, Uint8Array.from(prepared.bodyBytes))
            : prepared;
          expect(resend.bodySha256).toBe(prepared.bodySha256);
          expect(Buffer.from(resend.bodyBytes).equals(Buffer.from(prepared.bodyBytes))).toBe(true);
          await client.send(prepared);
          for (let index = 1; index < sends; index += 1) {
            clock.advanceBy(1);
            await client.send(resend);
          }
          const posts = nonTimeRequests();
          expect(posts).toHaveLength(sends);
          for (const request of posts) {
            expect(bodySha256Hex(request.body)).toBe(prepared.bodySha256);
            expect(JSON.parse(request.body.toString('utf8')).request_id).toBe(fields.request_id);
            expect(verify(request, credential)).toBe(true);
          }
          const distinct = (header: string) =>
            new Set(posts.map((request) => request.headers[header])).size;
          expect(distinct('svc-nonce')).toBe(sends);
          expect(distinct('svc-timestamp')).toBe(sends);
          expect(distinct('svc-signature')).toBe(sends);
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('rate limit headers and pagination', () => {
  it('tracks the quota per key and keeps under it when asked', async () => {
    const { clock, clientClock, client, credential } = setup({
      rateLimiter: true,
    });
    let remaining = 2;
    serve(clock, (_request, response) => {
      const headers = {
        'ratelimit-limit': '2',
        'ratelimit-remaining': String(Math.max(remaining - 1, 0)),
        'ratelimit-reset': '30',
      };
      remaining -= 1;
      json(response, 200, fixtures.account(), headers);
    });
    await client.getAccount();
    expect(client.rateLimit()).toMatchObject({ limit: 2, remaining: 1 });
    expect(client.rateLimits().has(credential.keyId)).toBe(true);
    await client.getAccount();
    expect(client.rateLimit()?.remaining).toBe(0);
    remaining = 2;
    await client.getAccount();
    // The third request waited for the window to reset instead of being refused.
    expect(clientClock.waits).toContain(30_000);
  });

  it('iterates pages, passing the cursor on unchanged until has_more is false', async () => {
    const { clock, client } = setup();
    const pages: Record<string, unknown> = {
      '': {
        data: [fixtures.order()],
        page: { next_cursor: 'c/1=', has_more: true },
      },
      'c/1=': {
        data: [fixtures.order(), fixtures.order()],
        page: { next_cursor: 'c2', has_more: true },
      },
      c2: { data: [], page: { next_cursor: null, has_more: false } },
    };
    serve(clock, (request, response) => {
      const cursor = new URL(request.url, 'http://x').searchParams.get('cursor') ?? '';
      json(response, 200, pages[cursor]);
    });
    const orders = [];
    for await (const order of client.iterateOrders({
      limit: 2,
      market_id: 'BTC-USD',
    })) {
      orders.push(order);
    }
    expect(orders).toHaveLength(3);
    expect(nonTimeRequests().map((request) => request.url)).toEqual([
      '/v1/orders?limit=2&market_id=BTC-USD',
      '/v1/orders?limit=2&cursor=c%2F1%3D&market_id=BTC-USD',
      '/v1/orders?limit=2&cursor=c2&market_id=BTC-USD',
    ]);
  });

  it('stops a list that claims more pages without a cursor', async () => {
    const { clock, client } = setup();
    serve(clock, (_request, response) =>
      json(response, 200, {
        data: [],
        page: { next_cursor: null, has_more: true },
      }),
    );
    const iterate = async () => {
      for await (const _fill of client.iterateFills()) {
        // consume
      }
    };
    await expect(iterate()).rejects.toMatchObject({
      code: 'MALFORMED_RESPONSE',
    });
  });

  it('pages events by next_after_sequence', async () => {
    const { clock, client } = setup();
    serve(clock, (request, response) => {
      const after = Number(new URL(request.url, 'http://x').searchParams.get('after_sequence'));
      const data = after < 2 ? [fixtures.orderStatusEvent(after + 1)] : [];
      json(response, 200, {
        data,
        has_more: after < 2,
        next_after_sequence: after + data.length,
      });
    });
    const events = [];
    for await (const event of client.iterateEvents({
      after_sequence: 0,
      limit: 1,
    }))
      events.push(event);
    expect(events.map((event) => event.sequence)).toEqual([1, 2]);
  });
});
