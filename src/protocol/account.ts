/** Account, venue accounts and positions (signed, scope `account:read`). */
import { z } from 'zod';
import { marketRouteFields } from './fields.ts';
import { DecimalString, pageOf, Rfc3339Utc } from './primitives.ts';
import { openEnum, openString } from './reading.ts';

/** Account data not known to be live reads as degraded (tolerant reading). */
export const AccountDataStatusReading = openEnum(['live', 'degraded'], 'degraded');

/** What an account's value splits into; the account and a venue account both report it. */
const balanceFields = {
  available: DecimalString,
  in_positions: DecimalString,
  unrealized_pnl: DecimalString,
};

export const Account = z.strictObject({
  trading_mode: z.string().default('live'),
  settlement_asset: z.string().default('USDC'),
  account_id: z.string(),
  snapshot_version: z.int(),
  observed_at: Rfc3339Utc,
  total_equity: DecimalString,
  ...balanceFields,
  complete: z.boolean(),
  data_status: AccountDataStatusReading,
});
export type Account = z.infer<typeof Account>;

export const VenueAccount = z.strictObject({
  account_id: z.string(),
  route_id: z.string(),
  settlement_asset: z.string(),
  capital_location: z.string(),
  account_value: DecimalString,
  ...balanceFields,
  observed_at: Rfc3339Utc.nullable(),
  source: z.string(),
  data_status: z.string(),
});
export type VenueAccount = z.infer<typeof VenueAccount>;

export const VenueAccountList = z.array(VenueAccount);
export type VenueAccountList = z.infer<typeof VenueAccountList>;

/** Every field required; the nullable ones must be present. */
export const Position = z.strictObject({
  position_id: z.string(),
  ...marketRouteFields,
  side: openString(['long', 'short']),
  quantity: DecimalString,
  entry_price: DecimalString,
  margin_mode: z.string(),
  observed_at: Rfc3339Utc,
  data_status: z.string(),
  mark_price: DecimalString.nullable(),
  position_value: DecimalString.nullable(),
  unrealized_pnl: DecimalString.nullable(),
  leverage: DecimalString.nullable(),
  liquidation_price: DecimalString.nullable(),
});
export type Position = z.infer<typeof Position>;

export const PositionPage = pageOf(Position);
export type PositionPage = z.infer<typeof PositionPage>;
