/** The typed client of the Practice Trading Service: REST (undici) and stream (ws, RxJS). */
export { type BackoffPolicy, backoffDelay, parseRetryAfter, sleep } from './backoff.ts';
export {
  type CheckedBaseUrl,
  checkBaseUrl,
  checkWebSocketUrl,
  isLoopbackHost,
} from './base-url.ts';
export {
  assertClockUsable,
  type ClockOffsetEstimate,
  DEFAULT_SIGNATURE_WINDOW_MS,
  estimateClockOffset,
} from './clock-offset.ts';
export {
  CLIENT_ERROR_CODES,
  type ClientErrorCode,
  type ErrorSource,
  isVenueError,
  type MutationOutcome,
  VenueError,
  type VenueErrorInit,
} from './errors.ts';
export {
  ClientRateLimiter,
  OPERATOR_ENDPOINTS,
  PUBLIC_RATE_LIMIT_KEY,
  type RateLimiterOptions,
  type RequestPriority,
  type RateLimitState,
  RateLimitTracker,
} from './rate-limit.ts';
export {
  isMutationEndpoint,
  type MutationEndpointName,
  mutationEndpointNames,
} from './request-parts.ts';
export {
  type ReadingNotice,
  type ReadingProblem,
  type ReadingSnapshot,
  type ReadingSource,
  ReadingMonitor,
} from './reading-monitor.ts';
export { interpretResponse, type RawResponse } from './response.ts';
export { RestClient } from './rest-client.ts';
export {
  type CallArguments,
  type CallOptions,
  DEFAULT_RETRY_POLICY,
  type PagedEndpointName,
  type PrepareArguments,
  type PreparedMutation,
  type SendableEndpoint,
  type RecoverOptions,
  type RecoveryResult,
  type RestClientOptions,
  type RetryPolicy,
} from './rest-options.ts';
export {
  type ResyncReason,
  type SequenceOffer,
  type SequenceProblem,
  SequenceTracker,
  type SequenceTrackerOptions,
} from './sequence.ts';
export { StreamClient } from './stream-client.ts';
/** The stream client's public types: `ConnectionState`, `ResyncSignal`, `RiskEvent`, `StreamClientOptions`, `StreamStatistics`, `TickerFrame`. */
export type * from './stream-types.ts';
export { MAX_CA_FILE_BYTES, readCaFile, readCertificates } from './ca-file.ts';
export { type ProxyEnvironment, proxyFor, type ProxySettings, proxySettingsOf } from './proxy.ts';
export { createRestDispatcher, type TransportOptions } from './transport.ts';
export { MAX_PROXY_ANSWER_BYTES, openTunnel, type TunnelTarget } from './tunnel.ts';
export { type TlsFailure, type TlsFailureKind, tlsFailureOf } from './tls-errors.ts';
