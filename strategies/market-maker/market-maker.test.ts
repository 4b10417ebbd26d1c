import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  isOnIncrement,
  parseDecimal,
  type PlaceIntent,
  type StampedIntent,
} from 'paperbot/strategy';
import { createStrategyHarness, testPosition } from 'paperbot/testing';
import marketMaker, { ASK_TAG, BID_TAG } from './index.ts';

const MARKET = 'BTC-PERP';
const TICK = parseDecimal('0.5');

function places(intents: readonly StampedIntent[]): PlaceIntent[] {
  return intents.flatMap((stamped) => (stamped.intent.kind === 'place' ? [stamped.intent] : []));
}

function quotes(intents: readonly StampedIntent[]): Record<string, string | undefined> {
  const result: Record<string, string | undefined> = {};
  for (const place of places(intents)) result[place.tag ?? ''] = place.price;
  return result;
}

function cancelled(intents: readonly StampedIntent[]): string[] {
  return intents.flatMap((stamped) =>
    stamped.intent.kind === 'cancel' ? [stamped.intent.clientOrderId] : [],
  );
}

describe('market-maker', () => {
  it('quotes a post-only GTC bid and ask around the mark, on the tick grid, with {} params', () => {
    const harness = createStrategyHarness({ strategy: marketMaker, params: {}, respond: 'accept' });
    harness.mark(MARKET, '100.3');
    const intents = places(harness.take());
    expect(intents).toEqual([
      {
        kind: 'place',
        marketId: MARKET,
        side: 'buy',
        type: 'limit',
        // Minimum notional 10 at a mark of 100.3: 0.0997..., up to the 0.001 step.
        quantity: '0.1',
        price: '97.5',
        timeInForce: 'GTC',
        postOnly: true,
        tag: BID_TAG,
      },
      {
        kind: 'place',
        marketId: MARKET,
        side: 'sell',
        type: 'limit',
        quantity: '0.1',
        price: '103',
        timeInForce: 'GTC',
        postOnly: true,
        tag: ASK_TAG,
      },
    ]);
    for (const intent of intents) {
      expect(isOnIncrement(parseDecimal(intent.price ?? ''), TICK)).toBe(true);
    }
  });

  it('leaves its quotes alone for small moves and replaces them past the threshold', () => {
    const harness = createStrategyHarness({
      strategy: marketMaker,
      params: { quantity: '1', refreshTicks: 2 },
      respond: 'accept',
    });
    harness.mark(MARKET, '100');
    const first = harness.take();
    expect(quotes(first)).toEqual({ [BID_TAG]: '97.5', [ASK_TAG]: '102.5' });

    harness.advanceBy(1_000).mark(MARKET, '100.5');
    expect(harness.take()).toEqual([]);

    harness.advanceBy(1_000).mark(MARKET, '101');
    const second = harness.take();
    expect(cancelled(second).sort()).toEqual(first.map((intent) => intent.clientOrderId).sort());
    expect(quotes(second)).toEqual({ [BID_TAG]: '98.5', [ASK_TAG]: '103.5' });
    // The venue confirmed the cancels: only the new quotes are open.
    expect(harness.openOrders(MARKET).map((order) => order.price?.toFixed())).toEqual([
      '98.5',
      '103.5',
    ]);
  });

  it('skews both quotes against a long position, and the other way for a short', () => {
    const run = (side: 'long' | 'short') => {
      const harness = createStrategyHarness({
        strategy: marketMaker,
        params: { quantity: '1', skewTicksPerQuote: 1 },
        positions: [testPosition({ market_id: MARKET, side, quantity: '2', entry_price: '100' })],
      });
      harness.mark(MARKET, '100');
      return quotes(harness.take());
    };
    // Unskewed: 97.5 / 102.5. Long 2 quotes: both 2 ticks lower. Short: 2 ticks higher.
    expect(run('long')).toEqual({ [BID_TAG]: '96.5', [ASK_TAG]: '101.5' });
    expect(run('short')).toEqual({ [BID_TAG]: '98.5', [ASK_TAG]: '103.5' });
  });

  it('requotes with the new skew when its bid fills', () => {
    const harness = createStrategyHarness({
      strategy: marketMaker,
      params: { quantity: '1' },
      respond: 'accept',
    });
    harness.mark(MARKET, '100');
    const [bid, ask] = harness.take();
    harness.fillIntent(bid!);
    const after = harness.take();
    expect(cancelled(after)).toEqual([ask?.clientOrderId]);
    expect(quotes(after)).toEqual({ [BID_TAG]: '97', [ASK_TAG]: '102' });
    expect(harness.position(MARKET).quantity.toFixed()).toBe('1');
  });

  it('stops bidding at the inventory limit', () => {
    const harness = createStrategyHarness({
      strategy: marketMaker,
      params: { quantity: '1', maxInventoryQuotes: 3, skewTicksPerQuote: 0 },
      positions: [
        testPosition({ market_id: MARKET, side: 'long', quantity: '3', entry_price: '100' }),
      ],
    });
    harness.mark(MARKET, '100');
    expect(places(harness.take()).map((place) => place.side)).toEqual(['sell']);
  });

  it('pulls its quotes when the feed goes stale', () => {
    const harness = createStrategyHarness({
      strategy: marketMaker,
      params: { quantity: '1' },
      respond: 'accept',
    });
    harness.mark(MARKET, '100');
    const placed = harness.take();
    harness.ticker({ market_id: MARKET, mark_price: '100', data_status: 'stale' });
    const pulled = harness.take();
    expect(pulled.every((intent) => intent.intent.kind === 'cancel')).toBe(true);
    expect(cancelled(pulled).sort()).toEqual(placed.map((intent) => intent.clientOrderId).sort());
    expect(harness.openOrders(MARKET)).toEqual([]);
  });

  it('fails closed on a market the runtime does not know', () => {
    const harness = createStrategyHarness({
      strategy: marketMaker,
      params: { markets: ['DOGE-PERP'] },
    });
    expect(harness.status()).toBe('failed');
    expect(harness.failures[0]?.message).toContain('unknown market DOGE-PERP');
  });

  it('quotes around the index with anchor: index, and requotes when the index moves', () => {
    const harness = createStrategyHarness({
      strategy: marketMaker,
      params: { quantity: '1', anchor: 'index', halfSpreadTicks: 4, refreshTicks: 2 },
      respond: 'accept',
    });
    // The mark is 3 above the index (a premium): the quotes sit around the index.
    harness.ticker({ market_id: MARKET, mark_price: '103', index_price: '100' });
    expect(quotes(harness.take())).toEqual({ [BID_TAG]: '98', [ASK_TAG]: '102' });
    // The mark swings back to the index: the quotes stay.
    harness.advanceBy(1_000).ticker({ market_id: MARKET, mark_price: '100', index_price: '100' });
    expect(harness.take()).toEqual([]);
    // The index moves two ticks: both quotes follow it.
    harness.advanceBy(1_000).ticker({ market_id: MARKET, mark_price: '100', index_price: '101' });
    expect(quotes(harness.take())).toEqual({ [BID_TAG]: '99', [ASK_TAG]: '103' });
    // No index: the mark is the anchor.
    harness.advanceBy(1_000).ticker({ market_id: MARKET, mark_price: '110', index_price: null });
    expect(quotes(harness.take())).toEqual({ [BID_TAG]: '108', [ASK_TAG]: '112' });
  });
});

describe('the demo (config/bot.yaml)', () => {
  const config = parse(readFileSync('config/bot.yaml', 'utf8')) as {
    strategies: { id: string; name: string; params: Record<string, unknown> }[];
  };
  const btc = config.strategies.find((entry) => entry.id === 'mm-btc')!;

  /** The demo's BTC quotes, in ticks from the index, holding `held` quote sizes (+ long). */
  function quotesHolding(held: number): { bid: number | null; ask: number | null } {
    const size = parseDecimal(String(btc.params.quantity));
    const positions =
      held === 0
        ? []
        : [
            testPosition({
              market_id: MARKET,
              side: held > 0 ? 'long' : 'short',
              quantity: size.times(Math.abs(held)).toFixed(),
              entry_price: '64000',
            }),
          ];
    const harness = createStrategyHarness({
      strategy: marketMaker,
      params: btc.params,
      positions,
    });
    harness.ticker({ market_id: MARKET, mark_price: '64010', index_price: '64000' });
    const placed = quotes(harness.take());
    const ticks = (price: string | undefined) =>
      price === undefined ? null : Number(parseDecimal(price).minus('64000').div(TICK).toFixed());
    return { bid: ticks(placed[BID_TAG]), ask: ticks(placed[ASK_TAG]) };
  }

  it('quotes the index with inventory skew and stops adding beyond its limit', () => {
    expect(btc).toMatchObject({
      name: 'market-maker',
      params: { anchor: 'index', maxInventoryQuotes: 4 },
    });
    const half = Number(btc.params.halfSpreadTicks);
    const perQuote = Number(btc.params.skewTicksPerQuote);
    const maxSkew = Number(btc.params.maxSkewTicks);
    expect(perQuote).toBeGreaterThan(0);
    // Flat: symmetric around the index, not the mark.
    expect(quotesHolding(0)).toEqual({ bid: -half, ask: half });
    // Long: both quotes lower (sell sooner, buy later), by the skew per quote held.
    expect(quotesHolding(1)).toEqual({ bid: -half - perQuote, ask: half - perQuote });
    expect(quotesHolding(2)).toEqual({ bid: -half - 2 * perQuote, ask: half - 2 * perQuote });
    // Short: both higher.
    expect(quotesHolding(-2)).toEqual({ bid: -half + 2 * perQuote, ask: half + 2 * perQuote });
    // At the limit: no more bids on a long, no more asks on a short; the skew is capped.
    const skewAt = (held: number) => Math.min(maxSkew, Math.abs(held) * perQuote);
    expect(quotesHolding(4)).toEqual({ bid: null, ask: half - skewAt(4) });
    expect(quotesHolding(-5)).toEqual({ bid: -half + skewAt(5), ask: null });
    // The ask of a long never crosses below the index: it still earns on the way out.
    expect(half - maxSkew).toBeGreaterThan(0);
  });
});
