import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decimal,
  isDecimalString,
  parseDecimal,
  sumDecimals,
  toFixedPlaces,
  toWire,
} from '../../src/core/decimal.ts';

/** Canonical decimal strings: no leading zeros, no trailing fractional zeros, no `-0`. */
const canonicalDecimal = fc
  .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 18 }))
  .map(([negative, digits, scale]) => {
    let text = digits.toString().padStart(scale + 1, '0');
    if (scale > 0) text = `${text.slice(0, -scale)}.${text.slice(-scale)}`;
    text = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
    return negative && text !== '0' ? `-${text}` : text;
  });

describe('decimal strings (interface rule 1)', () => {
  it.each(['0', '1', '-1', '+1', '1.5', '.5', '5.', '-0.000001', '123456789012345678901234.5'])(
    'accepts %s',
    (text) => {
      expect(isDecimalString(text)).toBe(true);
      expect(() => parseDecimal(text)).not.toThrow();
    },
  );

  it.each([
    '',
    '-',
    '+',
    '.',
    '+.',
    '-.',
    '..',
    '1.2.3',
    '1e5',
    ' 1',
    '1 ',
    'NaN',
    'Infinity',
    '0x10',
    '1,5',
  ])('refuses %j with INVALID_DECIMAL', (text) => {
    expect(isDecimalString(text)).toBe(false);
    expect(() => parseDecimal(text)).toThrowError(
      expect.objectContaining({ code: 'INVALID_DECIMAL' }),
    );
  });

  it('round-trips every canonical string exactly', () => {
    fc.assert(
      fc.property(canonicalDecimal, (text) => {
        expect(toWire(parseDecimal(text))).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it('normalizes non-canonical input to one wire form', () => {
    expect(toWire(parseDecimal('+001.2300'))).toBe('1.23');
    expect(toWire(parseDecimal('-0.000'))).toBe('0');
    expect(toWire(parseDecimal('5.'))).toBe('5');
    expect(toWire(parseDecimal('.5'))).toBe('0.5');
    expect(toWire(parseDecimal('1000000000000000000000000'))).toBe('1000000000000000000000000');
    expect(toWire(parseDecimal('0.0000000000000000001'))).toBe('0.0000000000000000001');
  });

  it('refuses fractional JavaScript numbers, which already went through binary floating point', () => {
    expect(() => decimal(0.1)).toThrowError(expect.objectContaining({ code: 'INVALID_DECIMAL' }));
    expect(toWire(decimal(42))).toBe('42');
    expect(toWire(decimal(10n ** 25n))).toBe('10000000000000000000000000');
  });

  it('prints fixed places with half-even rounding and no negative zero', () => {
    expect(toFixedPlaces(parseDecimal('2.345'), 2)).toBe('2.34');
    expect(toFixedPlaces(parseDecimal('2.355'), 2)).toBe('2.36');
    expect(toFixedPlaces(parseDecimal('-0.001'), 2)).toBe('0.00');
  });

  it('does not drift over a million additions', () => {
    const step = parseDecimal('0.1');
    let total = parseDecimal('0');
    for (let i = 0; i < 1_000_000; i++) total = total.plus(step);
    expect(toWire(total)).toBe('100000');
    expect(toWire(sumDecimals([parseDecimal('0.1'), parseDecimal('0.2')]))).toBe('0.3');
  });

  it('adds and subtracts exactly (a + b - b = a)', () => {
    fc.assert(
      fc.property(canonicalDecimal, canonicalDecimal, (a, b) => {
        const x = parseDecimal(a);
        const y = parseDecimal(b);
        expect(toWire(x.plus(y).minus(y))).toBe(a);
      }),
    );
  });
});
