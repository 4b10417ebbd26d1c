/**
 * Public market data: markets, routes, books, trades and candles. Optional nullable fields read
 * an absent value as null, so consumers see one "missing" value (the interface: missing metrics
 * are null, never zero).
 */
import { z } from 'zod';
import { marketRouteFields } from './fields.ts';
import { DecimalString, Rfc3339Utc } from './primitives.ts';
import { openEnum, openString } from './reading.ts';

const nullableDecimal = DecimalString.nullable().default(null);

// Enums the interface does not close (its compatibility policy is "not shown"): in tolerant
// reading another value reads as the safe meaning given here (see reading.ts).
/** Data that is not known to be live is treated as stale. */
export const MarketDataStatusReading = openEnum(['live', 'stale', 'unavailable'], 'stale');
/** The runtime does not branch on the structure; an unknown one reads as a plain book. */
export const MarketStructureReading = openEnum(['order_book', 'oracle'], 'order_book');
/** A route in a state the project does not know is not ready. */
export const RouteHealthReading = openEnum(['ready', 'degraded', 'disabled'], 'degraded');

export const Market = z.strictObject({
  market_id: z.string(),
  display_name: z.string(),
  base_asset: z.string(),
  quote_asset: z.string(),
  category: z.string(),
  status: z.string(),
  routes: z.array(z.string()),
  preferred_route_id: z.string(),
  price_tick: nullableDecimal,
  quantity_step: nullableDecimal,
  minimum_quantity: nullableDecimal,
  minimum_notional: nullableDecimal,
  maximum_leverage: z.int().nullable().default(null),
  margin_modes: z.array(z.string()).nullable().default(null),
  order_types: z.array(z.string()).nullable().default(null),
  mark_price: nullableDecimal,
  index_price: nullableDecimal,
  last_price: nullableDecimal,
  funding_rate: nullableDecimal,
  next_funding_time: Rfc3339Utc.nullable().default(null),
  volume_24h: nullableDecimal,
  open_interest: nullableDecimal,
  observed_at: Rfc3339Utc,
  data_status: MarketDataStatusReading,
});
export type Market = z.infer<typeof Market>;

export const MarketList = z.array(Market);
export type MarketList = z.infer<typeof MarketList>;

export const RouteCapabilities = z.strictObject({
  order_types: z.array(z.string()),
  time_in_force: z.array(z.string()),
  post_only: z.boolean(),
  reduce_only: z.boolean(),
  attached_exits: z.boolean(),
  amendment: z.string(),
  batch_atomicity: z.string(),
  cancel_all_after: z.string(),
});
export type RouteCapabilities = z.infer<typeof RouteCapabilities>;

export const Route = z.strictObject({
  route_id: z.string(),
  provider: z.string(),
  environment: z.string(),
  network: z.string(),
  market_structure: MarketStructureReading,
  settlement_asset: z.string(),
  capital_location: z.string(),
  capabilities: RouteCapabilities,
  order_submission_enabled: z.boolean(),
  health: RouteHealthReading,
  observed_at: Rfc3339Utc,
});
export type Route = z.infer<typeof Route>;

export const RouteList = z.array(Route);
export type RouteList = z.infer<typeof RouteList>;

export const BookLevel = z.strictObject({
  price: DecimalString,
  quantity: DecimalString,
  order_count: z.int().default(0),
});
export type BookLevel = z.infer<typeof BookLevel>;

export const Book = z.strictObject({
  ...marketRouteFields,
  market_structure: MarketStructureReading,
  sequence: z.int().nullable().default(null),
  checksum: z.string().nullable().default(null),
  bids: z.array(BookLevel),
  asks: z.array(BookLevel),
  oracle: z
    .record(z.string(), z.union([z.string(), z.boolean()]))
    .nullable()
    .default(null),
  observed_at: Rfc3339Utc,
});
export type Book = z.infer<typeof Book>;

export const PublicTrade = z.strictObject({
  trade_id: z.string(),
  ...marketRouteFields,
  price: DecimalString,
  quantity: DecimalString,
  side: openString(['buy', 'sell']),
  occurred_at: Rfc3339Utc,
});
export type PublicTrade = z.infer<typeof PublicTrade>;

export const PublicTradeList = z.array(PublicTrade);
export type PublicTradeList = z.infer<typeof PublicTradeList>;

export const Candle = z.strictObject({
  ...marketRouteFields,
  interval: z.string(),
  open_time: Rfc3339Utc,
  open: DecimalString,
  high: DecimalString,
  low: DecimalString,
  close: DecimalString,
  volume: DecimalString,
});
export type Candle = z.infer<typeof Candle>;

export const CandleList = z.array(Candle);
export type CandleList = z.infer<typeof CandleList>;
