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
  // big.js reads neither a leading '+' nor a bare trailing '.', both of which rule 1 allows.
  let normalized = text.charCodeAt(0) === 43 ? text.slice(1) : text;
  if (normalized.endsWith('.')) normalized = normalized.slice(0, -1);
  return new Big(normalized);
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
  const text = value.toFixed();
  return text === '-0' ? '0' : text;
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
