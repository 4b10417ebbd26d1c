/**
 * Small constructors for intents. They take decimals or decimal strings and write wire text,
 * so a strategy that computes with `Decimal` never formats a number by hand, and they leave
 * out the options that were not given.
 */
import { type Decimal, decimal, toWire } from '../../core/decimal.ts';
import { parseScaledStrict, scaledToWire } from '../../core/scaled.ts';
import type {
  BracketIntent,
  BracketLeg,
  CancelAllIntent,
  CancelIntent,
  ClosePositionIntent,
  ExitIntent,
  ExitTrigger,
  MarginMode,
  PlaceIntent,
  Side,
  TimeInForce,
  TriggerSource,
} from '../intents.ts';

type Amount = Decimal | string;

function text(value: Amount): string {
  // Text is normalised without building a big.js value (the same wire form, the same error).
  return typeof value === 'string'
    ? scaledToWire(parseScaledStrict(value))
    : toWire(decimal(value));
}

function compact<T extends object>(value: T): T {
  const result: Record<string, unknown> = {};
  const fields = value as Record<string, unknown>;
  // for-in rather than Object.entries: no array of pairs per intent. Literals inherit no keys.
  for (const key in fields) {
    const field = fields[key];
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
  // Built field by field, in `compact`'s key order: a quoting strategy makes one per requote.
  const intent: { -readonly [K in keyof PlaceIntent]: PlaceIntent[K] } = {
    kind: 'place',
    marketId: options.marketId,
    side: options.side,
    type: 'limit',
    quantity: text(options.quantity),
    price: text(options.price),
  };
  if (options.timeInForce !== undefined) intent.timeInForce = options.timeInForce;
  if (options.postOnly !== undefined) intent.postOnly = options.postOnly;
  if (options.reduceOnly !== undefined) intent.reduceOnly = options.reduceOnly;
  if (options.leverage !== undefined) intent.leverage = options.leverage;
  if (options.marginMode !== undefined) intent.marginMode = options.marginMode;
  if (options.tag !== undefined) intent.tag = options.tag;
  return intent;
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
  return tag === undefined
    ? { kind: 'cancel', clientOrderId }
    : { kind: 'cancel', clientOrderId, tag };
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

// Emulated exits: held by the runtime, released as ordinary orders when their trigger fires.

interface ExitOptions {
  readonly marketId: string;
  /** The side of the order released: `sell` protects a long, `buy` a short. */
  readonly side: Side;
  readonly quantity: Amount;
  /** Default `mark`. */
  readonly triggerSource?: TriggerSource;
  /** Default true: an exit protects a position. */
  readonly reduceOnly?: boolean;
  readonly tag?: string;
}

export interface StopMarketOptions extends ExitOptions {
  readonly triggerPrice: Amount;
  readonly maxSlippagePercent?: Amount;
}

export interface StopLimitOptions extends ExitOptions {
  readonly triggerPrice: Amount;
  readonly limitPrice: Amount;
}

export interface TakeProfitOptions extends ExitOptions {
  readonly triggerPrice: Amount;
  /** A limit take-profit with it, a market one without. */
  readonly limitPrice?: Amount;
  readonly maxSlippagePercent?: Amount;
}

export interface TrailingStopOptions extends ExitOptions {
  /** A price distance from the best price seen; give this or `offsetPercent`. */
  readonly offset?: Amount;
  /** Percent of the best price seen. */
  readonly offsetPercent?: Amount;
  /** Starts following once the price reaches this in the position's favour. */
  readonly activationPrice?: Amount;
  readonly limitPrice?: Amount;
  readonly maxSlippagePercent?: Amount;
}

function optionalText(value: Amount | undefined): string | undefined {
  return value === undefined ? undefined : text(value);
}

function exitIntent(
  options: ExitOptions & { readonly limitPrice?: Amount; readonly maxSlippagePercent?: Amount },
  trigger: ExitTrigger,
): ExitIntent {
  return compact<ExitIntent>({
    kind: 'exit',
    marketId: options.marketId,
    side: options.side,
    quantity: text(options.quantity),
    trigger: compact(trigger),
    triggerSource: options.triggerSource,
    limitPrice: optionalText(options.limitPrice),
    maxSlippagePercent: optionalText(options.maxSlippagePercent),
    reduceOnly: options.reduceOnly,
    tag: options.tag,
  });
}

/** A stop that releases a market order when the price reaches `triggerPrice` against you. */
export function stopMarket(options: StopMarketOptions): ExitIntent {
  return exitIntent(options, { kind: 'stop', price: text(options.triggerPrice) });
}

/** A stop that releases a limit order at `limitPrice` when the price reaches `triggerPrice`. */
export function stopLimit(options: StopLimitOptions): ExitIntent {
  return exitIntent(options, { kind: 'stop', price: text(options.triggerPrice) });
}

/** Releases an order when the price reaches `triggerPrice` in your favour. */
export function takeProfit(options: TakeProfitOptions): ExitIntent {
  return exitIntent(options, { kind: 'take_profit', price: text(options.triggerPrice) });
}

/** A stop that follows the best price by `offset` or `offsetPercent` and never moves back. */
export function trailingStop(options: TrailingStopOptions): ExitIntent {
  return exitIntent(options, {
    kind: 'trailing',
    offset: optionalText(options.offset),
    offsetPercent: optionalText(options.offsetPercent),
    activationPrice: optionalText(options.activationPrice),
  });
}

export interface BracketLegOptions {
  readonly triggerPrice: Amount;
  readonly limitPrice?: Amount;
}

export interface BracketOptions {
  /** The entry: a `limitOrder(...)` or `marketOrder(...)` intent. */
  readonly entry: PlaceIntent;
  readonly stopLoss?: BracketLegOptions;
  readonly takeProfit?: BracketLegOptions;
  readonly triggerSource?: TriggerSource;
  readonly tag?: string;
}

function leg(options: BracketLegOptions | undefined): BracketLeg | undefined {
  if (options === undefined) return undefined;
  return compact<BracketLeg>({
    triggerPrice: text(options.triggerPrice),
    limitPrice: optionalText(options.limitPrice),
  });
}

/**
 * An entry with an attached stop-loss and take-profit, one-cancels-other: the exits watch from
 * the entry's fill, for what it filled, and the first to fire cancels the other.
 */
export function bracket(options: BracketOptions): BracketIntent {
  return compact<BracketIntent>({
    kind: 'bracket',
    entry: options.entry,
    stopLoss: leg(options.stopLoss),
    takeProfit: leg(options.takeProfit),
    triggerSource: options.triggerSource,
    tag: options.tag,
  });
}
