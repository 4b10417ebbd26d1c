/**
 * Property tests of the pure risk evaluation: random views, configurations and intents, and the
 * guarantees that must hold for every one of them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Decimal, parseDecimal, toWire, ZERO } from '../../../src/core/decimal.ts';
import { isOnIncrement } from '../../../src/core/grid.ts';
import type { OrderIntent, Side, StampedIntent } from '../../../src/runtime/intents.ts';
import { limitsFor, RiskConfig } from '../../../src/runtime/risk/config.ts';
import { evaluateIntent, RiskRule } from '../../../src/runtime/risk/evaluate.ts';
import type {
  RiskMarketView,
  RiskOpenOrderView,
  RiskPositionView,
  RiskView,
  TradingState,
} from '../../../src/runtime/risk/view.ts';
import { deepFreeze, NOW, stamp } from './fixtures.ts';

const MARKET_IDS = ['AAA-PERP', 'BBB-PERP', 'CCC-PERP'] as const;
const RULE_NAMES = new Set<string>(Object.values(RiskRule));

/** A decimal string `units / 10^scale`. */
const decimalText = (maxUnits: bigint, maxScale: number) =>
  fc
    .tuple(fc.bigInt({ min: 1n, max: maxUnits }), fc.integer({ min: 0, max: maxScale }))
    .map(([units, scale]) => toWire(parseDecimal(units.toString()).div(10 ** scale)));

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null });

/**
 * Each case is either *hostile* (anything goes: unlisted markets, junk decimals, stale data,
 * tight limits) or *friendly* (a ready market, sane sizes near the mark, loose limits), so that
 * the properties see plenty of allowed orders as well as every kind of denial.
 */
const either = <T>(friendly: boolean, calm: fc.Arbitrary<T>, wild: fc.Arbitrary<T>) =>
  friendly ? calm : wild;

const marketArbitrary = (marketId: string, friendly: boolean): fc.Arbitrary<RiskMarketView> =>
  fc
    .record({
      tick: fc.constantFrom('0.01', '0.5', '1', '0.1', '5', '0.0001'),
      step: fc.constantFrom('0.001', '0.01', '1', '0.1', '0.5'),
      minimumSteps: optional(fc.integer({ min: 1, max: 20 })),
      minimumNotional: optional(fc.constantFrom('1', '10', '100')),
      maximumLeverage: optional(fc.integer({ min: 1, max: 100 })),
      markTicks: either(
        friendly,
        fc.integer({ min: 1000, max: 100_000 }),
        optional(fc.integer({ min: 1, max: 2_000_000 })),
      ),
      dataStatus: either(
        friendly,
        fc.constant('live' as const),
        fc.constantFrom('live' as const, 'stale' as const, 'unavailable' as const),
      ),
      age: either(friendly, fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 120_000 })),
      hasTick: either(friendly, fc.constant(true), fc.boolean()),
      hasStep: either(friendly, fc.constant(true), fc.boolean()),
    })
    .map((fields) => {
      const tick = parseDecimal(fields.tick);
      const step = parseDecimal(fields.step);
      return {
        marketId,
        priceTick: fields.hasTick ? tick : null,
        quantityStep: fields.hasStep ? step : null,
        minimumQuantity: fields.minimumSteps === null ? null : step.times(fields.minimumSteps),
        minimumNotional:
          fields.minimumNotional === null ? null : parseDecimal(fields.minimumNotional),
        maximumLeverage: fields.maximumLeverage,
        markPrice: fields.markTicks === null ? null : tick.times(fields.markTicks),
        dataStatus: fields.dataStatus,
        observedAt: NOW - fields.age,
      };
    });

const signedQuantity = fc
  .tuple(fc.integer({ min: -5000, max: 5000 }), fc.constantFrom(0, 1, 2, 3))
  .map(([units, scale]) => parseDecimal(String(units)).div(10 ** scale));

const positionArbitrary = (marketId: string): fc.Arbitrary<RiskPositionView> =>
  fc.record({
    marketId: fc.constant(marketId),
    quantity: signedQuantity,
    entryPrice: optional(decimalText(10_000_000n, 2).map(parseDecimal)),
  });

/** Resting orders sit on every market's grids: prices in 5s, whole quantities. */
const orderArbitrary = (index: number): fc.Arbitrary<RiskOpenOrderView> =>
  fc.record({
    clientOrderId: fc.constant(`order-${index}`),
    marketId: fc.constantFrom(...MARKET_IDS),
    side: fc.constantFrom<Side>('buy', 'sell'),
    price: optional(
      fc.integer({ min: 1, max: 200_000 }).map((fives) => parseDecimal(String(fives * 5))),
    ),
    remainingQuantity: fc.integer({ min: 1, max: 500 }).map((units) => parseDecimal(String(units))),
    reduceOnly: fc.boolean(),
  });

const viewArbitrary = (friendly: boolean): fc.Arbitrary<RiskView> =>
  fc
    .record({
      markets: fc.tuple(...MARKET_IDS.map((id) => marketArbitrary(id, friendly))),
      listed: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean()),
      positions: fc.tuple(...MARKET_IDS.map((id) => optional(positionArbitrary(id)))),
      orderCount: fc.integer({ min: 0, max: 6 }),
      orders: fc.tuple(...[0, 1, 2, 3, 4, 5].map(orderArbitrary)),
      tradingState: either(
        friendly,
        fc.constantFrom<TradingState>('ACTIVE', 'ACTIVE', 'REDUCING', 'HALTED'),
        fc.constantFrom<TradingState>('ACTIVE', 'REDUCING', 'HALTED'),
      ),
      routeReady: either(friendly, fc.constant(true), fc.boolean()),
      equity: either(
        friendly,
        decimalText(100_000_000_000n, 2).map(parseDecimal),
        optional(decimalText(100_000_000n, 2).map(parseDecimal)),
      ),
      orderAges: fc.array(fc.integer({ min: 0, max: 90_000 }), { maxLength: friendly ? 2 : 8 }),
    })
    .map((fields) => {
      const markets: Record<string, RiskMarketView> = {};
      const positions: Record<string, RiskPositionView> = {};
      fields.markets.forEach((market, index) => {
        // The first market is always listed, so most intents reach the interesting rules.
        if (index === 0 || fields.listed[index]) markets[market.marketId] = market;
      });
      for (const position of fields.positions) {
        if (position) positions[position.marketId] = position;
      }
      return {
        now: NOW,
        tradingState: fields.tradingState,
        routeReady: fields.routeReady,
        markets,
        positions,
        openOrders: fields.orders.slice(0, fields.orderCount),
        equity: fields.equity,
        recentOrderTimes: [...fields.orderAges].sort((a, b) => b - a).map((age) => NOW - age),
      };
    });

/** A limit that is off, loose or tight; friendly cases are mostly off or loose. */
const limit = <T>(friendly: boolean, loose: T, ...tight: T[]) =>
  friendly
    ? fc.oneof(
        { weight: 5, arbitrary: fc.constant(null) },
        { weight: 3, arbitrary: fc.constant(loose) },
        { weight: 1, arbitrary: fc.constantFrom(...tight) },
      )
    : optional(fc.constantFrom(loose, ...tight));

const configArbitrary = (friendly: boolean): fc.Arbitrary<RiskConfig> =>
  fc
    .record({
      max_order_notional: limit(friendly, '100000000', '100', '5000'),
      max_order_quantity: limit(friendly, '100000', '0.5', '10'),
      max_position_quantity: limit(friendly, '100000', '1', '20'),
      max_position_notional: limit(friendly, '1000000000', '1000', '100000'),
      max_gross_exposure: limit(friendly, '10000000000', '10000', '1000000'),
      max_account_leverage: limit(friendly, '1000', '1', '3.5'),
      max_leverage: limit(friendly, 100, 1, 20),
      max_open_orders: limit(friendly, 100, 1, 4),
      max_open_orders_per_market: limit(friendly, 100, 1, 2),
      max_orders_per_second: limit(friendly, 100, 1, 2),
      max_orders_per_minute: limit(friendly, 100, 1, 3),
      price_band_percent: limit(friendly, '50', '0.5', '5'),
      max_market_data_age_ms: limit(friendly, 60_000, 1000),
      halted_allows_closes: fc.boolean(),
      halted_allows_reduce_only: fc.boolean(),
      override: fc.oneof(
        { weight: friendly ? 6 : 1, arbitrary: fc.constant(null) },
        {
          weight: 1,
          arbitrary: fc.record({
            max_order_notional: optional(fc.constantFrom('50', '1000000')),
            max_position_quantity: optional(fc.constantFrom('2', '500')),
            enabled: fc.boolean(),
          }),
        },
      ),
    })
    .map(({ override, ...limits }) =>
      RiskConfig.parse({ ...limits, markets: override ? { 'AAA-PERP': override } : {} }),
    );

/** Quantities and prices near the grids, off them, tiny, huge and malformed. */
const saneQuantity = fc.oneof(decimalText(10_000n, 3), decimalText(100n, 1));
const quantityText = fc.oneof(
  decimalText(100_000n, 4),
  decimalText(1_000n, 6),
  fc.constantFrom('0', '-1', '1e3', 'abc', '0.0000001', '.5', '7.'),
);
const priceText = fc.oneof(
  decimalText(20_000_000n, 4),
  decimalText(100n, 3),
  fc.constantFrom('0', '-5', 'NaN', '1,5'),
);
const markedPrice = (view: RiskView, marketId?: string) => {
  const markets = marketId ? [view.markets[marketId]] : Object.values(view.markets);
  const marks = markets.flatMap((market) => (market?.markPrice ? [market.markPrice] : []));
  if (marks.length === 0) return priceText;
  // Prices within a few percent of a mark, so the price band and notional rules are exercised.
  return fc
    .tuple(fc.constantFrom(...marks), fc.integer({ min: -800, max: 800 }))
    .map(([mark, basisPoints]) => toWire(mark.times(10_000 + basisPoints).div(10_000)));
};

/** A quantity near a whole number of the market's steps, sometimes just off the grid. */
const quantityNear = (market: RiskMarketView | undefined) => {
  const step = market?.quantityStep;
  if (!step) return saneQuantity;
  return fc
    .tuple(fc.integer({ min: 1, max: 400 }), fc.constantFrom('0', '0', '0.3', '0.999'))
    .map(([steps, extra]) => toWire(step.times(steps).plus(step.times(parseDecimal(extra)))));
};

const intentArbitrary = (view: RiskView, friendly: boolean): fc.Arbitrary<OrderIntent> => {
  const listed = Object.keys(view.markets);
  const marketId = friendly
    ? fc.constantFrom(...listed)
    : fc.constantFrom(...MARKET_IDS, 'ZZZ-PERP');
  const clientOrderId = friendly
    ? fc.constantFrom('order-0', 'order-1', 'order-2')
    : fc.constantFrom('order-0', 'order-1', 'order-2', 'order-5', 'nope');
  const price = friendly ? markedPrice(view) : fc.oneof(markedPrice(view), priceText);
  const quantity = friendly ? saneQuantity : quantityText;
  const place = marketId.chain((id) =>
    fc
      .record({
        kind: fc.constant('place' as const),
        marketId: fc.constant(id),
        side: fc.constantFrom<Side>('buy', 'sell'),
        type: fc.constantFrom('market' as const, 'limit' as const, 'limit' as const),
        quantity: friendly ? quantityNear(view.markets[id]) : quantityText,
        price: friendly ? markedPrice(view, id) : fc.option(price, { nil: undefined, freq: 5 }),
        reduceOnly: friendly
          ? fc.option(fc.boolean(), { nil: undefined, freq: 2 })
          : fc.option(fc.boolean(), { nil: undefined }),
        leverage: friendly
          ? fc.option(fc.constant(1), { nil: undefined })
          : fc.option(fc.integer({ min: 0, max: 120 }), { nil: undefined }),
        maxSlippagePercent: fc.option(fc.constantFrom('0.5', '2', '3'), { nil: undefined }),
      })
      .map((intent) =>
        // Friendly market orders carry no price; hostile ones sometimes do.
        intent.type === 'market' && (friendly || intent.quantity.length % 2 === 0)
          ? {
              ...intent,
              price: undefined,
              maxSlippagePercent: friendly ? '1' : intent.maxSlippagePercent,
            }
          : intent,
      ),
  );
  return fc.oneof(
    { weight: 6, arbitrary: place },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('amend' as const),
        clientOrderId,
        price: fc.option(price, { nil: undefined }),
        quantity: fc.option(quantity, { nil: undefined }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), clientOrderId }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('cancel_all' as const),
        marketId: fc.option(marketId, { nil: undefined }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('close_position' as const),
        marketId,
        quantityPercent: fc.option(fc.constantFrom('100', '50', '0', '101'), { nil: undefined }),
      }),
    },
  );
};

const caseArbitrary = fc.boolean().chain((friendly) =>
  fc.tuple(viewArbitrary(friendly), configArbitrary(friendly)).chain(([view, config]) =>
    intentArbitrary(view, friendly).map((intent) => ({
      friendly,
      view,
      config,
      stamped: stamp(intent),
    })),
  ),
);

/** The order an allowed place or amend puts on the book, reconstructed from the inputs. */
interface ResultingOrder {
  readonly marketId: string;
  readonly side: Side;
  readonly reduceOnly: boolean;
  readonly requestedPrice: Decimal | null;
  readonly requestedQuantity: Decimal;
  readonly price: Decimal | null;
  readonly quantity: Decimal;
  readonly replaced: RiskOpenOrderView | null;
}

function resultingOrder(
  original: StampedIntent,
  allowed: StampedIntent,
  view: RiskView,
): ResultingOrder | null {
  const before = original.intent;
  const after = allowed.intent;
  if (before.kind === 'place' && after.kind === 'place') {
    return {
      marketId: before.marketId,
      side: before.side,
      reduceOnly: before.reduceOnly === true,
      requestedPrice: before.price === undefined ? null : parseDecimal(before.price),
      requestedQuantity: parseDecimal(before.quantity),
      price: after.price === undefined ? null : parseDecimal(after.price),
      quantity: parseDecimal(after.quantity),
      replaced: null,
    };
  }
  if (before.kind === 'amend' && after.kind === 'amend') {
    const replaced = view.openOrders.find((order) => order.clientOrderId === before.clientOrderId);
    if (!replaced) throw new Error('an amend of an unknown order was allowed');
    return {
      marketId: replaced.marketId,
      side: replaced.side,
      reduceOnly: replaced.reduceOnly,
      requestedPrice: parseDecimal(before.price ?? toWire(replaced.price ?? ZERO)),
      requestedQuantity: parseDecimal(before.quantity ?? toWire(replaced.remainingQuantity)),
      price: parseDecimal(after.price ?? toWire(replaced.price ?? ZERO)),
      quantity: parseDecimal(after.quantity ?? toWire(replaced.remainingQuantity)),
      replaced,
    };
  }
  return null;
}

function positionOf(view: RiskView, marketId: string): Decimal {
  return Object.hasOwn(view.positions, marketId) ? view.positions[marketId]!.quantity : ZERO;
}

function sameSideRemaining(view: RiskView, order: ResultingOrder): Decimal {
  return view.openOrders
    .filter(
      (one) => one !== order.replaced && one.marketId === order.marketId && one.side === order.side,
    )
    .reduce((sum, one) => sum.plus(one.remainingQuantity), ZERO);
}

const RUNS = { numRuns: 3000 };

describe('evaluateIntent (property)', () => {
  it("(a) rounds an allowed order onto the grids, in the owner's favour, within the minimums", () => {
    fc.assert(
      fc.property(caseArbitrary, ({ view, config, stamped }) => {
        const decision = evaluateIntent(stamped, view, config);
        if (!decision.allowed) return;
        const order = resultingOrder(stamped, decision.intent, view);
        if (!order) return;
        const market = view.markets[order.marketId]!;
        expect(market.quantityStep).not.toBeNull();
        expect(isOnIncrement(order.quantity, market.quantityStep!)).toBe(true);
        expect(order.quantity.gt(ZERO)).toBe(true);
        expect(order.quantity.lte(order.requestedQuantity)).toBe(true);
        expect(order.requestedQuantity.minus(order.quantity).lt(market.quantityStep!)).toBe(true);
        if (market.minimumQuantity) expect(order.quantity.gte(market.minimumQuantity)).toBe(true);
        if (order.price) {
          expect(isOnIncrement(order.price, market.priceTick!)).toBe(true);
          const requested = order.requestedPrice!;
          if (order.side === 'buy') expect(order.price.lte(requested)).toBe(true);
          else expect(order.price.gte(requested)).toBe(true);
          expect(order.price.minus(requested).abs().lt(market.priceTick!)).toBe(true);
        }
        const valuedAt = order.price ?? market.markPrice;
        expect(valuedAt).not.toBeNull();
        if (market.minimumNotional) {
          expect(order.quantity.times(valuedAt!).gte(market.minimumNotional)).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('(b) never lets anything that can add exposure through while HALTED or REDUCING', () => {
    fc.assert(
      fc.property(caseArbitrary, ({ view, config, stamped }) => {
        const decision = evaluateIntent(stamped, view, config);
        if (!decision.allowed || view.tradingState === 'ACTIVE') return;
        expect(decision.effect).not.toBe('adds_exposure');
        const kind = stamped.intent.kind;
        const order = resultingOrder(stamped, decision.intent, view);
        if (view.tradingState === 'HALTED') {
          if (kind === 'close_position') expect(config.halted_allows_closes).toBe(true);
          if (order) {
            expect(order.reduceOnly).toBe(true);
            expect(config.halted_allows_reduce_only).toBe(true);
          }
        }
        if (order && !order.reduceOnly) {
          // REDUCING: the order must fit in what is left of an opposite position once every
          // other resting order on its side has filled.
          const position = positionOf(view, order.marketId);
          const left = (order.side === 'buy' ? position.neg() : position).minus(
            sameSideRemaining(view, order),
          );
          expect(order.quantity.lte(left)).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('(c) every denial names a known rule, a limit, an observed value and a message', () => {
    fc.assert(
      fc.property(caseArbitrary, ({ view, config, stamped }) => {
        const decision = evaluateIntent(stamped, view, config);
        if (decision.allowed) return;
        expect(decision.denials.length).toBeGreaterThan(0);
        for (const denial of decision.denials) {
          expect(RULE_NAMES.has(denial.rule)).toBe(true);
          expect(denial.limit).toMatch(/\S/);
          expect(denial.observed).toMatch(/\S/);
          expect(denial.message).toMatch(/\S/);
        }
      }),
      RUNS,
    );
  });

  it('(d) never allows an order above the order notional or the position caps', () => {
    fc.assert(
      fc.property(caseArbitrary, ({ view, config, stamped }) => {
        const decision = evaluateIntent(stamped, view, config);
        if (!decision.allowed) return;
        const order = resultingOrder(stamped, decision.intent, view);
        if (!order) return;
        const limits = limitsFor(config, order.marketId);
        const market = view.markets[order.marketId]!;
        const notional = order.quantity.times(order.price ?? market.markPrice!);
        if (limits.max_order_notional) expect(notional.lte(limits.max_order_notional)).toBe(true);
        if (limits.max_order_quantity)
          expect(order.quantity.lte(limits.max_order_quantity)).toBe(true);

        const position = positionOf(view, order.marketId);
        const after =
          order.side === 'buy' ? position.plus(order.quantity) : position.minus(order.quantity);
        // An order may leave a position above a cap only by making it smaller than it was; a
        // reduce-only order cannot make it larger (the venue stops it at zero).
        const grows = !order.reduceOnly && after.abs().gt(position.abs());
        if (grows && limits.max_position_quantity) {
          expect(after.abs().lte(limits.max_position_quantity)).toBe(true);
        }
        if (grows && limits.max_position_notional) {
          expect(market.markPrice).not.toBeNull();
          expect(after.abs().times(market.markPrice!).lte(limits.max_position_notional)).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('(e) is pure: frozen inputs, the same decision twice', () => {
    fc.assert(
      fc.property(caseArbitrary, ({ view, config, stamped }) => {
        const before = JSON.stringify([view, config, stamped]);
        deepFreeze(view);
        deepFreeze(config);
        deepFreeze(stamped);
        const first = evaluateIntent(stamped, view, config);
        const second = evaluateIntent(stamped, view, config);
        expect(second).toEqual(first);
        expect(JSON.stringify([view, config, stamped])).toBe(before);
      }),
      { numRuns: 1000 },
    );
  });

  it('reaches both outcomes and most rules (the generators are not vacuous)', () => {
    const rules = new Set<string>();
    let allowedOrders = 0;
    fc.assert(
      fc.property(caseArbitrary, ({ view, config, stamped }) => {
        const decision = evaluateIntent(stamped, view, config);
        if (decision.allowed) {
          if (stamped.intent.kind === 'place' || stamped.intent.kind === 'amend') allowedOrders++;
        } else {
          for (const denial of decision.denials) rules.add(denial.rule);
        }
      }),
      { numRuns: 5000, seed: 7 },
    );
    expect(allowedOrders).toBeGreaterThan(100);
    const missing = [...RULE_NAMES].filter((rule) => !rules.has(rule));
    expect(missing).toEqual([]);
  });
});
