import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VirtualClock } from '../../../src/core/clock.ts';
import { canonicalJson, type RunningEmulator } from '../../../src/emulator/index.ts';
import {
  BatchOrderResponse,
  MutationStatus,
  Order,
  OrderPage,
} from '../../../src/protocol/index.ts';
import {
  expectError,
  limitOrder,
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

function trader(options: Parameters<TestEmulator['createKey']>[0] = {}): SignedClient {
  return new SignedClient(http, emulator, emulator.createKey(options));
}

async function orderCount(client: SignedClient): Promise<number> {
  return OrderPage.parse((await client.get('/v1/orders?limit=200')).json).data.length;
}

describe('idempotency on request_id', () => {
  it('the same body answers the stored status and body, without a second order', async () => {
    const client = trader();
    const body = limitOrder();
    const first = await client.post('/v1/orders', body);
    expect(first.status).toBe(202);
    emulator.clock.advanceBy(50);
    const again = await client.post('/v1/orders', body);
    expect(again.status).toBe(202);
    expect(again.text).toBe(first.text);
    expect(again.headers['svc-idempotent-replay']).toBe('true');
    expect(again.headers['svc-request-id']).not.toBe(first.headers['svc-request-id']);
    expect(await orderCount(client)).toBe(1);
  });

  it('a re-serialization with the same meaning is the same content', async () => {
    const client = trader();
    const body = limitOrder();
    const first = await client.post('/v1/orders', body);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const equivalent = {
      ...reordered,
      quantity: 0.01,
      price: '60000.00',
      time_in_force: 'GTC',
      post_only: false,
      margin_mode: 'isolated',
      position_id: null,
    };
    const raw = `  ${JSON.stringify(equivalent, null, 2)}\n`;
    const again = await client.send('POST', '/v1/orders', undefined, { raw });
    expect(again.status).toBe(202);
    expect(again.text).toBe(first.text);
    expect(await orderCount(client)).toBe(1);
  });

  it('different content under a used request_id is 409 IDEMPOTENCY_CONFLICT', async () => {
    const client = trader();
    const body = limitOrder();
    expect((await client.post('/v1/orders', body)).status).toBe(202);
    const conflict = await client.post('/v1/orders', {
      ...body,
      price: '59000',
    });
    expect(expectError(conflict, 409, 'IDEMPOTENCY_CONFLICT').details).toEqual({
      request_id: body.request_id,
    });
    const otherEndpoint = await client.post('/v1/orders/cancel-all', {
      request_id: body.request_id,
    });
    expectError(otherEndpoint, 409, 'IDEMPOTENCY_CONFLICT');
    expect(await orderCount(client)).toBe(1);
  });

  it('path parameters are part of the content', async () => {
    const client = trader();
    const one = Order.parse((await client.post('/v1/orders', limitOrder())).json);
    const two = Order.parse((await client.post('/v1/orders', limitOrder())).json);
    const cancelId = requestId();
    expect(
      (
        await client.post(`/v1/orders/${one.order_id}/cancel`, {
          request_id: cancelId,
        })
      ).status,
    ).toBe(202);
    expectError(
      await client.post(`/v1/orders/${two.order_id}/cancel`, {
        request_id: cancelId,
      }),
      409,
      'IDEMPOTENCY_CONFLICT',
    );
  });

  it('validation failures are not stored, so the request_id can be used once fixed', async () => {
    const client = trader();
    const body = limitOrder();
    expectError(await client.post('/v1/orders', { ...body, leverage: 0 }), 422, 'INVALID_REQUEST');
    expectError(
      await client.post('/v1/orders', { ...body, price: '60000.3' }),
      422,
      'INVALID_REQUEST',
    );
    expectError(
      await client.post('/v1/orders', { ...body, time_in_force: 'FOK' }),
      422,
      'UNSUPPORTED_ORDER',
    );
    expectError(await client.get(`/v1/requests/${body.request_id}`), 404, 'ORDER_NOT_FOUND');
    expect((await client.post('/v1/orders', body)).status).toBe(202);
  });

  it('a retryable refusal is not stored; a final refusal is, and recovery reports it', async () => {
    const client = trader();
    const body = limitOrder();
    emulator.controls.setRouteHealth('degraded');
    try {
      expectError(await client.post('/v1/orders', body), 409, 'ROUTE_NOT_READY');
    } finally {
      emulator.controls.setRouteHealth('ready');
    }
    expect((await client.post('/v1/orders', body)).status).toBe(202);

    const tooBig = limitOrder({ quantity: '100' });
    const refused = await client.post('/v1/orders', tooBig);
    const error = expectError(refused, 409, 'INSUFFICIENT_READY_CAPITAL');
    const repeated = await client.post('/v1/orders', tooBig);
    expect(repeated.status).toBe(409);
    expect(repeated.text).toBe(refused.text);
    expect(repeated.headers['svc-idempotent-replay']).toBe('true');
    const status = MutationStatus.parse(
      (await client.get(`/v1/requests/${tooBig.request_id}`)).json,
    );
    expect(status).toMatchObject({
      state: 'COMPLETED',
      result: {
        order_id: null,
        status: 'REJECTED',
        error: { code: 'INSUFFICIENT_READY_CAPITAL', message: error.message },
      },
    });
  });

  it('request ids are per account', async () => {
    const first = trader();
    const second = trader();
    const body = limitOrder();
    expect((await first.post('/v1/orders', body)).status).toBe(202);
    expect((await second.post('/v1/orders', { ...body, price: '59000' })).status).toBe(202);
    const shared = trader({ accountId: first.credential.accountId });
    expectError(
      await shared.post('/v1/orders', { ...body, price: '59000' }),
      409,
      'IDEMPOTENCY_CONFLICT',
    );
    expect((await shared.post('/v1/orders', body)).status).toBe(202);
  });

  it('batch items are idempotent on their own request_id', async () => {
    const client = trader();
    const placed = limitOrder();
    const single = Order.parse((await client.post('/v1/orders', placed)).json);
    const fresh = limitOrder();
    const batch = BatchOrderResponse.parse(
      (
        await client.post('/v1/orders/batch', {
          request_id: requestId(),
          orders: [
            placed,
            {
              ...placed,
              request_id: requestId('dup'),
              client_order_id: 'c-dup',
            },
            fresh,
            { ...placed, price: '1' },
          ],
        })
      ).json,
    );
    expect(batch.results[0]).toEqual(single);
    expect(batch.results[1]).toMatchObject({ status: 'PENDING' });
    expect(batch.results[2]).toMatchObject({
      status: 'PENDING',
      request_id: fresh.request_id,
    });
    expect(batch.results[3]).toMatchObject({
      error: { code: 'IDEMPOTENCY_CONFLICT' },
    });
    expect(await orderCount(client)).toBe(3);
    const item = MutationStatus.parse((await client.get(`/v1/requests/${fresh.request_id}`)).json);
    expect(item.command_type).toBe('order.open');
    const again = await client.post('/v1/orders', fresh);
    expect(again.headers['svc-idempotent-replay']).toBe('true');
    expect(await orderCount(client)).toBe(3);
  });

  it('cancel-all-after with a repeated request_id does not refresh the deadline', async () => {
    const client = trader();
    const body = { request_id: requestId(), timeout_seconds: 30 };
    const first = await client.send('PUT', '/v1/cancel-all-after', body);
    emulator.clock.advanceBy(5_000);
    const again = await client.send('PUT', '/v1/cancel-all-after', body);
    expect(again.text).toBe(first.text);
    const status = MutationStatus.parse((await client.get(`/v1/requests/${body.request_id}`)).json);
    expect(status).toMatchObject({
      command_type: 'cancel_all_after.set',
      state: 'COMPLETED',
      result: {
        deadline_at: (first.json as { deadline_at: string }).deadline_at,
      },
    });
    await client.send('PUT', '/v1/cancel-all-after', {
      request_id: requestId(),
      timeout_seconds: 0,
    });
  });
});

describe('canonicalJson', () => {
  it('ignores key order and null or absent members, and keeps everything else', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        const reversed = Object.fromEntries(Object.entries(value).reverse());
        const withNull = { ...value, zzz_added_null: null };
        expect(canonicalJson(reversed)).toBe(canonicalJson(value));
        expect(canonicalJson(withNull)).toBe(canonicalJson(value));
        expect(canonicalJson({ ...value, zzz_added: 1 })).not.toBe(canonicalJson(value));
      }),
    );
  });

  // Fingerprints are stored with request records, so the text must not change between versions:
  // this is the original definition, JSON.stringify of a sorted copy without null members.
  function sortedCopy(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((item) => sortedCopy(item ?? null));
    if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value)
        .filter(([, member]) => member !== undefined && member !== null)
        .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
        .map(([key, member]) => [key, sortedCopy(member)] as const);
      return Object.fromEntries(entries);
    }
    return value;
  }

  it('writes the same text as JSON.stringify of a sorted copy', () => {
    const key = fc.oneof(fc.string(), fc.constantFrom('0', '7', '10', '4294967294', '4294967295'));
    const member = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue(),
        fc.constant(undefined),
        fc.double(),
        fc.array(tie('value')),
        fc.dictionary(key, tie('value')),
      ),
    })).value;
    fc.assert(
      fc.property(fc.dictionary(key, member), (value) => {
        expect(canonicalJson(value)).toBe(JSON.stringify(sortedCopy(value)));
      }),
      { numRuns: 500 },
    );
    expect(canonicalJson({ b: [undefined, null, 1], 10: 'x', 9: { z: null, a: -0 } })).toBe(
      '{"9":{"a":0},"10":"x","b":[null,null,1]}',
    );
  });
});
