/**
 * The cache of checks by shape: shapes that differ in a name, a value or a value's type never
 * share a verdict; a wildcard string stands for any string; and the cache holds at most its
 * limit of verdicts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ShapeCache, type ShapeNode, shapeToken, UNCACHEABLE } from '../../src/core/shape-key.ts';

function lookup<V>(cache: ShapeCache<V>, path: readonly unknown[]): V | undefined {
  let node: ShapeNode<V> | undefined = cache.start;
  for (const key of path) {
    node = cache.child(node, key);
    if (node === undefined) return undefined;
  }
  return node.value;
}

describe('shape cache', () => {
  it('tells apart values of other types and other fields, and wildcards stand for any string', () => {
    const plain = fc.oneof(
      fc.string({ maxLength: 3 }),
      fc.integer({ min: -3, max: 3 }),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.constantFrom('1', 'true', 'null', 'undefined', ''),
    );
    const shape = fc.array(
      fc
        .tuple(fc.constantFrom('a', 'b', 'ab'), plain, fc.boolean())
        .map(([name, value, wild]) => [name, shapeToken(value, wild && typeof value === 'string')]),
      { maxLength: 4 },
    );
    fc.assert(
      fc.property(shape, shape, (left, right) => {
        const cache = new ShapeCache<string>(1024);
        cache.set(left.flat(), 'left');
        const same =
          left.length === right.length &&
          left.every(
            ([name, token], index) =>
              name === right[index]![0] && Object.is(token, right[index]![1]),
          );
        expect(lookup(cache, right.flat())).toBe(same ? 'left' : undefined);
      }),
      { numRuns: 2000 },
    );
    expect(shapeToken('x', true)).toBe(shapeToken('y', true));
    expect(shapeToken('x', false)).not.toBe(shapeToken('y', false));
    for (const value of [Number.NaN, Infinity, -0, {}, [], 1n, Symbol('s'), () => 1]) {
      expect(shapeToken(value, false)).toBe(UNCACHEABLE);
    }
  });

  it('holds at most its limit of verdicts, then starts anew', () => {
    const cache = new ShapeCache<number>(3);
    for (let index = 0; index < 3; index++) cache.set(['n', index], index);
    expect([0, 1, 2].map((index) => lookup(cache, ['n', index]))).toEqual([0, 1, 2]);
    // Full: the next verdict starts the cache anew, then the cache fills again.
    cache.set(['n', 2], 20);
    expect([0, 1, 2].map((index) => lookup(cache, ['n', index]))).toEqual([
      undefined,
      undefined,
      20,
    ]);
    cache.set(['n', 3], 3);
    cache.set(['n', 4], 4);
    cache.set(['n', 5], 5);
    expect([2, 3, 4, 5].map((index) => lookup(cache, ['n', index]))).toEqual([
      undefined,
      undefined,
      undefined,
      5,
    ]);
  });
});
