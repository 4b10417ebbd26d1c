import { afterEach, describe, expect, it, vi } from 'vitest';
import { BUY, SELL } from '../../../src/emulator/engine/order-book.ts';
import { ServiceCore } from '../../../src/emulator/index.ts';
import { endpoints, type Order, OrderRequest } from '../../../src/protocol/index.ts';
import { classifyFailure } from '../../../src/runtime/execution/classify.ts';
import { prepareCommand } from '../../../src/signing/index.ts';
import { bookRecord, type RecordedEvent, tradeRecord } from '../../../src/replay/format/records.ts';
import { testBook, testTrade } from '../../../src/runtime/testing/fixtures.ts';
import { harness, limit, MARKET, marketOrder, T0 } from './helpers.ts';

function fillsOf(h: ReturnType<typeof harness>) {
  return h.fills.map((fill) => ({
    price: fill.price,
    quantity: fill.quantity,
    maker: fill.is_maker,
    fee: fill.fee,
  }));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('replay venue: queue position of resting orders', () => {
  it('waits behind the displayed quantity, then fills as recorded trades consume it', async () => {
    const h = harness();
    h.ticker('100');
    h.book(
      [
        ['99', '5'],
        ['98', '10'],
      ],
      [
        ['101', '5'],
        ['102', '10'],
      ],
    );
    const order = (await h.send(limit('order-0001', 'buy', '99', '3'))) as Order;
    expect(order.status).toBe('PENDING');
    const [queued] = h.venue.queueOf(MARKET).orders(BUY);
    expect(queued).toMatchObject({ priceTicks: 99, remainingSteps: 3, queueAheadSteps: 5 });

    h.trade('sell', '99', '4');
    expect(h.fills).toEqual([]);
    expect(queued!.queueAheadSteps).toBe(1);

    h.trade('sell', '99', '3');
    expect(fillsOf(h)).toEqual([{ price: '99', quantity: '2', maker: true, fee: '0.0396' }]);
    expect(queued!.queueAheadSteps).toBe(0);

    // A sell through the order's price fills what is left, at the order's price.
    h.trade('sell', '97', '10');
    expect(fillsOf(h)).toEqual([
      { price: '99', quantity: '2', maker: true, fee: '0.0396' },
      { price: '99', quantity: '1', maker: true, fee: '0.0198' },
    ]);
    expect(h.venue.queueOf(MARKET).size).toBe(0);
    expect(h.venue.exchange.getOrder(h.venue.accountId, order.order_id).status).toBe('FILLED');
  });

  it('is not reached by trades on its own side or at worse prices', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '1']], [['101', '1']]);
    await h.send(limit('order-0001', 'buy', '99', '2'));
    h.trade('buy', '99', '50');
    h.trade('sell', '100', '50');
    expect(h.fills).toEqual([]);
    expect(h.venue.queueOf(MARKET).orders(BUY)[0]!.queueAheadSteps).toBe(1);
  });

  it('lets a snapshot shorten the queue ahead, never lengthen it', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    await h.send(limit('order-0001', 'buy', '99', '2'));
    const queued = h.venue.queueOf(MARKET).orders(BUY)[0]!;
    h.book([['99', '2']], [['101', '5']]);
    expect(queued.queueAheadSteps).toBe(2);
    h.book([['99', '40']], [['101', '5']]);
    expect(queued.queueAheadSteps).toBe(2);
    // The level gone from a snapshot showing the whole side: nothing is ahead any more.
    h.book([['98', '4']], [['101', '5']]);
    expect(queued.queueAheadSteps).toBe(0);
    h.trade('sell', '99', '1');
    expect(fillsOf(h)).toEqual([{ price: '99', quantity: '1', maker: true, fee: '0.0198' }]);
  });

  it('serves several orders at one price in time priority, each behind its own queue', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '3']], [['101', '5']]);
    await h.send(limit('order-0001', 'buy', '99', '2'));
    h.book([['99', '4']], [['101', '5']]);
    await h.send(limit('order-0002', 'buy', '99', '2'));
    const [first, second] = h.venue.queueOf(MARKET).orders(BUY);
    expect([first!.queueAheadSteps, second!.queueAheadSteps]).toEqual([3, 4]);
    h.trade('sell', '99', '6');
    // 3 ahead of the first, which takes 2; the second is behind 4 and the first's 2.
    expect(h.fills.map((fill) => fill.quantity)).toEqual(['2']);
    h.trade('sell', '99', '1');
    expect(h.fills.map((fill) => fill.quantity)).toEqual(['2', '1']);
  });

  it('fills at the first trade reaching the price when queue position is off', async () => {
    const h = harness({ queue_position: false });
    h.ticker('100');
    h.book([['99', '500']], [['101', '5']]);
    await h.send(limit('order-0001', 'buy', '99', '3'));
    h.trade('sell', '99', '2');
    expect(fillsOf(h)).toEqual([{ price: '99', quantity: '2', maker: true, fee: '0.0396' }]);
  });

  it('never fills a resting order from a snapshot, and keeps crossing levels out of the engine', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    await h.send(limit('order-0001', 'buy', '99', '2'));
    h.book(
      [['97', '5']],
      [
        ['98', '5'],
        ['99', '5'],
        ['103', '5'],
      ],
    );
    expect(h.fills).toEqual([]);
    // The snapshot reaches the engine when something reads its book (here the next order),
    // clipped against the orders that rested when it came.
    await h.send(limit('order-0002', 'buy', '90', '1'));
    expect(h.venue.exchange.bestAsk(MARKET)).toBe(103);
    expect(h.venue.exchange.bestBid(MARKET)).toBe(99);
  });

  it('clips a held-back snapshot against the orders resting when it came, not when it is posted', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    const resting = (await h.send(limit('order-0001', 'buy', '99', '2'))) as Order;
    h.book(
      [['97', '5']],
      [
        ['98', '5'],
        ['103', '5'],
      ],
    );
    // Cancelling the order that clipped the ask at 98 does not bring that level back.
    await h.send({
      endpoint: 'cancelOrder',
      params: { order_id: resting.order_id },
      body: { request_id: 'cancel-0001' },
    });
    await h.send(marketOrder('order-0002', 'buy', '1'));
    await h.advance(10);
    expect(fillsOf(h)).toEqual([{ price: '103', quantity: '1', maker: false, fee: '0.0515' }]);
  });
});

describe('replay venue: taking liquidity', () => {
  it('fills a market order against the recorded book at its prices, taker fee and slippage', async () => {
    const h = harness({ slippage_bps: '10' });
    h.ticker('100');
    h.book(
      [['99', '5']],
      [
        ['101', '5'],
        ['102', '10'],
      ],
    );
    await h.send(marketOrder('order-0001', 'buy', '7'));
    await h.advance(10);
    // Taker rate 0.0005 plus 10 bps of slippage.
    expect(fillsOf(h)).toEqual([
      { price: '101', quantity: '5', maker: false, fee: '0.7575' },
      { price: '102', quantity: '2', maker: false, fee: '0.306' },
    ]);
  });

  it('takes only the latest snapshot, whether it is shallower or deeper than the one before', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    // A resting order engages the market: every snapshot is parsed as it comes.
    await h.send(limit('order-0000', 'buy', '90', '1'));
    h.book(
      [['99', '5']],
      [
        ['101', '1'],
        ['102', '2'],
        ['103', '3'],
      ],
    );
    h.book([['99', '5']], [['104', '4']]);
    await h.send(marketOrder('order-0001', 'buy', '2'));
    await h.advance(10);
    h.book(
      [['99', '5']],
      [
        ['105', '1'],
        ['106', '1'],
      ],
    );
    await h.send(marketOrder('order-0002', 'buy', '2'));
    await h.advance(10);
    expect(fillsOf(h).map((fill) => [fill.price, fill.quantity])).toEqual([
      ['104', '2'],
      ['105', '1'],
      ['106', '1'],
    ]);
  });

  it('refuses a post-only order that would take the recorded book', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    const order = (await h.send(limit('order-0001', 'buy', '101', '1'))) as Order;
    expect(h.venue.exchange.getOrder(h.venue.accountId, order.order_id).status).toBe('REJECTED');
    expect(h.fills).toEqual([]);
  });

  it("gives the engine a market's marks and book only once it trades there", async () => {
    const h = harness();
    h.ticker('150');
    h.book([['149', '5']], [['151', '5']]);
    expect(h.venue.exchange.markTicks(MARKET)).toBe(100);
    expect(h.venue.exchange.bestBid(MARKET)).toBeNull();
    await h.send(limit('order-0001', 'buy', '140', '1'));
    expect(h.venue.exchange.markTicks(MARKET)).toBe(150);
    expect(h.venue.exchange.bestBid(MARKET)).toBe(149);
    // Engaged now: later marks reach the engine at once.
    h.ticker('152');
    expect(h.venue.exchange.markTicks(MARKET)).toBe(152);
  });
});

describe('replay venue: the execution contract', () => {
  it('applies a command after the order latency and answers after the response latency', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    const prepared = h.venue.execution.prepare(limit('order-0001', 'buy', '99', '1'));
    let answered: number | null = null;
    const answer = h.venue.execution.send(prepared).then((order) => {
      answered = h.clock.now();
      return order;
    });
    await h.advance(9);
    expect(h.venue.execution.activeOrderIds()).toEqual([]);
    await h.advance(1);
    expect(h.venue.execution.activeOrderIds()).toHaveLength(1);
    expect(answered).toBeNull();
    await h.advance(10);
    expect(answered).toBe(T0 + 20);
    expect((await answer).status).toBe('PENDING');
  });

  it('delivers private events after the event latency, in order', async () => {
    const h = harness();
    const seen: { to: string; at: number }[] = [];
    h.venue.execution.privateStream.items$.subscribe((item) => {
      if (item.kind === 'order') seen.push({ to: item.event.data.to_state, at: h.clock.now() });
    });
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    await h.send(limit('order-0001', 'buy', '99', '1'));
    await h.advance(10);
    expect(seen).toEqual([
      { to: 'PENDING', at: T0 + 15 },
      { to: 'SUBMITTED', at: T0 + 15 },
      { to: 'OPEN', at: T0 + 15 },
    ]);
  });

  it('serializes with the shared serializer and applies exactly the prepared bytes', () => {
    const h = harness();
    const command = limit('order-0001', 'buy', '99', '1');
    const prepared = h.venue.execution.prepare(command);
    const shared = prepareCommand(command);
    expect(Buffer.from(prepared.bodyBytes).toString()).toBe(
      Buffer.from(shared.bodyBytes).toString(),
    );
    const restored = h.venue.execution.restore('placeOrder', prepared.path, prepared.bodyBytes);
    expect(restored.bodySha256).toBe(prepared.bodySha256);
  });

  it("makes the bytes and their hash only when read, equal to the shared serializer's", async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    const encode = vi.spyOn(TextEncoder.prototype, 'encode');
    const command = limit('order-0001', 'buy', '99', '1');
    const prepared = h.venue.execution.prepare(command);
    await h.sendPrepared(prepared);
    expect(encode).not.toHaveBeenCalled();
    encode.mockRestore();
    const shared = prepareCommand(command);
    expect(prepared.bodyBytes).toEqual(shared.bodyBytes);
    expect(prepared.bodyBytes).toBe(prepared.bodyBytes);
    expect(prepared.bodySha256).toBe(shared.bodySha256);
    expect(prepared).toMatchObject({
      endpoint: shared.endpoint,
      path: shared.path,
      requestId: shared.requestId,
      body: shared.body,
    });
  });

  it('takes the path parameters of a prepared or restored command as its path gives them', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    const order = (await h.send(limit('order-0001', 'buy', '99', '1'))) as Order;
    const cancel = h.venue.execution.prepare({
      endpoint: 'cancelOrder',
      params: { order_id: order.order_id },
      body: { request_id: 'cancel-0001' },
    });
    const restored = h.venue.execution.restore('cancelOrder', cancel.path, cancel.bodyBytes);
    const canceled = (await h.sendPrepared(cancel)) as Order;
    expect(canceled).toMatchObject({ order_id: order.order_id, status: 'CANCELLED' });
    // The same request again, from its journaled bytes: the first answer.
    expect(await h.sendPrepared(restored)).toEqual(canceled);
  });

  it('hands the checked body object to the service core, parsed by no schema or JSON again', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    const prepared = h.venue.execution.prepare(limit('order-0001', 'buy', '99', '1'));
    const execute = vi.spyOn(ServiceCore.prototype, 'execute');
    const submit = vi.spyOn(ServiceCore.prototype, 'submit');
    const schemas = [OrderRequest, endpoints.placeOrder.body];
    const parses = schemas.flatMap((schema) => [
      vi.spyOn(schema, 'parse'),
      vi.spyOn(schema, 'safeParse'),
    ]);
    const jsonParse = vi.spyOn(JSON, 'parse');
    let settled = false;
    const answer = h.venue.execution.send(prepared).finally(() => {
      settled = true;
    });
    for (let step = 0; step < 100 && !settled; step++) await h.advance(1);
    const order = (await answer) as Order;
    expect(order.request_id).toBe('order-0001');
    expect(execute).toHaveBeenCalledTimes(1);
    expect(execute.mock.calls[0]![0].body).toBe(prepared.body);
    expect(submit).not.toHaveBeenCalled();
    for (const parse of parses) expect(parse).not.toHaveBeenCalled();
    expect(jsonParse).not.toHaveBeenCalled();
  });

  it('answers a repeated request id with the first answer, and other content with a conflict', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    const first = (await h.send(limit('order-0001', 'buy', '99', '1'))) as Order;
    const again = (await h.send(limit('order-0001', 'buy', '99', '1'))) as Order;
    expect(again.order_id).toBe(first.order_id);
    expect(h.venue.execution.activeOrderIds()).toEqual([first.order_id]);
    const conflict = await h
      .send(limit('order-0001', 'buy', '98', '1'))
      .catch((error: unknown) => error);
    expect(classifyFailure(conflict)).toMatchObject({
      kind: 'unknown',
      code: 'IDEMPOTENCY_CONFLICT',
    });
    const status = await h.venue.execution.getRequest('order-0001');
    expect(status).toMatchObject({ command_type: 'order.open', state: 'COMPLETED' });
    const missing = await h.venue.execution
      .getRequest('never-sent-0001')
      .catch((error: unknown) => error);
    expect(classifyFailure(missing)).toMatchObject({ kind: 'rejected', code: 'ORDER_NOT_FOUND' });
  });

  it('refuses with the service code and status, classified as rejected', async () => {
    const h = harness();
    h.ticker('100');
    const refusal = await h
      .send({
        endpoint: 'cancelOrder',
        params: { order_id: '00000000-0000-4000-8000-000000000000' },
        body: { request_id: 'cancel-0001' },
      })
      .catch((error: unknown) => error);
    expect(classifyFailure(refusal)).toMatchObject({
      kind: 'rejected',
      code: 'ORDER_NOT_FOUND',
      httpStatus: 404,
    });
  });

  it('reads open orders, positions and the account', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    await h.send(limit('order-0001', 'buy', '99', '1'));
    await h.send(marketOrder('order-0002', 'buy', '2'));
    await h.advance(10);
    const open = await h.venue.execution.listOpenOrders();
    expect(open.map((order) => order.client_order_id)).toEqual(['order-0001']);
    const positions = await h.venue.execution.listPositions();
    expect(positions).toMatchObject([{ market_id: MARKET, side: 'long', quantity: '2' }]);
    const account = await h.venue.execution.getAccount();
    expect(account.settlement_asset).toBe('pUSDC');
    expect(h.venue.equity()).toBe(account.total_equity);
    expect(h.venue.queueOf(MARKET).orders(SELL)).toEqual([]);
  });
});

describe('replay venue: recorded bodies read only when needed', () => {
  /** A record whose `d` counts its reads, as a deferred record from the cache builds it then. */
  function counted<T extends RecordedEvent>(record: T): { record: T; reads: () => number } {
    let reads = 0;
    const { d, ...header } = record;
    const wrapped = Object.defineProperty({ ...header }, 'd', {
      get: () => {
        reads++;
        return d;
      },
      enumerable: true,
    }) as unknown as T;
    return { record: wrapped, reads: () => reads };
  }

  it('reads no book or trade while nothing listens and the account has nothing in the market', async () => {
    const h = harness();
    h.ticker('100');
    const snapshot = counted(
      bookRecord(
        T0,
        testBook({ market_id: MARKET, bids: [['99', '5']], asks: [['101', '5']] }, T0),
      ),
    );
    const trade = counted(
      tradeRecord(
        T0,
        testTrade(
          { market_id: MARKET, price: '99', quantity: '1', side: 'sell', trade_id: 'x' },
          T0,
        ),
      ),
    );
    h.ingest(snapshot.record);
    h.ingest(trade.record);
    expect([snapshot.reads(), trade.reads()]).toEqual([0, 0]);

    // A subscriber gets the latest book (read now); the venue's order then takes from it.
    const books: unknown[] = [];
    const subscription = h.venue.book$(MARKET).subscribe((book) => books.push(book));
    expect(books).toHaveLength(1);
    expect(snapshot.reads()).toBeGreaterThan(0);
    subscription.unsubscribe();
    await h.send(marketOrder('order-0001', 'buy', '2'));
    expect(fillsOf(h)).toEqual([{ price: '101', quantity: '2', maker: false, fee: '0.101' }]);
  });
});
