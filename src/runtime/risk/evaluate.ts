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
 *
 * This file assembles the decision; the rules live beside it: `rules.ts` (names and shared
 * readers), `rounding.ts` (the grid), `exposure.ts` (books and exposure), `order-checks.ts`
 * (every other check).
 */
import { toWire } from '../../core/decimal.ts';
import { type Scaled, scaledOfKept, scaledSign, scaledToWire } from '../../core/scaled.ts';
import type {
  AmendIntent,
  ClosePositionIntent,
  Denial,
  PlaceIntent,
  StampedIntent,
} from '../intents.ts';
import { limitsFor, type RiskConfig } from './config.ts';
import { checkExposure, classify, marketBook, orderSumsWithout } from './exposure.ts';
import {
  checkLeverage,
  checkMarketReadiness,
  checkOpenOrders,
  checkPriceBand,
  checkRates,
  checkReduceOnly,
  checkSize,
  checkSlippage,
  checkTradingState,
} from './order-checks.ts';
import { roundOrder } from './rounding.ts';
import {
  decimalOrNull,
  deny,
  type ExposureEffect,
  type GateDecision,
  haltedDenial,
  HUNDRED,
  type OrderShape,
  outsideRange,
  RiskRule,
} from './rules.ts';
import { lookup, type RiskView } from './view.ts';

export { type ExposureEffect, type GateDecision, RiskRule, type RiskRuleName } from './rules.ts';

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
