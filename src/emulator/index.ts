/** The local Practice Trading Service: start it in-process, or talk to its admin API. */
export {
  DEFAULT_EMULATOR_CONFIG_INPUT,
  defaultEmulatorConfig,
  type EmulatorConfig,
  type EmulatorConfigInput,
  loadEmulatorConfig,
  parseEmulatorConfig,
} from './config.ts';
export { Exchange, type KeyRiskLimits } from './engine/exchange.ts';
export {
  ADMIN_PREFIX,
  ADMIN_TOKEN_FILE,
  type CreatedKey,
  CreateKeyRequest,
  type CreateKeyRequestInput,
  FaultRequest,
} from './server/admin.ts';
export { AdminClient, type AdminClientOptions, readAdminToken } from './server/admin-client.ts';
export type { EmulatorControls } from './server/controls.ts';
export { SERVER_ERROR_STATUS, type ServerErrorCode } from './server/errors.ts';
export type {
  DelayResponseOptions,
  DropResponseOptions,
  FailOptions,
  FailureCode,
  FaultSnapshot,
  FrameFaultOptions,
  RequestMatch,
} from './server/faults.ts';
export {
  DEFAULT_MAX_BODY_BYTES,
  HEADER_IDEMPOTENT_REPLAY,
  HEADER_REQUEST_ID,
} from './server/http.ts';
export { canonicalJson, fingerprintOf } from './server/idempotency.ts';
export type { EmulatorLogger } from './server/logger.ts';
export { DEFAULT_RATE_LIMIT, type RateLimitSettings } from './server/rate-limit.ts';
export { DEFAULT_CHALLENGE_TTL_MS } from './server/ws.ts';
export {
  type CreateKeyOptions,
  DATABASE_FILE,
  DEFAULT_HOST,
  DEFAULT_PORT,
  type EmulatorStats,
  type RunningEmulator,
  type StartEmulatorOptions,
  startEmulator,
} from './start.ts';
