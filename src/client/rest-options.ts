/**
 * What the REST client is built with (`RestClientOptions`, the retry policy) and what its
 * calls take and give: call options, the arguments of `call` and `prepare`, the prepared
 * mutation, and what `recover` found.
 */
import type { Clock } from '../core/clock.ts';
import type {
  BodyInputOf,
  EndpointName,
  EndpointsWithBody,
  EndpointsWithQuery,
  MutationStatus,
  PathParamsOf,
  QueryInputOf,
  ReadingMode,
  ResponseOf,
} from '../protocol/index.ts';
import type {
  Credential,
  PreparedCommand,
  SignerImplementation,
  WireProfile,
} from '../signing/index.ts';
import type { BackoffPolicy } from './backoff.ts';
import type { RateLimiterOptions, RateLimitTracker } from './rate-limit.ts';
import type { ReadingMonitor } from './reading-monitor.ts';
import type { MutationEndpointName } from './request-parts.ts';
import type { TransportOptions } from './transport.ts';

export interface RetryPolicy extends BackoffPolicy {
  /** Attempts of one GET in all, the first included. 1 turns retries off. */
  readonly maxAttempts: number;
  /** A 429 asking for a longer wait than this is not waited for; its error is thrown. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  initialDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 60_000,
};

export interface RestClientOptions {
  /** The service's base URL; defaults to the credential's `api_base_url`. */
  readonly baseUrl?: string;
  /** Needed for signed endpoints; public endpoints work without one. */
  readonly credential?: Credential | null;
  readonly clock?: Clock;
  /** Uniform in [0, 1); jitter of the retry backoff. Default Math.random. */
  readonly random?: () => number;
  /** Whole request, connection to last body byte, on the injected clock. Default 10 000. */
  readonly requestTimeoutMs?: number;
  /** TCP/TLS connection setup, enforced by undici on real time. Default 5 000. */
  readonly connectTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept. Default 30 000. */
  readonly keepAliveTimeoutMs?: number;
  /** Connections of the pool. Default 16. */
  readonly connections?: number;
  /** Larger answers are refused as MALFORMED_RESPONSE. Default 16 MiB. */
  readonly maxResponseBytes?: number;
  readonly retry?: Partial<RetryPolicy>;
  /** Keep under the advertised quota by waiting for the window reset. Default off. */
  readonly rateLimiter?: boolean | RateLimiterOptions;
  /** Share one tracker between clients of the same keys. */
  readonly rateLimitTracker?: RateLimitTracker;
  /** The service's timestamp window (contract section 1: 10 s). */
  readonly signatureWindowMs?: number;
  /** Refuse to sign beyond this clock offset. Default half the signature window. */
  readonly maxClockOffsetMs?: number;
  /**
   * `auto`: measure the clock offset with GET /v1/time before the first signed request.
   * `manual`: assume no offset until `syncClock()` is called. Default `auto`.
   */
  readonly clockSync?: 'auto' | 'manual';
  readonly signerImplementation?: SignerImplementation;
  readonly userAgent?: string;
  /** Trusted CA and proxy environment (REST here, and the stream client's by default). */
  readonly transport?: TransportOptions;
  /**
   * How answers are read (contract section 7): `tolerant` (default) keeps unknown fields and
   * reads past a bad item of a list; `strict` refuses what the interface does not list, as the
   * project's own tests read the emulator. Ignored when `readingMonitor` is given.
   */
  readonly reading?: ReadingMode;
  /** Where unknown fields, left-out items and refusals are reported; shared with streams. */
  readonly readingMonitor?: ReadingMonitor;
  /** How requests and the stream's auth frame are signed (`venue.wire`); SVC1 by default. */
  readonly wireProfile?: WireProfile;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Overrides the client's request timeout for this call. */
  readonly timeoutMs?: number;
}

// An endpoint without path parameters has `Record<string, never>` as its parameter type.
type ParamsArgument<E extends EndpointName> = string extends keyof PathParamsOf<E>
  ? { readonly params?: Record<string, never> }
  : { readonly params: PathParamsOf<E> };
type QueryArgument<E extends EndpointName> = E extends EndpointsWithQuery
  ? { readonly query?: QueryInputOf<E> }
  : { readonly query?: undefined };
type BodyArgument<E extends EndpointName> = E extends EndpointsWithBody
  ? { readonly body: BodyInputOf<E> }
  : { readonly body?: undefined };

/** What `call` takes for an endpoint: its path parameters, query and body, as it has them. */
export type CallArguments<E extends EndpointName> = ParamsArgument<E> &
  QueryArgument<E> &
  BodyArgument<E>;

/** What `prepare` takes: the command's path parameters (if any) and its body. */
export type PrepareArguments<E extends SendableEndpoint> = ParamsArgument<E> & {
  readonly body: BodyInputOf<E>;
};

/**
 * A mutation checked and serialized once: the shared `PreparedCommand` (src/signing). Journal
 * `endpoint`, `path` and `bodyBytes` before sending; `fromStoredPath` rebuilds it after a restart.
 */
export type PreparedMutation<E extends MutationEndpointName = MutationEndpointName> =
  PreparedCommand<E>;

/** What `send` takes: a prepared mutation, or a prepared simulation (sent the same way). */
export type SendableEndpoint = MutationEndpointName | 'simulateOrder';

/**
 * What `recover` found:
 * - `completed`: the service has the request; `response` is its stored result, read by resending
 *   the same bytes (idempotent), or null when `replayResult` was false.
 * - `pending`: the service has it and is still processing; ask again later.
 * - `resent`: the service did not know it (ORDER_NOT_FOUND), so the same bytes were sent now.
 */
export type RecoveryResult<E extends MutationEndpointName> =
  | {
      readonly outcome: 'completed';
      readonly status: MutationStatus;
      readonly response: ResponseOf<E> | null;
    }
  | { readonly outcome: 'pending'; readonly status: MutationStatus }
  | { readonly outcome: 'resent'; readonly response: ResponseOf<E> };

export interface RecoverOptions extends CallOptions {
  /** On `completed`, resend the same bytes to read the stored typed result. Default true. */
  readonly replayResult?: boolean;
}

export type PagedEndpointName = 'listPositions' | 'listOrders' | 'listFills';
