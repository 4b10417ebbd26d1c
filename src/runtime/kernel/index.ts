/** The kernel: the runtime's composition root (see src/runtime/README.md). */
export type { ShutdownReport } from '../deadman/heartbeat.ts';
export {
  createKernelEnvironment,
  type KernelEnvironmentParts,
  PositionFeed,
} from './environment.ts';
export {
  type IntentCounters,
  type IntentLatency,
  Kernel,
  type KernelOptions,
  type KernelStatus,
  type KernelStrategy,
  type KernelStrategyStatus,
  LOSS_TRACKING_META_KEY,
} from './kernel.ts';
export { measurePlacements, type PlacementTiming } from './placement-timing.ts';
export { RiskSnapshotBuilder, type RiskSnapshotSources } from './risk-snapshot.ts';
