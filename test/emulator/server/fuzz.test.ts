/**
 * Bad input never crashes the emulator and never gets a 5xx: random bodies (wrong types, huge
 * numbers, unicode, missing and extra fields, broken JSON, oversized), random query strings,
 * random headers and random WebSocket frames, against every endpoint. Every refusal must be the
 * error envelope; every success must match the endpoint's response schema (checkResponses).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VirtualClock } from '../../../src/core/clock.ts';
import type { RunningEmulator } from '../../../src/emulator/index.ts';
import {
  type EndpointDefinition,
  type EndpointName,
  ErrorEnvelope,
  endpointNames,
  endpoints,
  ServerFrame,
} from '../../../src/protocol/index.ts';
import { signRequest } from '../../../src/signing/index.ts';
import {
  limitOrder,
  marketOrder,
  publicGet,
  requestId,
  startTestEmulator,
  TestHttp,
  TestSocket,
} from './helpers.ts';

type TestEmulator = RunningEmulator & { clock: VirtualClock };
let emulator: TestEmulator;
const http = new TestHttp();
let credential: ReturnType<TestEmulator['createKey']>;

beforeAll(async () => {
  emulator = await startTestEmulator({
    rateLimit: { quota: 1_000_000, windowMs: 60_000 },
  });
  credential = emulator.createKey();
});

afterAll(async () => {
  await http.close();
  await emulator.close();
});

const TIME_LIMIT_MS = 5_000;

const weirdStrings = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    '',
    '.',
    '..',
    '%',
    '%ZZ',
    '\u0000',
    '🦄',
    'a'.repeat(300),
    'BTC-PERP',
    'svc-paper',
  ),
);

const weirdValues: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  weirdStrings,
  fc.constantFrom(1e308, -1e308, 0, -0, 1e-300, 2 ** 53 + 1, -1, 1.5, true, false, null, [], {}),
);

function validBody(name: EndpointName): Record<string, unknown> {
  switch (name) {
    case 'placeOrder':
    case 'simulateOrder':
      return limitOrder();
    case 'placeBatch':
      return { request_id: requestId(), orders: [limitOrder(), marketOrder()] };
    case 'amendOrder':
      return { request_id: requestId(), price: '59000' };
    case 'cancelOrder':
    case 'cancelAllOrders':
      return { request_id: requestId() };
    case 'closePosition':
      return {
        request_id: requestId(),
        client_order_id: 'close-fuzz',
        quantity_percent: 50,
      };
    case 'setCancelAllAfter':
      return { request_id: requestId(), timeout_seconds: 0 };
    default:
      return {};
  }
}

/** A body: a valid one with one field mutated, removed or added, or something else entirely. */
function bodyFor(name: EndpointName): fc.Arbitrary<string | Buffer | undefined> {
  const mutated = fc
    .record({
      field: fc.oneof(fc.constantFrom(...Object.keys(validBody(name)), 'extra'), fc.string()),
      value: weirdValues,
      remove: fc.boolean(),
    })
    .map(({ field, value, remove }) => {
      const body = validBody(name);
      if (remove) delete body[field];
      else body[field] = value;
      return JSON.stringify(body);
    });
  const broken = fc.tuple(fc.jsonValue(), fc.nat()).map(([value, cut]) => {
    const text = JSON.stringify(validBody(name)).slice(0, -1) + JSON.stringify(value);
    return text.slice(0, Math.max(1, text.length - (cut % 5) - 1));
  });
  return fc.oneof(
    { arbitrary: mutated, weight: 5 },
    {
      arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)),
      weight: 2,
    },
    { arbitrary: broken, weight: 2 },
    { arbitrary: weirdStrings, weight: 1 },
    { arbitrary: fc.constant(undefined), weight: 1 },
    {
      arbitrary: fc.constant(JSON.stringify({ pad: 'x'.repeat(70_000) })),
      weight: 1,
    },
    {
      arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
      weight: 1,
    },
    {
      arbitrary: fc.constantFrom(
        '{"quantity":1e400}',
        '{"request_id":"aaaaaaaa","timeout_seconds":1e21}',
        '[[[[[[[[[[]]]]]]]]]]',
      ),
      weight: 1,
    },
  );
}

function pathFor(definition: EndpointDefinition): fc.Arbitrary<string> {
  const parts = definition.path.split('/');
  return fc
    .array(fc.oneof(weirdStrings, fc.constantFrom('BTC-PERP', 'ETH-PERP', 'some-id')), {
      minLength: parts.length,
      maxLength: parts.length,
    })
    .map((values) =>
      parts
        .map((part, index) => {
          if (!part.startsWith('{')) return part;
          const value = values[index] ?? 'x';
          try {
            return encodeURIComponent(value) || 'x';
          } catch {
            return 'x';
          }
        })
        .join('/'),
    );
}

const queryString = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom(
            'limit',
            'depth',
            'cursor',
            'status',
            'interval',
            'after_sequence',
            'market_id',
            'route_id',
          ),
          fc.string(),
        ),
        weirdStrings,
      ),
      { maxLength: 4 },
    )
    .map((pairs) => {
      const text = pairs
        .map(([key, value]) => {
          try {
            return `${encodeURIComponent(key)}=${encodeURIComponent(value)}`;
          } catch {
            return 'x=1';
          }
        })
        .join('&');
      return text === '' ? '' : `?${text}`;
    }),
  fc.constantFrom('?', '?&&', '?limit=1&limit=2', '?depth=%', '?=', '?limit=99999999999999999999'),
);

const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);
const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'content-type',
    'svc-api-key',
    'svc-nonce',
    'svc-timestamp',
    'svc-signature',
    'svc-signature-version',
    'x-random',
    'accept',
  ),
  headerValue,
  { maxKeys: 2 },
);

const requestCase = fc.constantFrom(...endpointNames).chain((name) =>
  fc.record({
    name: fc.constant(name),
    path: pathFor(endpoints[name]),
    query: queryString,
    body: bodyFor(name),
    signing: fc.constantFrom('signed', 'signed', 'signed', 'unsigned', 'junk'),
    contentType: fc.constantFrom('application/json', 'application/json', 'text/plain', undefined),
    headers: extraHeaders,
    method: fc.oneof(
      { arbitrary: fc.constant(endpoints[name].method), weight: 8 },
      {
        arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
        weight: 1,
      },
    ),
  }),
);

describe('fuzzing the HTTP endpoints', () => {
  it('answers every random request with a success or a 4xx envelope, never a 5xx', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(requestCase, async (input) => {
        runs += 1;
        const target = `${input.path}${input.query}`;
        const bytes = input.body === undefined ? null : Buffer.from(input.body);
        let headers: Record<string, string> = {};
        if (bytes !== null && input.contentType !== undefined)
          headers['content-type'] = input.contentType;
        if (input.signing === 'signed') {
          headers = {
            ...headers,
            ...signRequest({
              signer: credential.createSigner(),
              keyId: credential.keyId,
              method: input.method,
              target,
              body: bytes,
              timestampMs: emulator.clock.now(),
            }),
          };
        } else if (input.signing === 'junk') {
          headers = { ...headers, ...input.headers };
        }
        const reply = await http.send(emulator.baseUrl, input.method, target, undefined, {
          ...(bytes === null ? {} : { raw: bytes }),
          contentType: null,
          headers,
        });
        expect(reply.status).toBeLessThan(500);
        expect(reply.headers['svc-request-id']).toMatch(/^req_/);
        if (reply.status >= 400 && input.method !== 'HEAD') {
          const envelope = ErrorEnvelope.parse(reply.json);
          expect(envelope.error.request_id).toBe(reply.headers['svc-request-id']);
        }
      }),
      {
        numRuns: 1_200,
        interruptAfterTimeLimit: TIME_LIMIT_MS,
        seed: 20_260_101,
      },
    );
    expect(runs).toBeGreaterThan(100);
    expect(emulator.stats()).toMatchObject({
      internalErrors: 0,
      responseMismatches: 0,
    });
    expect((await publicGet(http, emulator, '/health')).status).toBe(200);
  }, 30_000);
});

describe('fuzzing the WebSocket frames', () => {
  it('answers every random frame with valid server frames and keeps the connection', async () => {
    const socket = await TestSocket.open(emulator.wsUrl);
    await socket.nextOfType('challenge');
    const frame = fc.oneof(
      weirdStrings,
      fc.jsonValue().map((value) => JSON.stringify(value)),
      fc
        .record(
          {
            op: fc.constantFrom('auth', 'subscribe', 'unsubscribe', 'ping', 'dance'),
            request_id: fc.oneof(fc.string(), fc.constant('fuzz-1')),
            channels: fc.array(
              fc.oneof(
                weirdStrings,
                fc.constantFrom('orders', 'fills', 'market:BTC-PERP:ticker', 'market:X:ticker'),
              ),
              { maxLength: 3 },
            ),
            key_id: fc.string(),
            timestamp: fc.oneof(fc.string(), fc.integer()),
            nonce: fc.string(),
            scopes: fc.array(fc.string(), { maxLength: 2 }),
            last_sequence: fc.oneof(fc.integer(), fc.double()),
            signature: fc.string(),
          },
          { requiredKeys: ['op'] },
        )
        .map((value) => JSON.stringify(value)),
    );
    await fc.assert(
      fc.asyncProperty(frame, async (text) => {
        socket.send(text);
        await socket.barrier();
      }),
      { numRuns: 300, interruptAfterTimeLimit: 3_000, seed: 20_260_102 },
    );
    for (const received of socket.frames) ServerFrame.parse(received);
    expect(socket.socket.readyState).toBe(socket.socket.OPEN);
    expect(emulator.stats().internalErrors).toBe(0);
    socket.close();
  }, 30_000);
});
