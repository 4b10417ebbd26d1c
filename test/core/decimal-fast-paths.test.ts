/**
 * `parseDecimal` and `toWire` build and print big.js values themselves (no second pattern test,
 * no joined digit copies): the same values and the same text as big.js's own parser and
 * `toFixed()`, kept here as the reference, over random texts of every form rule 1 allows and over
 * results of arithmetic (which big.js, not the parser, shaped).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Big, type Decimal, parseDecimal, toWire } from '../../src/core/decimal.ts';

/** The parser as it was: big.js reads the text, after the two forms it does not take. */
function referenceParse(text: string): Decimal {
  let normalized = text.charCodeAt(0) === 43 ? text.slice(1) : text;
  if (normalized.endsWith('.')) normalized = normalized.slice(0, -1);
  return new Big(normalized);
}

/** The printer as it was. */
function referenceWire(value: Decimal): string {
  const text = value.toFixed();
  return text === '-0' ? '0' : text;
}

/** Any text rule 1 allows: sign, leading zeros, trailing zeros, a bare point at either end. */
const anyDecimalText = fc
  .tuple(
    fc.constantFrom('', '-', '+'),
    fc.stringMatching(/^\d{0,25}$/),
    fc.option(fc.stringMatching(/^\d{0,25}$/), { nil: null }),
  )
  .filter(([, whole, fraction]) => whole.length > 0 || (fraction !== null && fraction.length > 0))
  .map(([sign, whole, fraction]) => `${sign}${whole}${fraction === null ? '' : `.${fraction}`}`);

function sameValue(actual: Decimal, expected: Decimal): void {
  expect(actual.s).toBe(expected.s);
  expect(actual.e).toBe(expected.e);
  expect(actual.c).toEqual(expected.c);
  expect(actual).toBeInstanceOf(Big);
  expect(actual.constructor).toBe(Big);
}

describe('decimal fast paths (against big.js)', () => {
  it('parse every text rule 1 allows into the value big.js builds', () => {
    fc.assert(
      fc.property(anyDecimalText, (text) => {
        sameValue(parseDecimal(text), referenceParse(text));
      }),
      { numRuns: 5000 },
    );
    for (const text of [
      '0',
      '-0',
      '+0',
      '0.',
      '.0',
      '-.0',
      '00.000',
      '+5.',
      '.5',
      '100',
      '10.50',
    ]) {
      sameValue(parseDecimal(text), referenceParse(text));
    }
  });

  it('still refuse what is not a decimal string', () => {
    for (const text of ['', '-', '.', '1e5', '1.2.3', ' 1', '0x10', 'NaN']) {
      expect(() => parseDecimal(text)).toThrow(
        expect.objectContaining({ code: 'INVALID_DECIMAL' }),
      );
    }
  });

  it('print parsed values and arithmetic results as toFixed() does, never -0', () => {
    fc.assert(
      fc.property(anyDecimalText, anyDecimalText, (a, b) => {
        const x = parseDecimal(a);
        const y = parseDecimal(b);
        const values = [x, y, x.plus(y), x.minus(y), x.times(y), x.neg(), x.abs(), x.round(2)];
        if (!y.eq(0)) values.push(x.div(y), x.mod(y));
        for (const value of values) expect(toWire(value)).toBe(referenceWire(value));
      }),
      { numRuns: 3000 },
    );
    for (const value of [new Big(0), new Big('-0'), new Big(1).minus(1), new Big('-1').times(0)]) {
      expect(toWire(value)).toBe(referenceWire(value));
    }
  });

  it('gives values big.js computes with as its own', () => {
    fc.assert(
      fc.property(anyDecimalText, anyDecimalText, (a, b) => {
        const fast = parseDecimal(a).plus(parseDecimal(b)).times(parseDecimal(a));
        const slow = referenceParse(a).plus(referenceParse(b)).times(referenceParse(a));
        expect(fast.eq(slow)).toBe(true);
        expect(toWire(fast)).toBe(referenceWire(slow));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('comparing two decimals without copying one', () => {
  it('orders every pair as big.js does from the text of the other', () => {
    const texts = [
      '0',
      '-0',
      '1',
      '-1',
      '0.5',
      '-0.5',
      '10',
      '9.99',
      '100.000',
      '64000.5',
      '64000.25',
      '-64000.5',
      '0.000001',
      '0.0000010',
      '123456789.123456789',
      '123456789.12345679',
      '-123456789.123456789',
    ];
    const values = texts.map((text) => new Big(text));
    for (const x of values) {
      for (const y of values) {
        // A string argument takes big.js's own path (it parses, then compares).
        const expected = x.cmp(y.toFixed());
        expect(x.cmp(y)).toBe(expected);
        expect(x.eq(y)).toBe(expected === 0);
        expect(x.lt(y)).toBe(expected < 0);
        expect(x.lte(y)).toBe(expected <= 0);
        expect(x.gt(y)).toBe(expected > 0);
        expect(x.gte(y)).toBe(expected >= 0);
      }
    }
    expect(new Big('2').cmp(3)).toBe(-1);
  });
});
