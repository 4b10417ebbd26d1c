import { describe, expect, it } from 'vitest';
import { ExchangeError } from '../../../src/emulator/engine/errors.ts';
import {
  BatchOrderResponse,
  CancelAllResponse,
  Fill,
  isFailedOrderCommand,
  Order,
  SimulationResult,
} from '../../../src/protocol/index.ts';
import {
  marketOrder,
  openHarness,
  provideLiquidity,
  request,
  START,
  SUBMIT_MS,
  statusPath,
  wireOrder,
} from './fixtures.ts';

function refusal(action: () => unknown): ExchangeError {
  try {
    action();
  } catch (error) {
    if (error instanceof ExchangeError) return error;
    throw error;
  }
  throw new Error('expected an ExchangeError');
}

describe('order lifecycle', () => {
  it('returns PENDING/QUEUED, then moves through SUBMITTED to OPEN on the clock, one sequence per event', () => {
    const harness = openHarness();
    const { exchange } = harness;
    const account = exchange.createAccount();
    const placed = wireOrder(exchange.placeOrder(account, request({ price: '63000' })));
    expect(placed).toMatchObject({
      status: 'PENDING',
      execution_stage: 'QUEUED',
      filled_quantity: '0',
      trading_mode: 'paper',
      route_id: 'svc-paper',
      last_event_sequence: 1,
    });
    harness.clock.advanceBy(SUBMIT_MS - 1);
    expect(exchange.getOrder(account, placed.order_id).status).toBe('PENDING');
    harness.clock.advanceBy(1);
    const open = wireOrder(exchange.getOrder(account, placed.order_id));
    expect(open.status).toBe('OPEN');
    expect(open.execution_stage).toBe('WORKING');
    const events = harness.eventsOf(account);
    expect(statusPath(events, placed.order_id)).toEqual([
      'null>PENDING',
      'PENDING>SUBMITTED',
      'SUBMITTED>OPEN',
    ]);
    expect(events.map((event) => event.sequence)).toEqual([1, 2, 3]);
    expect(open.last_event_sequence).toBe(3);
    expect(exchange.lastSequence(account)).toBe(3);
    for (const event of events) expect(event.channel).toBe('orders');
  });

  it('holds pending orders while stopped and submits them after start', () => {
    const harness = openHarness();
    const { exchange, clock } = harness;
    const account = exchange.createAccount();
    const order = exchange.placeOrder(account, request({ price: '63000' }));
    exchange.stop();
    expect(clock.pendingTimers()).toBe(0);
    clock.advanceBy(1_000);
    expect(exchange.getOrder(account, order.order_id).status).toBe('PENDING');
    exchange.start();
    harness.settle();
    expect(exchange.getOrder(account, order.order_id).status).toBe('OPEN');
  });

  it('fills in price-time priority with maker and taker fees and fill events', () => {
    const harness = openHarness();
    const { exchange } = harness;
    const first = exchange.createAccount();
    const second = exchange.createAccount();
    const better = exchange.createAccount();
    const a = exchange.placeOrder(
      first,
      request({ side: 'sell', price: '64010', quantity: '0.1' }),
    );
    harness.clock.advanceBy(1);
    const b = exchange.placeOrder(
      second,
      request({ side: 'sell', price: '64010', quantity: '0.1' }),
    );
    harness.clock.advanceBy(1);
    const c = exchange.placeOrder(
      better,
      request({ side: 'sell', price: '64005', quantity: '0.1' }),
    );
    harness.settle();
    const taker = exchange.createAccount();
    const buy = exchange.placeOrder(taker, request({ price: '64010', quantity: '0.25' }));
    harness.settle();
    const fills = exchange.listFills(taker, { limit: 10 }).data.map((fill) => Fill.parse(fill));
    expect(fills.map((fill) => [fill.price, fill.quantity, fill.is_maker])).toEqual([
      ['64010', '0.05', false],
      ['64010', '0.1', false],
      ['64005', '0.1', false],
    ]);
    // taker 0.05 % of 6400.5 = 3.20025; maker 0.02 % of 6400.5 = 1.2801
    expect(fills[2]).toMatchObject({ fee: '3.20025', notional: '6400.5' });
    expect(exchange.listFills(better, { limit: 10 }).data[0]).toMatchObject({
      fee: '1.2801',
      is_maker: true,
      order_id: c.order_id,
    });
    expect(exchange.getOrder(first, a.order_id)).toMatchObject({
      status: 'FILLED',
      filled_quantity: '0.1',
    });
    expect(exchange.getOrder(second, b.order_id)).toMatchObject({
      status: 'PARTIALLY_FILLED',
      filled_quantity: '0.05',
    });
    const order = exchange.getOrder(taker, buy.order_id);
    expect(order).toMatchObject({ status: 'FILLED', filled_quantity: '0.25' });
    // (0.1 × 64005 + 0.15 × 64010) / 0.25
    expect(order.average_fill_price).toBe('64008');
    expect(statusPath(harness.eventsOf(second), b.order_id)).toEqual([
      'null>PENDING',
      'PENDING>SUBMITTED',
      'SUBMITTED>OPEN',
      'OPEN>PARTIALLY_FILLED',
    ]);
    const takerTypes = harness.eventsOf(taker).map((event) => event.type);
    expect(takerTypes).toEqual([
      'authoritative_status',
      'authoritative_status',
      'fill',
      'fill',
      'fill',
      'position',
      'account',
      'authoritative_status',
    ]);
  });

  it('calls the beforeMatching hook at submission, before the book is read', () => {
    const harness = openHarness();
    const { exchange } = harness;
    const account = exchange.createAccount();
    const seen: string[] = [];
    exchange.beforeMatching((marketId) => {
      seen.push(marketId);
      // Liquidity that arrives here is what the order meets (an ask at 64000, 0.5 ticks).
      exchange.replaceQuotes(marketId, 'late-quoter', [], [{ priceTicks: 128_000, steps: 100 }]);
    });
    const order = exchange.placeOrder(account, request({ price: '64000', quantity: '0.1' }));
    expect(seen).toEqual([]);
    expect(exchange.bestAsk('BTC-PERP')).toBeNull();
    harness.settle();
    expect(seen).toEqual(['BTC-PERP']);
    expect(exchange.getOrder(account, order.order_id)).toMatchObject({
      status: 'FILLED',
      filled_quantity: '0.1',
    });
    exchange.beforeMatching(null);
    exchange.placeOrder(account, request({ price: '63000', quantity: '0.1' }));
    harness.settle();
    expect(seen).toEqual(['BTC-PERP']);
  });

  it('rests the unfilled part of a GTC order and cancels that of an IOC order', () => {
    const harness = openHarness();
    const { exchange } = harness;
    provideLiquidity(harness, [{ side: 'sell', price: '64000', quantity: '0.1' }]);
    const account = exchange.createAccount();
    const gtc = exchange.placeOrder(account, request({ price: '64000', quantity: '0.15' }));
    harness.settle();
    expect(exchange.getOrder(account, gtc.order_id)).toMatchObject({
      status: 'PARTIALLY_FILLED',
      filled_quantity: '0.1',
      execution_stage: 'WORKING',
    });
    expect(exchange.getBook('BTC-PERP', 5).bids[0]).toEqual({
      price: '64000',
      quantity: '0.05',
      order_count: 1,
    });
    provideLiquidity(harness, [{ side: 'sell', price: '64100', quantity: '0.05' }]);
    const ioc = exchange.placeOrder(
      account,
      request({ price: '64100', quantity: '0.2', time_in_force: 'IOC' }),
    );
    harness.settle();
    expect(exchange.getOrder(account, ioc.order_id)).toMatchObject({
      status: 'CANCELLED',
      filled_quantity: '0.05',
      execution_stage: 'TERMINAL',
    });
    expect(statusPath(harness.eventsOf(account), ioc.order_id)).toEqual([
      'null>PENDING',
      'PENDING>SUBMITTED',
      'SUBMITTED>CANCELLED',
    ]);
  });

  it('rejects a post_only order that would take and rests one that would not', () => {
    const harness = openHarness();
    const { exchange } = harness;
    provideLiquidity(harness, [{ side: 'sell', price: '64000', quantity: '0.1' }]);
    const account = exchange.createAccount();
    const taking = exchange.placeOrder(account, request({ price: '64000', post_only: true }));
    const resting = exchange.placeOrder(account, request({ price: '63999.5', post_only: true }));
    harness.settle();
    expect(exchange.getOrder(account, taking.order_id)).toMatchObject({
      status: 'REJECTED',
      filled_quantity: '0',
      error: { code: 'POST_ONLY_WOULD_TAKE' },
    });
    expect(exchange.getOrder(account, resting.order_id).status).toBe('OPEN');
    expect(exchange.listFills(account, { limit: 5 }).data).toEqual([]);
  });

  it('never lets a reduce_only order increase exposure', () => {
    const harness = openHarness();
    const { exchange } = harness;
    provideLiquidity(harness, [
      { side: 'sell', price: '64000', quantity: '1' },
      { side: 'buy', price: '63900', quantity: '1' },
    ]);
    const account = exchange.createAccount();
    const nothing = exchange.placeOrder(
      account,
      request({ side: 'sell', price: '63900', reduce_only: true }),
    );
    harness.settle();
    expect(exchange.getOrder(account, nothing.order_id)).toMatchObject({
      status: 'REJECTED',
      error: { code: 'REDUCE_ONLY_NOTHING_TO_REDUCE' },
    });
    exchange.placeOrder(account, request({ price: '64000', quantity: '0.1' }));
    harness.settle();
    const position = exchange.listPositions(account, { limit: 5 }).data[0]!;
    const same = exchange.placeOrder(
      account,
      request({ price: '64000', quantity: '0.1', reduce_only: true }),
    );
    const oversized = exchange.placeOrder(
      account,
      request({
        side: 'sell',
        price: '63900',
        quantity: '0.3',
        reduce_only: true,
        position_id: position.position_id,
      }),
    );
    harness.settle();
    expect(exchange.getOrder(account, same.order_id).status).toBe('REJECTED');
    expect(exchange.getOrder(account, oversized.order_id)).toMatchObject({
      status: 'CANCELLED',
      filled_quantity: '0.1',
    });
    expect(exchange.listPositions(account, { limit: 5 }).data).toEqual([]);
    const positionEvents = harness
      .eventsOf(account)
      .filter((event) => event.type === 'position')
      .map((event) => (event.type === 'position' ? [event.data.side, event.data.quantity] : []));
    expect(positionEvents).toEqual([
      ['long', '0.1'],
      ['long', '0'],
    ]);
  });

  it('cancels resting reduce_only orders the position no longer covers', () => {
    const harness = openHarness();
    const { exchange } = harness;
    provideLiquidity(harness, [{ side: 'sell', price: '64000', quantity: '1' }]);
    const account = exchange.createAccount();
    exchange.placeOrder(account, request({ price: '64000', quantity: '0.2' }));
    harness.settle();
    const takeProfit = exchange.placeOrder(
      account,
      request({ side: 'sell', price: '65000', quantity: '0.2', reduce_only: true }),
    );
    harness.settle();
    expect(exchange.getOrder(account, takeProfit.order_id).status).toBe('OPEN');
    // The account sells 0.1 elsewhere, so 0.2 to reduce would now exceed the position.
    provideLiquidity(harness, [{ side: 'buy', price: '63000', quantity: '0.1' }]);
    exchange.placeOrder(account, marketOrder({ side: 'sell', quantity: '0.1' }));
    harness.settle();
    expect(exchange.getOrder(account, takeProfit.order_id)).toMatchObject({
      status: 'CANCELLED',
      error: { code: 'REDUCE_ONLY_EXCEEDS_POSITION' },
    });
  });

  it('bounds a market order by max_slippage_percent from the best opposite price', () => {
    const harness = openHarness();
    const { exchange } = harness;
    provideLiquidity(harness, [
      { side: 'sell', price: '64000', quantity: '0.1' },
      { side: 'sell', price: '64500', quantity: '0.1' },
      { side: 'sell', price: '66000', quantity: '0.1' },
    ]);
    const account = exchange.createAccount();
    const placed = wireOrder(
      exchange.placeOrder(account, marketOrder({ quantity: '0.3', max_slippage_percent: '1' })),
    );
    expect(placed.price).toBeNull();
    harness.settle();
    // bound 64000 × 1.01 = 64640: the 66000 level is out of reach.
    expect(exchange.getOrder(account, placed.order_id)).toMatchObject({
      status: 'CANCELLED',
      filled_quantity: '0.2',
      average_fill_price: '64250',
    });
    expect(exchange.getBook('BTC-PERP', 5).asks).toEqual([
      { price: '66000', quantity: '0.1', order_count: 1 },
    ]);
  });
});

describe('refusals', () => {
  it('raises every error code with its HTTP status', () => {
    const harness = openHarness();
    const { exchange } = harness;
    const account = exchange.createAccount({ startingBalance: '1000' });
    const check = (action: () => unknown, code: string, status: number) => {
      const error = refusal(action);
      expect(error.code).toBe(code);
      expect(error.httpStatus).toBe(status);
      return error;
    };
    check(
      () => exchange.placeOrder(account, request({ market_id: 'DOGE-PERP' })),
      'UNKNOWN_MARKET',
      404,
    );
    check(() => exchange.getMarket('DOGE-PERP'), 'UNKNOWN_MARKET', 404);
    check(() => exchange.getOrder(account, 'missing-order'), 'ORDER_NOT_FOUND', 404);
    check(() => exchange.getOrderByClientId(account, 'missing'), 'ORDER_NOT_FOUND', 404);
    check(
      () => exchange.cancelOrder(account, 'missing-order', 'request-cancel'),
      'ORDER_NOT_FOUND',
      404,
    );
    check(() => exchange.getPositionById(account, 'missing-position'), 'POSITION_NOT_FOUND', 404);
    check(
      () =>
        exchange.closePosition(account, 'missing-position', {
          request_id: 'request-close',
          client_order_id: 'close-1',
          quantity_percent: '100',
          max_slippage_percent: '0.5',
        }),
      'POSITION_NOT_FOUND',
      404,
    );
    check(
      () =>
        exchange.placeOrder(
          account,
          request({ position_id: 'missing-position', reduce_only: true }),
        ),
      'POSITION_NOT_FOUND',
      404,
    );
    const capital = check(
      () => exchange.placeOrder(account, request({ quantity: '1', leverage: 10 })),
      'INSUFFICIENT_READY_CAPITAL',
      409,
    );
    expect(capital.details).toMatchObject({ available: '1000' });
    for (const [fields, field] of [
      [{ time_in_force: 'FOK' }, 'time_in_force'],
      [{ type: 'stop_market', price: null }, 'type'],
      [{ trigger_price: '65000' }, 'trigger_price'],
      [{ expires_at: null }, 'expires_at'],
    ] as const) {
      const error = check(
        () => exchange.placeOrder(account, request(fields as never)),
        'UNSUPPORTED_ORDER',
        422,
      );
      expect(error.details).toEqual({ field });
    }
    check(
      () =>
        exchange.placeOrder(
          account,
          request({ market_id: 'ETH-PERP', price: '3200', margin_mode: 'cross' }),
        ),
      'UNSUPPORTED_ORDER',
      422,
    );
    const invalid = check(
      () =>
        exchange.placeOrder(
          account,
          request({ leverage: 51, price: '64000.25', quantity: '0.0005' }),
        ),
      'INVALID_REQUEST',
      422,
    );
    expect(invalid.details).toEqual({
      issues: [
        expect.objectContaining({ loc: ['body', 'leverage'] }),
        expect.objectContaining({ loc: ['body', 'quantity'] }),
        expect.objectContaining({ loc: ['body', 'price'] }),
      ],
    });
    const tooSmall = check(
      () =>
        exchange.placeOrder(
          account,
          request({ market_id: 'SOL-PERP', price: '145', quantity: '0.5', margin_mode: 'cross' }),
        ),
      'INVALID_REQUEST',
      422,
    );
    expect(tooSmall.message).toMatch(/minimum_quantity 1/);
    const notional = check(
      () => exchange.placeOrder(account, request({ quantity: '0.001', price: '5000' })),
      'INVALID_REQUEST',
      422,
    );
    expect(notional.message).toMatch(/order notional 5 is below the market's minimum_notional 10/);
    // MARGIN_MODE_IN_USE: an isolated order is active on BTC-PERP, a cross one is refused.
    exchange.placeOrder(account, request({ price: '60000', quantity: '0.001' }));
    check(
      () =>
        exchange.placeOrder(
          account,
          request({ price: '60000', quantity: '0.001', margin_mode: 'cross' }),
        ),
      'MARGIN_MODE_IN_USE',
      409,
    );
    check(
      () =>
        exchange.placeOrder(account, request({ quantity: '0.001' }), { maxOrderNotional: '50' }),
      'RISK_LIMIT_EXCEEDED',
      403,
    );
    check(
      () => exchange.placeOrder(account, request({ quantity: '0.001' }), { maxOpenOrders: 1 }),
      'RISK_LIMIT_EXCEEDED',
      403,
    );
    exchange.controls.setRouteHealth('degraded');
    check(
      () => exchange.placeOrder(account, request({ quantity: '0.001' })),
      'ROUTE_NOT_READY',
      409,
    );
    expect(exchange.routesReadiness(account)[0]).toMatchObject({
      ready: false,
      health: 'degraded',
    });
    exchange.controls.setRouteHealth('ready');
    const duplicate = request({ quantity: '0.001', price: '60000' });
    exchange.placeOrder(account, duplicate);
    check(
      () => exchange.placeOrder(account, { ...duplicate, request_id: 'another-request' }),
      'INVALID_REQUEST',
      422,
    );
  });
});

describe('commands', () => {
  it('simulates without creating anything, listing every problem', () => {
    const harness = openHarness();
    const { exchange } = harness;
    provideLiquidity(harness, [{ side: 'sell', price: '64000', quantity: '1' }]);
    const account = exchange.createAccount({ startingBalance: '1000' });
    const ready = SimulationResult.parse(
      exchange.simulateOrder(
        account,
        marketOrder({ quantity: '0.1', max_slippage_percent: '0.5' }),
      ),
    );
    // margin at the bound 64320: 6432 / 10 + 0.05 % of 6432
    expect(ready).toMatchObject({
      decision: 'READY',
      issues: [],
      reference_price: '64000',
      required_margin: '646.416',
      maximum_quantity: '0.154',
      evaluated_at: new Date(START + SUBMIT_MS).toISOString(),
      expires_at: new Date(START + SUBMIT_MS + 5000).toISOString(),
    });
    const refused = exchange.simulateOrder(
      account,
      request({ quantity: '1', leverage: 60, time_in_force: 'FOK', post_only: true }),
    );
    expect(refused.decision).toBe('REJECTED');
    expect(refused.issues.map((item) => item.field)).toEqual(
      expect.arrayContaining(['time_in_force', 'leverage', 'post_only']),
    );
    expect(exchange.listOrders(account, { limit: 10 }).data).toEqual([]);
    expect(harness.eventsOf(account)).toEqual([]);
  });

  it('cancels all orders or those of one market', () => {
    const harness = openHarness();
    const { exchange } = harness;
    const account = exchange.createAccount();
    const btc = exchange.placeOrder(account, request({ price: '60000', quantity: '0.01' }));
    const eth = exchange.placeOrder(
      account,
      request({ market_id: 'ETH-PERP', price: '3000', quantity: '0.1' }),
    );
    harness.settle();
    const other = exchange.placeOrder(account, request({ price: '60000', quantity: '0.01' }));
    const oneMarket = CancelAllResponse.parse(
      exchange.cancelAll(account, 'cancel-eth-1', 'ETH-PERP'),
    );
    expect(
      oneMarket.results.map((result) => (isFailedOrderCommand(result) ? null : result.order_id)),
    ).toEqual([eth.order_id]);
    const all = exchange.cancelAll(account, 'cancel-all-1');
    expect(
      all.results.map((result) => (isFailedOrderCommand(result) ? null : result.status)),
    ).toEqual(['CANCELLED', 'CANCELLED']);
    // the PENDING one is cancelled before it is ever submitted
    expect(statusPath(harness.eventsOf(account), other.order_id)).toEqual([
      'null>PENDING',
      'PENDING>CANCELLED',
    ]);
    harness.settle();
    expect(exchange.getOrder(account, btc.order_id).status).toBe('CANCELLED');
    expect(exchange.getOrder(account, other.order_id).status).toBe('CANCELLED');
    expect(() => exchange.cancelAll(account, 'cancel-bad-1', 'NOPE-PERP')).toThrow(ExchangeError);
  });

  it('places a batch item by item, reporting a failing item without undoing the others', () => {
    const harness = openHarness();
    const { exchange } = harness;
    const account = exchange.createAccount();
    const bad = request({ market_id: 'NOPE-PERP' });
    const response = BatchOrderResponse.parse(
      exchange.placeBatch(account, 'batch-request-1', [
        request({ price: '60000', quantity: '0.01' }),
        bad,
        request({ price: '60001', quantity: '0.01' }),
      ]),
    );
    expect(response.atomicity).toBe('non_atomic');
    expect(
      response.results.map((result) =>
        isFailedOrderCommand(result) ? result.error.code : result.status,
      ),
    ).toEqual(['PENDING', 'UNKNOWN_MARKET', 'PENDING']);
    expect(response.results[1]).toMatchObject({
      request_id: bad.request_id,
      client_order_id: bad.client_order_id,
      order_id: null,
    });
    harness.settle();
    expect(exchange.listOrders(account, { limit: 10, status: 'OPEN' }).data).toHaveLength(2);
  });

  it('closes a position by percentage with reduce-only market orders', () => {
    const harness = openHarness();
    const { exchange } = harness;
    provideLiquidity(harness, [
      { side: 'sell', price: '64000', quantity: '1' },
      { side: 'buy', price: '63990', quantity: '1' },
    ]);
    const account = exchange.createAccount();
    exchange.placeOrder(account, marketOrder({ quantity: '0.3' }));
    harness.settle();
    const position = exchange.listPositions(account, { limit: 5 }).data[0]!;
    const half = Order.parse(
      exchange.closePosition(account, position.position_id, {
        request_id: 'close-half-1',
        client_order_id: 'close-half',
        quantity_percent: '50',
        max_slippage_percent: '0.5',
      }),
    );
    expect(half).toMatchObject({
      type: 'market',
      side: 'sell',
      reduce_only: true,
      quantity: '0.15',
    });
    harness.settle();
    expect(exchange.getPositionById(account, position.position_id).quantity).toBe('0.15');
    exchange.closePosition(account, position.position_id, {
      request_id: 'close-rest-1',
      client_order_id: 'close-rest',
      quantity_percent: '100',
      max_slippage_percent: '0.5',
    });
    harness.settle();
    expect(exchange.listPositions(account, { limit: 5 }).data).toEqual([]);
    expect(() => exchange.getPositionById(account, position.position_id)).toThrow(/not found/);
  });

  it('arms, refreshes, disarms and fires cancel-all-after on the clock', () => {
    const harness = openHarness();
    const { exchange, clock } = harness;
    const account = exchange.createAccount();
    const order = exchange.placeOrder(account, request({ price: '60000', quantity: '0.01' }));
    harness.settle();
    const armed = exchange.setCancelAllAfter(account, 'dead-man-1', 30);
    expect(armed.deadline_at).toBe(new Date(clock.now() + 30_000).toISOString());
    clock.advanceBy(20_000);
    const refreshed = exchange.setCancelAllAfter(account, 'dead-man-2', 30);
    clock.advanceBy(20_000);
    expect(exchange.getOrder(account, order.order_id).status).toBe('OPEN');
    expect(exchange.setCancelAllAfter(account, 'dead-man-3', 0).deadline_at).toBeNull();
    clock.advanceBy(60_000);
    expect(exchange.getOrder(account, order.order_id).status).toBe('OPEN');
    exchange.setCancelAllAfter(account, 'dead-man-4', 5);
    clock.advanceBy(5_000);
    expect(exchange.getOrder(account, order.order_id)).toMatchObject({
      status: 'CANCELLED',
      error: { code: 'CANCEL_ALL_AFTER' },
    });
    const events = harness.eventsOf(account);
    const last = events[events.length - 1]!;
    expect(last).toMatchObject({
      channel: 'risk',
      type: 'cancel_all_after.triggered',
      data: {
        cancelled_order_ids: [order.order_id],
        triggered_at: new Date(clock.now()).toISOString(),
      },
    });
    expect(events[events.length - 2]).toMatchObject({
      type: 'authoritative_status',
      data: { from_state: 'OPEN', to_state: 'CANCELLED' },
    });
    expect(refreshed.deadline_at).not.toBe(armed.deadline_at);
    // fire on demand
    const again = exchange.placeOrder(account, request({ price: '60000', quantity: '0.01' }));
    exchange.setCancelAllAfter(account, 'dead-man-5', 3600);
    exchange.controls.fireCancelAllAfter(account);
    expect(exchange.getOrder(account, again.order_id).status).toBe('CANCELLED');
  });

  it('amends by cancelling, confirming and placing a new order for the rest', () => {
    const harness = openHarness();
    const { exchange } = harness;
    provideLiquidity(harness, [{ side: 'sell', price: '64000', quantity: '0.04' }]);
    const account = exchange.createAccount();
    const original = exchange.placeOrder(account, request({ price: '64000', quantity: '0.1' }));
    harness.settle();
    expect(exchange.getOrder(account, original.order_id).filled_quantity).toBe('0.04');
    const replacement = Order.parse(
      exchange.amendOrder(account, original.order_id, {
        request_id: 'amend-request-1',
        quantity: '0.2',
        price: '63500',
      }),
    );
    expect(replacement.order_id).not.toBe(original.order_id);
    expect(replacement).toMatchObject({
      status: 'PENDING',
      quantity: '0.16',
      price: '63500',
      client_order_id: original.client_order_id,
      request_id: 'amend-request-1',
    });
    expect(exchange.getOrder(account, original.order_id)).toMatchObject({
      status: 'CANCELLED',
      filled_quantity: '0.04',
    });
    expect(exchange.getOrderByClientId(account, original.client_order_id!).order_id).toBe(
      replacement.order_id,
    );
    const path = statusPath(harness.eventsOf(account), original.order_id);
    expect(path[path.length - 1]).toBe('PARTIALLY_FILLED>CANCELLED');
    harness.settle();
    expect(exchange.getOrder(account, replacement.order_id).status).toBe('OPEN');
    const tooSmall = refusal(() =>
      exchange.amendOrder(account, replacement.order_id, {
        request_id: 'amend-request-2',
        quantity: '0',
      }),
    );
    expect(tooSmall.code).toBe('INVALID_REQUEST');
    const unsupported = refusal(() =>
      exchange.amendOrder(account, replacement.order_id, {
        request_id: 'amend-request-3',
        expires_at: null,
      }),
    );
    expect(unsupported.details).toEqual({ field: 'expires_at' });
  });

  it('pages orders and filters them by market, route and status', () => {
    const harness = openHarness();
    const { exchange } = harness;
    const account = exchange.createAccount();
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      ids.push(
        exchange.placeOrder(account, request({ price: `${60000 + index}`, quantity: '0.01' }))
          .order_id,
      );
    }
    exchange.placeOrder(
      account,
      request({ market_id: 'ETH-PERP', price: '3000', quantity: '0.1' }),
    );
    const first = exchange.listOrders(account, { limit: 2, market_id: 'BTC-PERP' });
    expect(first.data.map((order) => order.order_id)).toEqual([ids[4], ids[3]]);
    expect(first.page.has_more).toBe(true);
    const second = exchange.listOrders(account, {
      limit: 5,
      market_id: 'BTC-PERP',
      cursor: first.page.next_cursor!,
    });
    expect(second.data.map((order) => order.order_id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(second.page).toEqual({ next_cursor: null, has_more: false });
    expect(exchange.listOrders(account, { limit: 10, route_id: 'other' }).data).toEqual([]);
    expect(exchange.listOrders(account, { limit: 10, status: 'PENDING' }).data).toHaveLength(6);
    expect(() => exchange.listOrders(account, { limit: 10, cursor: '!!' })).toThrow(ExchangeError);
  });
});
