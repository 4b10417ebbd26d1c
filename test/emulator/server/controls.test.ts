import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { VirtualClock } from '../../../src/core/clock.ts';
import type { RunningEmulator } from '../../../src/emulator/index.ts';
import {
  Market,
  MutationStatus,
  Order,
  OrderPage,
  PrivateEvent,
  TickerSnapshotFrame,
} from '../../../src/protocol/index.ts';
import { Credential, encodeBase64, generateKeyPair } from '../../../src/signing/index.ts';
import {
  expectError,
  limitOrder,
  publicGet,
  requestId,
  SignedClient,
  startTestEmulator,
  TestHttp,
  TestSocket,
} from './helpers.ts';

type TestEmulator = RunningEmulator & { clock: VirtualClock };
let emulator: TestEmulator;
const http = new TestHttp();
const sockets: TestSocket[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator();
});

afterEach(() => {
  for (const socket of sockets.splice(0)) socket.close();
  emulator.controls.clearFaults();
  emulator.controls.setRouteHealth('ready');
  emulator.controls.resumeFeed();
});

afterAll(async () => {
  await http.close();
  await emulator.close();
});

function trader(): SignedClient {
  return new SignedClient(http, emulator, emulator.createKey());
}

async function orderCount(client: SignedClient): Promise<number> {
  return OrderPage.parse((await client.get('/v1/orders')).json).data.length;
}

async function privateSocket(client: SignedClient): Promise<TestSocket> {
  const socket = await TestSocket.open(emulator.wsUrl);
  sockets.push(socket);
  await socket.nextOfType('challenge');
  await socket.authenticate(client.credential, emulator.clock.now());
  await socket.subscribe(['orders']);
  return socket;
}

function sequencesOf(socket: TestSocket): number[] {
  return socket.frames
    .filter((frame) => typeof frame.event_id === 'string')
    .map((frame) => PrivateEvent.parse(frame).sequence);
}

describe('request faults', () => {
  it('EXECUTION_UNAVAILABLE for the next mutation commits nothing; the retry goes through', async () => {
    const client = trader();
    emulator.controls.failRequests({ code: 'EXECUTION_UNAVAILABLE' });
    const body = limitOrder();
    const refused = expectError(
      await client.post('/v1/orders', body),
      503,
      'EXECUTION_UNAVAILABLE',
    );
    expect(refused.retryable).toBe(true);
    expect(await orderCount(client)).toBe(0);
    expectError(await client.get(`/v1/requests/${body.request_id}`), 404, 'ORDER_NOT_FOUND');
    expect((await client.post('/v1/orders', body)).status).toBe(202);
    expect(emulator.controls.faults().requests).toEqual([]);
  });

  it('ORDER_CONFIRMATION_PENDING commits first: recovery finds it, the retry answers the stored result', async () => {
    const client = trader();
    emulator.controls.failRequests({
      code: 'ORDER_CONFIRMATION_PENDING',
      count: 1,
    });
    const body = limitOrder();
    expectError(await client.post('/v1/orders', body), 409, 'ORDER_CONFIRMATION_PENDING');
    const recovered = MutationStatus.parse(
      (await client.get(`/v1/requests/${body.request_id}`)).json,
    );
    expect(recovered.command_type).toBe('order.open');
    const retry = await client.post('/v1/orders', body);
    expect(retry.status).toBe(202);
    expect(retry.headers['svc-idempotent-replay']).toBe('true');
    expect(Order.parse(retry.json).order_id).toBe(
      (recovered.result as { order_id: string }).order_id,
    );
    expect(await orderCount(client)).toBe(1);
  });

  it('RATE_LIMITED answers 429 with the requested Retry-After', async () => {
    const client = trader();
    emulator.controls.failRequests({
      code: 'RATE_LIMITED',
      count: 2,
      retryAfterSeconds: 7,
    });
    for (let index = 0; index < 2; index++) {
      const reply = await client.post('/v1/orders', limitOrder());
      expectError(reply, 429, 'RATE_LIMITED');
      expect(reply.headers['retry-after']).toBe('7');
      // The injected values replace the key's own quota headers rather than repeat them.
      expect(reply.headers['ratelimit-remaining']).toBe('0');
      expect(reply.headers['ratelimit-reset']).toBe('7');
    }
    expect((await client.post('/v1/orders', limitOrder())).status).toBe(202);
  });

  it('matches by endpoint (reads too) and by request_id', async () => {
    const client = trader();
    emulator.controls.failRequests({
      code: 'EXECUTION_UNAVAILABLE',
      endpoint: 'getAccount',
    });
    expect((await client.post('/v1/orders', limitOrder())).status).toBe(202);
    expectError(await client.get('/v1/account'), 503, 'EXECUTION_UNAVAILABLE');
    expect((await client.get('/v1/account')).status).toBe(200);
    const target = limitOrder();
    emulator.controls.failRequests({
      code: 'EXECUTION_UNAVAILABLE',
      requestId: String(target.request_id),
    });
    expect((await client.post('/v1/orders', limitOrder())).status).toBe(202);
    expectError(await client.post('/v1/orders', target), 503, 'EXECUTION_UNAVAILABLE');
  });

  it('drops the response after committing: the connection closes, the order exists', async () => {
    const client = trader();
    emulator.controls.dropResponses({ count: 1 });
    const body = limitOrder();
    await expect(client.post('/v1/orders', body)).rejects.toThrow();
    const recovered = MutationStatus.parse(
      (await client.get(`/v1/requests/${body.request_id}`)).json,
    );
    expect(recovered.state).toBe('PENDING');
    expect(await orderCount(client)).toBe(1);
  });

  it('delays the response on the emulator clock after committing', async () => {
    const client = trader();
    emulator.controls.delayResponses({ delayMs: 5_000 });
    const body = limitOrder();
    let answered = false;
    const pending = client.post('/v1/orders', body).then((reply) => {
      answered = true;
      return reply;
    });
    // Another request completing proves the delayed one was processed and held.
    for (;;) {
      const status = await client.get(`/v1/requests/${body.request_id}`);
      if (status.status === 200) break;
    }
    expect(answered).toBe(false);
    emulator.clock.advanceBy(5_000);
    const reply = await pending;
    expect(reply.status).toBe(202);
    expect(Order.parse(reply.json).request_id).toBe(body.request_id);
  });
});

describe('WebSocket faults', () => {
  it('drops the next private frame', async () => {
    const client = trader();
    const socket = await privateSocket(client);
    emulator.controls.dropFrames({ count: 1 });
    await client.post('/v1/orders', limitOrder());
    emulator.clock.advanceBy(50);
    await socket.barrier();
    expect(sequencesOf(socket)).toEqual([2, 3]);
  });

  it('duplicates the next private frames', async () => {
    const client = trader();
    const socket = await privateSocket(client);
    emulator.controls.duplicateFrames({ count: 2 });
    await client.post('/v1/orders', limitOrder());
    emulator.clock.advanceBy(50);
    await socket.barrier();
    expect(sequencesOf(socket)).toEqual([1, 1, 2, 2, 3]);
  });

  it('with probability 1 affects every private frame until cleared', async () => {
    const client = trader();
    const socket = await privateSocket(client);
    emulator.controls.dropFrames({ probability: 1 });
    await client.post('/v1/orders', limitOrder());
    emulator.clock.advanceBy(50);
    await socket.barrier();
    expect(sequencesOf(socket)).toEqual([]);
    emulator.controls.clearFaults();
    await client.post('/v1/orders', limitOrder());
    await socket.barrier();
    expect(sequencesOf(socket)).toEqual([4]);
  });

  it('disconnects every WebSocket client, politely or abruptly', async () => {
    const polite = await TestSocket.open(emulator.wsUrl);
    const rude = await TestSocket.open(emulator.wsUrl);
    await polite.nextOfType('challenge');
    await rude.nextOfType('challenge');
    expect(emulator.controls.disconnectWebSockets()).toBeGreaterThanOrEqual(2);
    expect((await polite.closed).code).toBe(1012);
    const another = await TestSocket.open(emulator.wsUrl);
    await another.nextOfType('challenge');
    expect(emulator.controls.disconnectWebSockets({ abrupt: true })).toBe(1);
    expect((await another.closed).code).toBe(1006);
    expect((await rude.closed).code).toBe(1012);
  });
});

describe('market and route controls', () => {
  it('pauses and resumes the feed: data turns stale, then live', async () => {
    const socket = await TestSocket.open(emulator.wsUrl);
    sockets.push(socket);
    await socket.nextOfType('challenge');
    emulator.controls.pauseFeed('ETH-PERP');
    await socket.subscribe(['market:ETH-PERP:ticker']);
    expect(
      TickerSnapshotFrame.parse(await socket.nextOfType('ticker.snapshot')).data.data_status,
    ).toBe('stale');
    expect(
      Market.parse((await publicGet(http, emulator, '/v1/markets/ETH-PERP')).json).data_status,
    ).toBe('stale');
    expect(
      Market.parse((await publicGet(http, emulator, '/v1/markets/BTC-PERP')).json).data_status,
    ).toBe('live');
    emulator.controls.resumeFeed('ETH-PERP');
    const update = await socket.nextOfType('ticker.update');
    expect((update.data as { data_status: string }).data_status).toBe('live');
  });

  it('fires cancel-all-after now', async () => {
    const client = trader();
    const order = Order.parse((await client.post('/v1/orders', limitOrder())).json);
    await client.send('PUT', '/v1/cancel-all-after', {
      request_id: requestId(),
      timeout_seconds: 600,
    });
    emulator.controls.fireCancelAllAfter(client.credential.accountId);
    expect(Order.parse((await client.get(`/v1/orders/${order.order_id}`)).json).status).toBe(
      'CANCELLED',
    );
  });
});

describe('admin API', () => {
  const admin = (method: string, path: string, body?: unknown, token = emulator.adminToken) =>
    http.send(emulator.baseUrl, method, `/admin/v1${path}`, body, {
      headers: { authorization: `Bearer ${token}` },
    });

  it('refuses every admin path without the token, unknown ones included', async () => {
    for (const path of ['/keys', '/nothing', '/controls/faults']) {
      expectError(
        await admin('GET', path, undefined, 'wrong-token-wrong-token'),
        401,
        'ADMIN_UNAUTHORIZED',
      );
      const none = await http.send(emulator.baseUrl, 'GET', `/admin/v1${path}`);
      expectError(none, 401, 'ADMIN_UNAUTHORIZED');
    }
    expectError(await admin('GET', '/nothing'), 404, 'NOT_FOUND');
    expectError(await admin('DELETE', '/keys'), 405, 'METHOD_NOT_ALLOWED');
  });

  it('registers a public key, and the key works with the private key that never left here', async () => {
    const { privateKey, publicKey } = generateKeyPair();
    const reply = await admin('POST', '/keys', {
      public_key: encodeBase64(publicKey),
      scopes: ['account:read'],
      max_open_orders: 3,
    });
    expect(reply.status).toBe(201);
    const created = reply.json as {
      key_id: string;
      account_id: string;
      api_base_url: string;
      ws_url: string;
    };
    expect(created.api_base_url).toBe(emulator.baseUrl);
    expect(created.ws_url).toBe(emulator.wsUrl);
    const credential = Credential.create({
      keyId: created.key_id,
      accountId: created.account_id,
      apiBaseUrl: created.api_base_url,
      wsUrl: created.ws_url,
      scopes: ['account:read'],
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: null,
      privateKey,
    });
    const client = new SignedClient(http, emulator, credential);
    expect((await client.get('/v1/account')).status).toBe(200);
    const listed = (await admin('GET', '/keys')).json as {
      data: { key_id: string; public_key: string }[];
    };
    const entry = listed.data.find((key) => key.key_id === created.key_id);
    expect(entry?.public_key).toBe(encodeBase64(publicKey));
    expect(JSON.stringify(listed)).not.toContain('private');
    const revoked = await admin('POST', `/keys/${created.key_id}/revoke`, {});
    expect(revoked.status).toBe(200);
    expectError(await client.get('/v1/account'), 401, 'KEY_REVOKED');
    expectError(await admin('POST', '/keys/key_missing/revoke', {}), 404, 'KEY_NOT_FOUND');
  });

  it('validates key bodies and account references', async () => {
    const { publicKey } = generateKeyPair();
    const bad = expectError(
      await admin('POST', '/keys', {
        public_key: 'AAAA',
        scopes: ['everything'],
        colour: 1,
      }),
      422,
      'INVALID_REQUEST',
    );
    expect((bad.details.issues as { loc: unknown[] }[]).map((issue) => issue.loc)).toEqual([
      ['body', 'public_key'],
      ['body', 'scopes', 0],
      ['body', 'colour'],
    ]);
    expectError(
      await admin('POST', '/keys', {
        public_key: encodeBase64(publicKey),
        account_id: 'acct-missing',
      }),
      404,
      'ACCOUNT_NOT_FOUND',
    );
    expectError(
      await admin('POST', '/keys', {
        public_key: encodeBase64(publicKey),
        reset_account: true,
      }),
      422,
      'INVALID_REQUEST',
    );
    expectError(
      await admin('POST', '/keys', {
        public_key: encodeBase64(publicKey),
        allow_ip: ['300.1.1.1'],
      }),
      422,
      'INVALID_REQUEST',
    );
    // A degenerate key: OpenSSL would accept an all-zero signature under it.
    const weak = expectError(
      await admin('POST', '/keys', { public_key: encodeBase64(new Uint8Array(32)) }),
      422,
      'INVALID_REQUEST',
    );
    expect(JSON.stringify(weak.details.issues)).toContain('small order');
  });

  it('drives every control', async () => {
    const client = trader();
    const fault = await admin('POST', '/controls/faults', {
      kind: 'fail',
      code: 'EXECUTION_UNAVAILABLE',
      count: 1,
    });
    expect(fault.json).toMatchObject({ requests: [{ remaining: 1 }] });
    expectError(await client.post('/v1/orders', limitOrder()), 503, 'EXECUTION_UNAVAILABLE');
    await admin('POST', '/controls/faults', {
      kind: 'drop_frames',
      probability: 0.5,
    });
    await admin('POST', '/controls/faults', {
      kind: 'delay_response',
      delay_ms: 10,
      endpoint: 'cancelOrder',
    });
    expect((await admin('GET', '/controls/faults')).json).toMatchObject({
      requests: [
        {
          fault: { kind: 'delay', delayMs: 10 },
          match: { endpoint: 'cancelOrder' },
        },
      ],
      frames: [{ fault: 'drop', probability: 0.5, remaining: null }],
    });
    expect((await admin('DELETE', '/controls/faults')).json).toEqual({
      requests: [],
      frames: [],
    });
    expectError(
      await admin('POST', '/controls/faults', {
        kind: 'fail',
        code: 'UNKNOWN_MARKET',
      }),
      422,
      'INVALID_REQUEST',
    );
    expectError(
      await admin('POST', '/controls/faults', {
        kind: 'fail',
        code: 'RATE_LIMITED',
        endpoint: 'noSuchEndpoint',
      }),
      422,
      'INVALID_REQUEST',
    );

    expect((await admin('POST', '/controls/route', { health: 'disabled' })).status).toBe(200);
    expectError(await publicGet(http, emulator, '/ready'), 503, 'EXECUTION_UNAVAILABLE');
    await admin('POST', '/controls/route', { health: 'ready' });
    expect((await publicGet(http, emulator, '/ready')).status).toBe(200);

    await admin('POST', '/controls/feed', {
      paused: true,
      market_id: 'BTC-PERP',
    });
    expect(
      Market.parse((await publicGet(http, emulator, '/v1/markets/BTC-PERP')).json).data_status,
    ).toBe('stale');
    await admin('POST', '/controls/feed', { paused: false });
    expect(
      Market.parse((await publicGet(http, emulator, '/v1/markets/BTC-PERP')).json).data_status,
    ).toBe('live');

    const order = Order.parse((await client.post('/v1/orders', limitOrder())).json);
    await client.send('PUT', '/v1/cancel-all-after', {
      request_id: requestId(),
      timeout_seconds: 600,
    });
    await admin('POST', '/controls/cancel-all-after/fire', {
      account_id: client.credential.accountId,
    });
    expect(Order.parse((await client.get(`/v1/orders/${order.order_id}`)).json).status).toBe(
      'CANCELLED',
    );

    const socket = await TestSocket.open(emulator.wsUrl);
    await socket.nextOfType('challenge');
    expect(
      (
        await admin('POST', '/controls/websockets/disconnect', {
          abrupt: false,
        })
      ).json,
    ).toEqual({
      disconnected: 1,
    });
    expect((await socket.closed).code).toBe(1012);

    await admin('PUT', '/controls/rate-limit', { quota: 1, window_ms: 60_000 });
    try {
      expect((await client.get('/v1/account')).status).toBe(200);
      expectError(await client.get('/v1/account'), 429, 'RATE_LIMITED');
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
