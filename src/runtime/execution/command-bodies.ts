/**
 * The order bodies the executor sends or simulates, built from an intent and the venue's view:
 * a placement's body, the simulation of an amendment's replacement, and the simulation (and
 * size) of a position's close. Pure functions of their arguments and the executor's defaults.
 */
import { type Decimal, parseDecimal, toWire, ZERO } from '../../core/decimal.ts';
import { roundQuantity } from '../../core/grid.ts';
import type { Order, OrderRequestInput, Position } from '../../protocol/index.ts';
import type { PlaceIntent } from '../intents.ts';
import type { IntentRecord } from '../journal/records.ts';
import type { ExecutorConfig } from './executor-config.ts';

/** The ids an intent's commands carry. */
type IntentIds = Pick<IntentRecord, 'requestId' | 'clientOrderId'>;

/**
 * A placement's body under `requestId` (the intent's, or its simulation's `<id>:s<n>`: the same
 * body built again costs less than a spread copy of it). Written out per type, not with
 * spreads: a spread of a literal costs a copy per field.
 */
export function placeBody(
  config: ExecutorConfig,
  requestId: string,
  clientOrderId: string,
  intent: PlaceIntent,
): OrderRequestInput {
  const leverage = intent.leverage ?? config.defaultLeverage;
  const timeInForce = intent.timeInForce ?? 'GTC';
  const postOnly = intent.postOnly ?? false;
  const reduceOnly = intent.reduceOnly ?? false;
  const marginMode = intent.marginMode ?? config.defaultMarginMode;
  if (intent.type === 'limit') {
    return {
      request_id: requestId,
      client_order_id: clientOrderId,
      market_id: intent.marketId,
      side: intent.side,
      type: intent.type,
      quantity: intent.quantity,
      leverage,
      price: intent.price ?? null,
      time_in_force: timeInForce,
      post_only: postOnly,
      reduce_only: reduceOnly,
      margin_mode: marginMode,
    };
  }
  // A market order (the intent's type is checked at the strategy boundary).
  return {
    request_id: requestId,
    client_order_id: clientOrderId,
    market_id: intent.marketId,
    side: intent.side,
    type: intent.type,
    quantity: intent.quantity,
    leverage,
    max_slippage_percent: intent.maxSlippagePercent ?? config.defaultMaxSlippagePercent,
    time_in_force: timeInForce,
    post_only: postOnly,
    reduce_only: reduceOnly,
    margin_mode: marginMode,
  };
}

/**
 * The simulation of an amendment's replacement: `order` resized to `remaining` (and repriced
 * to `price`), with the leverage, slippage and margin mode of the placement it came from.
 */
export function amendSimulationBody(
  config: ExecutorConfig,
  record: IntentIds,
  order: Order,
  remaining: Decimal,
  price: string | null,
  original: PlaceIntent | null,
): OrderRequestInput {
  return {
    request_id: record.requestId,
    client_order_id: record.clientOrderId ?? record.requestId,
    market_id: order.market_id,
    side: order.side === 'sell' ? 'sell' : 'buy',
    type: order.type === 'market' ? 'market' : 'limit',
    quantity: toWire(remaining),
    leverage: original?.leverage ?? config.defaultLeverage,
    ...(price === null ? {} : { price }),
    ...(order.type === 'market'
      ? {
          max_slippage_percent: original?.maxSlippagePercent ?? config.defaultMaxSlippagePercent,
        }
      : {}),
    time_in_force: order.time_in_force === 'IOC' ? 'IOC' : 'GTC',
    post_only: order.post_only,
    reduce_only: order.reduce_only,
    margin_mode: original?.marginMode ?? config.defaultMarginMode,
  };
}

/** The quantity a close of `percent` of the position takes, on the market's step; null if none. */
export function closeQuantity(
  config: ExecutorConfig,
  position: Position,
  percent: string,
): Decimal | null {
  let quantity = parseDecimal(position.quantity).abs().times(parseDecimal(percent)).div(100);
  const step = config.quantityStep(position.market_id);
  if (step !== null) quantity = roundQuantity(quantity, parseDecimal(step));
  return quantity.gt(ZERO) ? quantity : null;
}

/** The simulation of a close: a reduce-only market order against the position. */
export function closeSimulationBody(
  config: ExecutorConfig,
  record: IntentIds,
  position: Position,
  quantity: Decimal,
  maxSlippagePercent: string,
): OrderRequestInput {
  const leverage = Number.parseInt(position.leverage ?? '', 10);
  return {
    request_id: record.requestId,
    client_order_id: record.clientOrderId ?? record.requestId,
    market_id: position.market_id,
    side: position.side === 'short' ? 'buy' : 'sell',
    type: 'market',
    quantity: toWire(quantity),
    leverage:
      Number.isInteger(leverage) && leverage >= 1 && leverage <= 200
        ? leverage
        : config.defaultLeverage,
    reduce_only: true,
    margin_mode: position.margin_mode === 'cross' ? 'cross' : 'isolated',
    max_slippage_percent: maxSlippagePercent,
    ...(position.position_id.length >= 8 && position.position_id.length <= 200
      ? { position_id: position.position_id }
      : {}),
  };
}
