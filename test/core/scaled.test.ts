/**
 * Scaled-integer decimals against big.js: every operation gives big.js's value to the last digit
 * (and the same wire text), over random decimals with up to 40 places, both signs, and the edge
 * cases where big.js's 36-place division decides a rounding.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Big, type Decimal, parseDecimal, toWire } from '../../src/core/decimal.ts';
import { roundToIncrement, type RoundingDirection } from '../../src/core/grid.ts';
import {
  parseScaled,
  parseScaledStrict,
  scaledAbs,
  scaledCompare,
  scaledDivide,
  scaledMinus,
  scaledNegate,
  scaledOf,
  scaledOfKept,
  scaledPlus,
  scaledRoundToIncrement,
  scaledSign,
  scaledTimes,
  scaledToDecimal,
  scaledToWire,
} from '../../src/core/scaled.ts';

/** Decimal text: up to `maxDigits` digits, up to `maxPlaces` of them after the point. */
const decimalText = (maxDigits: number, maxPlaces: number) =>
  fc
    .tuple(
      fc.bigInt({ min: 0n, max: 10n ** BigInt(maxDigits) - 1n }),
      fc.integer({ min: 0, max: maxPlaces }),
      fc.constantFrom('', '-', '+'),
    )
    .map(([units, places, sign]) => {
      const digits = units.toString().padStart(places + 1, '0');
      const text = places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
      return `${sign}${text}`;
    });

const anyText = fc.oneof(decimalText(8, 4), decimalText(20, 12), decimalText(42, 40));
const positiveText = anyText
  .map((text) => text.replace(/^[+-]/, ''))
  .filter((text) => parseDecimal(text).gt(0));
const increments = fc.oneof(
  positiveText,
  fc.constantFrom('0.000000000001', '0.00000025', '0.5', '1', '25', '1000', '0.3'),
);
const directions = fc.constantFrom<RoundingDirection>('down', 'up', 'nearest');

const wire = (value: Decimal) => toWire(value);

describe('scaled decimals (against big.js)', () => {
  it('parse and print as parseDecimal and toWire do', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const scaled = parseScaledStrict(text);
        expect(scaledToWire(scaled)).toBe(wire(parseDecimal(text)));
        expect(scaledToWire(scaledOf(parseDecimal(text)))).toBe(wire(parseDecimal(text)));
        expect(scaledToDecimal(scaled).eq(parseDecimal(text))).toBe(true);
      }),
      { numRuns: 2000 },
    );
    for (const text of ['.5', '7.', '+0.10', '-0', '-0.000', '000123.4500', '1000']) {
      expect(scaledToWire(parseScaledStrict(text))).toBe(wire(parseDecimal(text)));
    }
    for (const text of ['', '1e3', 'abc', '1,5', '-', '.', 'NaN', ' 1']) {
      expect(parseScaled(text)).toBeNull();
      expect(() => parseScaledStrict(text)).toThrow(
        expect.objectContaining({ code: 'INVALID_DECIMAL' }),
      );
    }
  });

  it('add, subtract, multiply, negate, compare and take signs as big.js does', () => {
    fc.assert(
      fc.property(anyText, anyText, (left, right) => {
        const a = parseDecimal(left);
        const b = parseDecimal(right);
        const x = parseScaledStrict(left);
        const y = parseScaledStrict(right);
        expect(scaledToWire(scaledPlus(x, y))).toBe(wire(a.plus(b)));
        expect(scaledToWire(scaledMinus(x, y))).toBe(wire(a.minus(b)));
        expect(scaledToWire(scaledTimes(x, y))).toBe(wire(a.times(b)));
        expect(scaledToWire(scaledNegate(x))).toBe(wire(a.neg()));
        expect(scaledToWire(scaledAbs(x))).toBe(wire(a.abs()));
        expect(scaledCompare(x, y)).toBe(a.cmp(b));
        expect(scaledSign(x)).toBe(a.cmp(0));
      }),
      { numRuns: 2000 },
    );
  });

  it('round to an increment exactly as src/core/grid.ts does, either sign, every direction', () => {
    fc.assert(
      fc.property(anyText, increments, directions, (value, increment, direction) => {
        const expected = roundToIncrement(parseDecimal(value), parseDecimal(increment), direction);
        const actual = scaledRoundToIncrement(
          parseScaledStrict(value),
          parseScaledStrict(increment),
          direction,
        );
        expect(scaledToWire(actual)).toBe(wire(expected));
      }),
      { numRuns: 3000 },
    );
  });

  it("keeps big.js's roundings where its 36-place division decides them", () => {
    const cases: [string, string, RoundingDirection][] = [
      // 0.99…9 (40 nines) is 1 at 36 places, so big.js rounds it down to 1, not 0.
      [`0.${'9'.repeat(40)}`, '1', 'down'],
      [`0.${'0'.repeat(39)}1`, '1', 'up'],
      [`-0.${'9'.repeat(40)}`, '1', 'up'],
      [`2.${'4'.repeat(38)}9`, '1', 'nearest'],
      [`0.5${'0'.repeat(37)}1`, '1', 'nearest'],
      ['1', `0.${'0'.repeat(20)}3`, 'down'],
      // A buy at 100.07 on a 0.05 tick, a sell at the same price, a quantity on a fine step.
      ['100.07', '0.05', 'down'],
      ['100.07', '0.05', 'up'],
      ['12345678.123456789', '0.000000000001', 'down'],
    ];
    for (const [value, increment, direction] of cases) {
      const expected = roundToIncrement(parseDecimal(value), parseDecimal(increment), direction);
      const actual = scaledRoundToIncrement(
        parseScaledStrict(value),
        parseScaledStrict(increment),
        direction,
      );
      expect(scaledToWire(actual), `${value} on ${increment} ${direction}`).toBe(wire(expected));
    }
    expect(
      scaledToWire(
        scaledRoundToIncrement(
          parseScaledStrict(`0.${'9'.repeat(40)}`),
          parseScaledStrict('1'),
          'down',
        ),
      ),
    ).toBe('1');
  });

  it('divide and round to places as big.js div then round does', () => {
    fc.assert(
      fc.property(
        anyText.map((text) => text.replace(/^[+-]/, '')),
        positiveText,
        fc.integer({ min: 0, max: 8 }),
        (dividend, divisor, places) => {
          const a = parseDecimal(dividend);
          const b = parseDecimal(divisor);
          expect(
            scaledToWire(
              scaledDivide(parseScaledStrict(dividend), parseScaledStrict(divisor), places, 'up'),
            ),
          ).toBe(wire(a.div(b).round(places, Big.roundUp)));
          expect(
            scaledToWire(
              scaledDivide(parseScaledStrict(dividend), parseScaledStrict(divisor), places, 'down'),
            ),
          ).toBe(wire(a.div(b).round(places, Big.roundDown)));
        },
      ),
      { numRuns: 2000 },
    );
    // Quotients whose 37th place decides: big.js rounds at 36 places first.
    const small = parseScaledStrict(`0.${'0'.repeat(39)}1`);
    expect(scaledToWire(scaledDivide(small, parseScaledStrict('1'), 4, 'up'))).toBe(
      wire(
        parseDecimal(`0.${'0'.repeat(39)}1`)
          .div(1)
          .round(4, Big.roundUp),
      ),
    );
    const tiny = parseScaledStrict(`0.${'9'.repeat(40)}`);
    expect(scaledToWire(scaledDivide(tiny, parseScaledStrict('1'), 4, 'down'))).toBe(
      wire(
        parseDecimal(`0.${'9'.repeat(40)}`)
          .div(1)
          .round(4, Big.roundDown),
      ),
    );
  });

  it('keep the scaled value of a decimal: equal to scaledOf, converted once', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const value = parseDecimal(text);
        const kept = scaledOfKept(value);
        expect(kept).toEqual(scaledOf(value));
        expect(scaledOfKept(value)).toBe(kept);
        // Another decimal of the same value is its own key.
        expect(scaledOfKept(parseDecimal(text))).not.toBe(kept);
      }),
    );
  });
});
