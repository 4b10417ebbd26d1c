/**
 * Division and grid rounding of decimals in integer arithmetic, with the results of big.js to
 * the last digit: `divide(a, b)` is `a.div(b)` (36 decimal places, half-even, as
 * src/core/decimal.ts sets big.js) and `roundToIncrement` is the one of src/core/grid.ts, which
 * starts with such a division. big.js divides digit by digit to all 36 places, which made these
 * the largest arithmetic cost of quoting: a strategy and the risk gate round every quote, and
 * the market maker sizes every quote with a division. The rounding itself is src/core/scaled.ts's,
 * which the risk gate uses on scaled values directly.
 */
import { Big, type Decimal, parseDecimal, ZERO } from '../core/decimal.ts';
import {
  powerOfTen,
  scaledOf,
  scaledOfKept,
  scaledRoundToIncrement,
  scaledToDecimal,
} from '../core/scaled.ts';
import {
  type RoundingDirection,
  roundToIncrement as roundToIncrementSlowly,
} from '../core/grid.ts';

/** Decimal places big.js keeps in a division (`Big.DP` in src/core/decimal.ts). */
const PLACES = Big.DP;
const PLACES_FACTOR = 10n ** BigInt(PLACES);

/** `a / b` to 36 places, half-even, scaled by 10^36 (a at or above zero, b above zero). */
function scaledQuotient(a: Decimal, b: Decimal): bigint {
  const dividend = scaledOf(a);
  const divisor = scaledOf(b);
  const numerator = dividend.units * powerOfTen(divisor.scale) * PLACES_FACTOR;
  const denominator = divisor.units * powerOfTen(dividend.scale);
  let quotient = numerator / denominator;
  const twice = (numerator % denominator) * 2n;
  if (twice > denominator || (twice === denominator && quotient % 2n === 1n)) quotient += 1n;
  return quotient;
}

/** `units / 10^scale` (units at or above zero). */
function decimalOf(units: bigint, scale: number): Decimal {
  const digits = units.toString().padStart(scale + 1, '0');
  return parseDecimal(`${digits.slice(0, -scale)}.${digits.slice(-scale)}`);
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
  // The increment is a market's tick or step, the same decimal call after call.
  return scaledToDecimal(
    scaledRoundToIncrement(scaledOf(value), scaledOfKept(increment), direction),
  );
}
