/**
 * Self-trade prevention in the replay venue: its engine is the emulator's, built with the
 * venue's `self_trade_prevention` (or the emulator config's, cancel_incoming by default).
 */
import { describe, expect, it } from 'vitest';
import type { Order } from '../../../src/protocol/index.ts';
import { parseReplayVenueConfig } from '../../../src/replay/venue/config.ts';
import { harness, limit } from './helpers.ts';

async function crossOwnAsk(config: Parameters<typeof harness>[0]) {
  const h = harness(config);
  h.book([['97', '5']], [['103', '5']]);
  const ask = (await h.send(
    limit('order-0001', 'sell', '101', '2', { post_only: false }),
  )) as Order;
  const bid = (await h.send(limit('order-0002', 'buy', '101', '2', { post_only: false }))) as Order;
  await h.advance(50);
  const read = (order: Order) => h.venue.exchange.getOrder(h.venue.accountId, order.order_id);
  return {
    ask: read(ask),
    bid: read(bid),
    fills: h.venue.exchange.listFills(h.venue.accountId, { limit: 100 }).data,
  };
}

describe('self-trade prevention in the replay venue', () => {
  it('cancels the incoming order by default', async () => {
    const { ask, bid, fills } = await crossOwnAsk({});
    expect(fills).toEqual([]);
    expect(ask.status).toBe('OPEN');
    expect(bid).toMatchObject({ status: 'CANCELLED', error: { code: 'SELF_TRADE_PREVENTED' } });
  });

  it('applies venue.self_trade_prevention', async () => {
    const { ask, bid, fills } = await crossOwnAsk({ self_trade_prevention: 'cancel_both' });
    expect(fills).toEqual([]);
    expect(ask).toMatchObject({ status: 'CANCELLED', error: { code: 'SELF_TRADE_PREVENTED' } });
    expect(bid).toMatchObject({ status: 'CANCELLED', error: { code: 'SELF_TRADE_PREVENTED' } });
  });

  it('refuses an unknown venue.self_trade_prevention with its path', () => {
    expect(() => parseReplayVenueConfig({ self_trade_prevention: 'decrement' })).toThrow(
      /self_trade_prevention/,
    );
  });
});
