/** The execution side of the runtime: executor, order tracker, reconciler and their helpers. */
export { backoffDelay, classifyFailure, type FailureClass } from './classify.ts';
export { withDeadline } from './deadline.ts';
export {
  defaultExecutorConfig,
  type ExecutionOutcome,
  Executor,
  type ExecutorConfig,
  type ExecutorOptions,
  type SettlementReport,
} from './executor.ts';
export {
  type InternalCommandContext,
  type InternalCommandResult,
  sendInternalCommand,
} from './internal-command.ts';
export { ConcurrentLane, SerialLane } from './lane.ts';
export { type Logger, type LogFields, silentLogger } from '../../core/logger.ts';
export { tradingPermit } from './permit.ts';
export {
  defaultReconcilerConfig,
  type OrderStateMismatch,
  type OrderSummary,
  type PositionMismatch,
  type PositionView,
  Reconciler,
  type ReconcilerConfig,
  type ReconcilerExecution,
  type ReconcilerOptions,
  type ReconciliationReport,
} from './reconciler.ts';
export {
  defaultOrderTrackerConfig,
  type OrderLink,
  type OrderSource,
  OrderTracker,
  type OrderTrackerConfig,
  type OrderTrackerOptions,
  type TrackedOrder,
} from './tracker.ts';
