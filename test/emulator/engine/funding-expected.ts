/** The funding amount a payment should carry, computed apart from the engine. */
import { parseDecimal } from '../../../src/core/decimal.ts';
import type { FundingPaymentData } from '../../../src/protocol/index.ts';

/** −direction × quantity × mark × rate, rounded half-even to 10^-18 as the engine keeps money. */
export function expectedFunding(event: { readonly data: FundingPaymentData }): string {
  const data = event.data;
  const value = parseDecimal(data.quantity).times(data.mark_price);
  const paid = value.times(data.funding_rate).round(18, 2);
  return (data.side === 'long' ? paid.neg() : paid).toFixed();
}
