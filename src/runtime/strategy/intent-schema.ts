/**
 * The shape check of intents as they leave a strategy. A strategy is code the runtime does not
 * trust: an intent that is not well formed is a bug in the strategy, so the host stops it
 * rather than guessing (fail closed). Limits that depend on the market or the account are the
 * risk gate's business, not this schema's.
 */
import { z } from 'zod';
import { isDecimalString, parseDecimal } from '../../core/decimal.ts';
import type { OrderIntent } from '../intents.ts';
import { fieldKey } from '../shape-key.ts';

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
const tag = z.string().max(100).optional();
const identifier = z.string().min(1).max(100);

const PlaceIntentSchema = z
  .strictObject({
    kind: z.literal('place'),
    marketId: z.string().min(1).max(40),
    side: z.enum(['buy', 'sell']),
    type: z.enum(['market', 'limit']),
    quantity: positive,
    price: positive.optional(),
    timeInForce: z.enum(['GTC', 'IOC']).optional(),
    postOnly: z.boolean().optional(),
    reduceOnly: z.boolean().optional(),
    leverage: z.int().min(1).max(200).optional(),
    marginMode: z.enum(['cross', 'isolated']).optional(),
    maxSlippagePercent: slippagePercent.optional(),
    tag,
  })
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

const CancelIntentSchema = z.strictObject({
  kind: z.literal('cancel'),
  clientOrderId: identifier,
  tag,
});

const CancelAllIntentSchema = z.strictObject({
  kind: z.literal('cancel_all'),
  marketId: z.string().min(1).max(40).optional(),
  tag,
});

const AmendIntentSchema = z
  .strictObject({
    kind: z.literal('amend'),
    clientOrderId: identifier,
    price: positive.optional(),
    quantity: positive.optional(),
    tag,
  })
  .refine((intent) => intent.price !== undefined || intent.quantity !== undefined, {
    message: 'an amendment changes the price, the quantity or both',
  });

const ClosePositionIntentSchema = z.strictObject({
  kind: z.literal('close_position'),
  marketId: z.string().min(1).max(40),
  quantityPercent: quantityPercent.optional(),
  maxSlippagePercent: slippagePercent.optional(),
  tag,
});

const triggerSource = z.enum(['mark', 'last', 'bid_ask']).optional();

const ExitTriggerSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('stop'), price: positive }),
  z.strictObject({ kind: z.literal('take_profit'), price: positive }),
  z
    .strictObject({
      kind: z.literal('trailing'),
      offset: positive.optional(),
      offsetPercent: decimalBetween('0', '100')
        .refine((text) => !parseDecimal(text).eq(100), { message: 'must be below 100' })
        .optional(),
      activationPrice: positive.optional(),
    })
    .refine((trigger) => (trigger.offset === undefined) !== (trigger.offsetPercent === undefined), {
      message: 'a trailing stop takes exactly one of offset and offsetPercent',
    }),
]);

const ExitIntentSchema = z
  .strictObject({
    kind: z.literal('exit'),
    marketId: z.string().min(1).max(40),
    side: z.enum(['buy', 'sell']),
    quantity: positive,
    trigger: ExitTriggerSchema,
    triggerSource: triggerSource,
    limitPrice: positive.optional(),
    maxSlippagePercent: slippagePercent.optional(),
    reduceOnly: z.boolean().optional(),
    tag,
  })
  .refine((intent) => intent.limitPrice === undefined || intent.maxSlippagePercent === undefined, {
    path: ['maxSlippagePercent'],
    message: 'slippage bounds market exits only',
  });

const BracketLegSchema = z.strictObject({
  triggerPrice: positive,
  limitPrice: positive.optional(),
});

const BracketIntentSchema = z
  .strictObject({
    kind: z.literal('bracket'),
    entry: PlaceIntentSchema,
    stopLoss: BracketLegSchema.optional(),
    takeProfit: BracketLegSchema.optional(),
    triggerSource: triggerSource,
    tag,
  })
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

export const OrderIntentSchema = z.discriminatedUnion('kind', [
  PlaceIntentSchema,
  CancelIntentSchema,
  CancelAllIntentSchema,
  AmendIntentSchema,
  ClosePositionIntentSchema,
  ExitIntentSchema,
  BracketIntentSchema,
]);

export type IntentCheck =
  | { readonly ok: true; readonly intent: OrderIntent }
  | { readonly ok: false; readonly problems: readonly string[] };

/** Canonical positive decimal strings (no sign, no leading or trailing zeros): `positive` takes them. */
const CANONICAL_POSITIVE = /^(?:[1-9]\d*(?:\.\d*[1-9])?|0\.\d*[1-9])$/;

/**
 * Whether a field's value can stand in the key as "some valid value": fields checked on their
 * own by a rule every such value passes (no cross-field rule reads more than their presence).
 */
function isAnyValid(kind: unknown, name: string, value: string): boolean {
  if (name === 'clientOrderId') return value.length >= 1 && value.length <= 100;
  if ((kind === 'place' || kind === 'amend') && (name === 'price' || name === 'quantity')) {
    return CANONICAL_POSITIVE.test(value);
  }
  return false;
}

/**
 * A key for an intent's fields, in key order, with values that `isAnyValid` lets stand for any;
 * null when the value is not plain data (strings, finite numbers, booleans, null, undefined).
 */
function intentKey(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  if (Object.getPrototypeOf(value) !== Object.prototype) return null;
  const fields = value as Readonly<Record<string, unknown>>;
  const kind = fields.kind;
  let key = '';
  for (const name of Object.keys(fields)) {
    const field = fields[name];
    const part = fieldKey(name, field, typeof field === 'string' && isAnyValid(kind, name, field));
    if (part === null) return null;
    key += part;
  }
  return key;
}

/**
 * The field names of intents already checked, by `intentKey`, in the order a check gives them:
 * intents with one key pass or fail together (a strategy emits the same shapes again and again,
 * at new prices and for new orders), and a check changes no value it passes. Bounded, oldest out.
 */
const checkedIntents = new Map<string, readonly string[]>();
const CHECKED_INTENTS = 1024;

/** Checks an emitted value and returns a fresh copy of the intent (the strategy keeps its own). */
export function checkIntent(value: unknown): IntentCheck {
  const key = intentKey(value);
  const names = key === null ? undefined : checkedIntents.get(key);
  if (names !== undefined) {
    const source = value as Readonly<Record<string, unknown>>;
    const copy: Record<string, unknown> = {};
    for (const name of names) copy[name] = source[name];
    return { ok: true, intent: copy as unknown as OrderIntent };
  }
  const result = OrderIntentSchema.safeParse(value);
  if (result.success) {
    const copy: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(result.data)) {
      if (field !== undefined) copy[name] = field;
    }
    if (key !== null) {
      if (checkedIntents.size >= CHECKED_INTENTS) {
        const oldest = checkedIntents.keys().next();
        if (oldest.done !== true) checkedIntents.delete(oldest.value);
      }
      checkedIntents.set(key, Object.keys(copy));
    }
    return { ok: true, intent: copy as unknown as OrderIntent };
  }
  return {
    ok: false,
    problems: result.error.issues.map(
      (issue) => `${issue.path.length === 0 ? '(intent)' : issue.path.join('.')}: ${issue.message}`,
    ),
  };
}
