/**
 * The risk gate's rules as one pure function: an intent, a snapshot and the configuration in,
 * a decision out. No clock, no I/O, no mutation of its inputs, so it runs identically live and
 * in replay and is property-tested. Denials are values (design rule 7), and every failing rule
 * is listed, not only the first.
 *
 * Exposure. An order *reduces exposure* when it is reduce-only (the venue then refuses it any
 * new exposure), or when it is on the side opposite the position and no larger than what is
 * left of the position after every resting order on its own side has filled. Anything else
 * *adds exposure*. Cancels add none. REDUCING allows only what does not add exposure; HALTED
 * allows cancels, plus closes and reduce-only orders when the configuration says so. Stale or
 * unavailable market data, a disabled market and a route that is not ready block only orders
 * that add exposure.
 *
 * Arithmetic. Every figure is a scaled integer (src/core/scaled.ts): exact like big.js, with the
 * same rounded prices and quantities, without its digit arrays. The view's decimals are
 * converted as they are read: a conversion costs less than one big.js addition, and a cache
 * by object cost more than it saved when the orders and marks change between intents.
 */
import { type Decimal, keptDecimal, toWire } from '../../core/decimal.ts';
import { priceRoundingDirection, type RoundingDirection } from '../../core/grid.ts';
import {
  parseScaled,
  type Scaled,
  SCALED_ZERO,
  scaledAbs,
  scaledCompare,
  scaledDivide,
  scaledMinus,
  scaledNegate,
  scaledOfKept,
  scaledPlus,
  scaledRoundToIncrement,
  scaledSign,
  scaledTimes,
  scaledToWire,
} from '../../core/scaled.ts';
import type {
  AmendIntent,
  ClosePositionIntent,
  Denial,
  PlaceIntent,
  Side,
  StampedIntent,
} from '../intents.ts';
import { limitsFor, type MarketLimits, type RiskConfig } from './config.ts';
import { type MarketOrderSums, type OrderSums, removeFromSums, sumOrders } from './order-sums.ts';
import { lookup, type RiskMarketView, type RiskOpenOrderView, type RiskView } from './view.ts';

/** Every rule name a denial can carry. Most match the configuration key that sets the limit. */
export const RiskRule = {
  tradingState: 'trading_state',
  unknownMarket: 'unknown_market',
  marketDisabled: 'market_disabled',
  marketData: 'market_data',
  marketDataAge: 'max_market_data_age_ms',
  routeReady: 'route_ready',
  referencePrice: 'reference_price',
  invalidQuantity: 'invalid_quantity',
  invalidPrice: 'invalid_price',
  priceRequired: 'price_required',
  priceOnMarketOrder: 'price_on_market_order',
  priceTick: 'price_tick',
  quantityStep: 'quantity_step',
  minimumQuantity: 'minimum_quantity',
  minimumNotional: 'minimum_notional',
  maxOrderQuantity: 'max_order_quantity',
  maxOrderNotional: 'max_order_notional',
  maxPositionQuantity: 'max_position_quantity',
  maxPositionNotional: 'max_position_notional',
  maxGrossExposure: 'max_gross_exposure',
  maxLeverage: 'max_leverage',
  maxAccountLeverage: 'max_account_leverage',
  maxOpenOrders: 'max_open_orders',
  maxOpenOrdersPerMarket: 'max_open_orders_per_market',
  maxOrdersPerSecond: 'max_orders_per_second',
  maxOrdersPerMinute: 'max_orders_per_minute',
  priceBand: 'price_band_percent',
  reduceOnly: 'reduce_only',
  unknownOrder: 'unknown_order',
  emptyAmend: 'empty_amend',
  noPosition: 'no_position',
  closeQuantityPercent: 'close_quantity_percent',
  maxSlippagePercent: 'max_slippage_percent',
} as const;
export type RiskRuleName = (typeof RiskRule)[keyof typeof RiskRule];

export type ExposureEffect = 'adds_exposure' | 'reduces_exposure' | 'no_exposure';

export type GateDecision =
  | {
      readonly allowed: true;
      /** The intent as it should be sent: price on the tick, quantity on the step. */
      readonly intent: StampedIntent;
      readonly effect: ExposureEffect;
    }
  | { readonly allowed: false; readonly denials: readonly Denial[] };

/** The interface's own bounds (practice-trading-service.md, Limits). */
const VENUE_MAXIMUM_LEVERAGE = 200;
const MAXIMUM_SLIPPAGE_PERCENT: Scaled = { units: 2n, scale: 0 };
const HUNDRED: Scaled = { units: 100n, scale: 0 };
const SECOND_MS = 1000;
const MINUTE_MS = 60_000;

export function evaluateIntent(
  stamped: StampedIntent,
  view: RiskView,
  config: RiskConfig,
): GateDecision {
  const intent = stamped.intent;
  switch (intent.kind) {
    case 'cancel':
    case 'cancel_all':
      return cancelDecision(stamped);
    case 'close_position':
      return evaluateClose(stamped, intent, view, config);
    case 'place':
      return evaluatePlace(stamped, intent, view, config);
    case 'amend':
      return evaluateAmend(stamped, intent, view, config);
    case 'exit':
    case 'bracket':
      // The kernel hands emulated exits to the exit emulator; one reaching the gate is a bug.
      return {
        allowed: false,
        denials: [
          {
            rule: 'emulated_intent',
            limit: 'held by the exit emulator',
            observed: intent.kind,
            message: `an ${intent.kind} intent is held by the runtime, never sent as it is`,
          },
        ],
      };
  }
}

/**
 * The decision on an intent whose decision reads nothing of the view (a cancel), or null. The
 * gate asks this first, so a cancel costs no snapshot.
 */
export function decisionWithoutView(stamped: StampedIntent): GateDecision | null {
  const kind = stamped.intent.kind;
  return kind === 'cancel' || kind === 'cancel_all' ? cancelDecision(stamped) : null;
}

/**
 * Cancels remove exposure in every state and are never rate-limited here: a runaway strategy
 * must always be able to take its orders down.
 */
function cancelDecision(stamped: StampedIntent): GateDecision {
  return { allowed: true, intent: stamped, effect: 'no_exposure' };
}

function deny(rule: RiskRuleName, limit: string, observed: string, message: string): Denial {
  return { rule, limit, observed, message };
}

function decimalOrNull(text: string | undefined): Scaled | null {
  if (text === undefined) return null;
  // The intent's own texts were most often parsed already (by the strategy's own-order book).
  const kept = keptDecimal(text);
  return kept === undefined ? parseScaled(text) : scaledOfKept(kept);
}

/** Whether `value` is missing, at or below zero, or above `maximum`. */
function outsideRange(value: Scaled | null, maximum: Scaled): boolean {
  return !value || scaledSign(value) <= 0 || scaledCompare(value, maximum) > 0;
}

function checkSlippage(text: string | undefined, denials: Denial[]): void {
  if (text === undefined) return;
  if (outsideRange(decimalOrNull(text), MAXIMUM_SLIPPAGE_PERCENT)) {
    denials.push(
      deny(
        RiskRule.maxSlippagePercent,
        scaledToWire(MAXIMUM_SLIPPAGE_PERCENT),
        text,
        `max slippage percent must be greater than 0 and at most 2, got ${JSON.stringify(text)}`,
      ),
    );
  }
}

function evaluateClose(
  stamped: StampedIntent,
  intent: ClosePositionIntent,
  view: RiskView,
  config: RiskConfig,
): GateDecision {
  const denials: Denial[] = [];
  if (view.tradingState === 'HALTED' && !config.halted_allows_closes) {
    denials.push(
      deny(
        RiskRule.tradingState,
        'ACTIVE or REDUCING',
        view.tradingState,
        'trading is HALTED and halted_allows_closes is false',
      ),
    );
  }
  const position = lookup(view.positions, intent.marketId);
  if (!position || scaledSign(scaledOfKept(position.quantity)) === 0) {
    denials.push(
      deny(RiskRule.noPosition, 'a position', '0', `no position to close on ${intent.marketId}`),
    );
  }
  if (intent.quantityPercent !== undefined) {
    if (outsideRange(decimalOrNull(intent.quantityPercent), HUNDRED)) {
      denials.push(
        deny(
          RiskRule.closeQuantityPercent,
          '100',
          intent.quantityPercent,
          `close quantity percent must be greater than 0 and at most 100, got ${JSON.stringify(intent.quantityPercent)}`,
        ),
      );
    }
  }
  checkSlippage(intent.maxSlippagePercent, denials);
  if (denials.length > 0) return { allowed: false, denials };
  return { allowed: true, intent: stamped, effect: 'reduces_exposure' };
}

/** An order as the rules see it, whether a new placement or the replacement made by an amend. */
interface OrderShape {
  readonly marketId: string;
  readonly side: Side;
  readonly type: 'market' | 'limit';
  readonly quantityText: string;
  readonly priceText: string | undefined;
  readonly reduceOnly: boolean;
  /** `undefined` for amends: the replacement keeps the original order's leverage. */
  readonly leverage: number | undefined;
  readonly maxSlippagePercent: string | undefined;
  /** The order an amend replaces; it no longer counts among the open orders. */
  readonly replaces: RiskOpenOrderView | null;
}

interface RoundedOrder {
  readonly price: Scaled | null;
  readonly quantity: Scaled;
  readonly effect: ExposureEffect;
}

function evaluatePlace(
  stamped: StampedIntent,
  intent: PlaceIntent,
  view: RiskView,
  config: RiskConfig,
): GateDecision {
  const denials: Denial[] = [];
  const rounded = evaluateOrder(
    {
      marketId: intent.marketId,
      side: intent.side,
      type: intent.type,
      quantityText: intent.quantity,
      priceText: intent.price,
      reduceOnly: intent.reduceOnly === true,
      leverage: intent.leverage,
      maxSlippagePercent: intent.maxSlippagePercent,
      replaces: null,
    },
    view,
    config,
    denials,
  );
  if (!rounded || denials.length > 0) return { allowed: false, denials };
  const quantity = scaledToWire(rounded.quantity);
  const price = rounded.price === null ? null : scaledToWire(rounded.price);
  // Already on the grid as written (the usual case): the intent goes on as it came.
  if (quantity === intent.quantity && (price === null || price === intent.price)) {
    return { allowed: true, intent: stamped, effect: rounded.effect };
  }
  const placed: PlaceIntent =
    price === null ? { ...intent, quantity } : { ...intent, quantity, price };
  return { allowed: true, intent: { ...stamped, intent: placed }, effect: rounded.effect };
}

function evaluateAmend(
  stamped: StampedIntent,
  intent: AmendIntent,
  view: RiskView,
  config: RiskConfig,
): GateDecision {
  const denials: Denial[] = [];
  const original = view.openOrders.find((order) => order.clientOrderId === intent.clientOrderId);
  if (!original || original.price === null) {
    denials.push(
      deny(
        RiskRule.unknownOrder,
        'an open limit order',
        intent.clientOrderId,
        `no open limit order with client order id ${intent.clientOrderId}`,
      ),
    );
    if (view.tradingState === 'HALTED') denials.push(haltedDenial(config, false));
    return { allowed: false, denials };
  }
  if (intent.price === undefined && intent.quantity === undefined) {
    denials.push(
      deny(RiskRule.emptyAmend, 'a new price or quantity', 'none', 'the amend changes nothing'),
    );
  }
  const rounded = evaluateOrder(
    {
      marketId: original.marketId,
      side: original.side,
      type: 'limit',
      quantityText: intent.quantity ?? toWire(original.remainingQuantity),
      priceText: intent.price ?? toWire(original.price),
      reduceOnly: original.reduceOnly,
      leverage: undefined,
      maxSlippagePercent: undefined,
      replaces: original,
    },
    view,
    config,
    denials,
  );
  if (!rounded || denials.length > 0) return { allowed: false, denials };
  // Only the fields the amend carried are rounded; the others stay absent.
  let amended: AmendIntent = intent;
  if (intent.price !== undefined && rounded.price) {
    amended = { ...amended, price: scaledToWire(rounded.price) };
  }
  if (intent.quantity !== undefined) {
    amended = { ...amended, quantity: scaledToWire(rounded.quantity) };
  }
  return { allowed: true, intent: { ...stamped, intent: amended }, effect: rounded.effect };
}

function haltedDenial(config: RiskConfig, reduceOnly: boolean): Denial {
  return deny(
    RiskRule.tradingState,
    config.halted_allows_reduce_only ? 'reduce-only orders while HALTED' : 'no orders while HALTED',
    'HALTED',
    reduceOnly
      ? 'trading is HALTED and halted_allows_reduce_only is false'
      : 'trading is HALTED: no new orders pass',
  );
}

/** Per-market sums the exposure rules need, the amended order left out. */
interface MarketBook {
  position: Scaled;
  /** Remaining quantity of resting buys and sells that may add exposure (not reduce-only). */
  addingBuys: Scaled;
  addingSells: Scaled;
  /** Remaining quantity of every resting order on each side (reduce-only included). */
  allBuys: Scaled;
  allSells: Scaled;
  openOrders: number;
  highestOrderPrice: Scaled | null;
}

function emptyBook(position: Scaled): MarketBook {
  return {
    position,
    addingBuys: SCALED_ZERO,
    addingSells: SCALED_ZERO,
    allBuys: SCALED_ZERO,
    allSells: SCALED_ZERO,
    openOrders: 0,
    highestOrderPrice: null,
  };
}

/** The open orders' sums by market, an amended order left out. */
function orderSumsWithout(view: RiskView, replaces: RiskOpenOrderView | null): OrderSums {
  // The snapshot's sums when it keeps them, else summed here; an amended order is taken out of
  // its own market's sums (recounted from scratch only when it held the highest price).
  let sums: OrderSums = view.orderSums ?? sumOrders(view.openOrders, replaces);
  if (view.orderSums && replaces) {
    const own = view.orderSums.get(replaces.marketId);
    if (own) {
      const left = removeFromSums(own, replaces, () =>
        view.openOrders.filter(
          (order) => order !== replaces && order.marketId === replaces.marketId,
        ),
      );
      const copy = new Map(sums);
      if (left) copy.set(replaces.marketId, left);
      else copy.delete(replaces.marketId);
      sums = copy;
    }
  }
  return sums;
}

/** One market's book: its position and its open orders' sums. */
function marketBook(view: RiskView, sums: OrderSums, marketId: string): MarketBook {
  const held = lookup(view.positions, marketId);
  const position = held ? scaledOfKept(held.quantity) : SCALED_ZERO;
  const market = sums.get(marketId);
  return market ? bookOf(position, market) : emptyBook(position);
}

/** A market's book: its position and the sums of its open orders. */
function bookOf(position: Scaled, market: MarketOrderSums): MarketBook {
  return {
    position,
    addingBuys: market.addingBuys,
    addingSells: market.addingSells,
    allBuys: market.allBuys,
    allSells: market.allSells,
    openOrders: market.openOrders,
    highestOrderPrice: market.highestOrderPrice,
  };
}

/**
 * Every market's book (the markets with a position, then those with open orders only), for the
 * account-wide limits. The order's own market alone is built per intent (`marketBook`).
 */
function marketBooks(view: RiskView, sums: OrderSums): Map<string, MarketBook> {
  const books = new Map<string, MarketBook>();
  for (const marketId of Object.keys(view.positions)) {
    const position = view.positions[marketId];
    if (position) books.set(marketId, emptyBook(scaledOfKept(position.quantity)));
  }
  for (const [marketId, market] of sums) {
    const book = books.get(marketId);
    books.set(marketId, bookOf(book ? book.position : SCALED_ZERO, market));
  }
  return books;
}

/** The largest absolute position the market can reach if every adding order fills. */
function worstCasePosition(book: MarketBook): Scaled {
  const long = scaledAbs(scaledPlus(book.position, book.addingBuys));
  const short = scaledAbs(scaledMinus(book.position, book.addingSells));
  return scaledCompare(long, short) > 0 ? long : short;
}

function referencePrice(view: RiskView, marketId: string, book: MarketBook): Scaled {
  const mark = lookup(view.markets, marketId)?.markPrice;
  if (mark) return scaledOfKept(mark);
  const entry = lookup(view.positions, marketId)?.entryPrice;
  if (entry) return scaledOfKept(entry);
  return book.highestOrderPrice ?? SCALED_ZERO;
}

function countSince(times: readonly number[], from: number): number {
  let count = 0;
  for (let index = times.length - 1; index >= 0; index--) {
    if (times[index]! > from) count++;
    else break;
  }
  return count;
}

/**
 * Applies every order rule, pushing a denial for each that fails. Returns the rounded price and
 * quantity, or null when they cannot be had (the reason is among the denials).
 */
function evaluateOrder(
  order: OrderShape,
  view: RiskView,
  config: RiskConfig,
  denials: Denial[],
): RoundedOrder | null {
  const market = lookup(view.markets, order.marketId);
  if (!market) {
    denials.push(
      deny(
        RiskRule.unknownMarket,
        'a listed market',
        order.marketId,
        `market ${order.marketId} is not in the market list`,
      ),
    );
    if (view.tradingState === 'HALTED') denials.push(haltedDenial(config, order.reduceOnly));
    return null;
  }
  const limits = limitsFor(config, order.marketId);
  const { quantity, price } = roundOrder(order, market, denials);

  const sums = orderSumsWithout(view, order.replaces);
  const book = marketBook(view, sums, order.marketId);
  const effect = classify(order, book, quantity);
  checkTradingState(order, effect, view, config, denials);
  if (order.reduceOnly) checkReduceOnly(order, book, denials);

  const mark = market.markPrice ? scaledOfKept(market.markPrice) : null;
  if (effect === 'adds_exposure')
    checkMarketReadiness(order, market, limits, view, config, denials);
  if (!mark && (order.type === 'market' || effect === 'adds_exposure')) {
    denials.push(
      deny(
        RiskRule.referencePrice,
        'a mark price',
        'none',
        `market ${order.marketId} has no mark price to value the order against`,
      ),
    );
  }

  const valuedAt = price ?? mark;
  if (quantity) {
    checkSize(order, market, limits, quantity, valuedAt, denials);
    if (effect === 'adds_exposure' && mark) {
      checkExposure(order, view, config, limits, sums, book, quantity, mark, denials);
    }
  }
  if (order.replaces === null) checkLeverage(order, market, limits, denials);
  checkOpenOrders(order, view, config, limits, book, denials);
  checkRates(view, config, denials);
  if (price && mark && limits.price_band_percent) {
    checkPriceBand(order, price, mark, scaledOfKept(limits.price_band_percent), denials);
  }
  if (order.type === 'market') checkSlippage(order.maxSlippagePercent, denials);

  if (!quantity || (order.type === 'limit' && !price)) return null;
  return { quantity, price, effect };
}

/** What differs between rounding a quantity onto its step and a price onto its tick. */
interface GridField {
  readonly name: 'quantity' | 'price';
  readonly invalidRule: RiskRuleName;
  readonly gridRule: RiskRuleName;
  /** The increment as the market publishes it. */
  readonly increment: 'quantity step' | 'price tick';
  /** How a value that rounds to 0 is named: only a buy price rounds down among prices. */
  readonly roundsToZero: string;
}

const QUANTITY_FIELD: GridField = {
  name: 'quantity',
  invalidRule: RiskRule.invalidQuantity,
  gridRule: RiskRule.quantityStep,
  increment: 'quantity step',
  roundsToZero: 'quantity',
};

const PRICE_FIELD: GridField = {
  name: 'price',
  invalidRule: RiskRule.invalidPrice,
  gridRule: RiskRule.priceTick,
  increment: 'price tick',
  roundsToZero: 'buy price',
};

/** A requested quantity or price on the market's grid, or null with the reason among the denials. */
function roundOntoGrid(
  field: GridField,
  text: string,
  increment: Decimal | null,
  direction: RoundingDirection,
  marketId: string,
  denials: Denial[],
): Scaled | null {
  const requested = decimalOrNull(text);
  if (!requested || scaledSign(requested) <= 0) {
    denials.push(
      deny(
        field.invalidRule,
        'a positive decimal string',
        text,
        `${field.name} must be a positive decimal string, got ${JSON.stringify(text)}`,
      ),
    );
    return null;
  }
  if (!increment) {
    denials.push(
      deny(
        field.gridRule,
        `a ${field.increment}`,
        'none',
        `market ${marketId} publishes no ${field.increment} to round to`,
      ),
    );
    return null;
  }
  const rounded = scaledRoundToIncrement(requested, scaledOfKept(increment), direction);
  if (scaledSign(rounded) > 0) return rounded;
  const observed = scaledToWire(requested);
  const word = field.increment === 'quantity step' ? 'step' : 'tick';
  denials.push(
    deny(
      field.gridRule,
      toWire(increment),
      observed,
      `${field.roundsToZero} ${observed} rounds down to 0 on the ${word} ${toWire(increment)}`,
    ),
  );
  return null;
}

function roundOrder(
  order: OrderShape,
  market: RiskMarketView,
  denials: Denial[],
): { quantity: Scaled | null; price: Scaled | null } {
  const quantity = roundOntoGrid(
    QUANTITY_FIELD,
    order.quantityText,
    market.quantityStep,
    'down',
    order.marketId,
    denials,
  );
  if (order.type === 'market') {
    if (order.priceText !== undefined) {
      denials.push(
        deny(
          RiskRule.priceOnMarketOrder,
          'no price',
          order.priceText,
          'a market order takes no price; bound it with max slippage percent',
        ),
      );
    }
    return { quantity, price: null };
  }
  if (order.priceText === undefined) {
    denials.push(deny(RiskRule.priceRequired, 'a price', 'none', 'a limit order needs a price'));
    return { quantity, price: null };
  }
  const price = roundOntoGrid(
    PRICE_FIELD,
    order.priceText,
    market.priceTick,
    priceRoundingDirection(order.side),
    order.marketId,
    denials,
  );
  return { quantity, price };
}

function classify(order: OrderShape, book: MarketBook, quantity: Scaled | null): ExposureEffect {
  if (order.reduceOnly) return 'reduces_exposure';
  if (!quantity) return 'adds_exposure';
  // What is left of the position once every resting order on this side has filled.
  const left =
    order.side === 'buy'
      ? scaledMinus(scaledNegate(book.position), book.allBuys)
      : scaledMinus(book.position, book.allSells);
  return scaledSign(left) > 0 && scaledCompare(quantity, left) <= 0
    ? 'reduces_exposure'
    : 'adds_exposure';
}

function checkTradingState(
  order: OrderShape,
  effect: ExposureEffect,
  view: RiskView,
  config: RiskConfig,
  denials: Denial[],
): void {
  if (view.tradingState === 'HALTED') {
    if (!(order.reduceOnly && config.halted_allows_reduce_only)) {
      denials.push(haltedDenial(config, order.reduceOnly));
    }
  } else if (view.tradingState === 'REDUCING' && effect === 'adds_exposure') {
    denials.push(
      deny(
        RiskRule.tradingState,
        'orders that reduce exposure while REDUCING',
        'REDUCING',
        'trading is REDUCING: only reduce-only or position-reducing orders pass',
      ),
    );
  }
}

function checkReduceOnly(order: OrderShape, book: MarketBook, denials: Denial[]): void {
  const sign = scaledSign(book.position);
  const reducible = order.side === 'buy' ? sign < 0 : sign > 0;
  if (!reducible) {
    denials.push(
      deny(
        RiskRule.reduceOnly,
        order.side === 'buy' ? 'a short position' : 'a long position',
        scaledToWire(book.position),
        `a reduce-only ${order.side} has no ${order.side === 'buy' ? 'short' : 'long'} position to reduce on ${order.marketId}`,
      ),
    );
  }
}

function checkMarketReadiness(
  order: OrderShape,
  market: RiskMarketView,
  limits: MarketLimits,
  view: RiskView,
  config: RiskConfig,
  denials: Denial[],
): void {
  if (!limits.enabled) {
    denials.push(
      deny(
        RiskRule.marketDisabled,
        'enabled',
        'disabled',
        `market ${order.marketId} is disabled in the risk configuration`,
      ),
    );
  }
  if (market.dataStatus !== 'live') {
    denials.push(
      deny(
        RiskRule.marketData,
        'live',
        market.dataStatus,
        `market data for ${order.marketId} is ${market.dataStatus}: no new exposure`,
      ),
    );
  }
  const maximumAge = config.max_market_data_age_ms;
  if (maximumAge !== null) {
    const age = view.now - market.observedAt;
    if (!(age <= maximumAge)) {
      denials.push(
        deny(
          RiskRule.marketDataAge,
          String(maximumAge),
          Number.isFinite(age) ? String(age) : 'unknown',
          `market data for ${order.marketId} is ${age} ms old: no new exposure`,
        ),
      );
    }
  }
  if (!view.routeReady) {
    denials.push(
      deny(RiskRule.routeReady, 'ready', 'not ready', 'the execution route is not ready'),
    );
  }
}

/** Whether a configured limit is below `value` (`false` when there is no limit). */
function limitBelow(limit: Decimal | null, value: Scaled): boolean {
  return limit !== null && scaledCompare(scaledOfKept(limit), value) < 0;
}

/**
 * Denies `value` when it is below a market minimum (`below`) or above a configured limit on the
 * market (`above`); nothing when the bound is not set.
 */
function checkBound(
  rule: RiskRuleName,
  bound: Decimal | null,
  breaks: 'below' | 'above',
  what: string,
  value: Scaled,
  marketId: string,
  denials: Denial[],
): void {
  if (!bound) return;
  const comparison = scaledCompare(value, scaledOfKept(bound));
  if (breaks === 'below' ? comparison >= 0 : comparison <= 0) return;
  const observed = scaledToWire(value);
  const limit = toWire(bound);
  denials.push(
    deny(
      rule,
      limit,
      observed,
      breaks === 'below'
        ? `${what} ${observed} is below the market minimum ${limit}`
        : `${what} ${observed} exceeds the limit ${limit} on ${marketId}`,
    ),
  );
}

function checkSize(
  order: OrderShape,
  market: RiskMarketView,
  limits: MarketLimits,
  quantity: Scaled,
  valuedAt: Scaled | null,
  denials: Denial[],
): void {
  const marketId = order.marketId;
  checkBound(
    RiskRule.minimumQuantity,
    market.minimumQuantity,
    'below',
    'quantity',
    quantity,
    marketId,
    denials,
  );
  checkBound(
    RiskRule.maxOrderQuantity,
    limits.max_order_quantity,
    'above',
    'quantity',
    quantity,
    marketId,
    denials,
  );
  if (!valuedAt) return;
  const notional = scaledTimes(quantity, valuedAt);
  checkBound(
    RiskRule.minimumNotional,
    market.minimumNotional,
    'below',
    'notional',
    notional,
    marketId,
    denials,
  );
  checkBound(
    RiskRule.maxOrderNotional,
    limits.max_order_notional,
    'above',
    'order notional',
    notional,
    marketId,
    denials,
  );
}

function checkExposure(
  order: OrderShape,
  view: RiskView,
  config: RiskConfig,
  limits: MarketLimits,
  sums: OrderSums,
  book: MarketBook,
  quantity: Scaled,
  mark: Scaled,
  denials: Denial[],
): void {
  // The position this market reaches, in the order's direction, if this order and every resting
  // order that adds on the same side fill.
  const reached =
    order.side === 'buy'
      ? scaledPlus(scaledPlus(book.position, book.addingBuys), quantity)
      : scaledMinus(scaledMinus(book.position, book.addingSells), quantity);
  const extendsPosition = order.side === 'buy' ? scaledSign(reached) > 0 : scaledSign(reached) < 0;
  const reachedSize = scaledAbs(reached);
  const maximumQuantity = limits.max_position_quantity;
  if (extendsPosition && maximumQuantity && limitBelow(maximumQuantity, reachedSize)) {
    const observed = scaledToWire(reachedSize);
    denials.push(
      deny(
        RiskRule.maxPositionQuantity,
        toWire(maximumQuantity),
        observed,
        `position on ${order.marketId} could reach ${observed}, above the limit ${toWire(maximumQuantity)}`,
      ),
    );
  }
  const maximumNotional = limits.max_position_notional;
  if (extendsPosition && maximumNotional) {
    const reachedNotional = scaledTimes(reachedSize, mark);
    if (limitBelow(maximumNotional, reachedNotional)) {
      const observed = scaledToWire(reachedNotional);
      denials.push(
        deny(
          RiskRule.maxPositionNotional,
          toWire(maximumNotional),
          observed,
          `position notional on ${order.marketId} could reach ${observed}, above the limit ${toWire(maximumNotional)}`,
        ),
      );
    }
  }
  if (!config.max_gross_exposure && !config.max_account_leverage) return;

  let gross = SCALED_ZERO;
  for (const [marketId, other] of marketBooks(view, sums)) {
    if (marketId === order.marketId) continue;
    gross = scaledPlus(
      gross,
      scaledTimes(worstCasePosition(other), referencePrice(view, marketId, other)),
    );
  }
  const after: MarketBook =
    order.side === 'buy'
      ? { ...book, addingBuys: scaledPlus(book.addingBuys, quantity) }
      : { ...book, addingSells: scaledPlus(book.addingSells, quantity) };
  gross = scaledPlus(gross, scaledTimes(worstCasePosition(after), mark));

  const maximumGross = config.max_gross_exposure;
  if (maximumGross && limitBelow(maximumGross, gross)) {
    const observed = scaledToWire(gross);
    denials.push(
      deny(
        RiskRule.maxGrossExposure,
        toWire(maximumGross),
        observed,
        `gross exposure could reach ${observed}, above the limit ${toWire(maximumGross)}`,
      ),
    );
  }
  const maximumLeverage = config.max_account_leverage;
  if (maximumLeverage) {
    const equity = view.equity ? scaledOfKept(view.equity) : null;
    if (!view.equity || !equity || scaledSign(equity) <= 0) {
      denials.push(
        deny(
          RiskRule.maxAccountLeverage,
          toWire(maximumLeverage),
          view.equity ? `equity ${toWire(view.equity)}` : 'equity unknown',
          'account leverage cannot be bounded without a positive equity',
        ),
      );
    } else if (scaledCompare(gross, scaledTimes(scaledOfKept(maximumLeverage), equity)) > 0) {
      const leverage = scaledToWire(scaledDivide(gross, equity, 6, 'up'));
      denials.push(
        deny(
          RiskRule.maxAccountLeverage,
          toWire(maximumLeverage),
          leverage,
          `account leverage could reach ${leverage}, above the limit ${toWire(maximumLeverage)}`,
        ),
      );
    }
  }
}

function checkLeverage(
  order: OrderShape,
  market: RiskMarketView,
  limits: MarketLimits,
  denials: Denial[],
): void {
  const leverage = order.leverage ?? 1;
  let cap = VENUE_MAXIMUM_LEVERAGE;
  if (market.maximumLeverage !== null) cap = Math.min(cap, market.maximumLeverage);
  if (limits.max_leverage !== null) cap = Math.min(cap, limits.max_leverage);
  if (!Number.isSafeInteger(leverage) || leverage < 1 || leverage > cap) {
    denials.push(
      deny(
        RiskRule.maxLeverage,
        String(cap),
        String(leverage),
        `leverage must be a whole number from 1 to ${cap} on ${order.marketId}, got ${leverage}`,
      ),
    );
  }
}

function checkOpenOrders(
  order: OrderShape,
  view: RiskView,
  config: RiskConfig,
  limits: MarketLimits,
  book: MarketBook,
  denials: Denial[],
): void {
  // An amend replaces its order, so the count it leaves behind is the count it found.
  const total = view.openOrders.length + (order.replaces ? 0 : 1);
  if (config.max_open_orders !== null && total > config.max_open_orders) {
    denials.push(
      deny(
        RiskRule.maxOpenOrders,
        String(config.max_open_orders),
        String(total),
        `${total} open orders would exceed the limit ${config.max_open_orders}`,
      ),
    );
  }
  const onMarket = book.openOrders + 1;
  const perMarket = limits.max_open_orders_per_market;
  if (perMarket !== null && onMarket > perMarket) {
    denials.push(
      deny(
        RiskRule.maxOpenOrdersPerMarket,
        String(perMarket),
        String(onMarket),
        `${onMarket} open orders on ${order.marketId} would exceed the limit ${perMarket}`,
      ),
    );
  }
}

function checkRates(view: RiskView, config: RiskConfig, denials: Denial[]): void {
  const times = view.recentOrderTimes;
  const perSecond = config.max_orders_per_second;
  if (perSecond !== null) {
    const count = countSince(times, view.now - SECOND_MS) + 1;
    if (count > perSecond) {
      denials.push(
        deny(
          RiskRule.maxOrdersPerSecond,
          String(perSecond),
          String(count),
          `${count} order commands within one second would exceed the limit ${perSecond}`,
        ),
      );
    }
  }
  const perMinute = config.max_orders_per_minute;
  if (perMinute !== null) {
    const count = countSince(times, view.now - MINUTE_MS) + 1;
    if (count > perMinute) {
      denials.push(
        deny(
          RiskRule.maxOrdersPerMinute,
          String(perMinute),
          String(count),
          `${count} order commands within one minute would exceed the limit ${perMinute}`,
        ),
      );
    }
  }
}

function checkPriceBand(
  order: OrderShape,
  price: Scaled,
  mark: Scaled,
  bandPercent: Scaled,
  denials: Denial[],
): void {
  const distance = scaledTimes(scaledAbs(scaledMinus(price, mark)), HUNDRED);
  if (scaledCompare(distance, scaledTimes(bandPercent, mark)) > 0) {
    const percent = scaledToWire(scaledDivide(distance, mark, 4, 'up'));
    const band = scaledToWire(bandPercent);
    denials.push(
      deny(
        RiskRule.priceBand,
        band,
        percent,
        `price ${scaledToWire(price)} is ${percent}% from the mark ${scaledToWire(mark)} on ${order.marketId}, beyond the band of ${band}%`,
      ),
    );
  }
}
