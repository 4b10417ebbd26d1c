/**
 * The REST client's requests to the service, one at a time: the rate limiter's wait, the SVC1
 * signature over the exact body bytes with a timestamp corrected by the measured clock offset,
 * the exchange on the keep-alive pool under the request timeout (on the injected clock), and
 * the answer read into a typed result or a `VenueError`. Only GET is retried, only when the
 * error is retryable, after a capped jittered backoff or the Retry-After a 429 asked for.
 * `RestClient` (rest-client.ts) owns the endpoints; this file owns how a request travels.
 */
import type { Dispatcher } from 'undici';
import { type Clock, systemClock } from '../core/clock.ts';
import {
  buildPath,
  type EndpointName,
  endpoints,
  type HttpMethod,
  type ResponseOf,
  serviceTimeMs,
} from '../protocol/index.ts';
import {
  type Credential,
  type Signer,
  signRequestWithProfile,
  type WireProfile,
} from '../signing/index.ts';
import { backoffDelay, sleep } from './backoff.ts';
import {
  assertClockUsable,
  type ClockOffsetEstimate,
  DEFAULT_SIGNATURE_WINDOW_MS,
  estimateClockOffset,
} from './clock-offset.ts';
import { isVenueError, VenueError } from './errors.ts';
import { Exchange } from './exchange.ts';
import {
  ClientRateLimiter,
  OPERATOR_ENDPOINTS,
  PUBLIC_RATE_LIMIT_KEY,
  RateLimitTracker,
} from './rate-limit.ts';
import type { ReadingMonitor } from './reading-monitor.ts';
import { signatureRefused, transportFailure } from './request-failures.ts';
import { interpretResponse } from './response.ts';
import {
  type CallOptions,
  DEFAULT_RETRY_POLICY,
  type RestClientOptions,
  type RetryPolicy,
} from './rest-options.ts';
import { createRestDispatcher, type TransportOptions } from './transport.ts';

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** One request as it goes out. */
export interface RequestSpec {
  readonly endpoint: EndpointName;
  readonly method: HttpMethod;
  /** The request target as sent (prefix, path, query). */
  readonly target: string;
  readonly bodyBytes: Uint8Array | null;
  /** The body's hash when it is already known (a prepared command). */
  readonly bodySha256?: string;
}

/** What the transport needs besides the client's options, already checked by the client. */
export interface RestTransportSetup {
  readonly origin: string;
  readonly pathPrefix: string;
  readonly credential: Credential | null;
  readonly wireProfile: WireProfile;
  readonly reading: ReadingMonitor;
  readonly transport: TransportOptions;
}

export class RestTransport {
  /** The quotas the service advertised, by key. */
  readonly tracker: RateLimitTracker;
  private readonly origin: string;
  private readonly timeTarget: string;
  private readonly credential: Credential | null;
  private readonly wireProfile: WireProfile;
  private readonly reading: ReadingMonitor;
  private readonly pool: Dispatcher;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly requestTimeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly retryPolicy: RetryPolicy;
  private readonly limiter: ClientRateLimiter | null;
  private readonly maxClockOffsetMs: number;
  private readonly clockSyncMode: 'auto' | 'manual';
  private readonly signer: Signer | null;
  private readonly userAgent: string;
  private offset: ClockOffsetEstimate | null = null;
  private syncing: Promise<ClockOffsetEstimate> | null = null;
  private closed = false;

  constructor(setup: RestTransportSetup, options: RestClientOptions) {
    this.origin = setup.origin;
    this.timeTarget = `${setup.pathPrefix}${buildPath('getTime')}`;
    this.credential = setup.credential;
    this.wireProfile = setup.wireProfile;
    this.reading = setup.reading;
    this.clock = options.clock ?? systemClock;
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
    this.signer = setup.credential?.createSigner(options.signerImplementation ?? 'native') ?? null;
    this.userAgent = options.userAgent ?? 'paperbot-client/0.1';
    this.pool = createRestDispatcher(this.origin, setup.transport, {
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

  /** Measures the clock offset with GET /v1/time (midpoint of the round trip) and keeps it. */
  async syncClock(options: CallOptions = {}): Promise<ClockOffsetEstimate> {
    const sentAt = this.clock.now();
    const time = (await this.executeWithRetries(
      { endpoint: 'getTime', method: 'GET', target: this.timeTarget, bodyBytes: null },
      options,
    )) as ResponseOf<'getTime'>;
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

  timestampNow(offset: ClockOffsetEstimate): number {
    assertClockUsable(offset, this.maxClockOffsetMs);
    return Math.round(this.clock.now() + offset.offsetMs);
  }

  /** The credential and signer, or CREDENTIAL_REQUIRED naming what needed them. */
  requireCredential(purpose: string): {
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

  /** Sends a request; a GET is retried per the retry policy, anything else sent once. */
  async executeWithRetries(spec: RequestSpec, options: CallOptions): Promise<unknown> {
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
  async executeOnce(spec: RequestSpec, options: CallOptions): Promise<unknown> {
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
      throw transportFailure(endpoint, mutation, error, {
        timedOut,
        callerAborted,
        timeoutMs,
        maxBytes: this.maxResponseBytes,
        clientClosed: this.closed,
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
}
