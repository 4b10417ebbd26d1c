/**
 * An order's quantity onto its market's step and its price onto the tick (a buy's price rounds
 * down, a sell's up), or the denials that say why it cannot be.
 */
import { type Decimal, toWire } from '../../core/decimal.ts';
import { priceRoundingDirection, type RoundingDirection } from '../../core/grid.ts';
import {
  type Scaled,
  scaledOfKept,
  scaledRoundToIncrement,
  scaledSign,
  scaledToWire,
} from '../../core/scaled.ts';
import type { Denial } from '../intents.ts';
import { decimalOrNull, deny, type OrderShape, RiskRule, type RiskRuleName } from './rules.ts';
import type { RiskMarketView } from './view.ts';

/** What differs between rounding a quantity onto its step and a price onto its tick. */
interface GridField {
  readonly name: 'quantity' | 'price';
  readonly invalidRule: RiskRuleName;
  readonly gridRule: RiskRuleName;
  /** The increment as the market publishes it. */
  readonly increment: 'quantity step' | 'price tick';
  /** How a value that rounds to 0 is named: only a buy price rounds down among prices. */
  readonly roundsToZero: string;
}

const QUANTITY_FIELD: GridField = {
  name: 'quantity',
  invalidRule: RiskRule.invalidQuantity,
  gridRule: RiskRule.quantityStep,
  increment: 'quantity step',
  roundsToZero: 'quantity',
};

const PRICE_FIELD: GridField = {
  name: 'price',
  invalidRule: RiskRule.invalidPrice,
  gridRule: RiskRule.priceTick,
  increment: 'price tick',
  roundsToZero: 'buy price',
};

/** A requested quantity or price on the market's grid, or null with the reason among the denials. */
function roundOntoGrid(
  field: GridField,
  text: string,
  increment: Decimal | null,
  direction: RoundingDirection,
  marketId: string,
  denials: Denial[],
): Scaled | null {
  const requested = decimalOrNull(text);
  if (!requested || scaledSign(requested) <= 0) {
    denials.push(
      deny(
        field.invalidRule,
        'a positive decimal string',
        text,
        `${field.name} must be a positive decimal string, got ${JSON.stringify(text)}`,
      ),
    );
    return null;
  }
  if (!increment) {
    denials.push(
      deny(
        field.gridRule,
        `a ${field.increment}`,
        'none',
        `market ${marketId} publishes no ${field.increment} to round to`,
      ),
    );
    return null;
  }
  const rounded = scaledRoundToIncrement(requested, scaledOfKept(increment), direction);
  if (scaledSign(rounded) > 0) return rounded;
  const observed = scaledToWire(requested);
  const word = field.increment === 'quantity step' ? 'step' : 'tick';
  denials.push(
    deny(
      field.gridRule,
      toWire(increment),
      observed,
      `${field.roundsToZero} ${observed} rounds down to 0 on the ${word} ${toWire(increment)}`,
    ),
  );
  return null;
}

export function roundOrder(
  order: OrderShape,
  market: RiskMarketView,
  denials: Denial[],
): { quantity: Scaled | null; price: Scaled | null } {
  const quantity = roundOntoGrid(
    QUANTITY_FIELD,
    order.quantityText,
    market.quantityStep,
    'down',
    order.marketId,
    denials,
  );
  if (order.type === 'market') {
    if (order.priceText !== undefined) {
      denials.push(
        deny(
          RiskRule.priceOnMarketOrder,
          'no price',
          order.priceText,
          'a market order takes no price; bound it with max slippage percent',
        ),
      );
    }
    return { quantity, price: null };
  }
  if (order.priceText === undefined) {
    denials.push(deny(RiskRule.priceRequired, 'a price', 'none', 'a limit order needs a price'));
    return { quantity, price: null };
  }
  const price = roundOntoGrid(
    PRICE_FIELD,
    order.priceText,
    market.priceTick,
    priceRoundingDirection(order.side),
    order.marketId,
    denials,
  );
  return { quantity, price };
}
