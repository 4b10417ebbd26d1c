/**
 * What the risk rules share: the names a denial can carry, the shape of a decision, an order as
 * the rules see it, and the small readers of texts and limits every check uses. See
 * `evaluate.ts` for how the rules are put together.
 */
import { type Decimal, keptDecimal } from '../../core/decimal.ts';
import {
  parseScaled,
  type Scaled,
  scaledCompare,
  scaledOfKept,
  scaledSign,
} from '../../core/scaled.ts';
import type { Denial, Side, StampedIntent } from '../intents.ts';
import type { RiskConfig } from './config.ts';
import type { RiskOpenOrderView } from './view.ts';

/** Every rule name a denial can carry. Most match the configuration key that sets the limit. */
export const RiskRule = {
  tradingState: 'trading_state',
  unknownMarket: 'unknown_market',
  marketDisabled: 'market_disabled',
  marketData: 'market_data',
  marketDataAge: 'max_market_data_age_ms',
  routeReady: 'route_ready',
  referencePrice: 'reference_price',
  invalidQuantity: 'invalid_quantity',
  invalidPrice: 'invalid_price',
  priceRequired: 'price_required',
  priceOnMarketOrder: 'price_on_market_order',
  priceTick: 'price_tick',
  quantityStep: 'quantity_step',
  minimumQuantity: 'minimum_quantity',
  minimumNotional: 'minimum_notional',
  maxOrderQuantity: 'max_order_quantity',
  maxOrderNotional: 'max_order_notional',
  maxPositionQuantity: 'max_position_quantity',
  maxPositionNotional: 'max_position_notional',
  maxGrossExposure: 'max_gross_exposure',
  maxLeverage: 'max_leverage',
  maxAccountLeverage: 'max_account_leverage',
  maxOpenOrders: 'max_open_orders',
  maxOpenOrdersPerMarket: 'max_open_orders_per_market',
  maxOrdersPerSecond: 'max_orders_per_second',
  maxOrdersPerMinute: 'max_orders_per_minute',
  priceBand: 'price_band_percent',
  reduceOnly: 'reduce_only',
  unknownOrder: 'unknown_order',
  emptyAmend: 'empty_amend',
  noPosition: 'no_position',
  closeQuantityPercent: 'close_quantity_percent',
  maxSlippagePercent: 'max_slippage_percent',
} as const;
export type RiskRuleName = (typeof RiskRule)[keyof typeof RiskRule];

export type ExposureEffect = 'adds_exposure' | 'reduces_exposure' | 'no_exposure';

export type GateDecision =
  | {
      readonly allowed: true;
      /** The intent as it should be sent: price on the tick, quantity on the step. */
      readonly intent: StampedIntent;
      readonly effect: ExposureEffect;
    }
  | { readonly allowed: false; readonly denials: readonly Denial[] };

export const HUNDRED: Scaled = { units: 100n, scale: 0 };

export function deny(rule: RiskRuleName, limit: string, observed: string, message: string): Denial {
  return { rule, limit, observed, message };
}

export function decimalOrNull(text: string | undefined): Scaled | null {
  if (text === undefined) return null;
  // The intent's own texts were most often parsed already (by the strategy's own-order book).
  const kept = keptDecimal(text);
  return kept === undefined ? parseScaled(text) : scaledOfKept(kept);
}

/** Whether `value` is missing, at or below zero, or above `maximum`. */
export function outsideRange(value: Scaled | null, maximum: Scaled): boolean {
  return !value || scaledSign(value) <= 0 || scaledCompare(value, maximum) > 0;
}

/** An order as the rules see it, whether a new placement or the replacement made by an amend. */
export interface OrderShape {
  readonly marketId: string;
  readonly side: Side;
  readonly type: 'market' | 'limit';
  readonly quantityText: string;
  readonly priceText: string | undefined;
  readonly reduceOnly: boolean;
  /** `undefined` for amends: the replacement keeps the original order's leverage. */
  readonly leverage: number | undefined;
  readonly maxSlippagePercent: string | undefined;
  /** The order an amend replaces; it no longer counts among the open orders. */
  readonly replaces: RiskOpenOrderView | null;
}

export function haltedDenial(config: RiskConfig, reduceOnly: boolean): Denial {
  return deny(
    RiskRule.tradingState,
    config.halted_allows_reduce_only ? 'reduce-only orders while HALTED' : 'no orders while HALTED',
    'HALTED',
    reduceOnly
      ? 'trading is HALTED and halted_allows_reduce_only is false'
      : 'trading is HALTED: no new orders pass',
  );
}

/** Whether a configured limit is below `value` (`false` when there is no limit). */
export function limitBelow(limit: Decimal | null, value: Scaled): boolean {
  return limit !== null && scaledCompare(scaledOfKept(limit), value) < 0;
}
