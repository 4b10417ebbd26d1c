/**
 * The public strategy API: everything a plugin needs, and nothing that reaches a venue.
 * Plugins import it as `paperbot/strategy` (the package's exports map); the kernel imports the
 * host, the loader and the environment type.
 */
export {
  type Decimal,
  decimal,
  maxDecimal,
  minDecimal,
  parseDecimal,
  toWire,
  ZERO,
} from '../../core/decimal.ts';
export { isOnIncrement } from '../../core/grid.ts';
export type {
  Account,
  Book,
  BookLevel,
  Candle,
  CandleInterval,
  Fill,
  Market,
  Order,
  OrderStatus,
  Position,
  PublicTrade,
} from '../../protocol/index.ts';
export {
  AmendIntent,
  BracketIntent,
  BracketLeg,
  CancelAllIntent,
  CancelIntent,
  ClosePositionIntent,
  type Denial,
  type EmulatedIntent,
  ExitIntent,
  ExitTrigger,
  type IntentOutcome,
  MarginMode,
  OrderIntent,
  PlaceIntent,
  Side,
  type StampedIntent,
  TimeInForce,
  TriggerSource,
  OrderIntent as OrderIntentSchema,
} from '../intents.ts';
export {
  CANDLE_INTERVAL_MILLISECONDS,
  CANDLE_INTERVALS,
  candleBucketStart,
  candlesFromTrades,
  isCandleInterval,
} from '../streams/candles.ts';
export {
  type BracketLegOptions,
  type BracketOptions,
  bracket,
  cancelAllOrders,
  cancelOrder,
  closePosition,
  type LimitOrderOptions,
  limitOrder,
  type MarketOrderOptions,
  marketOrder,
  type StopLimitOptions,
  type StopMarketOptions,
  stopLimit,
  stopMarket,
  type TakeProfitOptions,
  type TrailingStopOptions,
  takeProfit,
  trailingStop,
} from './builders.ts';
export { createStrategyContext, strategyLogger } from './context.ts';
export { defineStrategy, isStrategyDefinition, STRATEGY_NAME_PATTERN } from './define.ts';
export {
  type AddStrategyOptions,
  STRATEGY_ID_PATTERN,
  type StrategyFailure,
  type StrategyFailurePhase,
  StrategyHost,
  type StrategyHostOptions,
  type StrategyStatus,
} from './host.ts';
export { checkIntent } from './intent-check.ts';
export {
  type LoadedStrategy,
  type LoadedStrategyDefinition,
  listStrategies,
  loadStrategy,
  loadStrategyDefinition,
  PLUGIN_NAME_PATTERN,
  resolveStrategyFile,
  type StrategyLoaderOptions,
} from './loader.ts';
export {
  marketInfoOf,
  meetsMinimums,
  nearestTick,
  offsetByTicks,
  priceOnTick,
  quantityOnStep,
  smallestOrderQuantity,
} from './market-info.ts';
export {
  formatParamsPath,
  type ParamsIssue,
  parseStrategyParams,
  positiveDecimalString,
} from './params.ts';
export {
  TARGET_POSITION_TAG,
  type TargetPositionContext,
  type TargetPositionOptions,
  targetPosition,
} from './target-position.ts';
export { MAX_CANDLE_HISTORY } from './types.ts';
export type {
  CandleHistoryRequest,
  EmulatedOrder,
  LogFields,
  Logger,
  MarketInfo,
  OpenOrder,
  OpenOrderStatus,
  OwnOrderUpdate,
  PositionSnapshot,
  StrategyContext,
  StrategyDefinition,
  StrategyEnvironment,
  Ticker,
} from './types.ts';
