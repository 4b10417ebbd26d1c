/**
 * Runs of fields several wire resources share, spread into their object shapes. Not part of the
 * public protocol exports: each resource's schema and type stay the ones consumers import.
 */
import { z } from 'zod';

/** The market and the route a resource belongs to (markets, trades, fills, positions...). */
export const marketRouteFields = {
  market_id: z.string(),
  route_id: z.string(),
};
