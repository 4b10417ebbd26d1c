/** The dead-man heartbeat (cancel-all-after) beside the executor, and the shutdown close-out. */
export {
  type DeadmanConfig,
  type DeadmanConfigIssue,
  deadmanConfigIssues,
  defaultDeadmanConfig,
  resolveDeadmanConfig,
} from './config.ts';
export {
  type DeadmanOptions,
  type DeadmanPhase,
  type DeadmanStatus,
  DeadmanSwitch,
  type ShutdownOptions,
  type ShutdownReport,
} from './heartbeat.ts';
export {
  type CloseOutReport,
  closeOutAccount,
  defaultShutdownConfig,
  type ShutdownConfig,
} from './shutdown.ts';
