/**
 * The shape check of intents as they leave a strategy. A strategy is code the runtime does not
 * trust: an intent that is not well formed is a bug in the strategy, so the host stops it
 * rather than guessing (fail closed). The schemas themselves live with the types they define,
 * in `../intents.ts`; this file runs them once per shape and reports every problem.
 */
import { OrderIntent } from '../intents.ts';
import { fieldKey } from '../shape-key.ts';

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
  const result = OrderIntent.safeParse(value);
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
