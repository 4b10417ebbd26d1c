/**
 * Keys for caches of checks by shape: the serializer (venue.ts) and the strategy boundary
 * (strategy/intent-check.ts) check a body or an intent once per shape and reuse the verdict
 * for every later one with the same key.
 */

/**
 * One field's part of a shape key: its name and value, each with its length so no two shapes
 * share a key; `wildcard` makes a string value stand for any value already known valid. null
 * when the value is not plain data (strings, finite numbers, booleans, null, undefined): such
 * a body or intent always gets the full check.
 */
export function fieldKey(name: string, value: unknown, wildcard: boolean): string | null {
  switch (typeof value) {
    case 'string':
      return wildcard
        ? `|${name.length}:${name}a`
        : `|${name.length}:${name}s${value.length}:${value}`;
    case 'number':
      if (!Number.isFinite(value) || Object.is(value, -0)) return null;
      return `|${name.length}:${name}n${value}`;
    case 'boolean':
      return `|${name.length}:${name}${value ? 't' : 'f'}`;
    case 'undefined':
      return `|${name.length}:${name}u`;
    default:
      return value === null ? `|${name.length}:${name}z` : null;
  }
}
