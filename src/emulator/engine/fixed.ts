/**
 * Fixed-point arithmetic for the engine's hot path. Prices and quantities live as integer ticks
 * and steps (JavaScript numbers, always safe integers); money lives as a bigint count of
 * 10^-18 pUSDC. Products of a price, a quantity and a rate stay exact at that scale (the config
 * loader checks that their decimals fit), and the few divisions (margin from leverage, average
 * prices, proportional cost) round explicitly. Decimal strings are built only at the edges.
 *
 * big.js (src/core/decimal.ts) would be exact too, but costs microseconds per operation; these
 * helpers cost tens of nanoseconds, which is what lets the engine match well above 100,000
 * orders a second.
 */

export const MONEY_SCALE = 18;
export const MONEY_ONE = 10n ** 18n;
/** Divisions round to multiples of 10^-10, so derived figures stay readable on the wire. */
export const DERIVED_DECIMALS = 10;
export const DERIVED_QUANTUM = 10n ** BigInt(MONEY_SCALE - DERIVED_DECIMALS);

const DECIMAL_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?$/;

/**
 * The integer `text × 10^scale`, or null when `text` is not a decimal string or has non-zero
 * digits beyond `scale` decimals.
 */
export function parseScaled(text: string, scale: number): bigint | null {
  const match = DECIMAL_TEXT.exec(text);
  if (!match) return null;
  const sign = match[1];
  const whole = match[2] ?? '';
  let fraction = match[3] ?? '';
  if (whole === '' && fraction === '') return null;
  if (fraction.length > scale) {
    if (!/^0*$/.test(fraction.slice(scale))) return null;
    fraction = fraction.slice(0, scale);
  }
  const digits = `${whole}${fraction.padEnd(scale, '0')}`.replace(/^0+(?=\d)/, '');
  const value = BigInt(digits === '' ? '0' : digits);
  return sign === '-' ? -value : value;
}

/** Strings of 0 to 36 zeros, for the leading zeros of a fraction. */
const ZEROS: readonly string[] = Array.from({ length: 37 }, (_, count) => '0'.repeat(count));

/** Decimal wire text of `value × 10^-scale`: no exponent, no trailing zeros, never `-0`. */
export function formatScaled(value: bigint | number, scale: number): string {
  const negative = value < 0;
  const digits = (negative ? -value : value).toString();
  let text = digits;
  if (scale > 0) {
    // Built from the digits in one step (no padded copy, no concatenation of slices of it).
    const point = digits.length - scale;
    const stop = point > 0 ? point : 0;
    let end = digits.length;
    while (end > stop && digits.charCodeAt(end - 1) === 48) end--;
    if (point > 0) {
      text =
        end === point
          ? digits.slice(0, point)
          : `${digits.slice(0, point)}.${digits.slice(point, end)}`;
    } else if (end === 0) {
      text = '0';
    } else {
      text = `0.${ZEROS[-point] ?? '0'.repeat(-point)}${digits.slice(0, end)}`;
    }
  }
  return negative && text !== '0' ? `-${text}` : text;
}

/** Wire text of a 10^-18 money amount. */
export function formatMoney(value: bigint): string {
  return formatScaled(value, MONEY_SCALE);
}

export type RoundingMode = 'down' | 'up' | 'half-even';

/** `numerator / denominator` rounded as asked; `down` and `up` are toward minus and plus infinity. */
export function divideRounded(numerator: bigint, denominator: bigint, mode: RoundingMode): bigint {
  if (denominator === 0n) throw new RangeError('division by zero');
  if (denominator < 0n) {
    numerator = -numerator;
    denominator = -denominator;
  }
  // bigint division truncates toward zero: the remainder has the numerator's sign.
  const quotient = numerator / denominator;
  const remainder = numerator % denominator;
  if (remainder === 0n) return quotient;
  if (mode === 'down') return remainder < 0n ? quotient - 1n : quotient;
  if (mode === 'up') return remainder > 0n ? quotient + 1n : quotient;
  const floor = remainder < 0n ? quotient - 1n : quotient;
  const twice = (remainder < 0n ? remainder + denominator : remainder) * 2n;
  if (twice > denominator) return floor + 1n;
  if (twice < denominator) return floor;
  return floor % 2n === 0n ? floor : floor + 1n;
}

/** Money divided by an integer, rounded to the derived quantum (10^-10 pUSDC). */
export function divideMoney(amount: bigint, divisor: bigint, mode: RoundingMode): bigint {
  return divideRounded(amount, divisor * DERIVED_QUANTUM, mode) * DERIVED_QUANTUM;
}

export function minBigint(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

export function maxBigint(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

const FORMAT_CACHE_SIZE = 4096;

/** Powers of ten that are exact doubles, for the fast path of `UnitGrid.unitsOf`. */
const POWERS_OF_TEN: readonly number[] = Array.from({ length: 16 }, (_, power) => 10 ** power);

/**
 * The integer `text × 10^scale` as a number when `text` is a plain unsigned decimal of at most
 * 15 digits and the result is a safe integer; null when it has non-zero digits beyond `scale`;
 * undefined when the text needs the general parser (signs, long or malformed text).
 */
function parseSmallScaled(text: string, scale: number): number | null | undefined {
  const length = text.length;
  if (length === 0 || length > 16) return undefined;
  let value = 0;
  let digits = 0;
  let fractionDigits = -1;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code === 46) {
      if (fractionDigits >= 0) return undefined;
      fractionDigits = 0;
      continue;
    }
    if (code < 48 || code > 57) return undefined;
    value = value * 10 + (code - 48);
    digits++;
    if (fractionDigits >= 0) fractionDigits++;
  }
  if (digits === 0 || digits > 15) return undefined;
  if (fractionDigits < 0) fractionDigits = 0;
  if (fractionDigits > scale) {
    const divisor = POWERS_OF_TEN[fractionDigits - scale]!;
    if (value % divisor !== 0) return null;
    return value / divisor;
  }
  const shift = scale - fractionDigits;
  if (shift >= POWERS_OF_TEN.length) return undefined;
  const scaled = value * POWERS_OF_TEN[shift]!;
  return Number.isSafeInteger(scaled) ? scaled : undefined;
}

/**
 * One increment grid (a price tick or a quantity step) as `mantissa × 10^-decimals`, with the
 * conversions between wire text and integer units.
 */
export class UnitGrid {
  readonly text: string;
  readonly mantissa: bigint;
  readonly mantissaNumber: number;
  readonly decimals: number;
  /** One unit as a 10^-18 scaled amount (null for an increment finer than 10^-18). */
  private readonly scaledUnit: bigint | null;
  private readonly mantissaIsSafe: boolean;
  private readonly texts = new Map<number, string>();

  constructor(incrementText: string) {
    const fraction = incrementText.split('.')[1] ?? '';
    const decimals = fraction.replace(/0+$/, '').length;
    const mantissa = parseScaled(incrementText, decimals);
    if (mantissa === null || mantissa <= 0n) {
      throw new RangeError(`an increment must be a positive decimal, got ${incrementText}`);
    }
    this.text = formatScaled(mantissa, decimals);
    this.mantissa = mantissa;
    this.mantissaNumber = Number(mantissa);
    this.mantissaIsSafe = Number.isSafeInteger(this.mantissaNumber);
    this.decimals = decimals;
    this.scaledUnit =
      decimals <= MONEY_SCALE ? mantissa * 10n ** BigInt(MONEY_SCALE - decimals) : null;
  }

  /** Integer units of `text`, or null when it is off the grid, not positive-safe or malformed. */
  unitsOf(text: string): number | null {
    const small = this.mantissaIsSafe ? parseSmallScaled(text, this.decimals) : undefined;
    if (small === null) return null;
    if (small !== undefined) {
      if (small % this.mantissaNumber !== 0) return null;
      const units = small / this.mantissaNumber;
      // A quotient is a double even when whole; kept as one in an object field it gets a heap
      // box of its own (and makes the field a boxed double in every object of that shape).
      return units <= 0x3fffffff ? units | 0 : units;
    }
    const scaled = parseScaled(text, this.decimals);
    if (scaled === null || scaled % this.mantissa !== 0n) return null;
    const units = scaled / this.mantissa;
    if (units > BigInt(Number.MAX_SAFE_INTEGER) || units < -BigInt(Number.MAX_SAFE_INTEGER)) {
      return null;
    }
    return Number(units);
  }

  /** Units of `text` rounded toward minus (`down`) or plus (`up`) infinity; null if malformed. */
  roundedUnitsOf(text: string, mode: RoundingMode, extraDecimals = 18): number | null {
    const scale = this.decimals + extraDecimals;
    const scaled = parseScaled(text, scale);
    if (scaled === null) return null;
    const units = divideRounded(scaled, this.mantissa * 10n ** BigInt(extraDecimals), mode);
    return Number(units);
  }

  /** Units of a 10^-18 scaled amount rounded as asked. */
  unitsOfScaled(value: bigint, mode: RoundingMode): number {
    return Number(divideRounded(value, this.unitAmount(), mode));
  }

  /** The 10^-18 scaled value of `units`. */
  scaledOf(units: number): bigint {
    return BigInt(units) * this.unitAmount();
  }

  /** One unit as a 10^-18 scaled amount. */
  unitAmount(): bigint {
    if (this.scaledUnit === null) {
      throw new RangeError(`increment ${this.text} is finer than 10^-${MONEY_SCALE}`);
    }
    return this.scaledUnit;
  }

  /** Wire text of `units`. Prices and sizes repeat a lot, so recent texts are kept. */
  format(units: number): string {
    const cached = this.texts.get(units);
    if (cached !== undefined) return cached;
    const text = this.formatUncached(units);
    if (this.texts.size >= FORMAT_CACHE_SIZE) this.texts.clear();
    this.texts.set(units, text);
    return text;
  }

  /**
   * Wire text of `units`, not kept: for figures that rarely repeat (a simulation's maximum
   * quantity moves with the account's capital), which would otherwise push the repeating
   * prices and sizes out of the kept texts.
   */
  formatUncached(units: number): string {
    const product = units * this.mantissaNumber;
    return Number.isSafeInteger(product)
      ? formatScaled(product, this.decimals)
      : formatScaled(BigInt(units) * this.mantissa, this.decimals);
  }
}
