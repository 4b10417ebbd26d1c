/**
 * The risk rules on scaled integers against the same rules on big.js (reference-evaluate.ts):
 * over random views, configurations and intents built to stress the arithmetic (ticks and steps
 * down to 10^-12, quantities up to 10^12, prices with up to 40 decimals, short and long
 * positions, every limit near the figure it bounds), both must give the same decision: the same
 * allows with the same rounded prices and quantities as text, the same denials with the same
 * rules, limits, observed figures and messages. Also with the open orders' sums kept order
 * event by order event (as the kernel's snapshot keeps them) rather than summed per intent.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDecimal } from '../../../src/core/decimal.ts';
import type { OrderIntent, Side } from '../../../src/runtime/intents.ts';
import { RiskConfig } from '../../../src/runtime/risk/config.ts';
import { evaluateIntent } from '../../../src/runtime/risk/evaluate.ts';
import {
  type OrderSums,
  OrderSumsKeeper,
  sumOrders,
} from '../../../src/runtime/risk/order-sums.ts';
import type {
  RiskMarketView,
  RiskOpenOrderView,
  RiskPositionView,
  RiskView,
} from '../../../src/runtime/risk/view.ts';
import { NOW, stamp, wireSums } from './fixtures.ts';
import { referenceEvaluateIntent } from './reference-evaluate.ts';

const MARKET_IDS = ['AAA-PERP', 'BBB-PERP', 'CCC-PERP'] as const;

/** `digits / 10^places` as text, with a sign when asked; leading and trailing zeros kept. */
const decimalText = (maxDigits: number, maxPlaces: number, signed = false) =>
  fc
    .tuple(
      fc.bigInt({ min: 0n, max: 10n ** BigInt(maxDigits) - 1n }),
      fc.integer({ min: 0, max: maxPlaces }),
      signed ? fc.boolean() : fc.constant(false),
    )
    .map(([units, places, negative]) => {
      const digits = units.toString().padStart(places + 1, '0');
      const text = places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
      return negative ? `-${text}` : text;
    });

const positive = (maxDigits: number, maxPlaces: number) =>
  decimalText(maxDigits, maxPlaces).filter((text) => parseDecimal(text).gt(0));

const increment = fc.constantFrom(
  '0.000000000001',
  '0.00000025',
  '0.0001',
  '0.001',
  '0.01',
  '0.05',
  '0.5',
  '1',
  '25',
  '1000',
);

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null });

const marketArbitrary = (marketId: string): fc.Arbitrary<RiskMarketView> =>
  fc
    .record({
      tick: optional(increment),
      step: optional(increment),
      minimumQuantity: optional(positive(6, 8)),
      minimumNotional: optional(positive(6, 4)),
      markPrice: optional(positive(14, 8)),
    })
    .map((fields) => ({
      marketId,
      priceTick: fields.tick === null ? null : parseDecimal(fields.tick),
      quantityStep: fields.step === null ? null : parseDecimal(fields.step),
      minimumQuantity:
        fields.minimumQuantity === null ? null : parseDecimal(fields.minimumQuantity),
      minimumNotional:
        fields.minimumNotional === null ? null : parseDecimal(fields.minimumNotional),
      maximumLeverage: 100,
      markPrice: fields.markPrice === null ? null : parseDecimal(fields.markPrice),
      dataStatus: 'live' as const,
      observedAt: NOW,
    }));

const positionArbitrary = (marketId: string): fc.Arbitrary<RiskPositionView> =>
  fc.record({
    marketId: fc.constant(marketId),
    quantity: decimalText(12, 10, true).map(parseDecimal),
    entryPrice: optional(positive(10, 6).map(parseDecimal)),
  });

const orderArbitrary = (index: number): fc.Arbitrary<RiskOpenOrderView> =>
  fc.record({
    clientOrderId: fc.constant(`order-${index}`),
    marketId: fc.constantFrom(...MARKET_IDS),
    side: fc.constantFrom<Side>('buy', 'sell'),
    price: optional(positive(10, 6).map(parseDecimal)),
    remainingQuantity: decimalText(12, 10).map(parseDecimal),
    reduceOnly: fc.boolean(),
  });

const viewArbitrary: fc.Arbitrary<RiskView> = fc
  .record({
    markets: fc.tuple(...MARKET_IDS.map(marketArbitrary)),
    positions: fc.tuple(...MARKET_IDS.map((id) => optional(positionArbitrary(id)))),
    orderCount: fc.integer({ min: 0, max: 6 }),
    orders: fc.tuple(...[0, 1, 2, 3, 4, 5].map(orderArbitrary)),
    tradingState: fc.constantFrom('ACTIVE' as const, 'ACTIVE' as const, 'REDUCING' as const),
    equity: optional(decimalText(14, 6, true).map(parseDecimal)),
  })
  .map((fields) => {
    const markets: Record<string, RiskMarketView> = {};
    for (const market of fields.markets) markets[market.marketId] = market;
    const positions: Record<string, RiskPositionView> = {};
    for (const position of fields.positions) if (position) positions[position.marketId] = position;
    return {
      now: NOW,
      tradingState: fields.tradingState,
      routeReady: true,
      markets,
      positions,
      openOrders: fields.orders.slice(0, fields.orderCount),
      equity: fields.equity,
      recentOrderTimes: [],
    };
  });

/** Limits set at random; `sparse` leaves most of them off, so that more orders pass. */
const configArbitrary = (sparse: boolean): fc.Arbitrary<RiskConfig> => {
  const limit = (arbitrary: fc.Arbitrary<string>) =>
    sparse
      ? fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary })
      : optional(arbitrary);
  return fc
    .record({
      max_order_notional: limit(positive(12, 4)),
      max_order_quantity: limit(positive(12, 6)),
      max_position_quantity: limit(positive(12, 6)),
      max_position_notional: limit(positive(14, 4)),
      max_gross_exposure: limit(positive(16, 4)),
      max_account_leverage: limit(positive(3, 2)),
      price_band_percent: limit(positive(3, 3)),
    })
    .map((limits) => RiskConfig.parse(limits));
};

const placeArbitrary: fc.Arbitrary<OrderIntent> = fc.record({
  kind: fc.constant('place' as const),
  marketId: fc.constantFrom(...MARKET_IDS),
  side: fc.constantFrom<Side>('buy', 'sell'),
  type: fc.constantFrom('limit' as const, 'limit' as const, 'market' as const),
  quantity: fc.oneof(decimalText(14, 12), decimalText(3, 40), fc.constantFrom('1e3', '.5', '7.')),
  price: fc.option(fc.oneof(decimalText(12, 8), decimalText(4, 40)), { nil: undefined, freq: 8 }),
  reduceOnly: fc.option(fc.boolean(), { nil: undefined }),
});

const amendArbitrary: fc.Arbitrary<OrderIntent> = fc.record({
  kind: fc.constant('amend' as const),
  clientOrderId: fc.constantFrom('order-0', 'order-1', 'order-2'),
  price: fc.option(decimalText(12, 8), { nil: undefined }),
  quantity: fc.option(decimalText(12, 10), { nil: undefined }),
});

const intentArbitrary = fc.oneof(
  { weight: 5, arbitrary: placeArbitrary },
  { weight: 2, arbitrary: amendArbitrary },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('close_position' as const),
      marketId: fc.constantFrom(...MARKET_IDS),
      quantityPercent: fc.option(decimalText(4, 2), { nil: undefined }),
      maxSlippagePercent: fc.option(decimalText(2, 3), { nil: undefined }),
    }),
  },
);

/** Price and quantity near the mark and the grids of the market, so most intents get far. */
const nearArbitrary = (view: RiskView): fc.Arbitrary<OrderIntent> =>
  fc
    .record({
      marketId: fc.constantFrom(...MARKET_IDS),
      side: fc.constantFrom<Side>('buy', 'sell'),
      basisPoints: fc.integer({ min: -300, max: 300 }),
      steps: fc.oneof(fc.bigInt({ min: 1n, max: 1000n }), fc.bigInt({ min: 1n, max: 10n ** 12n })),
      extra: fc.constantFrom('0', '0.5', '0.999999999999'),
    })
    .map(({ marketId, side, basisPoints, steps, extra }): OrderIntent => {
      const market = view.markets[marketId]!;
      const step = market.quantityStep ?? parseDecimal('1');
      const mark = market.markPrice ?? parseDecimal('100');
      return {
        kind: 'place',
        marketId,
        side,
        type: 'limit',
        quantity: step.times(steps.toString()).plus(step.times(extra)).toFixed(),
        price: mark
          .times(10_000 + basisPoints)
          .div(10_000)
          .toFixed(),
      };
    });

/**
 * A view whose open orders came from a random sequence of order events (new, changed, ended),
 * with the sums kept event by event as the kernel's snapshot keeps them.
 */
const keptViewArbitrary: fc.Arbitrary<{ view: RiskView; kept: OrderSums }> = fc
  .tuple(
    viewArbitrary,
    fc.array(
      fc.record({
        key: fc.integer({ min: 0, max: 7 }),
        order: fc.option(
          fc.integer({ min: 0, max: 5 }).chain((index) => orderArbitrary(index)),
          { nil: null, freq: 3 },
        ),
      }),
      { maxLength: 30 },
    ),
  )
  .map(([view, events]) => {
    const keeper = new OrderSumsKeeper();
    for (const { key, order } of events) keeper.set(String(key), order);
    const kept = keeper.live();
    return { view: { ...view, openOrders: [...keeper.orders()], orderSums: kept }, kept };
  });

describe('evaluateIntent on scaled integers (property, against big.js)', () => {
  it('keeps sums event by event equal to sums from scratch, and decides as the big.js rules', () => {
    fc.assert(
      fc.property(
        keptViewArbitrary,
        configArbitrary(false),
        intentArbitrary,
        ({ view, kept }, config, intent) => {
          expect(wireSums(kept)).toEqual(wireSums(sumOrders(view.openOrders)));
          const stamped = stamp(intent);
          const { orderSums: _kept, ...plain } = view;
          expect(evaluateIntent(stamped, view, config)).toEqual(
            referenceEvaluateIntent(stamped, plain, config),
          );
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('gives the decision of the big.js rules for random intents', () => {
    fc.assert(
      fc.property(
        viewArbitrary,
        configArbitrary(false),
        intentArbitrary,
        (view, config, intent) => {
          const stamped = stamp(intent);
          expect(evaluateIntent(stamped, view, config)).toEqual(
            referenceEvaluateIntent(stamped, view, config),
          );
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('gives the decision of the big.js rules for orders near the mark and the grids', () => {
    let allowed = 0;
    let denied = 0;
    fc.assert(
      fc.property(
        fc
          .tuple(viewArbitrary, configArbitrary(true))
          .chain(([view, config]) =>
            nearArbitrary(view).map((intent) => ({ view, config, intent })),
          ),
        ({ view, config, intent }) => {
          const stamped = stamp(intent);
          const decision = evaluateIntent(stamped, view, config);
          expect(decision).toEqual(referenceEvaluateIntent(stamped, view, config));
          if (decision.allowed) allowed++;
          else denied++;
        },
      ),
      { numRuns: 3000, seed: 11 },
    );
    // Both outcomes are reached, so the comparison is not only of denials.
    expect(allowed).toBeGreaterThan(100);
    expect(denied).toBeGreaterThan(100);
  });
});
