/**
 * Exact decimal arithmetic on scaled integers, for hot paths (the risk gate, strategy helpers):
 * a value is `units / 10^scale` with `units` a bigint, so sums, differences, products and
 * comparisons are exact whatever the magnitudes, with no digit arrays to allocate as big.js
 * does. Values cross to and from `Decimal` (./decimal.ts) and wire text at the edges; every
 * result equals big.js's to the last digit (property-tested against it).
 */
import { Big, type Decimal, DECIMAL_PATTERN, parseDecimal } from './decimal.ts';
import { PaperbotError } from './errors.ts';
import { type RoundingDirection, roundToIncrement as roundDecimalToIncrement } from './grid.ts';

export interface Scaled {
  readonly units: bigint;
  /** Decimal places, 0 or more. */
  readonly scale: number;
}

const POWERS: bigint[] = [1n];
for (let places = 1; places <= 64; places++) POWERS.push(POWERS[places - 1]! * 10n);

/** 10^places as a bigint. */
export function powerOfTen(places: number): bigint {
  return POWERS[places] ?? 10n ** BigInt(places);
}

export const SCALED_ZERO: Scaled = Object.freeze({ units: 0n, scale: 0 });

/** Integer text of at most 15 digits goes through a number, which is cheaper than BigInt(text). */
function unitsOf(digits: string): bigint {
  return digits.length <= 15 ? BigInt(Number(digits)) : BigInt(digits);
}

export function scaledOf(value: Decimal): Scaled {
  const digits = value.c;
  let units: bigint;
  if (digits.length <= 15) {
    // Up to 15 digits are exact in a number, and a number is far cheaper to build than text.
    let whole = 0;
    for (let index = 0; index < digits.length; index++) whole = whole * 10 + digits[index]!;
    units = BigInt(whole);
  } else {
    units = BigInt(digits.join(''));
  }
  let scale = digits.length - 1 - value.e;
  if (scale < 0) {
    units *= powerOfTen(-scale);
    scale = 0;
  }
  return { units: value.s < 0 ? -units : units, scale };
}

/**
 * `scaledOf`, converted once per decimal: for decimals read again and again (a market's tick and
 * minimums, a configured limit, a mark or a resting order's amounts across intents). Decimals
 * are never changed in place, and the WeakMap keeps an entry no longer than its decimal lives.
 */
const keptScaled = new WeakMap<Decimal, Scaled>();

export function scaledOfKept(value: Decimal): Scaled {
  let scaled = keptScaled.get(value);
  if (scaled === undefined) {
    scaled = scaledOf(value);
    keptScaled.set(value, scaled);
  }
  return scaled;
}

/** A decimal string (interface rule 1) as a scaled value; `null` when it is not one. */
export function parseScaled(text: string): Scaled | null {
  if (typeof text !== 'string' || !DECIMAL_PATTERN.test(text)) return null;
  let start = 0;
  let negative = false;
  const first = text.charCodeAt(0);
  if (first === 45 || first === 43) {
    negative = first === 45;
    start = 1;
  }
  const point = text.indexOf('.', start);
  const whole = point < 0 ? text.slice(start) : text.slice(start, point);
  const fraction = point < 0 ? '' : text.slice(point + 1);
  const units = unitsOf(whole + fraction);
  return { units: negative ? -units : units, scale: fraction.length };
}

/** Like `parseDecimal`: anything but a decimal string is an `INVALID_DECIMAL` error. */
export function parseScaledStrict(text: string): Scaled {
  const value = parseScaled(text);
  if (value === null) {
    throw new PaperbotError('INVALID_DECIMAL', `not a decimal string: ${JSON.stringify(text)}`);
  }
  return value;
}

/** The canonical wire form, as `toWire` prints the same value: no trailing zeros, never `-0`. */
export function scaledToWire(value: Scaled): string {
  let { units, scale } = value;
  if (units === 0n) return '0';
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString();
  let text: string;
  if (scale === 0) text = digits;
  else if (digits.length > scale) {
    text = `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  } else text = `0.${'0'.repeat(scale - digits.length)}${digits}`;
  return negative ? `-${text}` : text;
}

/** The decimal of `value`, built from its digits as big.js would parse its wire text. */
export function scaledToDecimal(value: Scaled): Decimal {
  return parseDecimal(scaledToWire(value));
}

/** `value` written with `scale` places (at least its own). */
function unitsAt(value: Scaled, scale: number): bigint {
  return scale === value.scale ? value.units : value.units * powerOfTen(scale - value.scale);
}

export function scaledPlus(a: Scaled, b: Scaled): Scaled {
  if (a.scale === b.scale) return { units: a.units + b.units, scale: a.scale };
  const scale = Math.max(a.scale, b.scale);
  return { units: unitsAt(a, scale) + unitsAt(b, scale), scale };
}

export function scaledMinus(a: Scaled, b: Scaled): Scaled {
  if (a.scale === b.scale) return { units: a.units - b.units, scale: a.scale };
  const scale = Math.max(a.scale, b.scale);
  return { units: unitsAt(a, scale) - unitsAt(b, scale), scale };
}

export function scaledTimes(a: Scaled, b: Scaled): Scaled {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

export function scaledNegate(a: Scaled): Scaled {
  return { units: -a.units, scale: a.scale };
}

export function scaledAbs(a: Scaled): Scaled {
  return a.units < 0n ? { units: -a.units, scale: a.scale } : a;
}

/** -1, 0 or 1 as `a` is below, equal to or above `b`. */
export function scaledCompare(a: Scaled, b: Scaled): -1 | 0 | 1 {
  let left = a.units;
  let right = b.units;
  if (a.scale > b.scale) right *= powerOfTen(a.scale - b.scale);
  else if (b.scale > a.scale) left *= powerOfTen(b.scale - a.scale);
  return left < right ? -1 : left > right ? 1 : 0;
}

/** -1, 0 or 1 as the value is negative, zero or positive. */
export function scaledSign(a: Scaled): -1 | 0 | 1 {
  return a.units < 0n ? -1 : a.units > 0n ? 1 : 0;
}

/** Floor, ceiling or half-even of `numerator / denominator` (denominator above zero). */
function divideRounded(numerator: bigint, denominator: bigint, direction: RoundingDirection) {
  let quotient = numerator / denominator;
  const remainder = numerator % denominator;
  if (remainder === 0n) return quotient;
  // bigint division truncates toward zero; step to the floor first.
  if (remainder < 0n) quotient -= 1n;
  const rest = remainder < 0n ? remainder + denominator : remainder;
  if (direction === 'up') return quotient + 1n;
  if (direction === 'nearest') {
    const twice = rest * 2n;
    if (twice > denominator || (twice === denominator && quotient % 2n !== 0n))
      return quotient + 1n;
  }
  return quotient;
}

/**
 * Below this denominator the exact quotient and big.js's (36 places, half-even, then rounded to
 * a whole number) always agree: a fraction n/d that is not whole lies at least 1/d from every
 * whole and every half, far more than the 0.5e-36 big.js may move it.
 */
const EXACT_DENOMINATOR_BOUND = powerOfTen(35);

/**
 * `roundToIncrement` of ./grid.ts (down toward minus infinity, up toward plus infinity, nearest
 * half-even), the same value to the last digit. `increment` must be above zero.
 */
export function scaledRoundToIncrement(
  value: Scaled,
  increment: Scaled,
  direction: RoundingDirection,
): Scaled {
  if (increment.units <= 0n) {
    return scaledOf(
      roundDecimalToIncrement(scaledToDecimal(value), scaledToDecimal(increment), direction),
    );
  }
  // value / increment = (value.units * 10^increment.scale) / (increment.units * 10^value.scale)
  const numerator = value.units * powerOfTen(increment.scale);
  const denominator = increment.units * powerOfTen(value.scale);
  if (denominator >= EXACT_DENOMINATOR_BOUND) {
    // Digits beyond big.js's 36 places of division: let big.js decide, as it always has.
    return scaledOf(
      roundDecimalToIncrement(scaledToDecimal(value), scaledToDecimal(increment), direction),
    );
  }
  const whole = divideRounded(numerator, denominator, direction);
  return { units: whole * increment.units, scale: increment.scale };
}

/**
 * `a / b` rounded to `places` decimal places, up (away from zero) or down (toward zero): big.js
 * `a.div(b).round(places, Big.roundUp or Big.roundDown)`, the same digits. big.js divides to 36
 * places first; where that can decide the result, and for a negative dividend or a divisor not
 * above zero, big.js computes it.
 */
export function scaledDivide(
  a: Scaled,
  b: Scaled,
  places: number,
  direction: 'up' | 'down',
): Scaled {
  // a / b * 10^places = (a.units * 10^(b.scale + places)) / (b.units * 10^a.scale)
  const numerator = a.units * powerOfTen(b.scale + places);
  const denominator = b.units * powerOfTen(a.scale);
  // A fraction n/d that is not whole lies at least 1/d from a whole, and big.js may move
  // a / b * 10^places by up to 0.5 * 10^(places - 36).
  if (a.units < 0n || b.units <= 0n || places >= 35 || denominator >= powerOfTen(35 - places)) {
    const quotient = scaledToDecimal(a)
      .div(scaledToDecimal(b))
      .round(places, direction === 'up' ? Big.roundUp : Big.roundDown);
    return scaledOf(quotient);
  }
  return { units: divideRounded(numerator, denominator, direction), scale: places };
}
