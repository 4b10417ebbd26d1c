import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { VirtualClock } from '../../../src/core/clock.ts';
import type { RunningEmulator } from '../../../src/emulator/index.ts';
import {
  Account,
  type EndpointName,
  endpoints,
  formatTimestamp,
} from '../../../src/protocol/index.ts';
import { signRequest } from '../../../src/signing/index.ts';
import {
  expectError,
  limitOrder,
  type Reply,
  requestId,
  SignedClient,
  startTestEmulator,
  TestHttp,
} from './helpers.ts';

type TestEmulator = RunningEmulator & { clock: VirtualClock };
let emulator: TestEmulator;
const http = new TestHttp();

beforeAll(async () => {
  emulator = await startTestEmulator();
});

afterAll(async () => {
  await http.close();
  await emulator.close();
});

function client(options: Parameters<TestEmulator['createKey']>[0] = {}) {
  return new SignedClient(http, emulator, emulator.createKey(options));
}

function reasonOf(reply: Reply): unknown {
  return expectError(reply, 401, 'INVALID_SIGNATURE').details.reason;
}

describe('SVC1 verification', () => {
  it('accepts a correctly signed request', async () => {
    const reply = await client().get('/v1/account');
    expect(reply.status).toBe(200);
    expect(Account.parse(reply.json).settlement_asset).toBe('pUSDC');
  });

  it('refuses a missing signature, a bad one and a wrong version as INVALID_SIGNATURE', async () => {
    const signed = client();
    expect(reasonOf(await signed.get('/v1/account', { sign: false }))).toBe('unsupported_version');
    expect(
      reasonOf(
        await signed.get('/v1/account', {
          tamper: (headers) => ({
            ...headers,
            'SVC-SIGNATURE-VERSION': 'SVC2',
          }),
        }),
      ),
    ).toBe('unsupported_version');
    expect(
      reasonOf(
        await signed.get('/v1/account', {
          tamper: ({ 'SVC-NONCE': _nonce, ...rest }) => rest,
        }),
      ),
    ).toBe('missing_header');
    expect(
      reasonOf(
        await signed.get('/v1/account', {
          tamper: (headers) => ({ ...headers, 'SVC-NONCE': 'short' }),
        }),
      ),
    ).toBe('malformed_nonce');
    expect(
      reasonOf(
        await signed.get('/v1/account', {
          tamper: (headers) => ({ ...headers, 'SVC-TIMESTAMP': '0123' }),
        }),
      ),
    ).toBe('malformed_timestamp');
    expect(
      reasonOf(
        await signed.get('/v1/accounts', {
          tamper: (headers) => ({
            ...headers,
            'SVC-SIGNATURE': `${'A'.repeat(86)}==`,
          }),
        }),
      ),
    ).toBe('bad_signature');
  });

  it('refuses a body changed after signing', async () => {
    const signed = client();
    const body = JSON.stringify(limitOrder());
    const headers = signRequest({
      signer: signed.credential.createSigner(),
      keyId: signed.credential.keyId,
      method: 'POST',
      target: '/v1/orders/simulate',
      body: Buffer.from(body),
      timestampMs: emulator.clock.now(),
    });
    const forged = await http.send(emulator.baseUrl, 'POST', '/v1/orders/simulate', undefined, {
      raw: body.replace('60000', '60001'),
      headers: { ...headers },
    });
    expect(reasonOf(forged)).toBe('bad_signature');
    const genuine = await http.send(emulator.baseUrl, 'POST', '/v1/orders/simulate', undefined, {
      raw: body,
      headers: { ...headers },
    });
    expect(genuine.status).toBe(200);
  });

  it('refuses a stale or future timestamp outside the 10 s window', async () => {
    const signed = client();
    const now = emulator.clock.now();
    expect(reasonOf(await signed.get('/v1/account', { timestampMs: now - 10_001 }))).toBe(
      'timestamp_outside_window',
    );
    expect(reasonOf(await signed.get('/v1/account', { timestampMs: now + 10_001 }))).toBe(
      'timestamp_outside_window',
    );
    expect((await signed.get('/v1/account', { timestampMs: now - 10_000 })).status).toBe(200);
  });

  it('refuses a reused nonce', async () => {
    const signed = client();
    const nonce = 'nonce_reuse_test_0001';
    expect((await signed.get('/v1/account', { nonce })).status).toBe(200);
    expect(reasonOf(await signed.get('/v1/account', { nonce }))).toBe('nonce_reused');
  });

  it('refuses an unknown key id', async () => {
    const signed = client();
    const reply = await signed.get('/v1/account', {
      tamper: (headers) => ({ ...headers, 'SVC-API-KEY': 'key_unknown' }),
    });
    expect(reasonOf(reply)).toBe('unknown_key');
  });
});

describe('key state', () => {
  it('KEY_REVOKED after revocation, for HTTP', async () => {
    const signed = client();
    expect((await signed.get('/v1/account')).status).toBe(200);
    emulator.revokeKey(signed.credential.keyId);
    expectError(await signed.get('/v1/account'), 401, 'KEY_REVOKED');
  });

  it('KEY_REVOKED for the keys of an account that was reset; the new key sees a fresh account', async () => {
    const old = client();
    expect((await old.post('/v1/orders', limitOrder())).status).toBe(202);
    const fresh = client({
      accountId: old.credential.accountId,
      resetAccount: true,
    });
    expect(fresh.credential.accountId).not.toBe(old.credential.accountId);
    expectError(await old.get('/v1/account'), 401, 'KEY_REVOKED');
    const orders = await fresh.get('/v1/orders');
    expect(orders.json).toEqual({
      data: [],
      page: { next_cursor: null, has_more: false },
    });
    expect(Account.parse((await fresh.get('/v1/account')).json).total_equity).toBe('10000');
  });

  it('KEY_EXPIRED once the clock passes expires_at', async () => {
    const expiresAt = formatTimestamp(emulator.clock.now() + 60_000);
    const signed = client({ expiresAt });
    expect((await signed.get('/v1/account')).status).toBe(200);
    emulator.clock.advanceBy(60_000);
    expectError(await signed.get('/v1/account'), 401, 'KEY_EXPIRED');
  });

  it('a second key can be bound to the same account', async () => {
    const first = client();
    const second = client({
      accountId: first.credential.accountId,
      scopes: ['account:read'],
    });
    const a = Account.parse((await first.get('/v1/account')).json);
    const b = Account.parse((await second.get('/v1/account')).json);
    expect(b.account_id).toBe(a.account_id);
  });
});

describe('scopes (contract section 3)', () => {
  const samples: Record<EndpointName, { target: string; body?: unknown } | null> = {
    getAccount: { target: '/v1/account' },
    listAccounts: { target: '/v1/accounts' },
    listPositions: { target: '/v1/positions' },
    getRoutesReadiness: { target: '/v1/routes/readiness' },
    listOrders: { target: '/v1/orders' },
    getOrder: { target: '/v1/orders/some-order' },
    getOrderByClientId: { target: '/v1/orders/by-client-id/some-client' },
    getRequest: { target: '/v1/requests/some-request' },
    listEvents: { target: '/v1/events' },
    listFills: { target: '/v1/fills' },
    placeOrder: { target: '/v1/orders', body: limitOrder() },
    simulateOrder: { target: '/v1/orders/simulate', body: limitOrder() },
    amendOrder: {
      target: '/v1/orders/some-order',
      body: { request_id: requestId() },
    },
    cancelOrder: {
      target: '/v1/orders/some-order/cancel',
      body: { request_id: requestId() },
    },
    cancelAllOrders: {
      target: '/v1/orders/cancel-all',
      body: { request_id: requestId() },
    },
    placeBatch: {
      target: '/v1/orders/batch',
      body: { request_id: requestId(), orders: [limitOrder()] },
    },
    closePosition: {
      target: '/v1/positions/position-1/close',
      body: { request_id: requestId(), client_order_id: 'close-1' },
    },
    setCancelAllAfter: {
      target: '/v1/cancel-all-after',
      body: { request_id: requestId(), timeout_seconds: 0 },
    },
    getTime: null,
    getStatus: null,
    listRoutes: null,
    listMarkets: null,
    getMarket: null,
    getBook: null,
    listTrades: null,
    listCandles: null,
    health: null,
    ready: null,
  };

  it('every signed endpoint refuses a key without its scope and passes the scope check with it', async () => {
    for (const [name, sample] of Object.entries(samples) as [
      EndpointName,
      (typeof samples)[EndpointName],
    ][]) {
      const endpoint = endpoints[name];
      if (sample === null) {
        expect(endpoint.auth).toBe('none');
        continue;
      }
      const scope = endpoint.scope!;
      const others = (
        ['account:read', 'orders:read', 'fills:read', 'orders:write'] as const
      ).filter((candidate) => candidate !== scope);
      const without = client({ scopes: others });
      const refused = await without.send(endpoint.method, sample.target, sample.body);
      expect(expectError(refused, 403, 'SCOPE_REQUIRED').details).toMatchObject({
        required_scope: scope,
      });
      const withScope = client({ scopes: [scope] });
      const passed = await withScope.send(endpoint.method, sample.target, sample.body);
      expect([200, 202, 404, 422]).toContain(passed.status);
    }
  });
});

describe('IP allowlist', () => {
  it('allows a source inside the list and refuses one outside with IP_NOT_ALLOWED', async () => {
    const inside = client({ allowIp: ['10.0.0.0/8', '127.0.0.0/8'] });
    expect((await inside.get('/v1/account')).status).toBe(200);
    const outside = client({ allowIp: ['10.0.0.0/8', '::1/128'] });
    const error = expectError(await outside.get('/v1/account'), 403, 'IP_NOT_ALLOWED');
    expect(error.details).toMatchObject({ source_ip: '127.0.0.1' });
  });

  describe('on a dual-stack listener', () => {
    let dual: TestEmulator;

    beforeAll(async () => {
      dual = await startTestEmulator({ host: '::' });
    });

    afterAll(async () => {
      await dual.close();
    });

    it('matches ::ffff:127.0.0.1 against IPv4 rules and ::1 against IPv6 rules', async () => {
      const ipv4Rule = new SignedClient(http, dual, dual.createKey({ allowIp: ['127.0.0.1'] }));
      const mapped = await ipv4Rule.get('/v1/account');
      expect(mapped.status).toBe(200);
      const ipv6Only = new SignedClient(http, dual, dual.createKey({ allowIp: ['::1'] }));
      const refused = expectError(await ipv6Only.get('/v1/account'), 403, 'IP_NOT_ALLOWED');
      expect(refused.details).toMatchObject({ source_ip: '::ffff:127.0.0.1' });
      const viaIpv6 = await http.send(
        `http://[::1]:${dual.port}`,
        'GET',
        '/v1/account',
        undefined,
        {
          credential: ipv6Only.credential,
          now: () => dual.clock.now(),
        },
      );
      expect(viaIpv6.status).toBe(200);
      const mappedRule = new SignedClient(
        http,
        dual,
        dual.createKey({ allowIp: ['::ffff:127.0.0.0/104'] }),
      );
      expect((await mappedRule.get('/v1/account')).status).toBe(200);
    });
  });
});

describe('key risk limits', () => {
  afterEach(() => emulator.controls.clearFaults());

  it('RISK_LIMIT_EXCEEDED above max order notional', async () => {
    const limited = client({ maxOrderNotional: '1000' });
    // 0.01 at 60000 is 600 pUSDC: allowed; 0.02 at 60000 is 1200: refused.
    expect((await limited.post('/v1/orders', limitOrder())).status).toBe(202);
    expectError(
      await limited.post('/v1/orders', limitOrder({ quantity: '0.02' })),
      403,
      'RISK_LIMIT_EXCEEDED',
    );
  });

  it('RISK_LIMIT_EXCEEDED beyond max open orders', async () => {
    const limited = client({ maxOpenOrders: 2 });
    expect((await limited.post('/v1/orders', limitOrder())).status).toBe(202);
    expect((await limited.post('/v1/orders', limitOrder())).status).toBe(202);
    expectError(await limited.post('/v1/orders', limitOrder()), 403, 'RISK_LIMIT_EXCEEDED');
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
