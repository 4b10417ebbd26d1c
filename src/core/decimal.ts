/**
 * Decimal numbers for prices, quantities and money: big.js, a maintained arbitrary-precision
 * decimal library, so that nothing passes through binary floating point on its way to the wire,
 * a balance or a report. Engines that need raw speed convert prices and sizes to integer ticks
 * and steps with `./grid.ts` and convert back at their edges.
 *
 * A private big.js constructor is used so the project's settings (division precision, rounding)
 * cannot be changed by another library that also uses big.js.
 */
import BigModule from 'big.js';
import { PaperbotError } from './errors.ts';

export const Big = BigModule();
/** Decimal places kept by division; far beyond any tick, step or fee rate in use. */
Big.DP = 36;
Big.RM = Big.roundHalfEven;
/** Never switch to exponent notation when printing. */
Big.NE = -1_000_000;
Big.PE = 1_000_000;

export type Decimal = BigModule.Big;

/**
 * big.js's `cmp` (behind `eq`, `lt`, `lte`, `gt`, `gte`) copies its argument (`new Big(y)`) even
 * when it is a Big already: an object and a digit array per comparison, and decimals are
 * compared on every ticker and every intent. Between two Bigs the copy changes nothing, so it is
 * skipped here, with big.js's own comparison otherwise unchanged; any other argument (a string,
 * a number) goes to big.js's `cmp`, which parses it. big.js's constructors share one prototype,
 * so this is installed once, with the project's constructor.
 */
const bigCompare = Big.prototype.cmp;
Big.prototype.cmp = function compare(this: Decimal, y: BigModule.BigSource): BigModule.Comparison {
  if (!(y instanceof Big)) return bigCompare.call(this, y);
  const xc = this.c;
  const yc = y.c;
  const xs = this.s as BigModule.Comparison;
  const ys = y.s as BigModule.Comparison;
  // Either zero?
  if (!xc[0] || !yc[0]) return !xc[0] ? (!yc[0] ? 0 : (-ys as BigModule.Comparison)) : xs;
  // Signs differ?
  if (xs !== ys) return xs;
  const negative = xs < 0;
  // Exponents.
  if (this.e !== y.e) return this.e > y.e !== negative ? 1 : -1;
  const shorter = Math.min(xc.length, yc.length);
  // Digit by digit.
  for (let index = 0; index < shorter; index++) {
    if (xc[index] !== yc[index]) return xc[index]! > yc[index]! !== negative ? 1 : -1;
  }
  // Lengths.
  return xc.length === yc.length ? 0 : xc.length > yc.length !== negative ? 1 : -1;
};

/** Interface rule 1: optional sign, digits and an optional fraction. */
export const DECIMAL_PATTERN = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

export function isDecimalString(text: string): boolean {
  return DECIMAL_PATTERN.test(text);
}

/** Parses a decimal string (interface rule 1); anything else is an `INVALID_DECIMAL` error. */
export function parseDecimal(text: string): Decimal {
  if (typeof text !== 'string' || !DECIMAL_PATTERN.test(text)) {
    throw new PaperbotError('INVALID_DECIMAL', `not a decimal string: ${JSON.stringify(text)}`);
  }
  return decimalOfValidText(text);
}

/**
 * Decimals by their text, for amounts that travel as text through several layers (an intent's
 * price and quantity: read by the strategy's own-order book, the risk gate and its snapshot,
 * then by the venue's answers): parsed once, shared after. Decimals are never changed in place.
 * Bounded: emptied when full (quoting strategies use a few prices and sizes at a time).
 */
const keptDecimals = new Map<string, Decimal>();
const DECIMALS_KEPT = 4_096;

/** `parseDecimal`, parsed once per text while it is kept. */
export function parseDecimalKept(text: string): Decimal {
  let value = keptDecimals.get(text);
  if (value === undefined) {
    value = parseDecimal(text);
    if (keptDecimals.size >= DECIMALS_KEPT) keptDecimals.clear();
    keptDecimals.set(text, value);
  }
  return value;
}

/** The decimal `parseDecimalKept` holds for `text`, if it holds one (never parses). */
export function keptDecimal(text: string): Decimal | undefined {
  return keptDecimals.get(text);
}

/**
 * The decimal of a text `DECIMAL_PATTERN` accepts, built as big.js's own parser builds it (sign,
 * exponent, digits without leading or trailing zeros; `-0` keeps its sign) but without its
 * second pattern test and string copies: parsing is the commonest decimal operation.
 * Property-tested against `new Big(text)`.
 */
function decimalOfValidText(text: string): Decimal {
  const length = text.length;
  let index = 0;
  let sign = 1;
  const first = text.charCodeAt(0);
  if (first === 45) {
    sign = -1;
    index = 1;
  } else if (first === 43) {
    index = 1;
  }
  let point = text.indexOf('.', index);
  if (point < 0) point = length;
  // The first significant digit: past leading zeros and the point.
  let start = index;
  while (start < length) {
    const code = text.charCodeAt(start);
    if (code !== 48 && code !== 46) break;
    start += 1;
  }
  const value = Object.create(Big.prototype) as { s: number; e: number; c: number[] } & Decimal;
  value.s = sign;
  if (start === length) {
    value.e = 0;
    value.c = [0];
  } else {
    let end = length - 1;
    for (;;) {
      const code = text.charCodeAt(end);
      if (code !== 48 && code !== 46) break;
      end -= 1;
    }
    const digits: number[] = [];
    for (let position = start; position <= end; position++) {
      const code = text.charCodeAt(position);
      if (code !== 46) digits.push(code - 48);
    }
    value.e = start < point ? point - start - 1 : point - start;
    value.c = digits;
  }
  // As big.js's constructor does: each value names its own (private) constructor.
  (value as { constructor: unknown }).constructor = Big;
  return value;
}

/**
 * Makes a decimal from a string, a bigint or an integer. Fractional JavaScript numbers are
 * refused: they have already passed through binary floating point.
 */
export function decimal(value: string | bigint | number | Decimal): Decimal {
  if (typeof value === 'string') return parseDecimal(value);
  if (typeof value === 'bigint') return new Big(value.toString());
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new PaperbotError(
        'INVALID_DECIMAL',
        `only safe integers convert to decimals directly, got ${value}; pass a decimal string`,
      );
    }
    return new Big(value);
  }
  return value;
}

/** The canonical wire form: plain notation, no exponent, no trailing zeros, never `-0`. */
export function toWire(value: Decimal): string {
  const digits = value.c;
  const exponent = value.e;
  if (digits[0] === 0) {
    // Zero (any sign): as big.js prints it.
    const text = value.toFixed();
    return text === '-0' ? '0' : text;
  }
  // big.js's plain notation (`toFixed()`), written out digit by digit without a joined copy.
  let text = '';
  if (exponent < 0) {
    text = '0.';
    for (let place = -1; place > exponent; place--) text += '0';
    for (const digit of digits) text += digit;
  } else {
    for (let index = 0; index < digits.length; index++) {
      if (index === exponent + 1) text += '.';
      text += digits[index];
    }
    for (let index = digits.length; index <= exponent; index++) text += '0';
  }
  return value.s < 0 ? `-${text}` : text;
}

/** Wire form with exactly `places` decimals (reports, fixed-precision money), half-even. */
export function toFixedPlaces(value: Decimal, places: number): string {
  const text = value.toFixed(places, Big.roundHalfEven);
  return /^-0(?:\.0*)?$/.test(text) ? text.slice(1) : text;
}

export const ZERO: Decimal = new Big(0);
export const ONE: Decimal = new Big(1);

export function minDecimal(a: Decimal, b: Decimal): Decimal {
  return a.lte(b) ? a : b;
}

export function maxDecimal(a: Decimal, b: Decimal): Decimal {
  return a.gte(b) ? a : b;
}

export function sumDecimals(values: Iterable<Decimal>): Decimal {
  let total = ZERO;
  for (const value of values) total = total.plus(value);
  return total;
}
