/**
 * Division and grid rounding of decimals in integer arithmetic, with the results of big.js to
 * the last digit: `divide(a, b)` is `a.div(b)` (36 decimal places, half-even, as
 * src/core/decimal.ts sets big.js) and `roundToIncrement` is the one of src/core/grid.ts, which
 * starts with such a division. big.js divides digit by digit to all 36 places, which made these
 * the largest arithmetic cost of quoting: a strategy and the risk gate round every quote, and
 * the market maker sizes every quote with a division.
 */
import { Big, type Decimal, ZERO } from '../core/decimal.ts';
import {
  type RoundingDirection,
  roundToIncrement as roundToIncrementSlowly,
} from '../core/grid.ts';

/** Decimal places big.js keeps in a division (`Big.DP` in src/core/decimal.ts). */
const PLACES = Big.DP;
const PLACES_FACTOR = 10n ** BigInt(PLACES);

/** A value at or above zero as `units / 10^scale`. */
function scaled(value: Decimal): { readonly units: bigint; readonly scale: number } {
  const units = BigInt(value.c.join(''));
  const scale = value.c.length - 1 - value.e;
  return scale >= 0 ? { units, scale } : { units: units * 10n ** BigInt(-scale), scale: 0 };
}

/** `a / b` to 36 places, half-even, scaled by 10^36 (a at or above zero, b above zero). */
function scaledQuotient(a: Decimal, b: Decimal): bigint {
  const dividend = scaled(a);
  const divisor = scaled(b);
  const numerator = dividend.units * 10n ** BigInt(divisor.scale) * PLACES_FACTOR;
  const denominator = divisor.units * 10n ** BigInt(dividend.scale);
  let quotient = numerator / denominator;
  const twice = (numerator % denominator) * 2n;
  if (twice > denominator || (twice === denominator && quotient % 2n === 1n)) quotient += 1n;
  return quotient;
}

/** `units / 10^scale` (units at or above zero). */
function decimalOf(units: bigint, scale: number): Decimal {
  const digits = units.toString().padStart(scale + 1, '0');
  return new Big(`${digits.slice(0, -scale)}.${digits.slice(-scale)}`);
}

/**
 * `a.div(b)`. Positive operands are divided here; others go to big.js (a zero divisor throws
 * there, and a negative quotient that rounds to zero keeps its sign).
 */
export function divide(a: Decimal, b: Decimal): Decimal {
  if (a.s < 0 || b.s < 0 || a.eq(ZERO) || b.eq(ZERO)) return a.div(b);
  return decimalOf(scaledQuotient(a, b), PLACES);
}

/**
 * `roundToIncrement` of src/core/grid.ts for a value at or above zero and a positive increment
 * (others go to it: a negative value rounds to a signed zero there).
 */
export function roundToIncrement(
  value: Decimal,
  increment: Decimal,
  direction: RoundingDirection,
): Decimal {
  if (value.s < 0 || increment.s < 0 || increment.eq(ZERO)) {
    return roundToIncrementSlowly(value, increment, direction);
  }
  // The quotient to 36 places, then to a whole number of increments, as big.js rounds it.
  const units = scaledQuotient(value, increment);
  let whole = units / PLACES_FACTOR;
  const rest = units % PLACES_FACTOR;
  if (rest !== 0n) {
    if (direction === 'up') whole += 1n;
    else if (direction === 'nearest') {
      const twice = rest * 2n;
      if (twice > PLACES_FACTOR || (twice === PLACES_FACTOR && whole % 2n === 1n)) whole += 1n;
    }
  }
  return new Big(whole.toString()).times(increment);
}
