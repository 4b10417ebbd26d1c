import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Decimal, decimal, parseDecimal, ZERO } from '../../../src/core/decimal.ts';
import type { Market } from '../../../src/protocol/index.ts';
import {
  marketInfoOf,
  type OpenOrder,
  type PlaceIntent,
  type TargetPositionContext,
  targetPosition,
  type Ticker,
} from '../../../src/runtime/strategy/index.ts';
import { testMarket, testTicker } from '../../../src/runtime/testing/index.ts';

const MARKET = 'BTC-PERP';

function pendingOrder(
  side: 'buy' | 'sell',
  quantity: string,
  fields: Partial<OpenOrder> = {},
): OpenOrder {
  return {
    clientOrderId: `c-${side}-${quantity}`,
    requestId: `c-${side}-${quantity}`,
    orderId: null,
    marketId: MARKET,
    side,
    type: 'market',
    price: null,
    quantity: parseDecimal(quantity),
    filledQuantity: ZERO,
    remainingQuantity: parseDecimal(quantity),
    postOnly: false,
    reduceOnly: false,
    tag: 'target-position',
    status: 'submitted',
    cancelRequested: false,
    intent: null,
    ...fields,
  };
}

function fakeContext(
  position: string,
  orders: OpenOrder[] = [],
  market: Market = testMarket(),
  mark: string | null = '100',
): TargetPositionContext {
  const info = marketInfoOf(market);
  const ticker: Ticker | null =
    mark === null ? null : testTicker({ market_id: MARKET, mark_price: mark });
  return {
    market: (id) => {
      if (id !== MARKET) throw new Error(`unexpected market ${id}`);
      return info;
    },
    position: (id) => ({
      marketId: id,
      positionId: null,
      quantity: parseDecimal(position),
      entryPrice: null,
    }),
    openOrders: () => orders,
    lastTicker: () => ticker,
  };
}

function summary(intents: readonly PlaceIntent[]) {
  return intents.map((intent) => [intent.side, intent.quantity, intent.reduceOnly === true]);
}

describe('targetPosition', () => {
  it('opens from flat with one market order tagged target-position', () => {
    expect(targetPosition(fakeContext('0'), MARKET, '1')).toEqual([
      {
        kind: 'place',
        marketId: MARKET,
        side: 'buy',
        type: 'market',
        quantity: '1',
        tag: 'target-position',
      },
    ]);
  });

  it('returns nothing when the exposure is already the target', () => {
    expect(targetPosition(fakeContext('1'), MARKET, '1')).toEqual([]);
    expect(targetPosition(fakeContext('0'), MARKET, '0')).toEqual([]);
  });

  it('reduces with a reduce-only order', () => {
    expect(summary(targetPosition(fakeContext('2'), MARKET, '0.5'))).toEqual([
      ['sell', '1.5', true],
    ]);
    expect(summary(targetPosition(fakeContext('-2'), MARKET, '0'))).toEqual([['buy', '2', true]]);
  });

  it('crosses zero with a reduce-only close and an opening order', () => {
    expect(summary(targetPosition(fakeContext('1'), MARKET, '-1'))).toEqual([
      ['sell', '1', true],
      ['sell', '1', false],
    ]);
    expect(summary(targetPosition(fakeContext('-0.5'), MARKET, '2'))).toEqual([
      ['buy', '0.5', true],
      ['buy', '2', false],
    ]);
  });

  it('counts pending orders, except those it already asked to cancel', () => {
    const pending = [pendingOrder('buy', '1')];
    expect(targetPosition(fakeContext('0', pending), MARKET, '1')).toEqual([]);
    expect(summary(targetPosition(fakeContext('0', pending), MARKET, '3'))).toEqual([
      ['buy', '2', false],
    ]);
    const cancelled = [pendingOrder('buy', '1', { cancelRequested: true })];
    expect(summary(targetPosition(fakeContext('0', cancelled), MARKET, '1'))).toEqual([
      ['buy', '1', false],
    ]);
  });

  it('with pending "tagged" counts only orders carrying its tag', () => {
    const quotes = [pendingOrder('buy', '1', { tag: 'quote', type: 'limit' })];
    expect(
      summary(targetPosition(fakeContext('0', quotes), MARKET, '1', { pending: 'tagged' })),
    ).toEqual([['buy', '1', false]]);
    expect(targetPosition(fakeContext('0', quotes), MARKET, '1')).toEqual([]);
  });

  it('uses reduce-only only against the actual position, net of reductions already pending', () => {
    // Flat, with a pending sell: buying it back is not a reduction of any position.
    expect(
      summary(targetPosition(fakeContext('0', [pendingOrder('sell', '1')]), MARKET, '0')),
    ).toEqual([['buy', '1', false]]);
    // Long 1 with a pending reduce-only sell of 0.6: only 0.4 is left to reduce.
    const pendingReduce = [pendingOrder('sell', '0.6', { reduceOnly: true })];
    expect(summary(targetPosition(fakeContext('1', pendingReduce), MARKET, '-0.5'))).toEqual([
      ['sell', '0.4', true],
      ['sell', '0.5', false],
    ]);
    // A pending sell that is not reduce-only leaves the whole position reducible.
    const pendingPlain = [pendingOrder('sell', '0.6')];
    expect(summary(targetPosition(fakeContext('1', pendingPlain), MARKET, '-0.5'))).toEqual([
      ['sell', '0.4', true],
      ['sell', '0.5', false],
    ]);
    // Short 1 with a pending reduce-only buy of 1: nothing is left to reduce.
    const fullyCovered = [pendingOrder('buy', '1', { reduceOnly: true })];
    expect(summary(targetPosition(fakeContext('-1', fullyCovered), MARKET, '1'))).toEqual([
      ['buy', '1', false],
    ]);
    expect(summary(targetPosition(fakeContext('1', pendingReduce), MARKET, '0'))).toEqual([
      ['sell', '0.4', true],
    ]);
  });

  it('puts quantities on the step grid, rounding down, and leaves out parts below the minimums', () => {
    expect(summary(targetPosition(fakeContext('0'), MARKET, '0.1239'))).toEqual([
      ['buy', '0.123', false],
    ]);
    // Minimum notional 10 at a mark of 100 needs at least 0.1.
    expect(targetPosition(fakeContext('0'), MARKET, '0.05')).toEqual([]);
    // A reduction is not held to the minimums: it can only shrink exposure.
    expect(summary(targetPosition(fakeContext('0.05'), MARKET, '0'))).toEqual([
      ['sell', '0.05', true],
    ]);
    expect(targetPosition(fakeContext('0'), MARKET, '0.0004')).toEqual([]);
  });

  it('makes limit orders with the price on the tick grid in the order owner favour', () => {
    const [buy] = targetPosition(fakeContext('0'), MARKET, '1', {
      type: 'limit',
      price: '100.3',
      postOnly: true,
      tag: 'entry',
    });
    expect(buy).toEqual({
      kind: 'place',
      marketId: MARKET,
      side: 'buy',
      type: 'limit',
      quantity: '1',
      price: '100',
      postOnly: true,
      tag: 'entry',
    });
    const [sell] = targetPosition(fakeContext('0'), MARKET, '-1', {
      type: 'limit',
      price: '100.3',
    });
    expect(sell?.price).toBe('100.5');
    expect(() => targetPosition(fakeContext('0'), MARKET, '1', { type: 'limit' })).toThrow(
      /needs options.price/,
    );
  });

  it('reaches the target exactly, with at most two orders, never reducing more than held', () => {
    const noMinimums = testMarket({
      minimum_notional: null,
      minimum_quantity: null,
      quantity_step: '0.01',
    });
    const onStep = fc
      .integer({ min: -100_000, max: 100_000 })
      .map((units) => decimal(units).div(100));
    fc.assert(
      fc.property(onStep, onStep, (position, target) => {
        const intents = targetPosition(
          fakeContext(position.toFixed(), [], noMinimums),
          MARKET,
          target.toFixed(),
        );
        let after: Decimal = position;
        for (const intent of intents) {
          const quantity = parseDecimal(intent.quantity);
          expect(quantity.gt(ZERO)).toBe(true);
          if (intent.reduceOnly) {
            expect(quantity.lte(position.abs())).toBe(true);
            expect(intent.side === 'sell' ? position.gt(ZERO) : position.lt(ZERO)).toBe(true);
          }
          after = intent.side === 'buy' ? after.plus(quantity) : after.minus(quantity);
        }
        expect(intents.length).toBeLessThanOrEqual(2);
        expect(after.eq(target)).toBe(true);
      }),
    );
  });
});
