/** Builders of risk views, configurations and intents for the risk gate's tests. */
import { type Decimal, parseDecimal } from '../../../src/core/decimal.ts';
import { scaledToWire } from '../../../src/core/scaled.ts';
import type { OrderSums } from '../../../src/runtime/risk/order-sums.ts';
import type {
  AmendIntent,
  ClosePositionIntent,
  OrderIntent,
  PlaceIntent,
  StampedIntent,
} from '../../../src/runtime/intents.ts';
import { RiskConfig, type RiskConfigInput } from '../../../src/runtime/risk/config.ts';
import type {
  RiskMarketView,
  RiskOpenOrderView,
  RiskPositionView,
  RiskView,
} from '../../../src/runtime/risk/view.ts';

export const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);

export const d = (text: string): Decimal => parseDecimal(text);

/** Every limit off, so a test switches on only the rules it is about. */
export function openConfig(overrides: RiskConfigInput = {}): RiskConfig {
  return RiskConfig.parse({
    max_open_orders: null,
    max_open_orders_per_market: null,
    max_orders_per_second: null,
    max_orders_per_minute: null,
    price_band_percent: null,
    ...overrides,
  });
}

export function market(overrides: Partial<RiskMarketView> = {}): RiskMarketView {
  return {
    marketId: 'BTC-PERP',
    priceTick: d('0.5'),
    quantityStep: d('0.001'),
    minimumQuantity: d('0.001'),
    minimumNotional: d('10'),
    maximumLeverage: 50,
    markPrice: d('60000'),
    dataStatus: 'live',
    observedAt: NOW,
    ...overrides,
  };
}

export function position(
  marketId: string,
  quantity: string,
  entryPrice = '60000',
): RiskPositionView {
  return { marketId, quantity: d(quantity), entryPrice: d(entryPrice) };
}

export function openOrder(overrides: Partial<RiskOpenOrderView> = {}): RiskOpenOrderView {
  return {
    clientOrderId: 'order-1',
    marketId: 'BTC-PERP',
    side: 'buy',
    price: d('59000'),
    remainingQuantity: d('0.1'),
    reduceOnly: false,
    ...overrides,
  };
}

export function view(overrides: Partial<RiskView> = {}): RiskView {
  const btc = market();
  return {
    now: NOW,
    tradingState: 'ACTIVE',
    routeReady: true,
    markets: { [btc.marketId]: btc },
    positions: {},
    openOrders: [],
    equity: d('100000'),
    recentOrderTimes: [],
    ...overrides,
  };
}

export function place(overrides: Partial<PlaceIntent> = {}): PlaceIntent {
  return {
    kind: 'place',
    marketId: 'BTC-PERP',
    side: 'buy',
    type: 'limit',
    quantity: '0.1',
    price: '60000',
    ...overrides,
  };
}

export function amend(overrides: Partial<AmendIntent> = {}): AmendIntent {
  return { kind: 'amend', clientOrderId: 'order-1', ...overrides };
}

export function close(overrides: Partial<ClosePositionIntent> = {}): ClosePositionIntent {
  return { kind: 'close_position', marketId: 'BTC-PERP', ...overrides };
}

export function stamp(intent: OrderIntent, sequence = 1): StampedIntent {
  return {
    strategyId: 'test',
    sequence,
    requestId: `test:epoch:${sequence}`,
    clientOrderId:
      intent.kind === 'cancel' || intent.kind === 'cancel_all' ? null : `test-${sequence}`,
    intent,
    emittedAt: NOW,
  };
}

/** Freezes a value and everything reachable from it, big.js decimals included. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** Order sums in wire form (exact decimal strings), to compare kept sums with sums from scratch. */
export function wireSums(sums: OrderSums): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [marketId, market] of sums) {
    out[marketId] = {
      addingBuys: scaledToWire(market.addingBuys),
      addingSells: scaledToWire(market.addingSells),
      allBuys: scaledToWire(market.allBuys),
      allSells: scaledToWire(market.allSells),
      openOrders: market.openOrders,
      highestOrderPrice: market.highestOrderPrice && scaledToWire(market.highestOrderPrice),
    };
  }
  return out;
}
