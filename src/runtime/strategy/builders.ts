/**
 * Small constructors for intents. They take decimals or decimal strings and write wire text,
 * so a strategy that computes with `Decimal` never formats a number by hand, and they leave
 * out the options that were not given.
 */
import { type Decimal, decimal, toWire } from '../../core/decimal.ts';
import type {
  CancelAllIntent,
  CancelIntent,
  ClosePositionIntent,
  MarginMode,
  PlaceIntent,
  Side,
  TimeInForce,
} from '../intents.ts';

type Amount = Decimal | string;

function text(value: Amount): string {
  return toWire(decimal(value));
}

function compact<T extends object>(value: T): T {
  const result: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (field !== undefined) result[key] = field;
  }
  return result as T;
}

interface OrderOptions {
  readonly marketId: string;
  readonly side: Side;
  readonly quantity: Amount;
  readonly reduceOnly?: boolean;
  readonly leverage?: number;
  readonly marginMode?: MarginMode;
  readonly tag?: string;
}

export interface LimitOrderOptions extends OrderOptions {
  readonly price: Amount;
  readonly timeInForce?: TimeInForce;
  readonly postOnly?: boolean;
}

export interface MarketOrderOptions extends OrderOptions {
  readonly maxSlippagePercent?: Amount;
}

export function limitOrder(options: LimitOrderOptions): PlaceIntent {
  return compact<PlaceIntent>({
    kind: 'place',
    marketId: options.marketId,
    side: options.side,
    type: 'limit',
    quantity: text(options.quantity),
    price: text(options.price),
    timeInForce: options.timeInForce,
    postOnly: options.postOnly,
    reduceOnly: options.reduceOnly,
    leverage: options.leverage,
    marginMode: options.marginMode,
    tag: options.tag,
  });
}

export function marketOrder(options: MarketOrderOptions): PlaceIntent {
  return compact<PlaceIntent>({
    kind: 'place',
    marketId: options.marketId,
    side: options.side,
    type: 'market',
    quantity: text(options.quantity),
    reduceOnly: options.reduceOnly,
    leverage: options.leverage,
    marginMode: options.marginMode,
    maxSlippagePercent:
      options.maxSlippagePercent === undefined ? undefined : text(options.maxSlippagePercent),
    tag: options.tag,
  });
}

export function cancelOrder(clientOrderId: string, tag?: string): CancelIntent {
  return compact<CancelIntent>({ kind: 'cancel', clientOrderId, tag });
}

/** Cancels the account's active orders on `marketId`, or on every market when omitted. */
export function cancelAllOrders(marketId?: string, tag?: string): CancelAllIntent {
  return compact<CancelAllIntent>({ kind: 'cancel_all', marketId, tag });
}

export interface ClosePositionOptions {
  /** Percentage of the position to close, in (0, 100]; default 100. */
  readonly quantityPercent?: Amount;
  readonly maxSlippagePercent?: Amount;
  readonly tag?: string;
}

export function closePosition(
  marketId: string,
  options: ClosePositionOptions = {},
): ClosePositionIntent {
  return compact<ClosePositionIntent>({
    kind: 'close_position',
    marketId,
    quantityPercent:
      options.quantityPercent === undefined ? undefined : text(options.quantityPercent),
    maxSlippagePercent:
      options.maxSlippagePercent === undefined ? undefined : text(options.maxSlippagePercent),
    tag: options.tag,
  });
}
