/**
 * The REST client: one method per endpoint of the shared endpoint table, over one undici
 * keep-alive pool for the service's origin. Requests are checked before sending, responses
 * parsed with the strict schemas, private calls signed with SVC1 over the exact body bytes.
 *
 * Retries follow the interface's Errors rules: only GET is retried, only when the error is
 * retryable, after a capped jittered backoff or the Retry-After a 429 asked for. A mutation is
 * never resent here; it is split into `prepare` (check, serialize once, hash) and `send`, so the
 * executor can journal the exact bytes first and, after an unknown outcome, `recover` by
 * request id and resend the very same bytes.
 */
import type { Dispatcher } from 'undici';
import { type Clock, systemClock } from '../core/clock.ts';
import {
  type BodyInputOf,
  type BodyOf,
  buildPath,
  type EndpointName,
  type EndpointsWithBody,
  type EndpointsWithQuery,
  endpoints,
  type HttpMethod,
  type MutationStatus,
  matchEndpoint,
  nextAfterSequence,
  type PathParamsOf,
  type PrivateEventReading,
  type QueryInputOf,
  type ReadingMode,
  type ResponseOf,
  serviceTimeMs,
} from '../protocol/index.ts';
import {
  type Credential,
  DEFAULT_WIRE_PROFILE,
  type PreparedCommand,
  preparedCommand,
  type Signer,
  type SignerImplementation,
  signRequestWithProfile,
  signWebSocketAuthFrame,
  type WireProfile,
  wireSettingsToCheck,
} from '../signing/index.ts';
import { type BackoffPolicy, backoffDelay, sleep } from './backoff.ts';
import { checkBaseUrl } from './base-url.ts';
import {
  assertClockUsable,
  type ClockOffsetEstimate,
  DEFAULT_SIGNATURE_WINDOW_MS,
  estimateClockOffset,
} from './clock-offset.ts';
import { isVenueError, type MutationOutcome, VenueError } from './errors.ts';
import { Exchange, ResponseTooLarge } from './exchange.ts';
import {
  ClientRateLimiter,
  OPERATOR_ENDPOINTS,
  PUBLIC_RATE_LIMIT_KEY,
  type RateLimiterOptions,
  type RateLimitState,
  RateLimitTracker,
} from './rate-limit.ts';
import {
  checkedQueryString,
  checkPathParams,
  isMutationEndpoint,
  type MutationEndpointName,
  parseStoredBody,
  serializeBody,
} from './request-parts.ts';
import { ReadingMonitor } from './reading-monitor.ts';
import { checkPlacementIds, interpretResponse } from './response.ts';
import { tlsFailureOf } from './tls-errors.ts';
import { createRestDispatcher, type TransportOptions } from './transport.ts';

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

/** What `prepare` takes: the mutation's path parameters (if any) and its body. */
export type PrepareArguments<E extends MutationEndpointName> = ParamsArgument<E> & {
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

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const CONNECT_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

interface RequestSpec {
  readonly endpoint: EndpointName;
  readonly method: HttpMethod;
  /** The request target as sent (prefix, path, query). */
  readonly target: string;
  readonly bodyBytes: Uint8Array | null;
  /** The body's hash when it is already known (a prepared command). */
  readonly bodySha256?: string;
}

function errorCodeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Node's happy-eyeballs connect reports one error per address in an AggregateError.
  const inner = (error as { errors?: unknown }).errors;
  return Array.isArray(inner) ? errorCodeOf(inner[0]) : undefined;
}

export class RestClient {
  readonly origin: string;
  readonly credential: Credential | null;
  readonly transport: TransportOptions;
  /** How this client and the stream clients built on it read, and what they met. */
  readonly reading: ReadingMonitor;
  /** How this client signs (`venue.wire`); the stream client signs its auth frame with it too. */
  readonly wireProfile: WireProfile;
  private readonly pathPrefix: string;
  private readonly pool: Dispatcher;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly requestTimeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly retryPolicy: RetryPolicy;
  private readonly tracker: RateLimitTracker;
  private readonly limiter: ClientRateLimiter | null;
  private readonly maxClockOffsetMs: number;
  private readonly clockSyncMode: 'auto' | 'manual';
  private readonly signer: Signer | null;
  private readonly userAgent: string;
  private offset: ClockOffsetEstimate | null = null;
  private syncing: Promise<ClockOffsetEstimate> | null = null;
  private closed = false;

  constructor(options: RestClientOptions) {
    const credential = options.credential ?? null;
    const baseUrl = options.baseUrl ?? credential?.apiBaseUrl;
    if (baseUrl === undefined) {
      throw new VenueError('UNSAFE_URL', 'a base URL or a credential with one is required', {
        source: 'local',
      });
    }
    const checked = checkBaseUrl(baseUrl);
    this.origin = checked.origin;
    this.pathPrefix = checked.pathPrefix;
    this.credential = credential;
    this.wireProfile = options.wireProfile ?? DEFAULT_WIRE_PROFILE;
    this.clock = options.clock ?? systemClock;
    const clock = this.clock;
    this.reading =
      options.readingMonitor ??
      new ReadingMonitor(options.reading ?? 'tolerant', () => clock.now());
    this.random = options.random ?? Math.random;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.retryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.tracker = options.rateLimitTracker ?? new RateLimitTracker();
    this.limiter =
      options.rateLimiter === undefined || options.rateLimiter === false
        ? null
        : new ClientRateLimiter(
            this.tracker,
            this.clock,
            options.rateLimiter === true ? {} : options.rateLimiter,
          );
    const windowMs = options.signatureWindowMs ?? DEFAULT_SIGNATURE_WINDOW_MS;
    this.maxClockOffsetMs = options.maxClockOffsetMs ?? windowMs / 2;
    this.clockSyncMode = options.clockSync ?? 'auto';
    this.signer = credential?.createSigner(options.signerImplementation ?? 'native') ?? null;
    this.userAgent = options.userAgent ?? 'paperbot-client/0.1';
    this.transport = options.transport ?? {};
    this.pool = createRestDispatcher(this.origin, this.transport, {
      connections: options.connections ?? 16,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 30_000,
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    });
  }

  /** Closes the connection pool after in-flight requests finish. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.close();
  }

  // ---------------------------------------------------------------- clock

  /** Measures the clock offset with GET /v1/time (midpoint of the round trip) and keeps it. */
  async syncClock(options: CallOptions = {}): Promise<ClockOffsetEstimate> {
    const sentAt = this.clock.now();
    const time = await this.call('getTime', {}, options);
    const serverMs = serviceTimeMs(time);
    if (serverMs === null) {
      throw new VenueError(
        'MALFORMED_RESPONSE',
        'getTime: the answer has neither a numeric epoch_ms nor an RFC 3339 server_time',
        { source: 'transport', endpoint: 'getTime', details: { fields: Object.keys(time) } },
      );
    }
    const estimate = estimateClockOffset(sentAt, this.clock.now(), serverMs);
    this.offset = estimate;
    return estimate;
  }

  /** The last offset estimate, or null before any. */
  clockOffset(): ClockOffsetEstimate | null {
    return this.offset;
  }

  /**
   * The timestamp to sign now: local clock corrected by the offset. Throws CLOCK_SKEW when the
   * offset is beyond the limit. Measures the offset first in `auto` mode.
   */
  async signingTimestamp(): Promise<number> {
    if (this.offset === null) {
      if (this.clockSyncMode === 'auto') {
        this.syncing ??= this.syncClock().finally(() => {
          this.syncing = null;
        });
        await this.syncing;
      } else {
        this.offset = {
          offsetMs: 0,
          roundTripMs: 0,
          measuredAtMs: this.clock.now(),
        };
      }
    }
    return this.timestampNow(this.offset as ClockOffsetEstimate);
  }

  private timestampNow(offset: ClockOffsetEstimate): number {
    assertClockUsable(offset, this.maxClockOffsetMs);
    return Math.round(this.clock.now() + offset.offsetMs);
  }

  /**
   * The signed fields of a WebSocket `auth` frame for `challenge` (contract section 4), named,
   * formatted and signed as the wire profile says; `scopes` are the protocol's names, sent as
   * the profile's names for them.
   */
  async signWebSocketAuth(
    challenge: string,
    scopes: readonly string[],
    lastSequence: number,
  ): Promise<Record<string, string | number | string[]>> {
    const { credential, signer } = this.requireCredential('stream authentication');
    const timestampMs = await this.signingTimestamp();
    const names = this.wireProfile.scopes as Readonly<Record<string, string>>;
    return signWebSocketAuthFrame(this.wireProfile, {
      signer,
      keyId: credential.keyId,
      challenge,
      scopes: scopes.map((scope) => names[scope] ?? scope),
      lastSequence,
      timestampMs,
    });
  }

  // ---------------------------------------------------------------- rate limits

  /** The quota last advertised for this client's key (public calls: `PUBLIC_RATE_LIMIT_KEY`). */
  rateLimit(
    keyId: string = this.credential?.keyId ?? PUBLIC_RATE_LIMIT_KEY,
  ): RateLimitState | null {
    return this.tracker.get(keyId);
  }

  rateLimits(): ReadonlyMap<string, RateLimitState> {
    return this.tracker.snapshot();
  }

  // ---------------------------------------------------------------- generic calls

  /**
   * Calls any endpoint by name. Mutations are prepared and sent once (never retried here);
   * GET is retried per the retry policy.
   */
  async call<E extends EndpointName>(
    endpoint: E,
    args: CallArguments<E>,
    options: CallOptions = {},
  ): Promise<ResponseOf<E>> {
    if (isMutationEndpoint(endpoint)) {
      const prepared = this.prepare(endpoint, args as unknown as PrepareArguments<typeof endpoint>);
      return (await this.send(prepared, options)) as ResponseOf<E>;
    }
    const definition = endpoints[endpoint];
    const params = checkPathParams(endpoint, args.params);
    const query =
      definition.query === null
        ? ''
        : checkedQueryString(
            endpoint as EndpointsWithQuery,
            args.query as QueryInputOf<EndpointsWithQuery> | undefined,
          );
    const bodyBytes =
      definition.body === null
        ? null
        : serializeBody(endpoint as EndpointsWithBody, args.body).bytes;
    const spec: RequestSpec = {
      endpoint,
      method: definition.method,
      target: `${this.pathPrefix}${pathOf(endpoint, params)}${query}`,
      bodyBytes,
    };
    return (await this.executeWithRetries(spec, options)) as ResponseOf<E>;
  }

  /** Checks and serializes a mutation once; nothing is sent. Throws INVALID_REQUEST locally. */
  prepare<E extends MutationEndpointName>(
    endpoint: E,
    args: PrepareArguments<E>,
  ): PreparedMutation<E> {
    const pathParams = checkPathParams(endpoint, args.params);
    const { body, bytes } = serializeBody(endpoint, args.body);
    return this.preparedOf(endpoint, pathParams, body, bytes);
  }

  /**
   * Rebuilds a prepared mutation from journaled bytes, checking them but keeping them exactly,
   * so a restarted process resends what was sent before.
   */
  fromStoredMutation<E extends MutationEndpointName>(
    endpoint: E,
    pathParams: PathParamsOf<E> | Record<string, never>,
    bodyBytes: Uint8Array,
  ): PreparedMutation<E> {
    if (!isMutationEndpoint(endpoint)) {
      throw new VenueError('INVALID_REQUEST', `${String(endpoint)} is not a mutation endpoint`, {
        source: 'local',
      });
    }
    const params = checkPathParams(endpoint, pathParams);
    const bytes = Uint8Array.from(bodyBytes);
    const body = parseStoredBody(endpoint, bytes);
    return this.preparedOf(endpoint, params, body, bytes);
  }

  /**
   * Like `fromStoredMutation`, from the journaled path (`PreparedMutation.path`) instead of the
   * path parameters. The path must address `endpoint`.
   */
  fromStoredPath<E extends MutationEndpointName>(
    endpoint: E,
    path: string,
    bodyBytes: Uint8Array,
  ): PreparedMutation<E> {
    const match = matchEndpoint(endpoints[endpoint].method, path);
    if (match === null || match.name !== endpoint) {
      throw new VenueError('INVALID_REQUEST', `${endpoint}: the path ${path} does not address it`, {
        source: 'local',
        endpoint,
        details: { path },
      });
    }
    return this.fromStoredMutation(endpoint, match.params as PathParamsOf<E>, bodyBytes);
  }

  /**
   * Signs (fresh timestamp, nonce and signature) and sends a prepared mutation once. On a
   * failure the error's `outcome` says whether the service may have applied it.
   */
  async send<E extends SendableEndpoint>(
    prepared: PreparedCommand<E>,
    options: CallOptions = {},
  ): Promise<ResponseOf<E>> {
    // No second hash: the signature carries `bodySha256`, so bytes altered after they were
    // prepared fail the service's signature check and are never applied.
    const spec: RequestSpec = {
      endpoint: prepared.endpoint,
      method: endpoints[prepared.endpoint].method,
      target: `${this.pathPrefix}${prepared.path}`,
      bodyBytes: prepared.bodyBytes,
      bodySha256: prepared.bodySha256,
    };
    const response = await this.executeOnce(spec, options);
    checkPlacementIds(prepared.endpoint, prepared.body, response);
    return response as ResponseOf<E>;
  }

  /**
   * Interface Errors rule 5: asks GET /v1/requests/{request_id} what became of the mutation, and
   * resends only the same request id with exactly the same bytes.
   */
  async recover<E extends MutationEndpointName>(
    prepared: PreparedMutation<E>,
    options: RecoverOptions = {},
  ): Promise<RecoveryResult<E>> {
    let status: MutationStatus;
    try {
      status = await this.getRequest({ request_id: prepared.requestId }, options);
    } catch (error) {
      if (isVenueError(error) && error.code === 'ORDER_NOT_FOUND') {
        return {
          outcome: 'resent',
          response: await this.send(prepared, options),
        };
      }
      throw error;
    }
    if (status.state === 'PENDING') return { outcome: 'pending', status };
    const response = options.replayResult === false ? null : await this.send(prepared, options);
    return { outcome: 'completed', status, response };
  }

  // ---------------------------------------------------------------- public market data

  getTime(options?: CallOptions): Promise<ResponseOf<'getTime'>> {
    return this.call('getTime', {}, options);
  }

  getStatus(options?: CallOptions): Promise<ResponseOf<'getStatus'>> {
    return this.call('getStatus', {}, options);
  }

  health(options?: CallOptions): Promise<ResponseOf<'health'>> {
    return this.call('health', {}, options);
  }

  ready(options?: CallOptions): Promise<ResponseOf<'ready'>> {
    return this.call('ready', {}, options);
  }

  listRoutes(options?: CallOptions): Promise<ResponseOf<'listRoutes'>> {
    return this.call('listRoutes', {}, options);
  }

  listMarkets(options?: CallOptions): Promise<ResponseOf<'listMarkets'>> {
    return this.call('listMarkets', {}, options);
  }

  getMarket(
    params: PathParamsOf<'getMarket'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'getMarket'>> {
    return this.call('getMarket', { params }, options);
  }

  getBook(
    params: PathParamsOf<'getBook'>,
    query?: QueryInputOf<'getBook'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'getBook'>> {
    return this.call('getBook', { params, query }, options);
  }

  listTrades(
    params: PathParamsOf<'listTrades'>,
    query?: QueryInputOf<'listTrades'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listTrades'>> {
    return this.call('listTrades', { params, query }, options);
  }

  listCandles(
    params: PathParamsOf<'listCandles'>,
    query?: QueryInputOf<'listCandles'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listCandles'>> {
    return this.call('listCandles', { params, query }, options);
  }

  // ---------------------------------------------------------------- account reads

  getAccount(options?: CallOptions): Promise<ResponseOf<'getAccount'>> {
    return this.call('getAccount', {}, options);
  }

  listAccounts(options?: CallOptions): Promise<ResponseOf<'listAccounts'>> {
    return this.call('listAccounts', {}, options);
  }

  listPositions(
    query?: QueryInputOf<'listPositions'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listPositions'>> {
    return this.call('listPositions', { query }, options);
  }

  getRoutesReadiness(options?: CallOptions): Promise<ResponseOf<'getRoutesReadiness'>> {
    return this.call('getRoutesReadiness', {}, options);
  }

  // ---------------------------------------------------------------- order reads

  listOrders(
    query?: QueryInputOf<'listOrders'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listOrders'>> {
    return this.call('listOrders', { query }, options);
  }

  getOrder(
    params: PathParamsOf<'getOrder'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'getOrder'>> {
    return this.call('getOrder', { params }, options);
  }

  getOrderByClientId(
    params: PathParamsOf<'getOrderByClientId'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'getOrderByClientId'>> {
    return this.call('getOrderByClientId', { params }, options);
  }

  listFills(
    query?: QueryInputOf<'listFills'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listFills'>> {
    return this.call('listFills', { query }, options);
  }

  listEvents(
    query?: QueryInputOf<'listEvents'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listEvents'>> {
    return this.call('listEvents', { query }, options);
  }

  getRequest(
    params: PathParamsOf<'getRequest'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'getRequest'>> {
    return this.call('getRequest', { params }, options);
  }

  // ---------------------------------------------------------------- order commands

  /** Simulation creates nothing, so it is a plain signed POST (not prepared, not retried). */
  simulateOrder(
    body: BodyInputOf<'simulateOrder'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'simulateOrder'>> {
    return this.call('simulateOrder', { body }, options);
  }

  async placeOrder(
    body: BodyInputOf<'placeOrder'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'placeOrder'>> {
    return await this.send(this.prepare('placeOrder', { body }), options);
  }

  async amendOrder(
    params: PathParamsOf<'amendOrder'>,
    body: BodyInputOf<'amendOrder'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'amendOrder'>> {
    return await this.send(this.prepare('amendOrder', { params, body }), options);
  }

  async cancelOrder(
    params: PathParamsOf<'cancelOrder'>,
    body: BodyInputOf<'cancelOrder'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'cancelOrder'>> {
    return await this.send(this.prepare('cancelOrder', { params, body }), options);
  }

  async cancelAllOrders(
    body: BodyInputOf<'cancelAllOrders'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'cancelAllOrders'>> {
    return await this.send(this.prepare('cancelAllOrders', { body }), options);
  }

  async placeBatch(
    body: BodyInputOf<'placeBatch'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'placeBatch'>> {
    return await this.send(this.prepare('placeBatch', { body }), options);
  }

  async closePosition(
    params: PathParamsOf<'closePosition'>,
    body: BodyInputOf<'closePosition'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'closePosition'>> {
    return await this.send(this.prepare('closePosition', { params, body }), options);
  }

  async setCancelAllAfter(
    body: BodyInputOf<'setCancelAllAfter'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'setCancelAllAfter'>> {
    return await this.send(this.prepare('setCancelAllAfter', { body }), options);
  }

  // ---------------------------------------------------------------- pagination

  /** Every page of a list, passing `next_cursor` on unchanged until `has_more` is false. */
  async *pages<E extends PagedEndpointName>(
    endpoint: E,
    query: QueryInputOf<E> = {},
    options: CallOptions = {},
  ): AsyncGenerator<ResponseOf<E>, void, undefined> {
    let cursor = query.cursor;
    for (;;) {
      const page = (await this.call(
        endpoint,
        { query: { ...query, cursor } } as CallArguments<E>,
        options,
      )) as ResponseOf<PagedEndpointName>;
      yield page as ResponseOf<E>;
      if (!page.page.has_more) return;
      const next = page.page.next_cursor;
      if (next === null || next === cursor) {
        throw new VenueError(
          'MALFORMED_RESPONSE',
          `${endpoint}: has_more is true but next_cursor is ${next === null ? 'null' : 'unchanged'}`,
          { source: 'transport', endpoint },
        );
      }
      cursor = next;
    }
  }

  iteratePositions(
    query?: QueryInputOf<'listPositions'>,
    options?: CallOptions,
  ): AsyncGenerator<ResponseOf<'listPositions'>['data'][number], void, undefined> {
    return itemsOf(this.pages('listPositions', query, options));
  }

  iterateOrders(
    query?: QueryInputOf<'listOrders'>,
    options?: CallOptions,
  ): AsyncGenerator<ResponseOf<'listOrders'>['data'][number], void, undefined> {
    return itemsOf(this.pages('listOrders', query, options));
  }

  iterateFills(
    query?: QueryInputOf<'listFills'>,
    options?: CallOptions,
  ): AsyncGenerator<ResponseOf<'listFills'>['data'][number], void, undefined> {
    return itemsOf(this.pages('listFills', query, options));
  }

  /**
   * Pages of GET /v1/events, passing `next_after_sequence` on (derived from the events when the
   * service leaves it out, `nextAfterSequence`) until `has_more` is false.
   */
  async *eventPages(
    query: QueryInputOf<'listEvents'> = {},
    options: CallOptions = {},
  ): AsyncGenerator<ResponseOf<'listEvents'>, void, undefined> {
    let afterSequence = query.after_sequence ?? 0;
    for (;;) {
      const page = await this.listEvents({ ...query, after_sequence: afterSequence }, options);
      yield page;
      if (!page.has_more) return;
      const next = nextAfterSequence(page, afterSequence);
      if (next <= afterSequence) {
        throw new VenueError(
          'MALFORMED_RESPONSE',
          `listEvents: has_more is true but the next after_sequence ${next} does not pass ${afterSequence}`,
          { source: 'transport', endpoint: 'listEvents' },
        );
      }
      afterSequence = next;
    }
  }

  async *iterateEvents(
    query: QueryInputOf<'listEvents'> = {},
    options: CallOptions = {},
  ): AsyncGenerator<PrivateEventReading, void, undefined> {
    for await (const page of this.eventPages(query, options)) yield* page.data;
  }

  // ---------------------------------------------------------------- transport

  private preparedOf<E extends MutationEndpointName>(
    endpoint: E,
    pathParams: PathParamsOf<E>,
    body: BodyOf<E>,
    bytes: Uint8Array,
  ): PreparedMutation<E> {
    return preparedCommand({
      endpoint,
      path: pathOf(endpoint, pathParams),
      requestId: (body as { request_id: string }).request_id,
      body,
      bodyBytes: bytes,
    });
  }

  private requireCredential(purpose: string): {
    credential: Credential;
    signer: Signer;
  } {
    if (this.credential === null || this.signer === null) {
      throw new VenueError(
        'CREDENTIAL_REQUIRED',
        `${purpose} needs a developer key; create the client with a credential`,
        { source: 'local' },
      );
    }
    return { credential: this.credential, signer: this.signer };
  }

  private async executeWithRetries(spec: RequestSpec, options: CallOptions): Promise<unknown> {
    const retryable = spec.method === 'GET';
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.executeOnce(spec, options);
      } catch (error) {
        if (
          !retryable ||
          !isVenueError(error) ||
          !error.retryable ||
          attempt + 1 >= this.retryPolicy.maxAttempts
        ) {
          throw error;
        }
        const delayMs = error.retryAfterMs ?? backoffDelay(this.retryPolicy, attempt, this.random);
        if (delayMs > this.retryPolicy.maxRetryAfterMs) throw error;
        await sleep(this.clock, delayMs, options.signal);
      }
    }
  }

  /** One exchange; a refused signature names the wire settings to check. */
  private async executeOnce(spec: RequestSpec, options: CallOptions): Promise<unknown> {
    try {
      return await this.exchangeOnce(spec, options);
    } catch (error) {
      if (
        !isVenueError(error) ||
        error.code !== 'INVALID_SIGNATURE' ||
        error.source !== 'service'
      ) {
        throw error;
      }
      throw signatureRefused(error, this.wireProfile);
    }
  }

  private async exchangeOnce(spec: RequestSpec, options: CallOptions): Promise<unknown> {
    const { endpoint, method, target, bodyBytes } = spec;
    const definition = endpoints[endpoint];
    const mutation = definition.mutation;
    const notSent = (code: string, message: string, cause?: unknown): VenueError =>
      new VenueError(code, `${endpoint}: ${message}`, {
        source: 'local',
        endpoint,
        outcome: mutation ? 'not_sent' : null,
        cause,
      });
    if (this.closed) throw notSent('CLIENT_CLOSED', 'the client is closed');
    if (options.signal?.aborted) {
      throw notSent('REQUEST_ABORTED', 'the call was aborted by its caller', options.signal.reason);
    }

    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.userAgent,
    };
    if (bodyBytes !== null) headers['content-type'] = 'application/json';
    const signed = definition.auth === 'signed';
    const keyId = signed
      ? this.requireCredential(endpoint).credential.keyId
      : PUBLIC_RATE_LIMIT_KEY;

    try {
      // Both steps are synchronous when nothing needs waiting for: no event-loop hop before the
      // request is written (the common case on the order path).
      const waited = this.limiter?.acquire(
        keyId,
        options.signal,
        OPERATOR_ENDPOINTS.has(endpoint) ? 'operator' : 'ordinary',
      );
      if (waited !== undefined) await waited;
      if (signed) {
        const { credential, signer } = this.requireCredential(endpoint);
        const timestampMs =
          this.offset === null ? await this.signingTimestamp() : this.timestampNow(this.offset);
        if (options.signal?.aborted) {
          throw notSent('REQUEST_ABORTED', 'the call was aborted by its caller');
        }
        Object.assign(
          headers,
          signRequestWithProfile(this.wireProfile, {
            signer,
            keyId: credential.keyId,
            method,
            target,
            body: bodyBytes,
            bodySha256: spec.bodySha256,
            timestampMs,
          }),
        );
      }
    } catch (error) {
      if (isVenueError(error) && mutation && error.outcome === null) {
        // Failures before sending (the clock sync, the limiter's wait) leave nothing applied.
        throw new VenueError(error.code, error.message, {
          source: error.source,
          endpoint,
          outcome: 'not_sent',
          retryable: error.retryable,
          details: error.details,
          httpStatus: error.httpStatus,
          serverRequestId: error.serverRequestId,
          cause: error,
        });
      }
      throw error;
    }

    const exchange = new Exchange(this.maxResponseBytes);
    let timedOut = false;
    let callerAborted = false;
    const timeoutMs = options.timeoutMs ?? this.requestTimeoutMs;
    const timer = this.clock.setTimeout(() => {
      timedOut = true;
      exchange.abort(new Error('timed out'));
    }, timeoutMs);
    const onCallerAbort = (): void => {
      callerAborted = true;
      exchange.abort(new Error('aborted by the caller'));
    };
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });

    let status: number;
    let responseHeaders: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      this.pool.dispatch(
        { origin: this.origin, path: target, method, headers, body: bodyBytes },
        exchange,
      );
      ({ status, headers: responseHeaders, text } = await exchange.done);
    } catch (error) {
      throw this.transportError(endpoint, mutation, error, {
        timedOut,
        callerAborted,
        timeoutMs,
        maxBytes: this.maxResponseBytes,
      });
    } finally {
      this.clock.clearTimeout(timer);
      options.signal?.removeEventListener('abort', onCallerAbort);
    }

    this.tracker.observe(keyId, responseHeaders, this.clock.now());
    return interpretResponse(
      endpoint,
      { status, headers: responseHeaders, text },
      { serverNowMs: this.clock.now() + (this.offset?.offsetMs ?? 0), reading: this.reading },
    );
  }

  private transportError(
    endpoint: EndpointName,
    mutation: boolean,
    error: unknown,
    state: {
      timedOut: boolean;
      callerAborted: boolean;
      timeoutMs: number;
      maxBytes: number;
    },
  ): VenueError {
    const unknown: MutationOutcome | null = mutation ? 'unknown' : null;
    if (state.timedOut) {
      return new VenueError(
        'REQUEST_TIMEOUT',
        `${endpoint}: no complete answer within ${state.timeoutMs} ms${mutation ? '; the outcome is unknown: recover it by request id before sending anything else' : ''}`,
        {
          source: 'transport',
          endpoint,
          outcome: unknown,
          retryable: !mutation,
          cause: error,
        },
      );
    }
    if (state.callerAborted) {
      return new VenueError('REQUEST_ABORTED', `${endpoint}: the call was aborted by its caller`, {
        source: 'local',
        endpoint,
        outcome: unknown,
        cause: error,
      });
    }
    if (error instanceof ResponseTooLarge) {
      return new VenueError(
        'MALFORMED_RESPONSE',
        `${endpoint}: the answer is larger than ${state.maxBytes} bytes`,
        { source: 'transport', endpoint, outcome: unknown },
      );
    }
    if (this.closed) {
      return new VenueError('CLIENT_CLOSED', `${endpoint}: the client was closed`, {
        source: 'local',
        endpoint,
        outcome: unknown,
        cause: error,
      });
    }
    const code = errorCodeOf(error);
    const tls = tlsFailureOf(code);
    if (tls !== null) {
      return new VenueError(
        'TRANSPORT_FAILURE',
        `${endpoint}: TLS failed (${tls.code}): ${tls.advice}`,
        {
          source: 'transport',
          endpoint,
          outcome: mutation ? 'not_sent' : null,
          details: { transportCode: tls.code, tls: tls.kind },
          cause: error,
        },
      );
    }
    const neverConnected = code !== undefined && CONNECT_ERROR_CODES.has(code);
    return new VenueError(
      'TRANSPORT_FAILURE',
      `${endpoint}: ${neverConnected ? 'could not connect' : 'the connection failed'} (${code ?? (error instanceof Error ? error.message : 'unknown error')})${mutation && !neverConnected ? '; the outcome is unknown: recover it by request id before sending anything else' : ''}`,
      {
        source: 'transport',
        endpoint,
        outcome: mutation ? (neverConnected ? 'not_sent' : 'unknown') : null,
        retryable: !mutation || neverConnected,
        details: { transportCode: code ?? null },
        cause: error,
      },
    );
  }
}

/**
 * INVALID_SIGNATURE with what to check: the venue's reason when it gives one, and the wire
 * settings the signature depends on (`paperbot doctor` shows the signing input itself).
 */
function signatureRefused(error: VenueError, profile: WireProfile): VenueError {
  const settings = wireSettingsToCheck(profile);
  return new VenueError(
    error.code,
    `${error.message}; if the key and the clock are right, check the wire settings: ${settings.join(', ')}`,
    {
      source: error.source,
      retryable: error.retryable,
      details: { ...error.details, wire_settings: settings },
      httpStatus: error.httpStatus,
      serverRequestId: error.serverRequestId,
      endpoint: error.endpoint,
      outcome: error.outcome,
      retryAfterMs: error.retryAfterMs,
      bodyExcerpt: error.bodyExcerpt,
      cause: error,
    },
  );
}

function pathOf(endpoint: EndpointName, params: Readonly<Record<string, string>>): string {
  return (buildPath as (name: EndpointName, params: Readonly<Record<string, string>>) => string)(
    endpoint,
    params,
  );
}

async function* itemsOf<Item>(
  pages: AsyncGenerator<{ readonly data: readonly Item[] }, void, undefined>,
): AsyncGenerator<Item, void, undefined> {
  for await (const page of pages) yield* page.data;
}
