import { describe, expect, it } from 'vitest';
import type { Denial, PlaceIntent, StampedIntent } from '../../../src/runtime/intents.ts';
import type { RiskConfig } from '../../../src/runtime/risk/config.ts';
import { evaluateIntent, type GateDecision } from '../../../src/runtime/risk/evaluate.ts';
import type { RiskView } from '../../../src/runtime/risk/view.ts';
import {
  amend,
  close,
  d,
  market,
  NOW,
  openConfig,
  openOrder,
  place,
  position,
  stamp,
  view,
} from './fixtures.ts';

function denialsOf(decision: GateDecision): readonly Denial[] {
  if (decision.allowed) throw new Error('expected a denial, the intent was allowed');
  return decision.denials;
}

function rulesOf(decision: GateDecision): string[] {
  return denialsOf(decision).map((denial) => denial.rule);
}

function allowedPlace(decision: GateDecision): PlaceIntent {
  if (!decision.allowed) {
    throw new Error(`expected the intent allowed, got ${JSON.stringify(decision.denials)}`);
  }
  if (decision.intent.intent.kind !== 'place') throw new Error('not a place intent');
  return decision.intent.intent;
}

function evaluatePlace(
  overrides: Partial<PlaceIntent>,
  riskView: RiskView = view(),
  config: RiskConfig = openConfig(),
): GateDecision {
  return evaluateIntent(stamp(place(overrides)), riskView, config);
}

describe('rounding', () => {
  it('rounds a buy price down and a sell price up to the tick, quantity down to the step', () => {
    const buy = allowedPlace(evaluatePlace({ side: 'buy', price: '60000.4', quantity: '0.1239' }));
    expect(buy.price).toBe('60000');
    expect(buy.quantity).toBe('0.123');
    const sell = allowedPlace(
      evaluatePlace({ side: 'sell', price: '60000.1', quantity: '0.1239' }),
    );
    expect(sell.price).toBe('60000.5');
    expect(sell.quantity).toBe('0.123');
  });

  it('keeps the rest of the stamped intent as it was', () => {
    const stamped = stamp(place({ tag: 'grid-3', leverage: 5, postOnly: true }), 7);
    const decision = evaluateIntent(stamped, view(), openConfig());
    if (!decision.allowed) throw new Error('expected allowed');
    expect(decision.intent).toEqual({
      ...stamped,
      intent: { ...stamped.intent, price: '60000', quantity: '0.1' },
    });
    expect(decision.effect).toBe('adds_exposure');
  });

  it('refuses a quantity that rounds to zero and a buy price that rounds to zero', () => {
    expect(rulesOf(evaluatePlace({ quantity: '0.0009' }))).toContain('quantity_step');
    const denial = denialsOf(evaluatePlace({ price: '0.4' })).find(
      (one) => one.rule === 'price_tick',
    );
    expect(denial).toMatchObject({ limit: '0.5', observed: '0.4' });
  });

  it('refuses to round on a market without a tick or a step', () => {
    const bare = market({ priceTick: null, quantityStep: null });
    const rules = rulesOf(evaluatePlace({}, view({ markets: { 'BTC-PERP': bare } })));
    expect(rules).toEqual(expect.arrayContaining(['price_tick', 'quantity_step']));
  });

  it('refuses malformed and non-positive decimals', () => {
    expect(rulesOf(evaluatePlace({ quantity: '1e3' }))).toContain('invalid_quantity');
    expect(rulesOf(evaluatePlace({ quantity: '-1' }))).toContain('invalid_quantity');
    expect(rulesOf(evaluatePlace({ price: 'abc' }))).toContain('invalid_price');
    expect(rulesOf(evaluatePlace({ price: '0' }))).toContain('invalid_price');
    expect(rulesOf(evaluatePlace({ price: undefined }))).toContain('price_required');
    expect(rulesOf(evaluatePlace({ type: 'market', price: '1' }))).toContain(
      'price_on_market_order',
    );
  });
});

describe('size rules', () => {
  it('applies the market minimum quantity and notional after rounding', () => {
    const minimums = market({ minimumQuantity: d('0.01'), minimumNotional: d('1000') });
    const riskView = view({ markets: { 'BTC-PERP': minimums } });
    const denials = denialsOf(evaluatePlace({ quantity: '0.0099', price: '60000' }, riskView));
    expect(denials.find((one) => one.rule === 'minimum_quantity')).toMatchObject({
      limit: '0.01',
      observed: '0.009',
    });
    expect(denials.find((one) => one.rule === 'minimum_notional')).toMatchObject({
      limit: '1000',
      observed: '540',
    });
  });

  it('values a market order at the mark', () => {
    const config = openConfig({ max_order_notional: '5000' });
    const denials = denialsOf(evaluatePlace({ type: 'market', price: undefined }, view(), config));
    expect(denials).toEqual([
      expect.objectContaining({ rule: 'max_order_notional', limit: '5000', observed: '6000' }),
    ]);
  });

  it('caps order quantity and notional, with per-market overrides', () => {
    const config = openConfig({
      max_order_notional: '5000',
      max_order_quantity: '1',
      markets: { 'BTC-PERP': { max_order_notional: '10000', max_order_quantity: null } },
    });
    expect(evaluatePlace({ quantity: '0.1' }, view(), config).allowed).toBe(true);
    const rules = rulesOf(evaluatePlace({ quantity: '2' }, view(), config));
    expect(rules).toEqual(['max_order_notional']);
    const eth = market({ marketId: 'ETH-PERP', markPrice: d('3000') });
    const ethView = view({ markets: { 'ETH-PERP': eth } });
    const ethRules = rulesOf(
      evaluatePlace({ marketId: 'ETH-PERP', quantity: '2', price: '3000' }, ethView, config),
    );
    expect(ethRules).toEqual(['max_order_quantity', 'max_order_notional']);
  });
});

describe('exposure rules', () => {
  it('caps the position a market can reach, counting resting orders that add to it', () => {
    const config = openConfig({ max_position_quantity: '1', max_position_notional: '100000' });
    const riskView = view({
      positions: { 'BTC-PERP': position('BTC-PERP', '0.5') },
      openOrders: [
        openOrder({ side: 'buy', remainingQuantity: d('0.3') }),
        openOrder({
          clientOrderId: 'tp',
          side: 'buy',
          remainingQuantity: d('5'),
          reduceOnly: true,
        }),
      ],
    });
    expect(evaluatePlace({ quantity: '0.2' }, riskView, config).allowed).toBe(true);
    const denials = denialsOf(evaluatePlace({ quantity: '0.3' }, riskView, config));
    expect(denials).toEqual([
      expect.objectContaining({ rule: 'max_position_quantity', limit: '1', observed: '1.1' }),
    ]);
    const notional = denialsOf(evaluatePlace({ quantity: '0.9' }, riskView, config));
    expect(notional.find((one) => one.rule === 'max_position_notional')).toMatchObject({
      limit: '100000',
      observed: '102000',
    });
  });

  it('caps the short side the same way', () => {
    const config = openConfig({ max_position_quantity: '1' });
    const riskView = view({ positions: { 'BTC-PERP': position('BTC-PERP', '-0.9') } });
    expect(rulesOf(evaluatePlace({ side: 'sell', quantity: '0.2' }, riskView, config))).toEqual([
      'max_position_quantity',
    ]);
  });

  it('caps gross exposure across markets at their marks', () => {
    const eth = market({ marketId: 'ETH-PERP', markPrice: d('3000') });
    const riskView = view({
      markets: { 'BTC-PERP': market(), 'ETH-PERP': eth },
      positions: { 'ETH-PERP': position('ETH-PERP', '-10', '3100') },
      openOrders: [openOrder({ marketId: 'ETH-PERP', side: 'sell', remainingQuantity: d('2') })],
    });
    // ETH worst case 12 x 3000 = 36000; BTC 0.5 x 60000 = 30000.
    const config = openConfig({ max_gross_exposure: '65000' });
    const denials = denialsOf(evaluatePlace({ quantity: '0.5' }, riskView, config));
    expect(denials).toEqual([
      expect.objectContaining({ rule: 'max_gross_exposure', limit: '65000', observed: '66000' }),
    ]);
    expect(evaluatePlace({ quantity: '0.4' }, riskView, config).allowed).toBe(true);
  });

  it('caps account leverage and refuses it without a positive equity', () => {
    const config = openConfig({ max_account_leverage: '2' });
    const riskView = view({ equity: d('3000') });
    expect(evaluatePlace({ quantity: '0.1' }, riskView, config).allowed).toBe(true);
    const denial = denialsOf(evaluatePlace({ quantity: '0.2' }, riskView, config))[0];
    expect(denial).toMatchObject({ rule: 'max_account_leverage', limit: '2', observed: '4' });
    const unknown = denialsOf(evaluatePlace({}, view({ equity: null }), config))[0];
    expect(unknown).toMatchObject({ rule: 'max_account_leverage', observed: 'equity unknown' });
  });

  it('does not apply exposure caps to an order that reduces the position', () => {
    const config = openConfig({ max_position_quantity: '0.1', max_gross_exposure: '1' });
    const riskView = view({ positions: { 'BTC-PERP': position('BTC-PERP', '2') } });
    const decision = evaluatePlace({ side: 'sell', quantity: '1.5' }, riskView, config);
    expect(decision).toMatchObject({ allowed: true, effect: 'reduces_exposure' });
  });
});

describe('leverage, open orders and price band', () => {
  it('caps leverage at the lowest of the configuration, the market and the venue', () => {
    const config = openConfig({ max_leverage: 20 });
    expect(evaluatePlace({ leverage: 20 }, view(), config).allowed).toBe(true);
    expect(denialsOf(evaluatePlace({ leverage: 21 }, view(), config))[0]).toMatchObject({
      rule: 'max_leverage',
      limit: '20',
      observed: '21',
    });
    const lowMarket = view({ markets: { 'BTC-PERP': market({ maximumLeverage: 5 }) } });
    expect(denialsOf(evaluatePlace({ leverage: 6 }, lowMarket, config))[0]).toMatchObject({
      limit: '5',
    });
    expect(rulesOf(evaluatePlace({ leverage: 1.5 }, view(), config))).toEqual(['max_leverage']);
  });

  it('caps open orders on the account and per market', () => {
    const config = openConfig({ max_open_orders: 3, max_open_orders_per_market: 2 });
    const orders = [
      openOrder({ clientOrderId: 'a', marketId: 'ETH-PERP' }),
      openOrder({ clientOrderId: 'b' }),
    ];
    expect(evaluatePlace({}, view({ openOrders: orders }), config).allowed).toBe(true);
    const more = [...orders, openOrder({ clientOrderId: 'c' })];
    const denials = denialsOf(evaluatePlace({}, view({ openOrders: more }), config));
    expect(denials.map((one) => [one.rule, one.limit, one.observed])).toEqual([
      ['max_open_orders', '3', '4'],
      ['max_open_orders_per_market', '2', '3'],
    ]);
  });

  it('refuses a limit price outside the band around the mark', () => {
    const config = openConfig({ price_band_percent: '5' });
    expect(evaluatePlace({ price: '63000' }, view(), config).allowed).toBe(true);
    expect(evaluatePlace({ price: '57000' }, view(), config).allowed).toBe(true);
    const denial = denialsOf(evaluatePlace({ price: '63000.5' }, view(), config))[0];
    expect(denial).toMatchObject({ rule: 'price_band_percent', limit: '5', observed: '5.0009' });
  });

  it('refuses a market order slippage outside (0, 2]', () => {
    const market = { type: 'market' as const, price: undefined };
    expect(evaluatePlace({ ...market, maxSlippagePercent: '2' }).allowed).toBe(true);
    expect(rulesOf(evaluatePlace({ ...market, maxSlippagePercent: '2.01' }))).toEqual([
      'max_slippage_percent',
    ]);
  });
});

describe('rate limits', () => {
  it('counts order commands in the sliding second and minute', () => {
    const config = openConfig({ max_orders_per_second: 2, max_orders_per_minute: 3 });
    const times = [NOW - 59_999, NOW - 999];
    expect(evaluatePlace({}, view({ recentOrderTimes: times }), config).allowed).toBe(true);
    const full = [NOW - 59_999, NOW - 999, NOW - 1];
    const denials = denialsOf(evaluatePlace({}, view({ recentOrderTimes: full }), config));
    expect(denials.map((one) => [one.rule, one.limit, one.observed])).toEqual([
      ['max_orders_per_second', '2', '3'],
      ['max_orders_per_minute', '3', '4'],
    ]);
    const expired = [NOW - 60_000, NOW - 1000, NOW - 1];
    expect(evaluatePlace({}, view({ recentOrderTimes: expired }), config).allowed).toBe(true);
  });
});

describe('readiness', () => {
  const notReady = view({
    routeReady: false,
    markets: { 'BTC-PERP': market({ dataStatus: 'stale', observedAt: NOW - 20_000 }) },
    positions: { 'BTC-PERP': position('BTC-PERP', '1') },
  });
  const config = openConfig({ max_market_data_age_ms: 10_000 });

  it('blocks new exposure while data is stale or old or the route is not ready', () => {
    const denials = denialsOf(evaluatePlace({}, notReady, config));
    expect(denials.map((one) => [one.rule, one.limit, one.observed])).toEqual([
      ['market_data', 'live', 'stale'],
      ['max_market_data_age_ms', '10000', '20000'],
      ['route_ready', 'ready', 'not ready'],
    ]);
  });

  it('still lets reducing orders and closes through', () => {
    expect(evaluatePlace({ side: 'sell', quantity: '1' }, notReady, config).allowed).toBe(true);
    expect(evaluateIntent(stamp(close()), notReady, config).allowed).toBe(true);
  });

  it('blocks new exposure on a market disabled in the configuration', () => {
    const disabled = openConfig({ markets: { 'BTC-PERP': { enabled: false } } });
    expect(rulesOf(evaluatePlace({}, view(), disabled))).toEqual(['market_disabled']);
  });

  it('needs a mark to value a market order or new exposure', () => {
    const noMark = view({ markets: { 'BTC-PERP': market({ markPrice: null }) } });
    expect(rulesOf(evaluatePlace({}, noMark))).toEqual(['reference_price']);
    expect(rulesOf(evaluatePlace({ type: 'market', price: undefined }, noMark))).toEqual([
      'reference_price',
    ]);
  });

  it('names an unknown market', () => {
    expect(denialsOf(evaluatePlace({ marketId: 'NOPE' }))).toEqual([
      expect.objectContaining({ rule: 'unknown_market', observed: 'NOPE' }),
    ]);
  });
});

describe('trading states', () => {
  const long = view({ positions: { 'BTC-PERP': position('BTC-PERP', '1') } });
  const reducing: RiskView = { ...long, tradingState: 'REDUCING' };
  const halted: RiskView = { ...long, tradingState: 'HALTED' };

  it('REDUCING allows reduce-only and position-reducing orders only', () => {
    expect(rulesOf(evaluatePlace({ side: 'buy' }, reducing))).toEqual(['trading_state']);
    expect(evaluatePlace({ side: 'sell', quantity: '1' }, reducing).allowed).toBe(true);
    expect(rulesOf(evaluatePlace({ side: 'sell', quantity: '1.001' }, reducing))).toEqual([
      'trading_state',
    ]);
    expect(
      evaluatePlace({ side: 'sell', quantity: '0.5', reduceOnly: true }, reducing),
    ).toMatchObject({ allowed: true, effect: 'reduces_exposure' });
  });

  it('counts resting orders on the same side against what a reducing order may take', () => {
    const withExit: RiskView = {
      ...reducing,
      openOrders: [openOrder({ side: 'sell', price: d('61000'), remainingQuantity: d('0.6') })],
    };
    expect(evaluatePlace({ side: 'sell', quantity: '0.4' }, withExit).allowed).toBe(true);
    expect(rulesOf(evaluatePlace({ side: 'sell', quantity: '0.5' }, withExit))).toEqual([
      'trading_state',
    ]);
  });

  it('HALTED allows cancels and closes but no order', () => {
    expect(
      evaluateIntent(stamp({ kind: 'cancel', clientOrderId: 'x' }), halted, openConfig()),
    ).toMatchObject({ allowed: true, effect: 'no_exposure' });
    expect(evaluateIntent(stamp({ kind: 'cancel_all' }), halted, openConfig()).allowed).toBe(true);
    expect(evaluateIntent(stamp(close()), halted, openConfig()).allowed).toBe(true);
    expect(rulesOf(evaluatePlace({ side: 'sell', quantity: '0.5' }, halted))).toEqual([
      'trading_state',
    ]);
    expect(rulesOf(evaluatePlace({ side: 'sell', reduceOnly: true }, halted))).toEqual([
      'trading_state',
    ]);
  });

  it('HALTED follows the configuration on closes and reduce-only orders', () => {
    const config = openConfig({ halted_allows_closes: false, halted_allows_reduce_only: true });
    expect(rulesOf(evaluateIntent(stamp(close()), halted, config))).toEqual(['trading_state']);
    expect(evaluatePlace({ side: 'sell', reduceOnly: true }, halted, config).allowed).toBe(true);
    expect(rulesOf(evaluatePlace({ side: 'buy', reduceOnly: true }, halted, config))).toEqual([
      'reduce_only',
    ]);
  });
});

describe('closes and amends', () => {
  it('refuses a close without a position or with a bad percentage', () => {
    const denials = denialsOf(
      evaluateIntent(
        stamp(close({ quantityPercent: '150', maxSlippagePercent: '0' })),
        view(),
        openConfig(),
      ),
    );
    expect(denials.map((one) => one.rule)).toEqual([
      'no_position',
      'close_quantity_percent',
      'max_slippage_percent',
    ]);
  });

  it('evaluates an amend as the order that replaces the original', () => {
    const config = openConfig({ max_open_orders: 1, max_position_quantity: '1' });
    const riskView = view({ openOrders: [openOrder({ remainingQuantity: d('0.5') })] });
    const decision = evaluateIntent(
      stamp(amend({ price: '59000.7', quantity: '0.9999' })),
      riskView,
      config,
    );
    if (!decision.allowed) throw new Error(JSON.stringify(decision.denials));
    expect(decision.intent.intent).toEqual({
      kind: 'amend',
      clientOrderId: 'order-1',
      price: '59000.5',
      quantity: '0.999',
    });
    const tooBig = evaluateIntent(stamp(amend({ quantity: '1.5' })), riskView, config);
    expect(rulesOf(tooBig)).toEqual(['max_position_quantity']);
  });

  it('refuses an amend of an unknown order or one that changes nothing', () => {
    expect(
      rulesOf(
        evaluateIntent(stamp(amend({ clientOrderId: 'x', price: '1' })), view(), openConfig()),
      ),
    ).toEqual(['unknown_order']);
    const riskView = view({ openOrders: [openOrder()] });
    expect(rulesOf(evaluateIntent(stamp(amend()), riskView, openConfig()))).toEqual([
      'empty_amend',
    ]);
  });
});

it('lists every failing rule, each with its limit and what was observed', () => {
  const config = RiskConfigWithEverything();
  const riskView = view({
    tradingState: 'REDUCING',
    routeReady: false,
    recentOrderTimes: [NOW - 10],
    openOrders: [openOrder()],
  });
  const denials = denialsOf(
    evaluateIntent(
      stamp(place({ quantity: '10', price: '70000', leverage: 99 })),
      riskView,
      config,
    ),
  );
  expect(denials.map((one) => one.rule)).toEqual([
    'trading_state',
    'route_ready',
    'max_order_quantity',
    'max_order_notional',
    'max_position_quantity',
    'max_position_notional',
    'max_gross_exposure',
    'max_account_leverage',
    'max_leverage',
    'max_open_orders',
    'max_open_orders_per_market',
    'max_orders_per_second',
    'max_orders_per_minute',
    'price_band_percent',
  ]);
  for (const denial of denials) {
    expect(denial.limit.length).toBeGreaterThan(0);
    expect(denial.observed.length).toBeGreaterThan(0);
    expect(denial.message.length).toBeGreaterThan(0);
  }
});

function RiskConfigWithEverything(): RiskConfig {
  return openConfig({
    max_order_quantity: '1',
    max_order_notional: '1000',
    max_position_quantity: '1',
    max_position_notional: '1000',
    max_gross_exposure: '1000',
    max_account_leverage: '1',
    max_leverage: 10,
    max_open_orders: 1,
    max_open_orders_per_market: 1,
    max_orders_per_second: 1,
    max_orders_per_minute: 1,
    price_band_percent: '1',
  });
}

it('stamps nothing new: the decision carries the same ids', () => {
  const stamped: StampedIntent = stamp(place(), 42);
  const decision = evaluateIntent(stamped, view(), openConfig());
  if (!decision.allowed) throw new Error('expected allowed');
  expect(decision.intent.requestId).toBe(stamped.requestId);
  expect(decision.intent.clientOrderId).toBe(stamped.clientOrderId);
});
