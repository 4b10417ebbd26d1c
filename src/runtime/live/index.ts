/** The live venue: the REST and stream clients as the kernel's `ExecutionVenue` and `MarketDataVenue`. */
export { toVenueFailure, translated } from '../venue-error.ts';
export { LiveExecutionVenue, type LiveExecutionVenueOptions } from './execution-venue.ts';
export {
  createLiveVenue,
  evaluateRouteReadiness,
  type LiveVenue,
  type LiveVenueOptions,
  type RouteReadinessError,
  type RouteReadinessStatus,
  readinessReadError,
  routesReady,
} from './live-venue.ts';
export { LiveMarketData, type LiveMarketDataOptions, TradeCursor } from './market-data.ts';
export { LivePrivateStream, type LivePrivateStreamOptions } from './private-stream.ts';
export { findSequenceHead, type SequenceProbe } from './sequence-head.ts';
