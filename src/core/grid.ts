/**
 * Tick and step math. Prices live on a market's `price_tick` grid and quantities on its
 * `quantity_step` grid (interface convention 6).
 *
 * Rounding directions, chosen so that rounding never makes an order worse for its owner:
 * - a buy price rounds down (never pay more than asked);
 * - a sell price rounds up (never sell for less than asked);
 * - a quantity rounds down (never trade more than asked); if that leaves zero, or less than
 *   the minimum, the order is refused rather than enlarged.
 */
import { Big, type Decimal, toWire, ZERO } from './decimal.ts';
import { PaperbotError } from './errors.ts';

export type RoundingDirection = 'down' | 'up' | 'nearest';
export type OrderSide = 'buy' | 'sell';

/** Rounds to a multiple of `increment`: down means toward minus infinity, up toward plus. */
export function roundToIncrement(
  value: Decimal,
  increment: Decimal,
  direction: RoundingDirection,
): Decimal {
  if (increment.lte(ZERO)) {
    throw new PaperbotError(
      'INVALID_INCREMENT',
      `increment must be positive, got ${toWire(increment)}`,
    );
  }
  const units = value.div(increment);
  const negative = units.lt(ZERO);
  let mode: 0 | 1 | 2 | 3;
  if (direction === 'nearest') mode = Big.roundHalfEven;
  else if ((direction === 'down') !== negative) mode = Big.roundDown;
  else mode = Big.roundUp;
  return units.round(0, mode).times(increment);
}

export function isOnIncrement(value: Decimal, increment: Decimal): boolean {
  return value.mod(increment).eq(ZERO);
}

export function priceRoundingDirection(side: OrderSide): RoundingDirection {
  return side === 'buy' ? 'down' : 'up';
}

export function roundPrice(price: Decimal, tick: Decimal, side: OrderSide): Decimal {
  return roundToIncrement(price, tick, priceRoundingDirection(side));
}

export function roundQuantity(quantity: Decimal, step: Decimal): Decimal {
  return roundToIncrement(quantity, step, 'down');
}

export interface SizeRules {
  readonly minimumQuantity: Decimal | null;
  readonly minimumNotional: Decimal | null;
}

export type SizeIssue =
  | { readonly rule: 'minimum_quantity'; readonly limit: string; readonly observed: string }
  | { readonly rule: 'minimum_notional'; readonly limit: string; readonly observed: string }
  | { readonly rule: 'positive_quantity'; readonly limit: string; readonly observed: string };

/** Every size rule the order breaks (empty when it passes); notional = price × quantity. */
export function checkSize(quantity: Decimal, price: Decimal, rules: SizeRules): SizeIssue[] {
  const issues: SizeIssue[] = [];
  if (quantity.lte(ZERO)) {
    issues.push({ rule: 'positive_quantity', limit: '0', observed: toWire(quantity) });
  }
  if (rules.minimumQuantity && quantity.lt(rules.minimumQuantity)) {
    issues.push({
      rule: 'minimum_quantity',
      limit: toWire(rules.minimumQuantity),
      observed: toWire(quantity),
    });
  }
  const notional = quantity.times(price);
  if (rules.minimumNotional && notional.lt(rules.minimumNotional)) {
    issues.push({
      rule: 'minimum_notional',
      limit: toWire(rules.minimumNotional),
      observed: toWire(notional),
    });
  }
  return issues;
}

/**
 * Converts between decimals and integer units of one increment (ticks or steps). Engines keep
 * prices and sizes as integers and only build decimals at their edges.
 */
export class IncrementGrid {
  readonly increment: Decimal;

  constructor(increment: Decimal) {
    if (increment.lte(ZERO)) {
      throw new PaperbotError(
        'INVALID_INCREMENT',
        `increment must be positive, got ${toWire(increment)}`,
      );
    }
    this.increment = increment;
  }

  /** The integer number of increments in `value`; refuses values off the grid. */
  toUnits(value: Decimal): number {
    const units = value.div(this.increment);
    if (!units.eq(units.round(0, Big.roundDown))) {
      throw new PaperbotError(
        'OFF_GRID',
        `${toWire(value)} is not a multiple of ${toWire(this.increment)}`,
      );
    }
    const result = Number(units.toFixed(0));
    if (!Number.isSafeInteger(result)) {
      throw new PaperbotError('OFF_GRID', `${toWire(value)} is too large for integer units`);
    }
    return result;
  }

  fromUnits(units: number): Decimal {
    return this.increment.times(units);
  }

  /** Wire string of `units` increments. */
  unitsToWire(units: number): string {
    return toWire(this.increment.times(units));
  }
}
