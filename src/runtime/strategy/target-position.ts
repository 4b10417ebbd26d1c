/**
 * `targetPosition`: the orders that move a market's exposure to a target.
 *
 * Exposure is the position plus the strategy's pending orders (their unfilled remainder, buys
 * positive, sells negative; orders it already asked to cancel do not count), so calling it
 * again before the first orders fill does not order twice. Quantities go on the step grid
 * (rounded down) and a part too small for the market's minimums is left out, so the result may
 * be empty. Crossing zero gives two orders, a reduce-only one that closes and one that opens,
 * when the position can take a reduce-only order; otherwise one order.
 */
import { type Decimal, decimal, ZERO } from '../../core/decimal.ts';
import type { MarginMode, PlaceIntent, Side, TimeInForce } from '../intents.ts';
import { limitOrder, marketOrder } from './builders.ts';
import { meetsMinimums, priceOnTick, quantityOnStep } from './market-info.ts';
import type { StrategyContext } from './types.ts';

export const TARGET_POSITION_TAG = 'target-position';

export interface TargetPositionOptions {
  /** Default `market`. */
  readonly type?: PlaceIntent['type'];
  /** Required for limit orders; put on the tick grid in the order's favour. */
  readonly price?: Decimal | string;
  readonly timeInForce?: TimeInForce;
  readonly postOnly?: boolean;
  readonly maxSlippagePercent?: Decimal | string;
  readonly leverage?: number;
  readonly marginMode?: MarginMode;
  /** Tag of the orders made; default `target-position`. */
  readonly tag?: string;
  /** Which open orders count as pending: all of the strategy's (default) or only tagged ones. */
  readonly pending?: 'all' | 'tagged';
  /** Price for the minimum-notional check; default the limit price, else the last mark. */
  readonly referencePrice?: Decimal | string;
}

export type TargetPositionContext = Pick<
  StrategyContext<unknown>,
  'market' | 'position' | 'openOrders' | 'lastTicker'
>;

function signed(side: Side, quantity: Decimal): Decimal {
  return side === 'buy' ? quantity : quantity.neg();
}

export function targetPosition(
  context: TargetPositionContext,
  marketId: string,
  target: Decimal | string,
  options: TargetPositionOptions = {},
): readonly PlaceIntent[] {
  const market = context.market(marketId);
  const tag = options.tag ?? TARGET_POSITION_TAG;
  const type = options.type ?? 'market';
  if (type === 'limit' && options.price === undefined) {
    throw new RangeError('targetPosition: a limit order needs options.price');
  }
  const wanted = decimal(target);
  const actual = context.position(marketId).quantity;

  let pending = ZERO;
  let pendingReduceBuys = ZERO;
  let pendingReduceSells = ZERO;
  for (const order of context.openOrders(marketId)) {
    if (order.cancelRequested) continue;
    if (options.pending === 'tagged' && order.tag !== tag) continue;
    pending = pending.plus(signed(order.side, order.remainingQuantity));
    if (order.reduceOnly) {
      if (order.side === 'buy') pendingReduceBuys = pendingReduceBuys.plus(order.remainingQuantity);
      else pendingReduceSells = pendingReduceSells.plus(order.remainingQuantity);
    }
  }
  const exposure = actual.plus(pending);
  const delta = wanted.minus(exposure);
  if (delta.eq(ZERO)) return [];
  const side: Side = delta.gt(ZERO) ? 'buy' : 'sell';

  const ticker = context.lastTicker(marketId);
  const tickerPrice = ticker?.mark_price ?? ticker?.last_price ?? null;
  const referenceText = options.price ?? options.referencePrice ?? tickerPrice;
  const reference = referenceText === null ? null : decimal(referenceText);

  // Reduce-only is only valid against the actual position, less what is already set to reduce it.
  const canReduceOnly = (quantity: Decimal): boolean =>
    side === 'sell'
      ? actual.gt(ZERO) && quantity.lte(actual.minus(pendingReduceSells))
      : actual.lt(ZERO) && quantity.lte(actual.abs().minus(pendingReduceBuys));

  const order = (quantity: Decimal, reduceOnly: boolean): PlaceIntent | null => {
    const onStep = quantityOnStep(market, quantity);
    if (onStep.lte(ZERO)) return null;
    if (!reduceOnly && !meetsMinimums(market, onStep, reference)) return null;
    const common = {
      marketId,
      side,
      quantity: onStep,
      reduceOnly: reduceOnly || undefined,
      leverage: options.leverage,
      marginMode: options.marginMode,
      tag,
    };
    if (type === 'limit') {
      return limitOrder({
        ...common,
        price: priceOnTick(market, decimal(options.price ?? '0'), side),
        timeInForce: options.timeInForce,
        postOnly: options.postOnly,
      });
    }
    return marketOrder({ ...common, maxSlippagePercent: options.maxSlippagePercent });
  };

  const crossesZero =
    (exposure.gt(ZERO) && wanted.lt(ZERO)) || (exposure.lt(ZERO) && wanted.gt(ZERO));
  const reducing = wanted.abs().lt(exposure.abs()) && !crossesZero;
  const parts: (PlaceIntent | null)[] = [];
  if (crossesZero && canReduceOnly(exposure.abs())) {
    parts.push(order(exposure.abs(), true), order(wanted.abs(), false));
  } else if (reducing) {
    parts.push(order(delta.abs(), canReduceOnly(delta.abs())));
  } else {
    parts.push(order(delta.abs(), false));
  }
  return parts.filter((part): part is PlaceIntent => part !== null);
}
