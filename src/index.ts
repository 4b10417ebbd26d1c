/**
 * The package entry point (`import { RestClient, defineStrategy } from 'paperbot'`).
 * The client is exported flat, for people who only want an SDK; the rest is grouped so names
 * from different layers cannot collide.
 */
export * from './client/index.ts';
export {
  type Clock,
  ClockScheduler,
  isoTimestamp,
  systemClock,
  VirtualClock,
} from './core/clock.ts';
export { type Decimal, decimal, parseDecimal, toWire } from './core/decimal.ts';
export { isPaperbotError, PaperbotError } from './core/errors.ts';
export { roundPrice, roundQuantity, roundToIncrement } from './core/grid.ts';
export { fromPino, type LogFields, type Logger, silentLogger, withFields } from './core/logger.ts';
export {
  type StartEmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from './emulator/index.ts';
export * as protocol from './protocol/index.ts';
export type {
  AmendIntent,
  CancelAllIntent,
  CancelIntent,
  ClosePositionIntent,
  Denial,
  IntentOutcome,
  OrderIntent,
  PlaceIntent,
  StampedIntent,
} from './runtime/intents.ts';
export * as risk from './runtime/risk/index.ts';
export {
  cancelAllOrders,
  cancelOrder,
  closePosition,
  defineStrategy,
  limitOrder,
  marketOrder,
  type StrategyContext,
  type StrategyDefinition,
  targetPosition,
} from './runtime/strategy/index.ts';
export * as testing from './runtime/testing/index.ts';
export {
  Credential,
  generateKeyPair,
  loadKeyFile,
  signRequest,
  writeKeyFile,
} from './signing/index.ts';
