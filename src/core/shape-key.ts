/**
 * Caches of checks by shape: the command serializer (src/signing/checked-bodies.ts) and the
 * strategy boundary (src/runtime/strategy/intent-check.ts) check a body or an intent once per
 * shape and reuse the verdict for every later one with the same shape.
 *
 * A shape is the sequence of a value's field names, each followed by its value's token
 * (`shapeToken`), and the cache is a trie over it: one step per name and per token (a
 * comparison with the node's first child, a map lookup for the others), with no key string
 * built and hashed per lookup (which cost more than the lookup itself, and made garbage on
 * every command).
 */

/** A value that is not plain data: a body or intent holding one always gets the full check. */
export const UNCACHEABLE: unique symbol = Symbol('uncacheable');
/** A string value standing for any value already known valid (an id, a canonical amount). */
const ANY_VALID: unique symbol = Symbol('any valid value');

/**
 * One field value's token: itself for plain data (strings, finite numbers but -0, booleans,
 * null, undefined; a map tells a string from a number, and `true` from `'true'`), `ANY_VALID`
 * for a `wildcard` string, `UNCACHEABLE` for anything else.
 */
export function shapeToken(value: unknown, wildcard: boolean): unknown {
  switch (typeof value) {
    case 'string':
      return wildcard ? ANY_VALID : value;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? value : UNCACHEABLE;
    case 'boolean':
    case 'undefined':
      return value;
    default:
      return value === null ? null : UNCACHEABLE;
  }
}

/** No key yet: a node's `firstKey` before it has a child (a token may be `undefined`). */
const NO_KEY: unique symbol = Symbol('no key');

/**
 * A node of the trie: the path to it is a shape's prefix; `value` the verdict for that shape.
 * Its first child is held in two fields, compared with `===`, and only the others in a map:
 * most nodes have one child (a name is followed by the same names whatever the value), and a
 * comparison costs a fraction of a map lookup, of which a walk made two per field. Keys are
 * plain data (`shapeToken`: no NaN, no -0), for which `===` and a map's SameValueZero agree.
 */
export interface ShapeNode<V> {
  firstKey: unknown;
  firstChild: ShapeNode<V> | undefined;
  /** The children after the first; null until a second one comes. */
  others: Map<unknown, ShapeNode<V>> | null;
  value: V | undefined;
}

function newNode<V>(): ShapeNode<V> {
  return { firstKey: NO_KEY, firstChild: undefined, others: null, value: undefined };
}

/**
 * Verdicts by shape, bounded: once `limit` verdicts are held, the next one starts the cache
 * anew (a shape is checked again the next time it comes).
 */
export class ShapeCache<V> {
  private root: ShapeNode<V> = newNode();
  private size = 0;

  constructor(private readonly limit: number) {}

  /** Where shapes start; walk from it with `child`. */
  get start(): ShapeNode<V> {
    return this.root;
  }

  /** The node a step further along `key` (a field name or a token); undefined when none. */
  child(node: ShapeNode<V>, key: unknown): ShapeNode<V> | undefined {
    if (node.firstKey === key) return node.firstChild;
    return node.others === null ? undefined : node.others.get(key);
  }

  /** Holds `value` as the verdict of the shape `path` (names and tokens, in order). */
  set(path: readonly unknown[], value: V): void {
    if (this.size >= this.limit) {
      this.root = newNode();
      this.size = 0;
    }
    let node = this.root;
    for (const key of path) {
      let next = this.child(node, key);
      if (next === undefined) {
        next = newNode();
        if (node.firstKey === NO_KEY) {
          node.firstKey = key;
          node.firstChild = next;
        } else {
          node.others ??= new Map();
          node.others.set(key, next);
        }
      }
      node = next;
    }
    if (node.value === undefined) this.size += 1;
    node.value = value;
  }
}
