/**
 * The shape check of intents as they leave a strategy. A strategy is code the runtime does not
 * trust: an intent that is not well formed is a bug in the strategy, so the host stops it
 * rather than guessing (fail closed). The schemas themselves live with the types they define,
 * in `../intents.ts`; this file runs them once per shape and reports every problem.
 */
import { OrderIntent } from '../intents.ts';
import { type ShapeNode, ShapeCache, shapeToken, UNCACHEABLE } from '../../core/shape-key.ts';

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
  // A free label, checked by its length only; a strategy often tags each intent differently
  // (the ticker's time, a counter), which without this made every intent a new shape.
  if (name === 'tag') return value.length <= 100;
  if ((kind === 'place' || kind === 'amend') && (name === 'price' || name === 'quantity')) {
    return CANONICAL_POSITIVE.test(value);
  }
  return false;
}

function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return (
    typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype
  );
}

function intentFieldToken(kind: unknown, name: string, value: unknown): unknown {
  return shapeToken(value, typeof value === 'string' && isAnyValid(kind, name, value));
}

/**
 * The field names of the checked intent of an intent's shape (its fields in key order, with the
 * values `isAnyValid` lets stand for any) checked before; undefined when none or when a value
 * is not plain data (strings, finite numbers, booleans, null, undefined).
 */
function cachedNames(value: unknown): readonly string[] | undefined {
  if (!isPlainObject(value)) return undefined;
  const kind = value.kind;
  let node: ShapeNode<readonly string[]> | undefined = checkedIntents.start;
  for (const name of Object.keys(value)) {
    const token = intentFieldToken(kind, name, value[name]);
    if (token === UNCACHEABLE) return undefined;
    node = checkedIntents.child(node, name);
    if (node !== undefined) node = checkedIntents.child(node, token);
    if (node === undefined) return undefined;
  }
  return node.value;
}

/** An intent's shape (the path of `ShapeCache.set`), or null when it is not cacheable. */
function intentShape(value: unknown): unknown[] | null {
  if (!isPlainObject(value)) return null;
  const kind = value.kind;
  const path: unknown[] = [];
  for (const name of Object.keys(value)) {
    const token = intentFieldToken(kind, name, value[name]);
    if (token === UNCACHEABLE) return null;
    path.push(name, token);
  }
  return path;
}

const checkedIntents = new ShapeCache<readonly string[]>(1024);

/** Checks an emitted value and returns a fresh copy of the intent (the strategy keeps its own). */
export function checkIntent(value: unknown): IntentCheck {
  const names = cachedNames(value);
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
    const shape = intentShape(value);
    if (shape !== null) checkedIntents.set(shape, Object.keys(copy));
    return { ok: true, intent: copy as unknown as OrderIntent };
  }
  return {
    ok: false,
    problems: result.error.issues.map(
      (issue) => `${issue.path.length === 0 ? '(intent)' : issue.path.join('.')}: ${issue.message}`,
    ),
  };
}
