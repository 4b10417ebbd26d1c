/**
 * Division and grid rounding in integer arithmetic must give big.js's own results, digit for
 * digit (the same coefficient, exponent and sign, so every later use prints the same text).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Decimal, parseDecimal } from '../../src/core/decimal.ts';
import { roundToIncrement as slowRoundToIncrement } from '../../src/core/grid.ts';
import { divide, roundToIncrement } from '../../src/runtime/decimal-division.ts';

/** Decimal strings from 1e-20 to 1e20 with up to 30 significant digits, either sign, or zero. */
const decimalText = fc
  .tuple(
    fc.bigInt({ min: 0n, max: 10n ** 30n }),
    fc.integer({ min: 0, max: 40 }),
    fc.boolean(),
    fc.constantFrom('', '0', '00'),
  )
  .map(([digits, scale, negative, zeros]) => {
    const text = digits.toString().padStart(scale + 1, '0');
    const fixed = scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}${zeros}`;
    return negative ? `-${fixed}` : fixed;
  });
const tidy = fc.constantFrom('0.5', '0.01', '0.001', '0.1', '1', '10', '20', '5', '0.005', '3');
const decimal = fc.oneof(decimalText, tidy).map(parseDecimal);
const positive = decimal.filter((value) => value.gt(0));

function same(fast: Decimal, slow: Decimal): void {
  expect({ c: fast.c, e: fast.e, s: fast.s }).toEqual({ c: slow.c, e: slow.e, s: slow.s });
}

describe('decimal division', () => {
  it('divides as big.js does (property)', () => {
    fc.assert(
      fc.property(decimal, decimal, (a, b) => {
        if (b.eq(0)) {
          expect(() => divide(a, b)).toThrow();
          return;
        }
        same(divide(a, b), a.div(b));
      }),
      { numRuns: 3000 },
    );
  });

  it('divides ties and long quotients as big.js does', () => {
    const big = (text: string) =>
      parseDecimal(text.replace(/e(\d+)$/, (_, zeros) => '0'.repeat(Number(zeros))));
    for (const [a, b] of [
      ['1', '3'],
      ['2', '3'],
      ['-2', '3'],
      ['10', '95123.5'],
      ['1', '8e36'],
      ['5', '1e37'],
      ['15', '1e37'],
      ['25', '1e37'],
      ['0', '7'],
    ] as const) {
      same(divide(big(a), big(b)), big(a).div(big(b)));
    }
  });

  it('rounds to an increment as src/core/grid.ts does (property)', () => {
    fc.assert(
      fc.property(
        decimal,
        positive,
        fc.constantFrom('up', 'down', 'nearest') as fc.Arbitrary<'up' | 'down' | 'nearest'>,
        (value, increment, direction) => {
          same(
            roundToIncrement(value, increment, direction),
            slowRoundToIncrement(value, increment, direction),
          );
        },
      ),
      { numRuns: 3000 },
    );
  });
});
