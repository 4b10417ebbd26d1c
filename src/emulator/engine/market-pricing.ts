/**
 * The per-market arithmetic of the hot path, from the market's config alone: the tick and step
 * grids, notional, fees, initial margin and the liquidation price, each from numbers or reduced
 * fractions where that is exact (checked against `margin.ts` in `math.test.ts`), and their wire
 * text. `MarketRuntime` (state.ts) extends it with the market's mutable state.
 */
import type { MarketConfig } from '../config.ts';
import {
  DERIVED_QUANTUM,
  divideRounded,
  formatMoney,
  formatScaled,
  MONEY_ONE,
  MONEY_SCALE,
  parseScaled,
  UnitGrid,
} from './fixed.ts';
import { initialMargin, liquidationTicks, multiplyScaled } from './margin.ts';

/**
 * A per-unit amount of 10^-18 pUSDC as `mantissa × 10^-scale` with a safe-integer mantissa, so
 * `units × amount` can be written as text from a number product; null when it cannot.
 */
interface UnitText {
  readonly mantissa: number;
  readonly scale: number;
}

function unitTextOf(perUnit: bigint | null): UnitText | null {
  if (perUnit === null || perUnit <= 0n) return null;
  let mantissa = perUnit;
  let scale = MONEY_SCALE;
  while (scale > 0 && mantissa % 10n === 0n) {
    mantissa /= 10n;
    scale--;
  }
  const number = Number(mantissa);
  return Number.isSafeInteger(number) ? { mantissa: number, scale } : null;
}

function greatestCommonDivisor(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/**
 * `liquidationTicks` divides numerator × 10^36 by steps × (step × rate factor × tick); these
 * are the two constants of that fraction reduced by their common divisor (same quotient, much
 * smaller integers). Null when the rate factor is not positive.
 */
interface LiquidationFraction {
  readonly multiplier: bigint;
  readonly perStep: bigint;
}

/** A decimal of the config as 10^-18 units (the config is checked: it parses). */
export function scaled(text: string): bigint {
  const value = parseScaled(text, MONEY_SCALE);
  if (value === null) throw new RangeError(`not a decimal: ${text}`);
  return value;
}

export interface MarketFees {
  readonly maker_rate: string;
  readonly taker_rate: string;
}

export class MarketPricing {
  readonly tick: UnitGrid;
  readonly step: UnitGrid;
  /** Money (10^-18 pUSDC) per one tick times one step. */
  readonly notionalFactor: bigint;
  readonly maintenanceRate: bigint;
  readonly makerRate: bigint;
  readonly takerRate: bigint;
  /**
   * Fee of one tick × step unit, when rate × unit is a whole number of 10^-18 pUSDC (always with
   * the config's limits on decimals): a fee is then units × this, exactly, with no rounding.
   */
  private readonly makerFeePerUnit: bigint | null;
  private readonly takerFeePerUnit: bigint | null;
  private readonly notionalText: UnitText | null;
  /** `notionalFactor` in derived quanta (10^-10 pUSDC) when a whole, safe number; else null. */
  private readonly notionalQuanta: number | null;
  /** By direction (long, short), made on first use. */
  private longLiquidation: LiquidationFraction | null | undefined;
  private shortLiquidation: LiquidationFraction | null | undefined;
  private readonly makerFeeText: UnitText | null;
  private readonly takerFeeText: UnitText | null;

  /** `fees`: the exchange's default rates, for a market whose config has none of its own. */
  constructor(config: MarketConfig, fees: MarketFees) {
    this.tick = new UnitGrid(config.price_tick);
    this.step = new UnitGrid(config.quantity_step);
    this.notionalFactor =
      this.tick.mantissa *
      this.step.mantissa *
      10n ** BigInt(MONEY_SCALE - this.tick.decimals - this.step.decimals);
    this.maintenanceRate = scaled(config.maintenance_margin_rate);
    const marketFees = config.fees ?? fees;
    this.makerRate = scaled(marketFees.maker_rate);
    this.takerRate = scaled(marketFees.taker_rate);
    const perUnit = (rate: bigint) =>
      (this.notionalFactor * rate) % MONEY_ONE === 0n
        ? (this.notionalFactor * rate) / MONEY_ONE
        : null;
    this.makerFeePerUnit = perUnit(this.makerRate);
    this.takerFeePerUnit = perUnit(this.takerRate);
    this.notionalText = unitTextOf(this.notionalFactor);
    const quanta = Number(this.notionalFactor / DERIVED_QUANTUM);
    this.notionalQuanta =
      this.notionalFactor % DERIVED_QUANTUM === 0n && Number.isSafeInteger(quanta) ? quanta : null;
    this.makerFeeText = unitTextOf(this.makerFeePerUnit);
    this.takerFeeText = unitTextOf(this.takerFeePerUnit);
  }

  /** Ticks × steps, the count of notional units. */
  units(priceTicks: number, steps: number): bigint {
    const product = priceTicks * steps;
    return Number.isSafeInteger(product) ? BigInt(product) : BigInt(priceTicks) * BigInt(steps);
  }

  notional(priceTicks: number, steps: number): bigint {
    return this.units(priceTicks, steps) * this.notionalFactor;
  }

  /**
   * `initialMargin(notional(priceTicks, steps), leverage)`: notional / leverage rounded up to a
   * derived quantum. When the notional in quanta is a safe integer, that is a division of
   * numbers (exact: remainder first, then an exact quotient), with no bigint in between.
   */
  initialMarginOf(priceTicks: number, steps: number, leverage: number): bigint {
    const quanta = this.notionalQuanta;
    if (quanta !== null && Number.isInteger(leverage) && leverage >= 1 && leverage <= 1000) {
      const total = priceTicks * steps * quanta;
      if (Number.isSafeInteger(total) && total >= 0) {
        const remainder = total % leverage;
        const quotient = (total - remainder) / leverage + (remainder > 0 ? 1 : 0);
        return BigInt(quotient) * DERIVED_QUANTUM;
      }
    }
    return initialMargin(this.notional(priceTicks, steps), leverage);
  }

  /** The fee on `notional` (which is `units` notional units): notional × rate, rounded up. */
  fee(units: bigint, notional: bigint, maker: boolean): bigint {
    const perUnit = maker ? this.makerFeePerUnit : this.takerFeePerUnit;
    if (perUnit !== null) return units * perUnit;
    return multiplyScaled(notional, maker ? this.makerRate : this.takerRate, 'up');
  }

  /** Wire text of `notional(priceTicks, steps)`, from a number product when it is exact. */
  formatNotional(priceTicks: number, steps: number): string {
    const unit = this.notionalText;
    if (unit !== null) {
      const product = priceTicks * steps * unit.mantissa;
      if (Number.isSafeInteger(product)) return formatScaled(product, unit.scale);
    }
    return formatMoney(this.notional(priceTicks, steps));
  }

  /** Wire text of the fee of an execution of `steps` at `priceTicks` (see `fee`). */
  formatFee(priceTicks: number, steps: number, maker: boolean): string {
    const unit = maker ? this.makerFeeText : this.takerFeeText;
    if (unit !== null) {
      const product = priceTicks * steps * unit.mantissa;
      if (Number.isSafeInteger(product)) return formatScaled(product, unit.scale);
    }
    const units = this.units(priceTicks, steps);
    return formatMoney(this.fee(units, units * this.notionalFactor, maker));
  }

  /**
   * `liquidationTicks` (margin.ts) of a position of `steps` in this market: the same result,
   * from one division of smaller integers. A long position whose fraction rounds to zero ticks
   * takes the general formula, which tells a price below one tick from no price at all.
   */
  liquidationTicks(
    direction: 1 | -1,
    steps: number,
    costBasis: bigint,
    collateral: bigint,
  ): number | null {
    if (steps <= 0) return null;
    const numerator = direction === 1 ? costBasis - collateral : costBasis + collateral;
    if (numerator <= 0n) return null;
    const fraction = this.liquidationFraction(direction);
    if (fraction === null) return null;
    const ticks = Number(
      divideRounded(
        numerator * fraction.multiplier,
        BigInt(steps) * fraction.perStep,
        direction === 1 ? 'down' : 'up',
      ),
    );
    if (ticks >= 1) return ticks;
    return liquidationTicks(
      direction,
      this.step.scaledOf(steps),
      costBasis,
      collateral,
      this.maintenanceRate,
      this.tick.unitAmount(),
    );
  }

  private liquidationFraction(direction: 1 | -1): LiquidationFraction | null {
    const known = direction === 1 ? this.longLiquidation : this.shortLiquidation;
    if (known !== undefined) return known;
    const rateFactor =
      direction === 1 ? MONEY_ONE - this.maintenanceRate : MONEY_ONE + this.maintenanceRate;
    let fraction: LiquidationFraction | null = null;
    if (rateFactor > 0n) {
      const dividend = MONEY_ONE * MONEY_ONE;
      const divisor = this.step.unitAmount() * rateFactor * this.tick.unitAmount();
      const common = greatestCommonDivisor(dividend, divisor);
      fraction = { multiplier: dividend / common, perStep: divisor / common };
    }
    if (direction === 1) this.longLiquidation = fraction;
    else this.shortLiquidation = fraction;
    return fraction;
  }
}
