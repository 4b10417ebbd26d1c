/**
 * Builders of wire objects and store records from the engine's working state. Decimal strings
 * are made here, at the edge, from integer ticks/steps and bigint money.
 */
import { executionStageOfStatus, type Order } from '../../protocol/index.ts';
import { DERIVED_QUANTUM, divideRounded, formatMoney, MONEY_ONE } from './fixed.ts';
import { BUY } from './order-book.ts';
import { type OrderState, ROUTE_ID } from './state.ts';

export { formatMoney };

/** `numerator / denominator` for two 10^-18 amounts, as a 10^-18 amount rounded to 10^-10. */
export function ratioScaled(numerator: bigint, denominator: bigint): bigint {
  return (
    divideRounded(numerator * MONEY_ONE, denominator * DERIVED_QUANTUM, 'half-even') *
    DERIVED_QUANTUM
  );
}

export function sideText(side: number): 'buy' | 'sell' {
  return side === BUY ? 'buy' : 'sell';
}

export function averageFillPrice(order: OrderState): string | null {
  if (order.filledSteps === 0) return null;
  return formatMoney(
    ratioScaled(order.filledNotional, order.market.step.scaledOf(order.filledSteps)),
  );
}

export function orderToWire(order: OrderState, timestamp: (epochMs: number) => string): Order {
  const market = order.market;
  return {
    trading_mode: 'paper',
    execution_account_id: order.account.id,
    request_id: order.requestId,
    order_id: order.id,
    client_order_id: order.clientOrderId,
    market_id: market.id,
    route_id: ROUTE_ID,
    side: sideText(order.side),
    type: order.type,
    quantity: market.step.format(order.quantitySteps),
    price: order.priceTicks === null ? null : market.tick.format(order.priceTicks),
    trigger_price: null,
    time_in_force: order.timeInForce,
    post_only: order.postOnly,
    reduce_only: order.reduceOnly,
    status: order.status,
    execution_stage: executionStageOfStatus[order.status],
    received_at: timestamp(order.receivedAt),
    updated_at: timestamp(order.updatedAt),
    filled_quantity: market.step.format(order.filledSteps),
    average_fill_price: averageFillPrice(order),
    last_event_sequence: order.lastEventSequence,
    provenance: null,
    error: order.error === null ? null : { code: order.error.code, message: order.error.message },
  };
}
