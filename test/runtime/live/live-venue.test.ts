/**
 * The live venue against the emulator on a loopback port, real clients, one VirtualClock:
 * exact journaled bytes on the wire, reads across pages and statuses, market data (ticker
 * replay, book and trade polling on the clock), and the resume after a halted resync.
 */
import { Subject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ResyncSignal as ClientResyncSignal,
  RestClient,
  StreamClient,
} from '../../../src/client/index.ts';
import { VirtualClock } from '../../../src/core/clock.ts';
import { type RunningEmulator, startEmulator } from '../../../src/emulator/index.ts';
import type { Book, PublicTrade } from '../../../src/protocol/index.ts';
import type { Logger } from '../../../src/core/logger.ts';
import { intentRequestId } from '../../../src/runtime/intents.ts';
import {
  createLiveVenue,
  LiveExecutionVenue,
  type LiveVenue,
} from '../../../src/runtime/live/index.ts';
import type { Ticker } from '../../../src/runtime/strategy/index.ts';
import type { Credential } from '../../../src/signing/index.ts';

const START_MS = Date.UTC(2026, 0, 5, 9, 0, 0);

const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function until(predicate: () => boolean, description: string): Promise<void> {
  for (let count = 0; count < 50_000; count += 1) {
    if (predicate()) return;
    await turn();
  }
  throw new Error(`gave up waiting for ${description}`);
}

interface Setup {
  readonly clock: VirtualClock;
  readonly emulator: RunningEmulator;
  readonly credential: Credential;
  readonly rest: RestClient;
  readonly stream: StreamClient;
  readonly live: LiveVenue;
}

let current: Setup | undefined;

afterEach(async () => {
  if (current === undefined) return;
  await current.live.stop();
  await current.stream.close();
  await current.rest.close();
  await current.emulator.close();
  current = undefined;
});

async function setup(options: { bookPollMs?: number; tradesPollMs?: number } = {}) {
  const clock = new VirtualClock(START_MS);
  const emulator = await startEmulator({
    clock,
    seed: 9,
    rateLimit: { quota: 1_000_000, windowMs: 60_000 },
  });
  const credential = emulator.createKey();
  const rest = new RestClient({
    credential,
    clock,
    random: () => 0.5,
    requestTimeoutMs: 600_000,
    reading: 'strict',
  });
  const stream = new StreamClient({
    rest,
    clock,
    random: () => 0.5,
    heartbeatTimeoutMs: 3_600_000,
    replyTimeoutMs: 3_600_000,
    connectTimeoutMs: 3_600_000,
  });
  const live = createLiveVenue({
    rest,
    stream,
    clock,
    logger: quiet,
    bookPollMs: options.bookPollMs ?? 500,
    tradesPollMs: options.tradesPollMs ?? 500,
    marketIds: ['BTC-PERP', 'ETH-PERP'],
  });
  current = { clock, emulator, credential, rest, stream, live };
  await live.start();
  return current;
}

async function advance(clock: VirtualClock, totalMs: number, stepMs = 50): Promise<void> {
  for (let moved = 0; moved < totalMs; moved += stepMs) {
    clock.advanceBy(Math.min(stepMs, totalMs - moved));
    for (let index = 0; index < 30; index += 1) await turn();
  }
}

const decoder = new TextDecoder();

describe('the live execution venue', () => {
  it('sends the journaled bytes exactly: a restored command replays the same order', async () => {
    const { live, emulator, credential, clock } = await setup();
    const requestId = intentRequestId('alpha', 'e1', 1);
    const prepared = live.venue.prepare({
      endpoint: 'placeOrder',
      body: {
        request_id: requestId,
        client_order_id: requestId,
        market_id: 'BTC-PERP',
        side: 'buy',
        type: 'limit',
        quantity: '0.010',
        price: '63000.0',
        leverage: 2,
      },
    });
    // Serialized once, decimals normalized, and these are the bytes a journal would keep.
    expect(JSON.parse(decoder.decode(prepared.bodyBytes))).toMatchObject({
      quantity: '0.01',
      price: '63000',
    });
    const placed = await live.venue.send(prepared);
    const restored = live.venue.restore('placeOrder', prepared.path, prepared.bodyBytes);
    expect(restored.bodySha256).toBe(prepared.bodySha256);
    // The service answers a repeat of the same id and bytes with the stored result; other
    // bytes under the same id would be IDEMPOTENCY_CONFLICT.
    const replayed = await live.venue.send(restored);
    expect(replayed.order_id).toBe(placed.order_id);
    const orders = emulator.exchange.listOrders(credential.accountId, { limit: 200 }).data;
    expect(orders.filter((order) => order.request_id === requestId)).toHaveLength(1);

    await advance(clock, 100);
    const status = await live.venue.getRequest(requestId);
    expect(status).toMatchObject({ state: 'COMPLETED' });
    expect((await live.venue.getOrderByClientId(requestId)).order_id).toBe(placed.order_id);
    await expect(live.venue.getRequest('never-sent-0001')).rejects.toMatchObject({
      code: 'ORDER_NOT_FOUND',
      details: { httpStatus: 404 },
    });
  });

  it('reports a refusal with its status and issues, and a lost answer as unknown', async () => {
    const { live, emulator } = await setup();
    const body = (id: string, price: string, marketId = 'BTC-PERP') => ({
      request_id: id,
      client_order_id: id,
      market_id: marketId,
      side: 'buy' as const,
      type: 'limit' as const,
      quantity: '0.01',
      price,
      leverage: 2,
      post_only: true,
    });
    const unknownMarket = live.venue.prepare({
      endpoint: 'placeOrder',
      body: body('refused-0001', '90000', 'NOPE-PERP'),
    });
    const refusal = await live.venue.send(unknownMarket).then(
      () => null,
      (error: unknown) => error as { code: string; details: Record<string, unknown> },
    );
    expect(refusal?.details).toMatchObject({ outcome: 'rejected', source: 'service' });
    expect(refusal?.details.httpStatus).toBeGreaterThanOrEqual(400);
    expect(refusal?.details.httpStatus).toBeLessThan(500);
    emulator.controls.dropResponses({ endpoint: 'placeOrder', count: 1 });
    const lost = live.venue.prepare({ endpoint: 'placeOrder', body: body('lost-00001', '60000') });
    await expect(live.venue.send(lost)).rejects.toMatchObject({
      code: 'TRANSPORT_FAILURE',
      details: { outcome: 'unknown' },
    });
  });

  it('lists every active order across statuses and pages, and no terminal one', async () => {
    const { live, rest, clock } = await setup();
    const ids: string[] = [];
    for (let index = 0; index < 230; index += 1) {
      const id = `page-${index.toString().padStart(6, '0')}`;
      ids.push(id);
      await rest.placeOrder({
        request_id: id,
        client_order_id: id,
        market_id: 'BTC-PERP',
        side: 'buy',
        type: 'limit',
        quantity: '0.001',
        price: String(50_000 + index),
        leverage: 2,
      });
      // The first half moves on from PENDING; one of them is cancelled.
      if (index === 114) {
        await advance(clock, 100);
        const first = await rest.getOrderByClientId({ client_order_id: ids[0] as string });
        await rest.cancelOrder({ order_id: first.order_id }, { request_id: 'cancel-000001' });
      }
    }

    const open = await live.venue.listOpenOrders();
    expect(open).toHaveLength(229);
    expect(new Set(open.map((order) => order.client_order_id))).toEqual(new Set(ids.slice(1)));
    expect(new Set(open.map((order) => order.status))).toEqual(new Set(['OPEN', 'PENDING']));
    expect(open.every((order) => order.status !== 'CANCELLED')).toBe(true);
    expect(await live.venue.listPositions()).toEqual([]);
    expect((await live.venue.getAccount()).account_id).toBe(current?.credential.accountId);
  });

  it('resumes a halted stream at the account head, then asks for another reconciliation', async () => {
    const { rest, clock, emulator, credential } = await setup();
    const resyncs = new Subject<ClientResyncSignal>();
    const resets: number[] = [];
    const stream = {
      orders$: new Subject(),
      fills$: new Subject(),
      risk$: new Subject(),
      events$: new Subject(),
      otherEvents$: new Subject(),
      unreadableEvents$: new Subject(),
      resync$: resyncs,
      resetSequence: (sequence: number) => resets.push(sequence),
    } as unknown as StreamClient;
    const venue = new LiveExecutionVenue({ rest, stream, clock, logger: quiet });
    venue.start();
    const signals: string[] = [];
    venue.resync$.subscribe((signal) => signals.push(signal.reason));
    for (let index = 0; index < 3; index += 1) {
      await rest.placeOrder({
        request_id: `head-${index}-0000`,
        client_order_id: `head-${index}`,
        market_id: 'BTC-PERP',
        side: 'buy',
        type: 'limit',
        quantity: '0.001',
        price: '50000',
        leverage: 2,
      });
    }
    await advance(clock, 100);
    const head = emulator.exchange.lastSequence(credential.accountId);
    expect(head).toBeGreaterThan(3);

    // The counter went backwards: the last delivered is above the service's head.
    resyncs.next({
      reason: 'sequence_backwards',
      message: 'test',
      lastSequence: head + 40,
      sequence: head,
      halted: true,
      at: clock.now(),
      cause: null,
    });
    expect(signals).toEqual(['sequence_backwards: test']);
    await until(() => resets.length > 0, 'the reset');
    await venue.idle();
    expect(resets).toEqual([head]);
    expect(signals).toEqual(['sequence_backwards: test', `resumed at sequence ${head}`]);

    // A resync that does not halt delivery is passed on, nothing more.
    resyncs.next({
      reason: 'gap_fill_failed',
      message: 'log unreadable',
      lastSequence: head,
      sequence: null,
      halted: false,
      at: clock.now(),
      cause: null,
    });
    await venue.idle();
    expect(resets).toEqual([head]);
    expect(signals).toHaveLength(3);
    venue.stop();
  });
});

describe('the live market data', () => {
  it('lists the chosen markets and replays the latest ticker to a late subscriber', async () => {
    const { live, clock } = await setup();
    expect(live.marketData.markets().map((market) => market.market_id)).toEqual([
      'BTC-PERP',
      'ETH-PERP',
    ]);
    const early: Ticker[] = [];
    live.marketData.ticker$('BTC-PERP').subscribe((ticker) => early.push(ticker));
    await advance(clock, 3_000, 100);
    expect(early.length).toBeGreaterThan(0);
    const late: Ticker[] = [];
    live.marketData.ticker$('BTC-PERP').subscribe((ticker) => late.push(ticker));
    expect(late).toEqual([early[early.length - 1]]);
    expect(late[0]).toMatchObject({ market_id: 'BTC-PERP', data_status: 'live' });
    expect(typeof late[0]?.occurred_at).toBe('string');
  });

  it('marks tickers stale while the stream is down, live again after the reconnect', async () => {
    const { live, clock, emulator, stream } = await setup();
    const seen: Ticker[] = [];
    live.marketData.ticker$('ETH-PERP').subscribe((ticker) => seen.push(ticker));
    await advance(clock, 2_000, 100);
    expect(seen[seen.length - 1]?.data_status).toBe('live');
    const before = seen.length;
    emulator.controls.disconnectWebSockets();
    await until(() => stream.state !== 'live', 'the stream to notice');
    expect(seen.length).toBe(before + 1);
    expect(seen[before]).toEqual({ ...seen[before - 1], data_status: 'stale' });
    await advance(clock, 3_000, 100);
    expect(stream.state).toBe('live');
    expect(seen[seen.length - 1]?.data_status).toBe('live');
    expect(Date.parse(seen[seen.length - 1]?.occurred_at ?? '')).toBeGreaterThan(
      Date.parse(seen[before]?.occurred_at ?? ''),
    );
  });

  it('polls books on the clock while someone listens, and replays the latest', async () => {
    const { live, clock } = await setup({ bookPollMs: 1_000 });
    const books: Book[] = [];
    const subscription = live.marketData.book$('BTC-PERP').subscribe((book) => books.push(book));
    await until(() => books.length === 1, 'the first book');
    await advance(clock, 3_000, 100);
    expect(books).toHaveLength(4);
    expect(books[0]?.bids.length).toBeGreaterThan(0);
    const late: Book[] = [];
    live.marketData
      .book$('BTC-PERP')
      .subscribe((book) => late.push(book))
      .unsubscribe();
    expect(late).toEqual([books[3]]);
    subscription.unsubscribe();
    await advance(clock, 3_000, 100);
    expect(books).toHaveLength(4);
  });

  it('polls trades: each once, in time order, only those after the first read', async () => {
    const { live, clock, emulator } = await setup({ tradesPollMs: 700 });
    await advance(clock, 5_000, 100);
    const before = new Set(emulator.exchange.listTrades('BTC-PERP', 500).map((t) => t.trade_id));
    const trades: PublicTrade[] = [];
    live.marketData.trades$('BTC-PERP').subscribe((trade) => trades.push(trade));
    await advance(clock, 20_000, 100);
    expect(trades.length).toBeGreaterThan(0);
    const ids = trades.map((trade) => trade.trade_id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(before.has(id)).toBe(false);
    const times = trades.map((trade) => Date.parse(trade.occurred_at));
    expect([...times].sort((left, right) => left - right)).toEqual(times);
    // Everything the venue traded after the first read, up to the last read, came through.
    const listed = emulator.exchange
      .listTrades('BTC-PERP', 500)
      .filter((trade) => !before.has(trade.trade_id))
      .filter((trade) => Date.parse(trade.occurred_at) <= (times[times.length - 1] ?? 0));
    expect(new Set(ids)).toEqual(new Set(listed.map((trade) => trade.trade_id)));
  });
});
