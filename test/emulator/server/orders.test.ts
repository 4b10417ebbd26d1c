import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VirtualClock } from '../../../src/core/clock.ts';
import type { RunningEmulator } from '../../../src/emulator/index.ts';
import {
  BatchOrderResponse,
  CancelAllAfterResponse,
  CancelAllResponse,
  EventsPage,
  FillPage,
  formatTimestamp,
  MutationStatus,
  Order,
  OrderPage,
  PositionPage,
  RouteReadinessList,
  SimulationResult,
  VenueAccountList,
} from '../../../src/protocol/index.ts';
import {
  expectError,
  limitOrder,
  marketOrder,
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

function trader(): SignedClient {
  return new SignedClient(http, emulator, emulator.createKey());
}

/** Past the submission latency (20 ms), short of the next market step. */
function letOrdersProgress(): void {
  emulator.clock.advanceBy(50);
}

async function place(client: SignedClient, body: Record<string, unknown>) {
  const reply = await client.post('/v1/orders', body);
  if (reply.status !== 202) throw new Error(`placement failed: ${reply.text}`);
  return Order.parse(reply.json);
}

async function events(client: SignedClient, after = 0, limit = 200) {
  return EventsPage.parse(
    (await client.get(`/v1/events?after_sequence=${after}&limit=${limit}`)).json,
  );
}

describe('order placement and progression', () => {
  it('answers 202 PENDING/QUEUED, then moves on the clock with authoritative_status events', async () => {
    const client = trader();
    const order = await place(client, limitOrder());
    expect(order).toMatchObject({
      status: 'PENDING',
      execution_stage: 'QUEUED',
      filled_quantity: '0',
      trading_mode: 'paper',
      route_id: 'svc-paper',
    });
    const pending = MutationStatus.parse(
      (await client.get(`/v1/requests/${order.request_id}`)).json,
    );
    expect(pending).toMatchObject({
      command_type: 'order.open',
      state: 'PENDING',
      result: { order_id: order.order_id, status: 'PENDING' },
      completed_at: null,
    });
    letOrdersProgress();
    const read = Order.parse((await client.get(`/v1/orders/${order.order_id}`)).json);
    expect(read.status).toBe('OPEN');
    const completed = MutationStatus.parse(
      (await client.get(`/v1/requests/${order.request_id}`)).json,
    );
    expect(completed).toMatchObject({
      state: 'COMPLETED',
      result: { order_id: order.order_id, status: 'OPEN' },
    });
    expect(completed.completed_at).not.toBeNull();
    const page = await events(client);
    const moves = page.data
      .filter((event) => event.type === 'authoritative_status')
      .map((event) => [event.data.from_state, event.data.to_state]);
    expect(moves).toEqual([
      [null, 'PENDING'],
      ['PENDING', 'SUBMITTED'],
      ['SUBMITTED', 'OPEN'],
    ]);
    expect(read.last_event_sequence).toBe(page.data[page.data.length - 1]!.sequence);
  });

  it('reads an order by client id; an unknown order is 404 ORDER_NOT_FOUND', async () => {
    const client = trader();
    const body = limitOrder();
    const order = await place(client, body);
    const byClient = Order.parse(
      (await client.get(`/v1/orders/by-client-id/${body.client_order_id}`)).json,
    );
    expect(byClient.order_id).toBe(order.order_id);
    expectError(await client.get('/v1/orders/missing-order'), 404, 'ORDER_NOT_FOUND');
    expectError(await client.get('/v1/orders/by-client-id/missing'), 404, 'ORDER_NOT_FOUND');
    expectError(await client.get('/v1/requests/unknown-request-1'), 404, 'ORDER_NOT_FOUND');
  });

  it('a market order fills: fills, a position, account figures', async () => {
    const client = trader();
    const order = await place(client, marketOrder({ quantity: '0.05' }));
    letOrdersProgress();
    expect(Order.parse((await client.get(`/v1/orders/${order.order_id}`)).json).status).toBe(
      'FILLED',
    );
    const fills = FillPage.parse((await client.get('/v1/fills')).json);
    expect(fills.data.length).toBeGreaterThan(0);
    expect(fills.data.every((fill) => fill.order_id === order.order_id && !fill.is_maker)).toBe(
      true,
    );
    const positions = PositionPage.parse((await client.get('/v1/positions')).json);
    expect(positions.data).toHaveLength(1);
    expect(positions.data[0]).toMatchObject({
      market_id: 'BTC-PERP',
      quantity: '0.05',
    });
    const venues = VenueAccountList.parse((await client.get('/v1/accounts')).json);
    expect(venues[0]!.route_id).toBe('svc-paper');
    const types = (await events(client)).data.map((event) => event.type);
    expect(types).toEqual(expect.arrayContaining(['fill', 'position', 'account']));
  });

  it('pages orders with filters (market_id, route_id, all eight statuses) and cursors', async () => {
    const client = trader();
    for (let index = 0; index < 3; index++) await place(client, limitOrder());
    await place(client, limitOrder({ market_id: 'ETH-PERP', price: '3000', quantity: '0.1' }));
    letOrdersProgress();
    const first = OrderPage.parse((await client.get('/v1/orders?limit=2')).json);
    expect(first.data).toHaveLength(2);
    expect(first.page.has_more).toBe(true);
    const second = OrderPage.parse(
      (await client.get(`/v1/orders?limit=2&cursor=${first.page.next_cursor}`)).json,
    );
    expect(second.data).toHaveLength(2);
    expect(second.page.has_more).toBe(false);
    const ids = new Set([...first.data, ...second.data].map((order) => order.order_id));
    expect(ids.size).toBe(4);
    const eth = OrderPage.parse((await client.get('/v1/orders?market_id=ETH-PERP')).json);
    expect(eth.data.map((order) => order.market_id)).toEqual(['ETH-PERP']);
    const open = OrderPage.parse((await client.get('/v1/orders?status=OPEN')).json);
    expect(open.data).toHaveLength(4);
    for (const status of [
      'PENDING',
      'SUBMITTED',
      'PARTIALLY_FILLED',
      'FILLED',
      'CANCELLED',
      'REJECTED',
      'UNKNOWN',
    ]) {
      const reply = await client.get(`/v1/orders?status=${status}`);
      expect(reply.status).toBe(200);
      expect(OrderPage.parse(reply.json).data).toEqual([]);
    }
    expectError(await client.get('/v1/orders?status=open'), 422, 'INVALID_REQUEST');
    const otherRoute = OrderPage.parse((await client.get('/v1/orders?route_id=elsewhere')).json);
    expect(otherRoute.data).toEqual([]);
    expectError(await client.get('/v1/orders?limit=201'), 422, 'INVALID_REQUEST');
  });

  it('simulates without creating an order', async () => {
    const client = trader();
    const reply = await client.post('/v1/orders/simulate', limitOrder());
    expect(reply.status).toBe(200);
    expect(SimulationResult.parse(reply.json).decision).toBe('READY');
    expect(OrderPage.parse((await client.get('/v1/orders')).json).data).toEqual([]);
  });

  it('refuses Practice-unsupported orders with 422 UNSUPPORTED_ORDER naming the field', async () => {
    const client = trader();
    const cases: [Record<string, unknown>, string][] = [
      [limitOrder({ type: 'stop_limit', trigger_price: '61000' }), 'type'],
      [marketOrder({ type: 'stop_market', trigger_price: '61000' }), 'type'],
      [limitOrder({ trigger_price: '61000' }), 'trigger_price'],
      [limitOrder({ time_in_force: 'FOK' }), 'time_in_force'],
      [limitOrder({ expires_at: null }), 'expires_at'],
    ];
    for (const [body, field] of cases) {
      for (const target of ['/v1/orders', '/v1/orders/simulate']) {
        const error = expectError(await client.post(target, body), 422, 'UNSUPPORTED_ORDER');
        expect(error.details).toEqual({ field });
      }
    }
  });

  it('amends by cancel and replace: the answer is the new order', async () => {
    const client = trader();
    const order = await place(client, limitOrder());
    letOrdersProgress();
    const reply = await client.send('PATCH', `/v1/orders/${order.order_id}`, {
      request_id: requestId(),
      price: '59000',
    });
    expect(reply.status).toBe(202);
    const replacement = Order.parse(reply.json);
    expect(replacement.order_id).not.toBe(order.order_id);
    expect(replacement.price).toBe('59000');
    const old = Order.parse((await client.get(`/v1/orders/${order.order_id}`)).json);
    expect(old.status).toBe('CANCELLED');
    const unsupported = await client.send('PATCH', `/v1/orders/${replacement.order_id}`, {
      request_id: requestId(),
      expires_at: null,
    });
    expectError(unsupported, 422, 'UNSUPPORTED_ORDER');
  });

  it('cancels one order, then all of one market, then all', async () => {
    const client = trader();
    const first = await place(client, limitOrder());
    await place(client, limitOrder());
    await place(client, limitOrder({ market_id: 'ETH-PERP', price: '3000', quantity: '0.1' }));
    letOrdersProgress();
    const cancelId = requestId();
    const cancelled = await client.post(`/v1/orders/${first.order_id}/cancel`, {
      request_id: cancelId,
    });
    expect(cancelled.status).toBe(202);
    expect(Order.parse(cancelled.json).status).toBe('CANCELLED');
    expect(MutationStatus.parse((await client.get(`/v1/requests/${cancelId}`)).json)).toMatchObject(
      {
        command_type: 'order.cancel',
        state: 'COMPLETED',
      },
    );
    const btc = await client.post('/v1/orders/cancel-all', {
      request_id: requestId(),
      market_id: 'BTC-PERP',
    });
    expect(btc.status).toBe(202);
    const btcResults = CancelAllResponse.parse(btc.json).results;
    expect(btcResults).toHaveLength(1);
    const rest = CancelAllResponse.parse(
      (await client.post('/v1/orders/cancel-all', { request_id: requestId() })).json,
    );
    expect(rest.results.map((result) => ('market_id' in result ? result.market_id : null))).toEqual(
      ['ETH-PERP'],
    );
    expect(OrderPage.parse((await client.get('/v1/orders?status=OPEN')).json).data).toEqual([]);
  });

  it('places a batch item by item; a failing item does not undo the others', async () => {
    const client = trader();
    const batchId = requestId();
    const reply = await client.post('/v1/orders/batch', {
      request_id: batchId,
      orders: [
        limitOrder(),
        limitOrder({ market_id: 'NOPE-PERP' }),
        limitOrder({ time_in_force: 'FOK' }),
      ],
    });
    expect(reply.status).toBe(202);
    const batch = BatchOrderResponse.parse(reply.json);
    expect(batch.atomicity).toBe('non_atomic');
    expect('status' in batch.results[0]! && batch.results[0].status).toBe('PENDING');
    expect(batch.results[1]).toMatchObject({
      error: { code: 'UNKNOWN_MARKET' },
    });
    expect(batch.results[2]).toMatchObject({
      error: { code: 'UNSUPPORTED_ORDER' },
    });
    const status = MutationStatus.parse((await client.get(`/v1/requests/${batchId}`)).json);
    expect(status.command_type).toBe('order.batch');
    expect(status.state).toBe('PENDING');
    letOrdersProgress();
    const done = MutationStatus.parse((await client.get(`/v1/requests/${batchId}`)).json);
    expect(done.state).toBe('COMPLETED');
    expect((done.result as { orders: unknown[] }).orders).toHaveLength(3);
    expectError(
      await client.post('/v1/orders/batch', {
        request_id: requestId(),
        orders: [],
      }),
      422,
      'INVALID_REQUEST',
    );
  });

  it('closes a position with a reduce-only market order', async () => {
    const client = trader();
    await place(client, marketOrder({ quantity: '0.02' }));
    letOrdersProgress();
    const position = PositionPage.parse((await client.get('/v1/positions')).json).data[0]!;
    const reply = await client.post(`/v1/positions/${position.position_id}/close`, {
      request_id: requestId(),
      client_order_id: 'close-1',
      quantity_percent: 50,
    });
    expect(reply.status).toBe(202);
    const close = Order.parse(reply.json);
    expect(close).toMatchObject({
      reduce_only: true,
      side: 'sell',
      quantity: '0.01',
    });
    letOrdersProgress();
    const after = PositionPage.parse((await client.get('/v1/positions')).json).data[0]!;
    expect(after.quantity).toBe('0.01');
    expectError(
      await client.post('/v1/positions/position-unknown/close', {
        request_id: requestId(),
        client_order_id: 'close-2',
      }),
      404,
      'POSITION_NOT_FOUND',
    );
  });

  it('cancel-all-after: set, refresh, disable, and expiry on the clock', async () => {
    const client = trader();
    const set = await client.send('PUT', '/v1/cancel-all-after', {
      request_id: requestId(),
      timeout_seconds: 30,
    });
    expect(set.status).toBe(200);
    const first = CancelAllAfterResponse.parse(set.json);
    expect(first.deadline_at).toBe(formatTimestamp(emulator.clock.now() + 30_000));
    emulator.clock.advanceBy(10_000);
    const refreshed = CancelAllAfterResponse.parse(
      (
        await client.send('PUT', '/v1/cancel-all-after', {
          request_id: requestId(),
          timeout_seconds: 30,
        })
      ).json,
    );
    expect(refreshed.deadline_at).not.toBe(first.deadline_at);
    const disabled = CancelAllAfterResponse.parse(
      (
        await client.send('PUT', '/v1/cancel-all-after', {
          request_id: requestId(),
          timeout_seconds: 0,
        })
      ).json,
    );
    expect(disabled.deadline_at).toBeNull();

    const order = await place(client, limitOrder());
    await client.send('PUT', '/v1/cancel-all-after', {
      request_id: requestId(),
      timeout_seconds: 5,
    });
    emulator.clock.advanceBy(5_000);
    expect(Order.parse((await client.get(`/v1/orders/${order.order_id}`)).json).status).toBe(
      'CANCELLED',
    );
    const triggered = (await events(client)).data.filter(
      (event) => event.type === 'cancel_all_after.triggered',
    );
    expect(triggered).toHaveLength(1);
    expectError(
      await client.send('PUT', '/v1/cancel-all-after', {
        request_id: requestId(),
        timeout_seconds: 86_401,
      }),
      422,
      'INVALID_REQUEST',
    );
  });

  it('pages events by after_sequence and limit with has_more', async () => {
    const client = trader();
    await place(client, limitOrder());
    await place(client, limitOrder());
    letOrdersProgress();
    const all = await events(client);
    expect(all.data.map((event) => event.sequence)).toEqual(all.data.map((_, index) => index + 1));
    const head = await events(client, 0, 2);
    expect(head.data.map((event) => event.sequence)).toEqual([1, 2]);
    expect(head.has_more).toBe(true);
    expect(head.next_after_sequence).toBe(2);
    const tail = await events(client, all.data.length - 1, 200);
    expect(tail.data).toHaveLength(1);
    expect(tail.has_more).toBe(false);
    const none = await events(client, all.data.length, 10);
    expect(none).toEqual({
      data: [],
      has_more: false,
      next_after_sequence: all.data.length,
    });
    expectError(await client.get('/v1/events?after_sequence=-1'), 422, 'INVALID_REQUEST');
    expectError(await client.get('/v1/events?limit=201'), 422, 'INVALID_REQUEST');
  });

  it('routes readiness follows route health', async () => {
    const client = trader();
    expect(
      RouteReadinessList.parse((await client.get('/v1/routes/readiness')).json)[0],
    ).toMatchObject({
      route_id: 'svc-paper',
      ready: true,
    });
    emulator.controls.setRouteHealth('disabled');
    try {
      const readiness = RouteReadinessList.parse(
        (await client.get('/v1/routes/readiness')).json,
      )[0]!;
      expect(readiness).toMatchObject({
        ready: false,
        health: 'disabled',
        order_submission_enabled: false,
      });
      expectError(await client.post('/v1/orders', limitOrder()), 409, 'ROUTE_NOT_READY');
    } finally {
      emulator.controls.setRouteHealth('ready');
    }
  });

  it('never reached the last-resort handler', () => {
    expect(emulator.stats()).toMatchObject({
      internalErrors: 0,
      responseMismatches: 0,
    });
  });
});
