/**
 * The local Practice Trading Service: start it in-process, or talk to its admin API; or, for
 * in-process venues (src/replay), run its engine and its service core without a server. This
 * file is the emulator's public face: nothing outside src/emulator imports anything else of it
 * (.dependency-cruiser.cjs holds src/replay to that).
 */
export {
  DEFAULT_EMULATOR_CONFIG_INPUT,
  defaultEmulatorConfig,
  type EmulatorConfig,
  type EmulatorConfigInput,
  loadEmulatorConfig,
  loadWireProfileFile,
  parseEmulatorConfig,
  SelfTradePrevention,
} from './config.ts';
export type { QuoteLevel } from './engine/driver.ts';
export { Exchange, type HeldOrder, type KeyRiskLimits } from './engine/exchange.ts';
export type { UnitGrid } from './engine/fixed.ts';
export { BUY, type BookSide, SELL } from './engine/order-book.ts';
export { Random } from './random.ts';
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
export { SERVER_ERROR_STATUS, type ServerErrorCode } from './service/errors.ts';
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
export {
  type ServiceAnswer,
  type ServiceCommand,
  ServiceCore,
  type ServiceCoreOptions,
} from './service/core.ts';
export type { ServiceAccount } from './service/endpoints.ts';
export { canonicalJson, fingerprintOf } from './service/idempotency.ts';
export { DEFAULT_IDEMPOTENCY_WINDOW, IdempotencyWindow } from './service/idempotency-window.ts';
export { DEFAULT_RATE_LIMIT, type RateLimitSettings } from './server/rate-limit.ts';
export { DEFAULT_CHALLENGE_TTL_MS } from './server/ws.ts';
export { MemoryStore } from './store/memory-store.ts';
export type { Store } from './store/store.ts';
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
export type { EmulatorTls } from './server/transport.ts';
