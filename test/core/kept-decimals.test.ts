/**
 * Decimals kept by text (`parseDecimalKept`) are the values `parseDecimal` gives, shared per
 * text; and the risk gate's reading of a kept text (`scaledOfKept` of the kept decimal) decides
 * as `parseScaled` of the text did: the same value, the same wire text, the same comparisons
 * and the same rounding onto any increment, over random texts of every form rule 1 allows.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keptDecimal, parseDecimal, parseDecimalKept, toWire } from '../../src/core/decimal.ts';
import {
  parseScaled,
  type Scaled,
  scaledCompare,
  scaledOfKept,
  scaledRoundToIncrement,
  scaledToWire,
} from '../../src/core/scaled.ts';

const anyDecimalText = fc
  .tuple(
    fc.constantFrom('', '-', '+'),
    fc.stringMatching(/^\d{0,20}$/),
    fc.option(fc.stringMatching(/^\d{0,20}$/), { nil: null }),
  )
  .filter(([, whole, fraction]) => whole.length > 0 || (fraction !== null && fraction.length > 0))
  .map(([sign, whole, fraction]) => `${sign}${whole}${fraction === null ? '' : `.${fraction}`}`);

const increment = fc
  .tuple(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 0, max: 12 }))
  .map(([units, scale]): Scaled => ({ units: BigInt(units), scale }));

describe('kept decimals', () => {
  it('give the parsed value, once per text', () => {
    fc.assert(
      fc.property(anyDecimalText, (text) => {
        const kept = parseDecimalKept(text);
        expect(toWire(kept)).toBe(toWire(parseDecimal(text)));
        expect(kept.eq(parseDecimal(text))).toBe(true);
        expect(parseDecimalKept(text)).toBe(kept);
        expect(keptDecimal(text)).toBe(kept);
      }),
      { numRuns: 500 },
    );
  });

  it('refuse what parseDecimal refuses, and keep nothing for it', () => {
    for (const text of ['', '.', 'abc', '1e5', '--1', '1.2.3']) {
      expect(() => parseDecimalKept(text)).toThrow(
        expect.objectContaining({ code: 'INVALID_DECIMAL' }),
      );
      expect(keptDecimal(text)).toBeUndefined();
    }
  });

  it('read as scaled values decide as the text parsed directly', () => {
    fc.assert(
      fc.property(
        anyDecimalText,
        anyDecimalText,
        increment,
        fc.constantFrom('down' as const, 'up' as const, 'nearest' as const),
        (text, other, step, direction) => {
          const direct = parseScaled(text)!;
          const kept = scaledOfKept(parseDecimalKept(text));
          const otherDirect = parseScaled(other)!;
          expect(scaledToWire(kept)).toBe(scaledToWire(direct));
          expect(scaledCompare(kept, direct)).toBe(0);
          expect(scaledCompare(kept, otherDirect)).toBe(scaledCompare(direct, otherDirect));
          expect(scaledToWire(scaledRoundToIncrement(kept, step, direction))).toBe(
            scaledToWire(scaledRoundToIncrement(direct, step, direction)),
          );
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
