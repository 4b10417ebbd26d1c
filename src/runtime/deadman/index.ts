/** The dead-man heartbeat (cancel-all-after) beside the executor. */
export {
  type DeadmanConfig,
  type DeadmanOptions,
  type DeadmanPhase,
  type DeadmanStatus,
  DeadmanSwitch,
  defaultDeadmanConfig,
  type ShutdownReport,
} from './heartbeat.ts';
