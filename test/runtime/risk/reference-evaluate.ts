/**
 * The reference for the risk rules' arithmetic: \`evaluateIntent\` as it was written on big.js,
 * before src/runtime/risk/evaluate.ts moved to scaled integers (src/core/scaled.ts). The
 * property tests hold the two to the same decisions, denials and rounded figures. Kept
 * verbatim but for the import paths; do not edit it to follow changes of the rules.
 */
import {
  Big,
  type Decimal,
  isDecimalString,
  parseDecimal,
  toWire,
  ZERO,
} from '../../../src/core/decimal.ts';
import { priceRoundingDirection } from '../../../src/core/grid.ts';
import { roundToIncrement } from '../../../src/runtime/decimal-division.ts';
import type {
  AmendIntent,
  ClosePositionIntent,
  Denial,
  PlaceIntent,
  Side,
  StampedIntent,
} from '../../../src/runtime/intents.ts';
import { limitsFor, type MarketLimits, type RiskConfig } from '../../../src/runtime/risk/config.ts';
import {
  lookup,
  type RiskMarketView,
  type RiskOpenOrderView,
  type RiskView,
} from '../../../src/runtime/risk/view.ts';

/** Every rule name a denial can carry. Most match the configuration key that sets the limit. */
const RiskRule = {
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
type RiskRuleName = (typeof RiskRule)[keyof typeof RiskRule];

type ExposureEffect = 'adds_exposure' | 'reduces_exposure' | 'no_exposure';

type GateDecision =
  | {
      readonly allowed: true;
      /** The intent as it should be sent: price on the tick, quantity on the step. */
      readonly intent: StampedIntent;
      readonly effect: ExposureEffect;
    }
  | { readonly allowed: false; readonly denials: readonly Denial[] };

/** The interface's own bounds (practice-trading-service.md, Limits). */
const VENUE_MAXIMUM_LEVERAGE = 200;
const MAXIMUM_SLIPPAGE_PERCENT = parseDecimal('2');
const HUNDRED = parseDecimal('100');
const SECOND_MS = 1000;
const MINUTE_MS = 60_000;

export function referenceEvaluateIntent(
  stamped: StampedIntent,
  view: RiskView,
  config: RiskConfig,
): GateDecision {
  const intent = stamped.intent;
  switch (intent.kind) {
    case 'cancel':
    case 'cancel_all':
      // Cancels remove exposure in every state and are never rate-limited here: a runaway
      // strategy must always be able to take its orders down.
      return { allowed: true, intent: stamped, effect: 'no_exposure' };
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

function deny(rule: RiskRuleName, limit: string, observed: string, message: string): Denial {
  return { rule, limit, observed, message };
}

function decimalOrNull(text: string | undefined): Decimal | null {
  return text !== undefined && isDecimalString(text) ? parseDecimal(text) : null;
}

function checkSlippage(text: string | undefined, denials: Denial[]): void {
  if (text === undefined) return;
  const value = decimalOrNull(text);
  if (!value || value.lte(ZERO) || value.gt(MAXIMUM_SLIPPAGE_PERCENT)) {
    denials.push(
      deny(
        RiskRule.maxSlippagePercent,
        toWire(MAXIMUM_SLIPPAGE_PERCENT),
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
  if (!position || position.quantity.eq(ZERO)) {
    denials.push(
      deny(RiskRule.noPosition, 'a position', '0', `no position to close on ${intent.marketId}`),
    );
  }
  if (intent.quantityPercent !== undefined) {
    const percent = decimalOrNull(intent.quantityPercent);
    if (!percent || percent.lte(ZERO) || percent.gt(HUNDRED)) {
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
  readonly price: Decimal | null;
  readonly quantity: Decimal;
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
  const quantity = toWire(rounded.quantity);
  const placed: PlaceIntent =
    rounded.price === null
      ? { ...intent, quantity }
      : { ...intent, quantity, price: toWire(rounded.price) };
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
    amended = { ...amended, price: toWire(rounded.price) };
  }
  if (intent.quantity !== undefined) amended = { ...amended, quantity: toWire(rounded.quantity) };
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
  position: Decimal;
  /** Remaining quantity of resting buys and sells that may add exposure (not reduce-only). */
  addingBuys: Decimal;
  addingSells: Decimal;
  /** Remaining quantity of every resting order on each side (reduce-only included). */
  allBuys: Decimal;
  allSells: Decimal;
  openOrders: number;
  highestOrderPrice: Decimal | null;
}

function emptyBook(position: Decimal): MarketBook {
  return {
    position,
    addingBuys: ZERO,
    addingSells: ZERO,
    allBuys: ZERO,
    allSells: ZERO,
    openOrders: 0,
    highestOrderPrice: null,
  };
}

function marketBooks(view: RiskView, replaces: RiskOpenOrderView | null): Map<string, MarketBook> {
  const books = new Map<string, MarketBook>();
  for (const marketId of Object.keys(view.positions)) {
    const position = view.positions[marketId];
    if (position) books.set(marketId, emptyBook(position.quantity));
  }
  for (const order of view.openOrders) {
    if (order === replaces) continue;
    let book = books.get(order.marketId);
    if (!book) {
      book = emptyBook(ZERO);
      books.set(order.marketId, book);
    }
    book.openOrders += 1;
    if (order.side === 'buy') {
      book.allBuys = book.allBuys.plus(order.remainingQuantity);
      if (!order.reduceOnly) book.addingBuys = book.addingBuys.plus(order.remainingQuantity);
    } else {
      book.allSells = book.allSells.plus(order.remainingQuantity);
      if (!order.reduceOnly) book.addingSells = book.addingSells.plus(order.remainingQuantity);
    }
    if (order.price && (!book.highestOrderPrice || order.price.gt(book.highestOrderPrice))) {
      book.highestOrderPrice = order.price;
    }
  }
  return books;
}

/** The largest absolute position the market can reach if every adding order fills. */
function worstCasePosition(book: MarketBook): Decimal {
  const long = book.position.plus(book.addingBuys).abs();
  const short = book.position.minus(book.addingSells).abs();
  return long.gt(short) ? long : short;
}

function referencePrice(view: RiskView, marketId: string, book: MarketBook): Decimal {
  const mark = lookup(view.markets, marketId)?.markPrice;
  if (mark) return mark;
  return lookup(view.positions, marketId)?.entryPrice ?? book.highestOrderPrice ?? ZERO;
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

  const books = marketBooks(view, order.replaces);
  const book = books.get(order.marketId) ?? emptyBook(ZERO);
  const effect = classify(order, book, quantity);
  checkTradingState(order, effect, view, config, denials);
  if (order.reduceOnly) checkReduceOnly(order, book, denials);

  const mark = market.markPrice;
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
      checkExposure(order, view, config, limits, books, book, quantity, mark, denials);
    }
  }
  if (order.replaces === null) checkLeverage(order, market, limits, denials);
  checkOpenOrders(order, view, config, limits, book, denials);
  checkRates(view, config, denials);
  if (price && mark && limits.price_band_percent) {
    checkPriceBand(order, price, mark, limits.price_band_percent, denials);
  }
  if (order.type === 'market') checkSlippage(order.maxSlippagePercent, denials);

  if (!quantity || (order.type === 'limit' && !price)) return null;
  return { quantity, price, effect };
}

function roundOrder(
  order: OrderShape,
  market: RiskMarketView,
  denials: Denial[],
): { quantity: Decimal | null; price: Decimal | null } {
  let quantity: Decimal | null = null;
  const requestedQuantity = decimalOrNull(order.quantityText);
  if (!requestedQuantity || requestedQuantity.lte(ZERO)) {
    denials.push(
      deny(
        RiskRule.invalidQuantity,
        'a positive decimal string',
        order.quantityText,
        `quantity must be a positive decimal string, got ${JSON.stringify(order.quantityText)}`,
      ),
    );
  } else if (!market.quantityStep) {
    denials.push(
      deny(
        RiskRule.quantityStep,
        'a quantity step',
        'none',
        `market ${order.marketId} publishes no quantity step to round to`,
      ),
    );
  } else {
    const rounded = roundToIncrement(requestedQuantity, market.quantityStep, 'down');
    if (rounded.lte(ZERO)) {
      denials.push(
        deny(
          RiskRule.quantityStep,
          toWire(market.quantityStep),
          toWire(requestedQuantity),
          `quantity ${toWire(requestedQuantity)} rounds down to 0 on the step ${toWire(market.quantityStep)}`,
        ),
      );
    } else {
      quantity = rounded;
    }
  }

  let price: Decimal | null = null;
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
    return { quantity, price };
  }
  if (order.priceText === undefined) {
    denials.push(deny(RiskRule.priceRequired, 'a price', 'none', 'a limit order needs a price'));
    return { quantity, price };
  }
  const requestedPrice = decimalOrNull(order.priceText);
  if (!requestedPrice || requestedPrice.lte(ZERO)) {
    denials.push(
      deny(
        RiskRule.invalidPrice,
        'a positive decimal string',
        order.priceText,
        `price must be a positive decimal string, got ${JSON.stringify(order.priceText)}`,
      ),
    );
  } else if (!market.priceTick) {
    denials.push(
      deny(
        RiskRule.priceTick,
        'a price tick',
        'none',
        `market ${order.marketId} publishes no price tick to round to`,
      ),
    );
  } else {
    const rounded = roundToIncrement(
      requestedPrice,
      market.priceTick,
      priceRoundingDirection(order.side),
    );
    if (rounded.lte(ZERO)) {
      denials.push(
        deny(
          RiskRule.priceTick,
          toWire(market.priceTick),
          toWire(requestedPrice),
          `buy price ${toWire(requestedPrice)} rounds down to 0 on the tick ${toWire(market.priceTick)}`,
        ),
      );
    } else {
      price = rounded;
    }
  }
  return { quantity, price };
}

function classify(order: OrderShape, book: MarketBook, quantity: Decimal | null): ExposureEffect {
  if (order.reduceOnly) return 'reduces_exposure';
  if (!quantity) return 'adds_exposure';
  // What is left of the position once every resting order on this side has filled.
  const left =
    order.side === 'buy'
      ? book.position.neg().minus(book.allBuys)
      : book.position.minus(book.allSells);
  return left.gt(ZERO) && quantity.lte(left) ? 'reduces_exposure' : 'adds_exposure';
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
  const reducible = order.side === 'buy' ? book.position.lt(ZERO) : book.position.gt(ZERO);
  if (!reducible) {
    denials.push(
      deny(
        RiskRule.reduceOnly,
        order.side === 'buy' ? 'a short position' : 'a long position',
        toWire(book.position),
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

function checkSize(
  order: OrderShape,
  market: RiskMarketView,
  limits: MarketLimits,
  quantity: Decimal,
  valuedAt: Decimal | null,
  denials: Denial[],
): void {
  if (market.minimumQuantity && quantity.lt(market.minimumQuantity)) {
    denials.push(
      deny(
        RiskRule.minimumQuantity,
        toWire(market.minimumQuantity),
        toWire(quantity),
        `quantity ${toWire(quantity)} is below the market minimum ${toWire(market.minimumQuantity)}`,
      ),
    );
  }
  if (limits.max_order_quantity && quantity.gt(limits.max_order_quantity)) {
    denials.push(
      deny(
        RiskRule.maxOrderQuantity,
        toWire(limits.max_order_quantity),
        toWire(quantity),
        `quantity ${toWire(quantity)} exceeds the limit ${toWire(limits.max_order_quantity)} on ${order.marketId}`,
      ),
    );
  }
  if (!valuedAt) return;
  const notional = quantity.times(valuedAt);
  if (market.minimumNotional && notional.lt(market.minimumNotional)) {
    denials.push(
      deny(
        RiskRule.minimumNotional,
        toWire(market.minimumNotional),
        toWire(notional),
        `notional ${toWire(notional)} is below the market minimum ${toWire(market.minimumNotional)}`,
      ),
    );
  }
  if (limits.max_order_notional && notional.gt(limits.max_order_notional)) {
    denials.push(
      deny(
        RiskRule.maxOrderNotional,
        toWire(limits.max_order_notional),
        toWire(notional),
        `order notional ${toWire(notional)} exceeds the limit ${toWire(limits.max_order_notional)} on ${order.marketId}`,
      ),
    );
  }
}

function checkExposure(
  order: OrderShape,
  view: RiskView,
  config: RiskConfig,
  limits: MarketLimits,
  books: ReadonlyMap<string, MarketBook>,
  book: MarketBook,
  quantity: Decimal,
  mark: Decimal,
  denials: Denial[],
): void {
  // The position this market reaches, in the order's direction, if this order and every resting
  // order that adds on the same side fill.
  const reached =
    order.side === 'buy'
      ? book.position.plus(book.addingBuys).plus(quantity)
      : book.position.minus(book.addingSells).minus(quantity);
  const extendsPosition = order.side === 'buy' ? reached.gt(ZERO) : reached.lt(ZERO);
  const reachedSize = reached.abs();
  if (extendsPosition && limits.max_position_quantity?.lt(reachedSize)) {
    denials.push(
      deny(
        RiskRule.maxPositionQuantity,
        toWire(limits.max_position_quantity),
        toWire(reachedSize),
        `position on ${order.marketId} could reach ${toWire(reachedSize)}, above the limit ${toWire(limits.max_position_quantity)}`,
      ),
    );
  }
  const reachedNotional = reachedSize.times(mark);
  if (extendsPosition && limits.max_position_notional?.lt(reachedNotional)) {
    denials.push(
      deny(
        RiskRule.maxPositionNotional,
        toWire(limits.max_position_notional),
        toWire(reachedNotional),
        `position notional on ${order.marketId} could reach ${toWire(reachedNotional)}, above the limit ${toWire(limits.max_position_notional)}`,
      ),
    );
  }
  if (!config.max_gross_exposure && !config.max_account_leverage) return;

  let gross = ZERO;
  for (const [marketId, other] of books) {
    if (marketId === order.marketId) continue;
    gross = gross.plus(worstCasePosition(other).times(referencePrice(view, marketId, other)));
  }
  const after: MarketBook =
    order.side === 'buy'
      ? { ...book, addingBuys: book.addingBuys.plus(quantity) }
      : { ...book, addingSells: book.addingSells.plus(quantity) };
  gross = gross.plus(worstCasePosition(after).times(mark));

  if (config.max_gross_exposure?.lt(gross)) {
    denials.push(
      deny(
        RiskRule.maxGrossExposure,
        toWire(config.max_gross_exposure),
        toWire(gross),
        `gross exposure could reach ${toWire(gross)}, above the limit ${toWire(config.max_gross_exposure)}`,
      ),
    );
  }
  const maximumLeverage = config.max_account_leverage;
  if (maximumLeverage) {
    if (!view.equity || view.equity.lte(ZERO)) {
      denials.push(
        deny(
          RiskRule.maxAccountLeverage,
          toWire(maximumLeverage),
          view.equity ? `equity ${toWire(view.equity)}` : 'equity unknown',
          'account leverage cannot be bounded without a positive equity',
        ),
      );
    } else {
      const leverage = gross.div(view.equity).round(6, Big.roundUp);
      if (gross.gt(maximumLeverage.times(view.equity))) {
        denials.push(
          deny(
            RiskRule.maxAccountLeverage,
            toWire(maximumLeverage),
            toWire(leverage),
            `account leverage could reach ${toWire(leverage)}, above the limit ${toWire(maximumLeverage)}`,
          ),
        );
      }
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
  price: Decimal,
  mark: Decimal,
  bandPercent: Decimal,
  denials: Denial[],
): void {
  const distance = price.minus(mark).abs();
  if (distance.times(HUNDRED).gt(bandPercent.times(mark))) {
    const percent = distance.times(HUNDRED).div(mark).round(4, Big.roundUp);
    denials.push(
      deny(
        RiskRule.priceBand,
        toWire(bandPercent),
        toWire(percent),
        `price ${toWire(price)} is ${toWire(percent)}% from the mark ${toWire(mark)} on ${order.marketId}, beyond the band of ${toWire(bandPercent)}%`,
      ),
    );
  }
}
