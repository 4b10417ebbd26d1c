import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VirtualClock } from '../../../src/core/clock.ts';
import type { RunningEmulator } from '../../../src/emulator/index.ts';
import { InvalidRequestDetails } from '../../../src/protocol/index.ts';
import { signRequest } from '../../../src/signing/index.ts';
import {
  expectError,
  limitOrder,
  publicGet,
  rawRequest,
  requestId,
  SignedClient,
  startTestEmulator,
  TestHttp,
} from './helpers.ts';

type TestEmulator = RunningEmulator & { clock: VirtualClock };
let emulator: TestEmulator;
let client: SignedClient;
const http = new TestHttp();

beforeAll(async () => {
  emulator = await startTestEmulator({
    rateLimit: { quota: 5, windowMs: 10_000 },
  });
  client = new SignedClient(http, emulator, emulator.createKey());
  emulator.controls.setRateLimit({ quota: 100_000, windowMs: 60_000 });
});

afterAll(async () => {
  await http.close();
  await emulator.close();
});

function issuesOf(details: Record<string, unknown>) {
  return InvalidRequestDetails.parse(details).issues;
}

describe('request validation', () => {
  it('refuses unknown body fields, one extra_forbidden issue each', async () => {
    const error = expectError(
      await client.post('/v1/orders', limitOrder({ colour: 'red', size: 3 })),
      422,
      'INVALID_REQUEST',
    );
    expect(issuesOf(error.details)).toEqual([
      {
        type: 'extra_forbidden',
        loc: ['body', 'colour'],
        msg: 'Extra inputs are not permitted',
      },
      {
        type: 'extra_forbidden',
        loc: ['body', 'size'],
        msg: 'Extra inputs are not permitted',
      },
    ]);
  });

  it('reports every issue of path, query and body at once, each loc starting with its place', async () => {
    const body = limitOrder();
    delete body.side;
    const error = expectError(
      await client.post('/v1/orders', { ...body, quantity: -1, leverage: 1.5 }),
      422,
      'INVALID_REQUEST',
    );
    const issues = issuesOf(error.details);
    expect(issues.map((issue) => issue.loc)).toEqual([
      ['body', 'side'],
      ['body', 'quantity'],
      ['body', 'leverage'],
    ]);
    expect(issues[0]).toEqual({
      type: 'missing',
      loc: ['body', 'side'],
      msg: 'Field required',
    });
    expect(issues[2]!.type).toBe('int_from_float');
    const query = expectError(
      await client.get('/v1/fills?limit=0&colour=1'),
      422,
      'INVALID_REQUEST',
    );
    expect(issuesOf(query.details).map((issue) => issue.loc)).toEqual([
      ['query', 'limit'],
      ['query', 'colour'],
    ]);
    const target = '/v1/orders/%2E%2E';
    const signed = signRequest({
      signer: client.credential.createSigner(),
      keyId: client.credential.keyId,
      method: 'GET',
      target,
      timestampMs: emulator.clock.now(),
    });
    const path = expectError(
      await rawRequest(emulator.port, 'GET', target, signed),
      422,
      'INVALID_REQUEST',
    );
    expect(issuesOf(path.details)).toEqual([
      {
        type: 'value_error',
        loc: ['path', 'order_id'],
        msg: "Input should not be '.' or '..'",
      },
    ]);
    expectError(await rawRequest(emulator.port, 'GET', '/v1/markets/%E0%A4%A'), 404, 'NOT_FOUND');
  });

  it('broken JSON and non-UTF-8 bodies are 422 json_invalid', async () => {
    for (const raw of ['{"request_id":', 'null x', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])]) {
      const error = expectError(
        await client.send('POST', '/v1/orders', undefined, { raw }),
        422,
        'INVALID_REQUEST',
      );
      expect(issuesOf(error.details)).toEqual([
        { type: 'json_invalid', loc: ['body'], msg: 'JSON decode error' },
      ]);
    }
  });

  it('a body that is not an object, or no body at all, is 422', async () => {
    const array = expectError(await client.post('/v1/orders', [1, 2]), 422, 'INVALID_REQUEST');
    expect(issuesOf(array.details)[0]!.loc).toEqual(['body']);
    const empty = expectError(await client.send('POST', '/v1/orders'), 422, 'INVALID_REQUEST');
    expect(issuesOf(empty.details)).toEqual([
      { type: 'missing', loc: ['body'], msg: 'Field required' },
    ]);
  });

  it('bodies must be application/json (415 otherwise)', async () => {
    const body = limitOrder();
    expectError(
      await client.post('/v1/orders', body, { contentType: 'text/plain' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(
      await client.post('/v1/orders', body, {
        contentType: 'application/json; charset=latin1',
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(
      await client.post('/v1/orders', body, { contentType: null }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    const utf8 = await client.post('/v1/orders', body, {
      contentType: 'Application/JSON; charset="UTF-8"',
    });
    expect(utf8.status).toBe(202);
  });

  it('bodies above 64 KiB are 413 PAYLOAD_TOO_LARGE', async () => {
    const huge = JSON.stringify({
      request_id: requestId(),
      padding: 'x'.repeat(70_000),
    });
    const reply = await client.send('POST', '/v1/orders', undefined, {
      raw: huge,
    });
    expectError(reply, 413, 'PAYLOAD_TOO_LARGE');
    const justUnder = { ...limitOrder(), client_order_id: 'x'.repeat(100) };
    expect((await client.post('/v1/orders', justUnder)).status).toBe(202);
  });

  it('malformed HTTP is answered 400 with the envelope', async () => {
    const { connect } = await import('node:net');
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(emulator.port, '127.0.0.1', () => {
        socket.write('GARBAGE / HTTP/9.9\r\n\r\n');
      });
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString();
      });
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    expect(text.startsWith('HTTP/1.1 400')).toBe(true);
    expect(text).toMatch(/SVC-REQUEST-ID: req_/);
    expect(text).toContain('"code":"BAD_REQUEST"');
  });
});

describe('rate limit per key', () => {
  it('sends RateLimit headers on every signed response and 429 with Retry-After past the quota', async () => {
    emulator.controls.setRateLimit({ quota: 3, windowMs: 10_000 });
    try {
      // Align to a window start, so the reset is the full window.
      const now = emulator.clock.now();
      emulator.clock.advanceTo(Math.ceil(now / 10_000) * 10_000 + 10_000);
      const limited = new SignedClient(http, emulator, emulator.createKey());
      const remaining: string[] = [];
      for (let index = 0; index < 3; index++) {
        const reply = await limited.get('/v1/account');
        expect(reply.status).toBe(200);
        expect(reply.headers['ratelimit-limit']).toBe('3');
        expect(reply.headers['ratelimit-reset']).toBe('10');
        remaining.push(String(reply.headers['ratelimit-remaining']));
      }
      expect(remaining).toEqual(['2', '1', '0']);
      const refused = await limited.get('/v1/account');
      expectError(refused, 429, 'RATE_LIMITED');
      expect(refused.headers['retry-after']).toBe('10');
      expect(refused.headers['ratelimit-remaining']).toBe('0');
      // Another key has its own quota.
      expect((await client.get('/v1/account')).status).toBe(200);
      emulator.clock.advanceBy(6_500);
      const later = await limited.get('/v1/account');
      expectError(later, 429, 'RATE_LIMITED');
      expect(later.headers['retry-after']).toBe('4');
      emulator.clock.advanceBy(3_500);
      // Errors after authentication carry the headers too, and count.
      const invalid = await limited.get('/v1/fills?limit=0');
      expectError(invalid, 422, 'INVALID_REQUEST');
      expect(invalid.headers['ratelimit-remaining']).toBe('2');
      const reset = await limited.get('/v1/account');
      expect(reset.status).toBe(200);
      expect(reset.headers['ratelimit-remaining']).toBe('1');
      // Public endpoints are not counted and carry no quota headers.
      const publicReply = await publicGet(http, emulator, '/v1/time');
      expect(publicReply.headers['ratelimit-limit']).toBeUndefined();
    } finally {
      emulator.controls.setRateLimit({ quota: 100_000, windowMs: 60_000 });
    }
  });
});

describe('the server stayed healthy', () => {
  it('never reached the last-resort handler', () => {
    expect(emulator.stats()).toMatchObject({
      internalErrors: 0,
      responseMismatches: 0,
    });
  });
});
