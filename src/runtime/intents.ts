/**
 * Order intents: what a strategy asks for. A strategy never calls the venue; it emits intents,
 * every intent passes the risk gate, then the executor turns it into venue commands.
 *
 * Each intent is a zod schema and a type of the same name inferred from it (design rule 2): the
 * schema is the shape check the strategy host runs on every emitted value
 * (`strategy/intent-check.ts`), the type is what the gate and the executor read. A strategy is
 * code the runtime does not trust, so the schemas are strict; limits that depend on the market or
 * the account are the risk gate's business, not theirs.
 *
 * Decimal fields are decimal strings (interface rule 1), so nothing a strategy computes reaches
 * the wire through binary floating point. Intents are immutable once emitted (design rule 9): the
 * types are the schemas' output made readonly all the way down.
 */
import { z } from 'zod';
import { isDecimalString, parseDecimal } from '../core/decimal.ts';
import { MarginMode, OrderSide } from '../protocol/index.ts';

/** A schema's output as an immutable message: every field readonly, nested ones too. */
export type Immutable<T> = T extends object ? { readonly [K in keyof T]: Immutable<T[K]> } : T;

function decimalBetween(minimumExclusive: string, maximumInclusive: string | null) {
  return z.string().refine(
    (text) => {
      if (!isDecimalString(text)) return false;
      const value = parseDecimal(text);
      return (
        value.gt(minimumExclusive) && (maximumInclusive === null || value.lte(maximumInclusive))
      );
    },
    {
      message:
        maximumInclusive === null
          ? `must be a decimal string greater than ${minimumExclusive}`
          : `must be a decimal string in (${minimumExclusive}, ${maximumInclusive}]`,
    },
  );
}

const positive = decimalBetween('0', null);
const slippagePercent = decimalBetween('0', '2');
const quantityPercent = decimalBetween('0', '100');
const identifier = z.string().min(1).max(100);
const marketId = z.string().min(1).max(40);
const tag = z.string().max(100).optional();

/** An order's side: the interface's own. */
export const Side = OrderSide;
export type Side = OrderSide;
export { MarginMode };
/** The time in force an intent may ask for: GTC or IOC (not the interface's FOK). */
export const TimeInForce = z.enum(['GTC', 'IOC']);
export type TimeInForce = z.output<typeof TimeInForce>;

/*
 * The fields of each intent stand apart from their schema, with their doc comments, and each
 * schema is declared as the object of those fields: the emitted .d.ts then names the fields once
 * and keeps their comments, so an editor shows them on the inferred types too.
 */

const placeIntentFields = {
  kind: z.literal('place'),
  marketId,
  side: Side,
  type: z.enum(['market', 'limit']),
  /** Decimal string; rounded down to the market's quantity step by the gate. */
  quantity: positive,
  /** Decimal string, required for limit orders; rounded to the tick in the owner's favour. */
  price: positive.optional(),
  timeInForce: TimeInForce.optional(),
  postOnly: z.boolean().optional(),
  reduceOnly: z.boolean().optional(),
  /** Integer leverage; defaults to the strategy's configured leverage, else 1. */
  leverage: z.int().min(1).max(200).optional(),
  marginMode: MarginMode.optional(),
  /** Decimal string in (0, 2]; market orders only. Defaults to the runtime's configuration. */
  maxSlippagePercent: slippagePercent.optional(),
  /** A free label the strategy uses to recognise its own orders (kept locally, not sent). */
  tag,
};

/** Places an order: market, or limit at `price`. */
export const PlaceIntent: z.ZodObject<typeof placeIntentFields, z.core.$strict> = z
  .strictObject(placeIntentFields)
  .superRefine((intent, context) => {
    if (intent.type === 'limit' && intent.price === undefined) {
      context.addIssue({ code: 'custom', path: ['price'], message: 'a limit order needs a price' });
    }
    if (intent.type === 'market' && intent.price !== undefined) {
      context.addIssue({ code: 'custom', path: ['price'], message: 'a market order has no price' });
    }
    if (intent.type === 'limit' && intent.maxSlippagePercent !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['maxSlippagePercent'],
        message: 'slippage bounds market orders only',
      });
    }
    if (intent.postOnly === true && (intent.type !== 'limit' || intent.timeInForce === 'IOC')) {
      context.addIssue({
        code: 'custom',
        path: ['postOnly'],
        message: 'post only needs a GTC limit order',
      });
    }
  });
export type PlaceIntent = Immutable<z.output<typeof PlaceIntent>>;

const cancelIntentFields = {
  kind: z.literal('cancel'),
  clientOrderId: identifier,
  tag,
};

/** Cancels one of the strategy's orders, named by the client order id the runtime gave it. */
export const CancelIntent: z.ZodObject<typeof cancelIntentFields, z.core.$strict> =
  z.strictObject(cancelIntentFields);
export type CancelIntent = Immutable<z.output<typeof CancelIntent>>;

const cancelAllIntentFields = {
  kind: z.literal('cancel_all'),
  /** The market whose orders to cancel; every market when absent. */
  marketId: marketId.optional(),
  tag,
};

/** Cancels the account's active orders, on one market or all of them. */
export const CancelAllIntent: z.ZodObject<typeof cancelAllIntentFields, z.core.$strict> =
  z.strictObject(cancelAllIntentFields);
export type CancelAllIntent = Immutable<z.output<typeof CancelAllIntent>>;

const amendIntentFields = {
  kind: z.literal('amend'),
  clientOrderId: identifier,
  price: positive.optional(),
  /**
   * The order's new TOTAL size, filled part included: the replacement is placed for this total
   * minus what the old order had filled by the time it was cancelled (nothing, if that leaves
   * zero or less).
   */
  quantity: positive.optional(),
  tag,
};

/** Replaces one of the strategy's orders (Practice: cancel, confirm, new order). */
export const AmendIntent: z.ZodObject<typeof amendIntentFields, z.core.$strict> = z
  .strictObject(amendIntentFields)
  .refine((intent) => intent.price !== undefined || intent.quantity !== undefined, {
    message: 'an amendment changes the price, the quantity or both',
  });
export type AmendIntent = Immutable<z.output<typeof AmendIntent>>;

const closePositionIntentFields = {
  kind: z.literal('close_position'),
  marketId,
  /** Decimal string in (0, 100]; default 100. */
  quantityPercent: quantityPercent.optional(),
  maxSlippagePercent: slippagePercent.optional(),
  tag,
};

/** Closes a percentage of the position on a market (the runtime finds the position id). */
export const ClosePositionIntent: z.ZodObject<typeof closePositionIntentFields, z.core.$strict> =
  z.strictObject(closePositionIntentFields);
export type ClosePositionIntent = Immutable<z.output<typeof ClosePositionIntent>>;

/**
 * The price an emulated exit watches: the ticker's mark, the last public trade, or the book's
 * touch on the side the released order trades against (best bid for a sell, best ask for a buy).
 */
export const TriggerSource = z.enum(['mark', 'last', 'bid_ask']);
export type TriggerSource = z.output<typeof TriggerSource>;

const stopTriggerFields = { kind: z.literal('stop'), price: positive };
const takeProfitTriggerFields = { kind: z.literal('take_profit'), price: positive };
const trailingTriggerFields = {
  kind: z.literal('trailing'),
  /** A price distance; exactly one of `offset` and `offsetPercent`. */
  offset: positive.optional(),
  /** Percent of the best price seen, in (0, 100). */
  offsetPercent: decimalBetween('0', '100')
    .refine((text) => !parseDecimal(text).eq(100), { message: 'must be below 100' })
    .optional(),
  activationPrice: positive.optional(),
};

/** What fires an emulated exit (see `runtime/exits/trigger.ts`). */
export const ExitTrigger: z.ZodDiscriminatedUnion<
  [
    z.ZodObject<typeof stopTriggerFields, z.core.$strict>,
    z.ZodObject<typeof takeProfitTriggerFields, z.core.$strict>,
    z.ZodObject<typeof trailingTriggerFields, z.core.$strict>,
  ]
> = z.discriminatedUnion('kind', [
  z.strictObject(stopTriggerFields),
  z.strictObject(takeProfitTriggerFields),
  z
    .strictObject(trailingTriggerFields)
    .refine((trigger) => (trigger.offset === undefined) !== (trigger.offsetPercent === undefined), {
      message: 'a trailing stop takes exactly one of offset and offsetPercent',
    }),
]);
export type ExitTrigger = Immutable<z.output<typeof ExitTrigger>>;

const exitIntentFields = {
  kind: z.literal('exit'),
  marketId,
  side: Side,
  quantity: positive,
  trigger: ExitTrigger,
  /** Default `mark`. */
  triggerSource: TriggerSource.optional(),
  /** Released as a limit order at this price; a market order without it. */
  limitPrice: positive.optional(),
  maxSlippagePercent: slippagePercent.optional(),
  /** Default true. */
  reduceOnly: z.boolean().optional(),
  tag,
};

/**
 * A stop, take-profit or trailing order the venue does not offer: the runtime holds it, watches
 * its trigger on every tick, and when it fires places an ordinary order (market, or limit at
 * `limitPrice`) through the risk gate and the executor. Reduce-only unless said otherwise: an
 * exit protects a position. Nothing protects the position while the bot is down.
 */
export const ExitIntent: z.ZodObject<typeof exitIntentFields, z.core.$strict> = z
  .strictObject(exitIntentFields)
  .refine((intent) => intent.limitPrice === undefined || intent.maxSlippagePercent === undefined, {
    path: ['maxSlippagePercent'],
    message: 'slippage bounds market exits only',
  });
export type ExitIntent = Immutable<z.output<typeof ExitIntent>>;

const bracketLegFields = {
  triggerPrice: positive,
  limitPrice: positive.optional(),
};

/** A bracket's stop-loss or take-profit: its trigger price, and a limit price for a limit exit. */
export const BracketLeg: z.ZodObject<typeof bracketLegFields, z.core.$strict> =
  z.strictObject(bracketLegFields);
export type BracketLeg = Immutable<z.output<typeof BracketLeg>>;

const bracketIntentFields = {
  kind: z.literal('bracket'),
  entry: PlaceIntent,
  stopLoss: BracketLeg.optional(),
  takeProfit: BracketLeg.optional(),
  /** Default `mark`. */
  triggerSource: TriggerSource.optional(),
  tag,
};

/**
 * An entry order with an attached stop-loss and take-profit, one-cancels-other. The entry is
 * placed at once; the exits start watching when it fills, for the quantity it filled, on the
 * opposite side, reduce-only. The first exit to fire cancels the other.
 */
export const BracketIntent: z.ZodObject<typeof bracketIntentFields, z.core.$strict> = z
  .strictObject(bracketIntentFields)
  .superRefine((intent, context) => {
    if (intent.stopLoss === undefined && intent.takeProfit === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['stopLoss'],
        message: 'a bracket needs a stop-loss, a take-profit or both',
      });
    }
    if (intent.entry.reduceOnly === true) {
      context.addIssue({
        code: 'custom',
        path: ['entry', 'reduceOnly'],
        message: 'a bracket entry opens a position; it cannot be reduce-only',
      });
    }
    // A long's stop sits below its take-profit; a short's above.
    if (intent.stopLoss !== undefined && intent.takeProfit !== undefined) {
      const stop = parseDecimal(intent.stopLoss.triggerPrice);
      const profit = parseDecimal(intent.takeProfit.triggerPrice);
      const ordered = intent.entry.side === 'buy' ? stop.lt(profit) : stop.gt(profit);
      if (!ordered) {
        context.addIssue({
          code: 'custom',
          path: ['stopLoss', 'triggerPrice'],
          message: `a ${intent.entry.side === 'buy' ? 'long' : 'short'}'s stop-loss must be ${
            intent.entry.side === 'buy' ? 'below' : 'above'
          } its take-profit`,
        });
      }
    }
  });
export type BracketIntent = Immutable<z.output<typeof BracketIntent>>;

/** Intents the runtime holds itself (emulated exits), never sent to the venue as they are. */
export type EmulatedIntent = ExitIntent | BracketIntent;

/** Every intent a strategy may emit, told apart by `kind`. */
export const OrderIntent: z.ZodDiscriminatedUnion<
  [
    typeof PlaceIntent,
    typeof CancelIntent,
    typeof CancelAllIntent,
    typeof AmendIntent,
    typeof ClosePositionIntent,
    typeof ExitIntent,
    typeof BracketIntent,
  ]
> = z.discriminatedUnion('kind', [
  PlaceIntent,
  CancelIntent,
  CancelAllIntent,
  AmendIntent,
  ClosePositionIntent,
  ExitIntent,
  BracketIntent,
]);
export type OrderIntent =
  PlaceIntent | CancelIntent | CancelAllIntent | AmendIntent | ClosePositionIntent | EmulatedIntent;

/**
 * An intent as the runtime tracks it: stamped with the emitting strategy, its sequence and the
 * ids derived from them. The ids are deterministic, so a restart or a replay gives the same ids
 * to the same intents, and a resend after a timeout never gets a second id.
 */
export interface StampedIntent {
  readonly strategyId: string;
  readonly sequence: number;
  readonly requestId: string;
  /** The client order id of the order this intent creates (place, amend, close); else null. */
  readonly clientOrderId: string | null;
  readonly intent: OrderIntent;
  /** Epoch milliseconds on the runtime's clock when the intent was emitted. */
  readonly emittedAt: number;
}

/** The stamped intent and its intent frozen (as they are, when they already are). */
export function freezeStamped(stamped: StampedIntent): StampedIntent {
  if (Object.isFrozen(stamped) && Object.isFrozen(stamped.intent)) return stamped;
  return Object.freeze({ ...stamped, intent: Object.freeze({ ...stamped.intent }) });
}

/** Why the risk gate refused an intent: the rule, its limit and what was observed. */
export interface Denial {
  readonly rule: string;
  readonly limit: string;
  readonly observed: string;
  readonly message: string;
}

export type IntentOutcome =
  | {
      readonly status: 'denied';
      readonly intent: StampedIntent;
      readonly denials: readonly Denial[];
    }
  | {
      readonly status: 'rejected';
      readonly intent: StampedIntent;
      readonly code: string;
      readonly message: string;
      readonly issues?: readonly unknown[];
    }
  | { readonly status: 'accepted'; readonly intent: StampedIntent; readonly orderId: string | null }
  | { readonly status: 'unknown'; readonly intent: StampedIntent; readonly reason: string }
  | {
      readonly status: 'resolved';
      readonly intent: StampedIntent;
      readonly resolution: 'accepted' | 'rejected';
      readonly orderId: string | null;
    }
  | {
      readonly status: 'filled';
      readonly intent: StampedIntent;
      readonly orderId: string;
      readonly filledQuantity: string;
      readonly averagePrice: string | null;
    };

const ID_CHARACTERS = /[^A-Za-z0-9:_-]/g;

/**
 * The request id of a strategy's n-th intent: `<strategy>:<epoch>:<sequence>`. The epoch is
 * fixed when a journal is created, so two journals (say, a deleted one and its replacement)
 * never reuse ids against the same account. Ids keep to the interface's character set and
 * 8..80 length; client order ids (1..100) use the same text.
 */
export function intentRequestId(strategyId: string, epoch: string, sequence: number): string {
  const strategy = strategyId.replace(ID_CHARACTERS, '_').slice(0, 40);
  const id = `${strategy}:${epoch.replace(ID_CHARACTERS, '_').slice(0, 16)}:${sequence}`;
  return id.length >= 8 ? id : id.padEnd(8, '_');
}

/** Request ids of the runtime's own commands (simulate, heartbeat, reconciliation cancels). */
export function internalRequestId(purpose: string, epoch: string, sequence: number): string {
  return intentRequestId(`pb-${purpose}`, epoch, sequence);
}

/**
 * The text every request id and client order id of one strategy under one journal epoch starts
 * with (`<strategy>:<epoch>:`), so the runtime can recognise a strategy's orders after a restart.
 */
export function intentIdPrefix(strategyId: string, epoch: string): string {
  const strategy = strategyId.replace(ID_CHARACTERS, '_').slice(0, 40);
  return `${strategy}:${epoch.replace(ID_CHARACTERS, '_').slice(0, 16)}:`;
}
