/** Every REST endpoint through the client, against the emulator on a loopback socket. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isFailedOrderCommand, type Order } from '../../src/protocol/index.ts';
import { signRequest } from '../../src/signing/index.ts';
import { Environment, requestId } from './environment.ts';

let environment: Environment;

beforeEach(async () => {
  environment = await Environment.start();
});

afterEach(async () => {
  await environment.close();
});

function limitBuy(price: string, extra: Record<string, unknown> = {}) {
  const id = requestId('lim');
  return {
    request_id: id,
    client_order_id: `c-${id}`,
    market_id: 'BTC-PERP',
    side: 'buy' as const,
    type: 'limit' as const,
    quantity: '0.01',
    price,
    leverage: 5,
    ...extra,
  };
}

function marketBuy(quantity = '0.01') {
  const id = requestId('mkt');
  return {
    request_id: id,
    client_order_id: `c-${id}`,
    market_id: 'BTC-PERP',
    side: 'buy' as const,
    type: 'market' as const,
    quantity,
    leverage: 5,
    max_slippage_percent: '1',
  };
}

describe('public market data', () => {
  it('reads time, status, health, readiness, routes, markets, book, trades and candles', async () => {
    const { rest, clock } = environment;
    expect((await rest.getTime()).epoch_ms).toBe(clock.now());
    expect(await rest.getStatus()).toMatchObject({
      status: 'ok',
      environment: 'practice',
    });
    expect(await rest.health()).toEqual({ status: 'ok' });
    expect(await rest.ready()).toEqual({ ready: true });
    const routes = await rest.listRoutes();
    expect(routes.map((route) => route.route_id)).toEqual(['svc-paper']);
    const markets = await rest.listMarkets();
    expect(markets.length).toBeGreaterThanOrEqual(3);
    const btc = await rest.getMarket({ market_id: 'BTC-PERP' });
    expect(btc.price_tick).toBe('0.5');
    const book = await rest.getBook({ market_id: 'BTC-PERP' }, { depth: 3 });
    expect(book.bids.length).toBeLessThanOrEqual(3);
    expect(book.bids.length).toBeGreaterThan(0);
    await environment.advance(3_000);
    const trades = await rest.listTrades({ market_id: 'BTC-PERP' }, { limit: 2 });
    expect(trades.length).toBeLessThanOrEqual(2);
    const candles = await rest.listCandles({ market_id: 'BTC-PERP' }, { interval: '1m', limit: 5 });
    expect(candles.every((candle) => candle.interval === '1m')).toBe(true);
  });

  it("maps the service's refusals to VenueError with status and server request id", async () => {
    const error = await environment.rest.getMarket({ market_id: 'NOPE-PERP' }).catch((e) => e);
    expect(error).toMatchObject({
      code: 'UNKNOWN_MARKET',
      httpStatus: 404,
      source: 'service',
      retryable: false,
    });
    expect(error.serverRequestId).toMatch(/^req_/);
  });
});

describe('account reads', () => {
  it('reads the account, venue accounts, positions and route readiness', async () => {
    const { rest } = environment;
    const account = await rest.getAccount();
    expect(account).toMatchObject({
      account_id: environment.accountId,
      trading_mode: 'paper',
      settlement_asset: 'pUSDC',
    });
    const accounts = await rest.listAccounts();
    expect(accounts[0]?.account_id).toBe(environment.accountId);
    expect((await rest.listPositions()).data).toEqual([]);
    expect((await rest.getRoutesReadiness())[0]).toMatchObject({
      route_id: 'svc-paper',
      ready: true,
    });
    expect(rest.rateLimit()).toMatchObject({ limit: 100_000 });
  });
});

describe('orders', () => {
  it('places, reads, simulates, amends, cancels, batches and cancels all', async () => {
    const { rest } = environment;
    const simulation = await rest.simulateOrder(limitBuy('50000'));
    expect(simulation.decision).toBe('READY');

    const placed = await rest.placeOrder(limitBuy('50000'));
    expect(placed).toMatchObject({
      status: 'PENDING',
      execution_stage: 'QUEUED',
    });
    await environment.advance(1_000);
    expect((await rest.getOrder({ order_id: placed.order_id })).status).toBe('OPEN');
    const byClient = await rest.getOrderByClientId({
      client_order_id: placed.client_order_id ?? '',
    });
    expect(byClient.order_id).toBe(placed.order_id);

    const amended = await rest.amendOrder(
      { order_id: placed.order_id },
      { request_id: requestId('amd'), price: '50000.5' },
    );
    expect(amended.order_id).not.toBe(placed.order_id);
    expect(amended.price).toBe('50000.5');
    await environment.advance(1_000);

    const cancelled = await rest.cancelOrder(
      { order_id: amended.order_id },
      { request_id: requestId('can') },
    );
    expect(cancelled.order_id).toBe(amended.order_id);

    const batch = await rest.placeBatch({
      request_id: requestId('bat'),
      orders: [limitBuy('49000'), limitBuy('49000.3')],
    });
    expect(batch.atomicity).toBe('non_atomic');
    expect(batch.results.map((result) => isFailedOrderCommand(result))).toEqual([false, true]);
    await environment.advance(1_000);

    const all = await rest.cancelAllOrders({
      request_id: requestId('cal'),
      market_id: 'BTC-PERP',
    });
    expect(all.results.length).toBeGreaterThanOrEqual(1);
    await environment.advance(1_000);
    expect((await rest.listOrders({ status: 'OPEN' })).data).toEqual([]);
  });

  it('fills, lists fills and positions, closes a position', async () => {
    const { rest } = environment;
    const placed = await rest.placeOrder(marketBuy());
    await environment.advance(1_000);
    expect((await rest.getOrder({ order_id: placed.order_id })).status).toBe('FILLED');
    const fills = await rest.listFills({ market_id: 'BTC-PERP' });
    expect(fills.data.map((fill) => fill.order_id)).toContain(placed.order_id);
    const positions = await rest.listPositions();
    const position = positions.data[0];
    expect(position?.side).toBe('long');
    const closing = await rest.closePosition(
      { position_id: position?.position_id ?? '' },
      { request_id: requestId('cls'), client_order_id: requestId('cls') },
    );
    expect(closing.reduce_only).toBe(true);
    await environment.advance(1_000);
    expect((await rest.listPositions()).data).toEqual([]);
  });

  it('sets and disables the cancel-all-after deadline', async () => {
    const { rest, clock } = environment;
    const set = await rest.setCancelAllAfter({
      request_id: requestId('caa'),
      timeout_seconds: 30,
    });
    expect(set.deadline_at).toBe(new Date(clock.now() + 30_000).toISOString());
    const off = await rest.setCancelAllAfter({
      request_id: requestId('caa'),
      timeout_seconds: 0,
    });
    expect(off.deadline_at).toBeNull();
  });

  it('refuses a bad request locally with exactly the issues the service gives', async () => {
    const { rest, credential, emulator, clock } = environment;
    const bad = { ...marketBuy(), quantity: '0', leverage: 201, surprise: 1 };
    const local = await rest.placeOrder(bad as never).catch((error) => error);
    expect(local).toMatchObject({ code: 'INVALID_REQUEST', source: 'local' });

    // The same body sent raw, signed by hand, so the service's own answer can be compared.
    const bytes = new TextEncoder().encode(JSON.stringify(bad));
    const headers = signRequest({
      signer: credential.createSigner(),
      keyId: credential.keyId,
      method: 'POST',
      target: '/v1/orders',
      body: bytes,
      timestampMs: clock.now(),
    });
    const response = await fetch(`${emulator.baseUrl}/v1/orders`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: bytes,
    });
    expect(response.status).toBe(422);
    const answer = (await response.json()) as {
      error: { details: { issues: unknown } };
    };
    expect(local.details.issues).toEqual(answer.error.details.issues);
  });

  it('answers the same request id with the stored result, and different content with a conflict', async () => {
    const { rest } = environment;
    const prepared = rest.prepare('placeOrder', { body: limitBuy('50000') });
    const first = await rest.send(prepared);
    const again = await rest.send(prepared);
    expect(again.order_id).toBe(first.order_id);
    const conflict = await rest
      .placeOrder({ ...limitBuy('50000'), request_id: prepared.requestId })
      .catch((error) => error);
    expect(conflict).toMatchObject({
      code: 'IDEMPOTENCY_CONFLICT',
      httpStatus: 409,
      outcome: 'rejected',
    });
  });

  it('refuses unsupported Practice features with UNSUPPORTED_ORDER', async () => {
    const error = await environment.rest
      .placeOrder(limitBuy('50000', { time_in_force: 'FOK' }))
      .catch((caught) => caught);
    expect(error).toMatchObject({
      code: 'UNSUPPORTED_ORDER',
      details: { field: 'time_in_force' },
    });
  });
});

describe('recovery', () => {
  it('reads a request by id and recovers a mutation by resending the same bytes', async () => {
    const { rest } = environment;
    const prepared = rest.prepare('placeOrder', { body: limitBuy('50000') });
    // Never sent: the service does not know it, so recover sends it now.
    const resent = await rest.recover(prepared);
    expect(resent.outcome).toBe('resent');
    const orderId = resent.outcome === 'resent' ? resent.response.order_id : '';
    expect(await rest.getRequest({ request_id: prepared.requestId })).toMatchObject({
      command_type: 'order.open',
      state: 'PENDING',
    });
    expect((await rest.recover(prepared)).outcome).toBe('pending');
    await environment.advance(1_000);
    const status = await rest.getRequest({ request_id: prepared.requestId });
    expect(status).toMatchObject({
      command_type: 'order.open',
      state: 'COMPLETED',
    });
    expect(status.result).toMatchObject({ order_id: orderId });

    // Known now: recover reads it and replays the stored result, creating nothing new.
    const again = await rest.recover(prepared);
    expect(again.outcome).toBe('completed');
    expect(again.outcome === 'completed' ? again.response?.order_id : null).toBe(orderId);
    const noReplay = await rest.recover(prepared, { replayResult: false });
    expect(noReplay).toMatchObject({ outcome: 'completed', response: null });

    const orders: Order[] = [];
    for await (const order of rest.iterateOrders()) orders.push(order);
    expect(orders.filter((order) => order.request_id === prepared.requestId)).toHaveLength(1);
  });

  it('rebuilds a prepared mutation from stored bytes in another client', async () => {
    const prepared = environment.rest.prepare('cancelAllOrders', {
      body: { request_id: requestId('cal') },
    });
    const restarted = environment.restClient();
    const rebuilt = restarted.fromStoredMutation('cancelAllOrders', {}, prepared.bodyBytes);
    expect(rebuilt.bodySha256).toBe(prepared.bodySha256);
    expect(rebuilt.requestId).toBe(prepared.requestId);
    const result = await restarted.recover(rebuilt);
    expect(result.outcome).toBe('resent');
    const cancel = environment.rest.prepare('cancelOrder', {
      params: { order_id: 'order/1' },
      body: { request_id: requestId('can') },
    });
    expect(cancel.path).toBe('/v1/orders/order%2F1/cancel');
    const fromPath = restarted.fromStoredPath('cancelOrder', cancel.path, cancel.bodyBytes);
    expect(fromPath.path).toBe('/v1/orders/order%2F1/cancel');
    expect(fromPath.body).toEqual({ request_id: cancel.requestId });
    expect(fromPath.bodySha256).toBe(cancel.bodySha256);
    expect(() => restarted.fromStoredPath('cancelOrder', '/v1/orders/x', cancel.bodyBytes)).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
  });
});

describe('pagination', () => {
  it('iterates positions, orders, fills and events across pages', async () => {
    const { rest } = environment;
    for (let index = 0; index < 5; index += 1)
      await rest.placeOrder(limitBuy(String(40_000 + index)));
    await rest.placeOrder(marketBuy());
    await environment.advance(2_000);

    const orders: Order[] = [];
    for await (const order of rest.iterateOrders({ limit: 2 })) orders.push(order);
    expect(orders).toHaveLength(6);
    expect(new Set(orders.map((order) => order.order_id)).size).toBe(6);

    const fills = [];
    for await (const fill of rest.iterateFills({ limit: 1 })) fills.push(fill);
    expect(fills.length).toBeGreaterThanOrEqual(1);

    const positions = [];
    for await (const position of rest.iteratePositions({ limit: 1 })) positions.push(position);
    expect(positions).toHaveLength(1);

    const events = [];
    for await (const event of rest.iterateEvents({
      after_sequence: 0,
      limit: 3,
    }))
      events.push(event);
    expect(events.map((event) => event.sequence)).toEqual(
      environment.log().map((event) => event.sequence),
    );
  });
});
