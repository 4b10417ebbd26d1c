/** The risk gate's public surface; see README.md beside this file and docs/operations.md ("Risk gate"). */
export {
  DailyLossConfig,
  DrawdownConfig,
  defaultRiskConfig,
  KillSignal,
  KillSwitchConfig,
  limitsFor,
  type MarketLimits,
  parseRiskConfig,
  RiskConfig,
  type RiskConfigInput,
  RiskMarketOverride,
} from './config.ts';
export {
  type ExposureEffect,
  evaluateIntent,
  type GateDecision,
  RiskRule,
  type RiskRuleName,
} from './evaluate.ts';
export {
  type DenialEvent,
  type HaltTarget,
  type ReadonlyBehaviorSubject,
  RiskGate,
  type RiskGateOptions,
  type TradingStateSnapshot,
  type TradingStateSource,
} from './gate.ts';
export {
  clearKill,
  installKillSignal,
  KillSwitch,
  type KillMode,
  type KillRequest,
  type KillSwitchOptions,
  type KillSwitchTarget,
  readKillFile,
  readKillRequest,
  requestKill,
  type SignalSource,
} from './kill-switch.ts';
export {
  type LossBreach,
  type LossTracking,
  type LossTrackingRecord,
  lossBreaches,
  nextTradingDayStart,
  tradingDayStart,
} from './loss.ts';
export {
  type MarketDataStatus,
  type MarketFields,
  type OrderFields,
  type PositionFields,
  type RiskMarketView,
  type RiskOpenOrderView,
  type RiskPositionView,
  type RiskSnapshot,
  type RiskView,
  riskMarketFromWire,
  riskOpenOrdersFromWire,
  riskPositionsFromWire,
  type TradingState,
} from './view.ts';
