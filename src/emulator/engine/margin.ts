/**
 * Margin, profit and liquidation formulas, on bigint amounts scaled by 10^18 (see fixed.ts).
 * Pure functions: the exchange feeds them positions and prices; docs/emulator.md states the
 * same formulas in words.
 *
 * Notation: q quantity (base units), E entry price (cost basis / q), P a price, mmr the market's
 * maintenance margin rate, C the collateral backing a position (its isolated margin, or for a
 * cross position the account's cross collateral net of the other cross positions).
 */
import { DERIVED_QUANTUM, divideMoney, divideRounded, MONEY_ONE } from './fixed.ts';

export type PositionDirection = 1 | -1;

/** Scaled product of two scaled values, rounded as asked. */
export function multiplyScaled(a: bigint, b: bigint, mode: 'down' | 'up' = 'down'): bigint {
  return divideRounded(a * b, MONEY_ONE, mode);
}

const leverageDivisors: bigint[] = [];
const MONEY_ONE_SQUARED = MONEY_ONE * MONEY_ONE;

/** Initial margin = notional / leverage, rounded up to 10^-10 so margin is never short. */
export function initialMargin(notional: bigint, leverage: number): bigint {
  if (!Number.isInteger(leverage) || leverage < 1 || leverage > 1000) {
    return divideMoney(notional, BigInt(leverage), 'up');
  }
  let divisor = leverageDivisors[leverage];
  if (divisor === undefined) {
    divisor = BigInt(leverage) * DERIVED_QUANTUM;
    leverageDivisors[leverage] = divisor;
  }
  return divideRounded(notional, divisor, 'up') * DERIVED_QUANTUM;
}

/** Maintenance margin = position value × mmr, rounded up. */
export function maintenanceMargin(positionValue: bigint, maintenanceRate: bigint): bigint {
  return multiplyScaled(positionValue, maintenanceRate, 'up');
}

/** Unrealized PnL at `value` (q × mark): long value − cost, short cost − value. */
export function unrealizedPnl(
  direction: PositionDirection,
  costBasis: bigint,
  value: bigint,
): bigint {
  return direction === 1 ? value - costBasis : costBasis - value;
}

/** The cost basis net of the collateral, the position's way; null when nothing can be liquidated. */
function liquidationNumerator(
  direction: PositionDirection,
  quantity: bigint,
  costBasis: bigint,
  collateral: bigint,
): bigint | null {
  if (quantity <= 0n) return null;
  const numerator = direction === 1 ? costBasis - collateral : costBasis + collateral;
  return numerator > 0n ? numerator : null;
}

/** 1 less (long) or plus (short) the maintenance rate, as a 10^-18 amount. */
function maintenanceFactor(direction: PositionDirection, maintenanceRate: bigint): bigint {
  return direction === 1 ? MONEY_ONE - maintenanceRate : MONEY_ONE + maintenanceRate;
}

/**
 * The price at which collateral + unrealized PnL equals maintenance margin:
 * long  C + q(P − E) = q·P·mmr  →  P = (q·E − C) / (q(1 − mmr))
 * short C + q(E − P) = q·P·mmr  →  P = (q·E + C) / (q(1 + mmr))
 * Null when no positive price satisfies it (the position cannot be liquidated).
 * The scaled price is rounded onto the liquidated side (long down, short up), so the position
 * is liquidated at the returned price.
 */
export function liquidationPrice(
  direction: PositionDirection,
  quantity: bigint,
  costBasis: bigint,
  collateral: bigint,
  maintenanceRate: bigint,
): bigint | null {
  const numerator = liquidationNumerator(direction, quantity, costBasis, collateral);
  if (numerator === null) return null;
  const rateFactor = maintenanceFactor(direction, maintenanceRate);
  const price = divideRounded(
    numerator * MONEY_ONE * MONEY_ONE,
    quantity * rateFactor,
    direction === 1 ? 'down' : 'up',
  );
  return price > 0n ? price : null;
}

/**
 * `liquidationPrice` on a price grid: the tick count, rounded as the price is (long down, short
 * up) and at least 1, or null when there is no such price. `tickAmount` is one tick as a 10^-18
 * amount. Rounding twice the same way equals rounding once (floor(floor(a / b) / c) =
 * floor(a / (b·c)) for positive integers, likewise ceiling), so one division does both.
 */
export function liquidationTicks(
  direction: PositionDirection,
  quantity: bigint,
  costBasis: bigint,
  collateral: bigint,
  maintenanceRate: bigint,
  tickAmount: bigint,
): number | null {
  const numerator = liquidationNumerator(direction, quantity, costBasis, collateral);
  if (numerator === null) return null;
  const rateFactor = maintenanceFactor(direction, maintenanceRate);
  if (rateFactor <= 0n) return null;
  const dividend = numerator * MONEY_ONE_SQUARED;
  const divisor = quantity * rateFactor;
  // A long's price rounds down: it is positive only when the dividend reaches the divisor.
  if (direction === 1 && dividend < divisor) return null;
  const ticks = Number(
    divideRounded(dividend, divisor * tickAmount, direction === 1 ? 'down' : 'up'),
  );
  return ticks > 1 ? ticks : 1;
}

/** Whether collateral + unrealized PnL has fallen to the maintenance margin or below. */
export function isBelowMaintenance(collateral: bigint, pnl: bigint, maintenance: bigint): boolean {
  return collateral + pnl <= maintenance;
}

/**
 * Cost basis removed when `reduced` of `quantity` is closed: proportional, rounded half-even
 * to 10^-10; the last reduction removes exactly what is left, so the sum always matches.
 */
export function proportionalPart(total: bigint, reduced: number, quantity: number): bigint {
  if (reduced >= quantity) return total;
  return (
    divideRounded(total * BigInt(reduced), BigInt(quantity) * DERIVED_QUANTUM, 'half-even') *
    DERIVED_QUANTUM
  );
}

export interface MarginLine {
  readonly isolated: boolean;
  /** Margin held by the position (initial margin of what is open). */
  readonly margin: bigint;
  readonly pnl: bigint;
}

export interface AccountFigures {
  readonly totalEquity: bigint;
  readonly available: bigint;
  readonly inPositions: bigint;
  readonly unrealizedPnl: bigint;
}

/**
 * total_equity   = wallet + Σ unrealized PnL
 * in_positions   = Σ position margin
 * available      = wallet − Σ position margin − margin reserved by open orders
 *                  + the net unrealized loss of cross positions (a net gain is not spendable
 *                  until realized; isolated losses are borne by the isolated margin),
 *                  floored at 0.
 */
export function accountFigures(
  wallet: bigint,
  reserved: bigint,
  lines: Iterable<MarginLine>,
): AccountFigures {
  let pnl = 0n;
  let margin = 0n;
  let crossPnl = 0n;
  for (const line of lines) {
    pnl += line.pnl;
    margin += line.margin;
    if (!line.isolated) crossPnl += line.pnl;
  }
  return accountFiguresOfTotals(wallet, reserved, margin, pnl, crossPnl);
}

/** `accountFigures` from the sums over the positions (Σ margin, Σ PnL, Σ PnL of cross ones). */
export function accountFiguresOfTotals(
  wallet: bigint,
  reserved: bigint,
  margin: bigint,
  pnl: bigint,
  crossPnl: bigint,
): AccountFigures {
  return {
    totalEquity: wallet + pnl,
    available: availableOfTotals(wallet, reserved, margin, crossPnl),
    inPositions: margin,
    unrealizedPnl: pnl,
  };
}

/** `available` alone: isolated positions' PnL does not enter it. */
export function availableOfTotals(
  wallet: bigint,
  reserved: bigint,
  margin: bigint,
  crossPnl: bigint,
): bigint {
  const free = wallet - margin - reserved + (crossPnl < 0n ? crossPnl : 0n);
  return free > 0n ? free : 0n;
}
