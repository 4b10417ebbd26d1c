import { describe, expect, it } from 'vitest';
import { BUY } from '../../../src/emulator/engine/order-book.ts';
import type { Order } from '../../../src/protocol/index.ts';
import { gapRecord } from '../../../src/replay/format/records.ts';
import { harness, limit, MARKET, marketOrder, T0 } from './helpers.ts';

/** A small synthetic recording: a book, a resting bid, then a gap of the book stream. */
async function withRestingBidThenGap(stream: 'book' | 'trade' | 'ticker' = 'book') {
  const h = harness();
  h.ticker('100');
  h.book([['99', '5']], [['101', '5']]);
  const resting = (await h.send(limit('order-0001', 'buy', '99', '3'))) as Order;
  h.trade('sell', '99', '4');
  expect(h.venue.queueOf(MARKET).orders(BUY)[0]!.queueAheadSteps).toBe(1);
  await h.advance(100);
  h.ingest(gapRecord(h.clock.now(), stream, 'book poll failed: timeout', MARKET));
  return { h, resting };
}

describe('replay venue: gaps', () => {
  it('restarts the queue of resting orders: set again from the next snapshot', async () => {
    const { h, resting } = await withRestingBidThenGap();
    const queued = h.venue.queueOf(MARKET).orders(BUY)[0]!;
    expect(queued.queueAheadSteps).toBe(Number.POSITIVE_INFINITY);
    // While suspended, a trade at the order's price does not reach it: its place is unknown.
    h.trade('sell', '99', '2');
    expect(h.fills).toEqual([]);
    await h.advance(50);
    const end = h.clock.now();
    // The next snapshot shows 7 at 99: the order waits behind all of it (without the gap: 1).
    h.book([['99', '7']], [['101', '5']]);
    expect(queued.queueAheadSteps).toBe(7);
    h.trade('sell', '99', '7');
    expect(h.fills).toEqual([]);
    h.trade('sell', '99', '2');
    expect(h.fills.map((fill) => fill.quantity)).toEqual(['2']);

    expect(h.venue.gaps()).toEqual([
      {
        marketId: MARKET,
        stream: 'book',
        reason: 'book poll failed: timeout',
        startMs: T0 + 100 + 20,
        endMs: end,
        suspended: true,
        restartedQueues: { count: 1, orderIds: [resting.order_id] },
        unfilledTakers: { count: 0, orderIds: [] },
      },
    ]);
  });

  it('leaves takers nothing to fill on until the next snapshot, and lists them', async () => {
    const { h } = await withRestingBidThenGap('trade');
    const taker = (await h.send(marketOrder('order-0002', 'buy', '2'))) as Order;
    const ended = h.venue.exchange.getOrder(h.venue.accountId, taker.order_id);
    expect(ended.filled_quantity).toBe('0');
    expect(ended.status).toBe('CANCELLED');
    expect(h.fills).toEqual([]);

    h.book([['99', '5']], [['101', '5']]);
    await h.send(marketOrder('order-0003', 'buy', '2'));
    expect(h.fills.map((fill) => [fill.price, fill.quantity, fill.is_maker])).toEqual([
      ['101', '2', false],
    ]);
    const [gap] = h.venue.gaps();
    expect(gap!.stream).toBe('trade');
    expect(gap!.endMs).not.toBeNull();
    expect(gap!.unfilledTakers).toEqual({ count: 1, orderIds: [taker.order_id] });
  });

  it('without a gap the same taker fills on the recorded book (the contrast)', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    await h.send(marketOrder('order-0002', 'buy', '2'));
    expect(h.fills.map((fill) => fill.quantity)).toEqual(['2']);
    expect(h.venue.gaps()).toEqual([]);
  });

  it('lists a ticker gap and suspends nothing', async () => {
    const { h } = await withRestingBidThenGap('ticker');
    expect(h.venue.queueOf(MARKET).orders(BUY)[0]!.queueAheadSteps).toBe(1);
    await h.send(marketOrder('order-0002', 'sell', '1'));
    expect(h.fills.map((fill) => [fill.price, fill.quantity])).toContainEqual(['99', '1']);
    expect(h.venue.gaps()).toMatchObject([
      { stream: 'ticker', suspended: false, endMs: null, restartedQueues: { count: 0 } },
    ]);
  });

  it('suspends every market for a gap that names none', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    h.ingest(gapRecord(h.clock.now(), 'book', 'resync'));
    expect(h.venue.gaps()).toMatchObject([{ marketId: MARKET, suspended: true, endMs: null }]);
  });
});
