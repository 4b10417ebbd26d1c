/**
 * The stream client (GET /v1/ws, contract section 4) as RxJS observables. It connects, reads the
 * challenge, authenticates with the requested scopes and the last processed sequence,
 * subscribes, and keeps the connection alive with a heartbeat watchdog, reconnecting with
 * capped jittered backoff on the injected clock.
 *
 * Private events pass through a `SequenceTracker`: gaps are filled from GET /v1/events until
 * `has_more` is false, duplicates are dropped, so each event is delivered exactly once and in
 * order. After a reconnect the log is read first, then the new socket is authenticated with the
 * recovered sequence (interface Recovery section). A counter going backwards, or a gap that
 * cannot be filled, is signalled on `resync$`; the runtime treats that as fail-closed.
 */
import { BehaviorSubject, filter, Observable, Subject } from 'rxjs';
import WebSocket from 'ws';
import { type Clock, systemClock, type TimerHandle } from '../core/clock.ts';
import {
  type AccountEventReading,
  type CancelAllAfterTriggeredEventReading,
  type Channel,
  channelScope,
  type FillEventReading,
  isPublicChannel,
  type KnownPrivateEventReading,
  type LiquidationEventReading,
  type OrderStatusEvent,
  type PositionEventReading,
  type PrivateChannel,
  PrivateChannel as PrivateChannelSchema,
  isKnownPrivateEvent,
  type OtherPrivateEvent,
  describeIssues,
  formatWirePath,
  isUnreadablePrivateEvent,
  type PrivateEventReading,
  type PublicChannel,
  readServerFrameWith,
  Scope,
  type ServerFrameReading,
  skippedItemsOf,
  type UnreadablePrivateEvent,
  unreadablePrivateEvent,
  type TickerSnapshotFrame,
  type TickerUpdateFrame,
  tickerChannel,
} from '../protocol/index.ts';
import {
  describeParts,
  protocolScopeOf,
  type WireProfile,
  wireSettingsToCheck,
} from '../signing/index.ts';
import { type BackoffPolicy, backoffDelay } from './backoff.ts';
import { checkWebSocketUrl } from './base-url.ts';
import { excerptOf, isVenueError, VenueError } from './errors.ts';
import type { RestClient } from './rest-client.ts';
import { tlsFailureOf } from './tls-errors.ts';
import { type TransportOptions, webSocketTransportOptions } from './transport.ts';
import {
  type ResyncReason,
  type SequenceOffer,
  type SequenceProblem,
  SequenceTracker,
} from './sequence.ts';

export type ConnectionState =
  /** Not started. */
  | 'idle'
  /** Reading missed events from GET /v1/events before authenticating. */
  | 'recovering'
  /** Opening the socket and waiting for the challenge. */
  | 'connecting'
  | 'authenticating'
  | 'subscribing'
  /** Subscribed; events flow. */
  | 'live'
  /** Waiting to reconnect. */
  | 'backoff'
  /** Stopped by `close()`. */
  | 'closed'
  /** Stopped by a refusal that retrying cannot fix (revoked or expired key, clock skew). */
  | 'failed';

export type TickerFrame = TickerSnapshotFrame | TickerUpdateFrame;
export type RiskEvent = CancelAllAfterTriggeredEventReading | LiquidationEventReading;

/** Fail closed: private events are not trustworthy until the runtime reconciles. */
export interface ResyncSignal {
  readonly reason: ResyncReason;
  readonly message: string;
  /** The last sequence delivered. */
  readonly lastSequence: number;
  readonly sequence: number | null;
  /** True when delivery is halted until `resetSequence`; false when the next fill may heal it. */
  readonly halted: boolean;
  /** When it was signalled, epoch milliseconds on the client's clock. */
  readonly at: number;
  readonly cause: unknown;
}

export interface StreamStatistics {
  readonly delivered: number;
  readonly duplicatesDropped: number;
  readonly gapFills: number;
  readonly reconnects: number;
  readonly malformedFrames: number;
  /** Frames of unknown types without a private sequence (`otherFrames$`). */
  readonly otherFrames: number;
  /** Private events of unknown types (`otherEvents$`). */
  readonly otherEvents: number;
  /** Private events of known types that broke their schema (`unreadableEvents$`). */
  readonly unreadableEvents: number;
  readonly resyncs: number;
}

export interface StreamClientOptions {
  /** Gap fills (GET /v1/events), the clock offset, and the signer of the auth frame. */
  readonly rest: RestClient;
  /** Defaults to the REST client's credential's `ws_url`. */
  readonly url?: string;
  readonly clock?: Clock;
  /** Uniform in [0, 1); jitter of the reconnect backoff. */
  readonly random?: () => number;
  /**
   * Private channels to follow. Default: every private channel with a credential, none without.
   * Following all of them keeps every sequence on the stream. The key file's scope names are
   * not trusted to tell what the key may do (a venue may name scopes its own way): a channel
   * whose scope the key lacks is learned from the venue's SCOPE_REQUIRED answer to the auth
   * frame, and dropped (`lackingScopes`).
   */
  readonly privateChannels?: readonly PrivateChannel[];
  /**
   * The last private sequence already processed (from the runtime's journal): events after it
   * are delivered, read from the log first. `latest` (default): only events after the head at
   * the first authentication.
   */
  readonly startAfterSequence?: number | 'latest';
  /** Reconnect when neither a heartbeat nor a pong arrives for this long. Default 25 000. */
  readonly heartbeatTimeoutMs?: number;
  /** Send a ping this often; null (default) relies on the service's heartbeats. */
  readonly pingIntervalMs?: number | null;
  /** Socket open plus challenge. Default 10 000. */
  readonly connectTimeoutMs?: number;
  /** Waiting for `authenticated`, `subscribed`, `unsubscribed`, `pong`. Default 10 000. */
  readonly replyTimeoutMs?: number;
  readonly reconnect?: Partial<BackoffPolicy>;
  /** Events held while a gap is filled. Default 10 000. */
  readonly bufferLimit?: number;
  readonly maxPayloadBytes?: number;
  readonly userAgent?: string;
  /** Trusted CA and proxy environment. Default: the REST client's. */
  readonly transport?: TransportOptions;
}

const FATAL_CODES: ReadonlySet<string> = new Set([
  'KEY_REVOKED',
  'KEY_EXPIRED',
  'IP_NOT_ALLOWED',
  'CLOCK_SKEW',
  'CREDENTIAL_REQUIRED',
  'SCOPE_REQUIRED',
]);

const DEFAULT_RECONNECT: BackoffPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
};
const EVENTS_PAGE_LIMIT = 200;

interface Waiter {
  readonly resolve: (reading: ServerFrameReading) => void;
  readonly reject: (error: unknown) => void;
  readonly timer: TimerHandle;
  /** The confirmation kind that answers it (`authenticated` for auth); null for the challenge. */
  readonly answeredBy: ServerFrameReading['kind'] | null;
}

/** The confirmation that answers each client frame. */
const ANSWER_OF: Readonly<Record<string, ServerFrameReading['kind']>> = {
  auth: 'authenticated',
  subscribe: 'subscribed',
  unsubscribe: 'unsubscribed',
  ping: 'pong',
};

/** A TLS failure named with its advice; other socket errors by their message. */
function describeSocketError(error: Error): string {
  const tls = tlsFailureOf((error as NodeJS.ErrnoException).code);
  return tls === null ? error.message : `TLS failed (${tls.code}): ${tls.advice}`;
}

/** A private event as the sequence carries it: read, or unreadable but counted. */
type StreamEvent = PrivateEventReading | UnreadablePrivateEvent;

const STREAM_SOURCE = { where: 'stream' } as const;

/**
 * The events of a GET /v1/events page in sequence order, with those a tolerant read left out
 * (they broke their schema) as unreadable events where their sequence can be read.
 */
function eventsOfPage(page: {
  readonly data: readonly PrivateEventReading[];
}): readonly StreamEvent[] {
  const skipped = skippedItemsOf(page);
  if (skipped.length === 0) return page.data;
  const events: StreamEvent[] = [...page.data];
  for (const item of skipped) {
    const relative = item.issues.map((issue) => ({
      ...issue,
      path: issue.path.slice(item.path.length),
    }));
    const problem = `listEvents: ${describeIssues(relative, item.raw, formatWirePath(item.path))}`;
    const unreadable = unreadablePrivateEvent(item.raw, problem);
    if (unreadable !== null) events.push(unreadable);
  }
  return events.sort((left, right) => left.sequence - right.sequence);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function streamError(
  code: string,
  message: string,
  extra: {
    cause?: unknown;
    details?: Record<string, unknown>;
    retryable?: boolean;
  } = {},
): VenueError {
  return new VenueError(code, message, { source: 'transport', ...extra });
}

/** Refusals of a signed auth frame that a new connection can cure: time and one-use values. */
const PASSING_SIGNATURE_REASONS: ReadonlySet<unknown> = new Set([
  'timestamp_outside_window',
  'nonce_reused',
  'nonce_capacity_exceeded',
  'challenge_expired',
  'challenge_reused',
]);

/**
 * INVALID_SIGNATURE on the auth frame for a reason that signing again the same way cannot cure
 * (a wrong key, wire profile or encoding): the stream fails rather than reconnect forever. A
 * venue that gives no reason is retried, as before.
 */
function isLastingSignatureRefusal(error: VenueError): boolean {
  const reason = error.details.reason;
  return (
    error.code === 'INVALID_SIGNATURE' &&
    error.details.during === 'auth' &&
    typeof reason === 'string' &&
    !PASSING_SIGNATURE_REASONS.has(reason)
  );
}

/** The protocol scopes `channels` need, sorted. */
function scopesOf(channels: readonly PrivateChannel[]): Scope[] {
  return [...new Set(channels.map((channel) => channelScope[channel]))].sort();
}

/**
 * A refused auth frame, marked as such (`details.during: "auth"`); INVALID_SIGNATURE names the
 * wire settings the frame depends on.
 */
function authRefusal(error: unknown, profile: WireProfile): unknown {
  if (!isVenueError(error) || error.source === 'local') return error;
  const signature = error.code === 'INVALID_SIGNATURE';
  const settings = signature
    ? [
        `venue.wire.websocket_auth (input ${describeParts(profile.webSocketAuth.input)}, fields ${Object.values(profile.webSocketAuth.fields).join(', ')})`,
        `venue.wire.scopes (${Object.values(profile.scopes).join(', ')})`,
        ...wireSettingsToCheck(profile).filter(
          (setting) =>
            !setting.startsWith('venue.wire.request_input') &&
            !setting.startsWith('venue.wire.headers'),
        ),
      ]
    : [];
  return new VenueError(
    error.code,
    signature
      ? `${error.message}; if the key and the clock are right, check the wire settings: ${settings.join(', ')}`
      : error.message,
    {
      source: error.source,
      retryable: error.retryable,
      details: {
        ...error.details,
        during: 'auth',
        ...(signature ? { wire_settings: settings } : {}),
      },
      httpStatus: error.httpStatus,
      serverRequestId: error.serverRequestId,
      cause: error,
    },
  );
}

export class StreamClient {
  readonly url: string;
  private readonly rest: RestClient;
  private readonly clock: Clock;
  private readonly random: () => number;
  private privateChannels: readonly PrivateChannel[];
  private scopes: readonly string[];
  /** Protocol scopes the venue said the key lacks (SCOPE_REQUIRED on auth). */
  private readonly lacking = new Set<Scope>();
  private readonly heartbeatTimeoutMs: number;
  private readonly pingIntervalMs: number | null;
  private readonly connectTimeoutMs: number;
  private readonly replyTimeoutMs: number;
  private readonly reconnectPolicy: BackoffPolicy;
  private readonly maxPayloadBytes: number;
  private readonly userAgent: string;
  private readonly transport: TransportOptions;
  private readonly tracker: SequenceTracker<StreamEvent>;
  private startFromHead: boolean;

  private readonly stateSubject = new BehaviorSubject<ConnectionState>('idle');
  private readonly eventSubject = new Subject<KnownPrivateEventReading>();
  private readonly otherEventSubject = new Subject<OtherPrivateEvent>();
  private readonly unreadableEventSubject = new Subject<UnreadablePrivateEvent>();
  private readonly otherFrameSubject = new Subject<Readonly<Record<string, unknown>>>();
  private readonly tickerSubject = new Subject<TickerFrame>();
  private readonly resyncSubject = new Subject<ResyncSignal>();
  private readonly errorSubject = new Subject<VenueError>();

  /** Connection state. */
  readonly state$: Observable<ConnectionState> = this.stateSubject.asObservable();
  /**
   * Every private event of a known type, exactly once, in sequence order; fields beyond the
   * ones the client checks are kept (contract section 7), except on the order event.
   */
  readonly events$: Observable<KnownPrivateEventReading> = this.eventSubject.asObservable();
  readonly orders$: Observable<OrderStatusEvent> = this.events$.pipe(
    filter((event): event is OrderStatusEvent => event.channel === 'orders'),
  );
  readonly fills$: Observable<FillEventReading> = this.events$.pipe(
    filter((event): event is FillEventReading => event.channel === 'fills'),
  );
  readonly positions$: Observable<PositionEventReading> = this.events$.pipe(
    filter((event): event is PositionEventReading => event.channel === 'positions'),
  );
  readonly account$: Observable<AccountEventReading> = this.events$.pipe(
    // By type: a funding payment travels on the account channel too.
    filter((event): event is AccountEventReading => event.type === 'account'),
  );
  readonly risk$: Observable<RiskEvent> = this.events$.pipe(
    filter((event): event is RiskEvent => event.channel === 'risk'),
  );
  /**
   * Private events of types the project does not know, in sequence order among the others and
   * counted in the sequence; their payload as sent (contract section 7: passed on, not refused).
   */
  readonly otherEvents$: Observable<OtherPrivateEvent> = this.otherEventSubject.asObservable();
  /**
   * Private events of known types that broke their schema but carry a sequence (tolerant
   * reading), in sequence order among the others: what they said must be read back.
   */
  readonly unreadableEvents$: Observable<UnreadablePrivateEvent> =
    this.unreadableEventSubject.asObservable();
  /** Frames of unknown types without a private sequence, as sent. */
  readonly otherFrames$: Observable<Readonly<Record<string, unknown>>> =
    this.otherFrameSubject.asObservable();
  /** Fail-closed signals: the private sequence cannot be trusted until reconciled. */
  readonly resync$: Observable<ResyncSignal> = this.resyncSubject.asObservable();
  /** Error frames, unreadable frames and connection failures, for logs and metrics. */
  readonly errors$: Observable<VenueError> = this.errorSubject.asObservable();

  private socket: WebSocket | null = null;
  private generation = 0;
  private frameCounter = 0;
  private attempt = 0;
  /** No more sessions: closed, or failed for good. */
  private stopped = false;
  private closed = false;
  private challengeWaiter: Waiter | null = null;
  private readonly replyWaiters = new Map<string, Waiter>();
  private reconnectTimer: TimerHandle | undefined;
  private watchdogTimer: TimerHandle | undefined;
  private pingTimer: TimerHandle | undefined;
  private readonly publicChannels = new Map<PublicChannel, number>();
  private readonly latestTicker = new Map<PublicChannel, TickerFrame>();
  private filling: Promise<void> | null = null;
  private fillRequested = false;
  private forcedFillRequested = false;
  private connectWaiters: {
    resolve: () => void;
    reject: (error: unknown) => void;
  }[] = [];
  private counters = {
    gapFills: 0,
    reconnects: 0,
    malformedFrames: 0,
    otherFrames: 0,
    otherEvents: 0,
    unreadableEvents: 0,
    resyncs: 0,
  };

  constructor(options: StreamClientOptions) {
    this.rest = options.rest;
    const credential = options.rest.credential;
    const url = options.url ?? credential?.wsUrl;
    if (url === undefined) {
      throw new VenueError('UNSAFE_URL', 'a WebSocket URL or a credential with one is required', {
        source: 'local',
      });
    }
    this.url = checkWebSocketUrl(url);
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.privateChannels =
      options.privateChannels ??
      (credential === undefined || credential === null ? [] : PrivateChannelSchema.options);
    if (this.privateChannels.length > 0 && (credential === undefined || credential === null)) {
      throw new VenueError(
        'CREDENTIAL_REQUIRED',
        'private channels need a developer key; create the REST client with a credential',
        { source: 'local' },
      );
    }
    this.scopes = scopesOf(this.privateChannels);
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 25_000;
    this.pingIntervalMs = options.pingIntervalMs ?? null;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.replyTimeoutMs = options.replyTimeoutMs ?? 10_000;
    this.reconnectPolicy = { ...DEFAULT_RECONNECT, ...options.reconnect };
    this.maxPayloadBytes = options.maxPayloadBytes ?? 16 * 1024 * 1024;
    this.userAgent = options.userAgent ?? 'paperbot-client/0.1';
    this.transport = options.transport ?? options.rest.transport;
    const start = options.startAfterSequence ?? 'latest';
    this.startFromHead = start === 'latest';
    this.tracker = new SequenceTracker<StreamEvent>({
      lastSequence: start === 'latest' ? 0 : start,
      bufferLimit: options.bufferLimit,
    });
  }

  get state(): ConnectionState {
    return this.stateSubject.value;
  }

  /** The last private sequence delivered: persist it to resume after a restart. */
  get lastSequence(): number {
    return this.tracker.lastSequence;
  }

  statistics(): StreamStatistics {
    return {
      delivered: this.tracker.delivered,
      duplicatesDropped: this.tracker.duplicates,
      ...this.counters,
    };
  }

  /** Starts the connection; resolves when it is first live, rejects if it fails for good. */
  connect(): Promise<void> {
    if (this.stopped) {
      return Promise.reject(streamError('CLIENT_CLOSED', 'the stream client is closed'));
    }
    const ready = new Promise<void>((resolve, reject) => {
      if (this.state === 'live') resolve();
      else this.connectWaiters.push({ resolve, reject });
    });
    if (this.state === 'idle') this.startSession();
    return ready;
  }

  /** Stops for good: closes the socket, clears every timer, completes every observable. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopped = true;
    this.generation += 1;
    this.clock.clearTimeout(this.reconnectTimer);
    this.teardownSocket(streamError('CLIENT_CLOSED', 'the stream client was closed'));
    if (this.state !== 'failed') this.setState('closed');
    this.settleConnectWaiters(streamError('CLIENT_CLOSED', 'the stream client was closed'));
    await this.filling?.catch(() => undefined);
    this.eventSubject.complete();
    this.otherEventSubject.complete();
    this.otherFrameSubject.complete();
    this.tickerSubject.complete();
    this.resyncSubject.complete();
    this.errorSubject.complete();
    this.stateSubject.complete();
  }

  /**
   * The ticker of a market: a snapshot, then updates. Subscribing adds the channel (resubscribed
   * after every reconnect, each time with a fresh snapshot); the last unsubscribe removes it.
   */
  ticker$(marketId: string): Observable<TickerFrame> {
    const channel = tickerChannel(marketId);
    if (!isPublicChannel(channel)) {
      throw new VenueError('INVALID_REQUEST', `not a market id for a ticker: ${marketId}`, {
        source: 'local',
      });
    }
    return new Observable<TickerFrame>((subscriber) => {
      const count = (this.publicChannels.get(channel) ?? 0) + 1;
      this.publicChannels.set(channel, count);
      if (count === 1 && this.state === 'live') this.changeSubscription('subscribe', [channel]);
      let seenSnapshot = false;
      const latest = this.latestTicker.get(channel);
      if (latest !== undefined) {
        seenSnapshot = true;
        subscriber.next(
          latest.type === 'ticker.snapshot'
            ? latest
            : deepFreeze({ ...latest, type: 'ticker.snapshot' as const }),
        );
      }
      const inner = this.tickerSubject.subscribe({
        next: (frame) => {
          if (frame.channel !== channel) return;
          if (frame.type === 'ticker.snapshot') seenSnapshot = true;
          else if (!seenSnapshot) return;
          subscriber.next(frame);
        },
        complete: () => subscriber.complete(),
      });
      return () => {
        inner.unsubscribe();
        const remaining = (this.publicChannels.get(channel) ?? 1) - 1;
        if (remaining > 0) {
          this.publicChannels.set(channel, remaining);
          return;
        }
        this.publicChannels.delete(channel);
        this.latestTicker.delete(channel);
        if (this.state === 'live') this.changeSubscription('unsubscribe', [channel]);
      };
    });
  }

  /** Sends a ping and resolves with the round trip in milliseconds (on the injected clock). */
  async ping(): Promise<number> {
    const sentAt = this.clock.now();
    await this.request({ op: 'ping' });
    return this.clock.now() - sentAt;
  }

  /**
   * After the runtime has reconciled a resync, resumes private delivery after `sequence`. Held
   * events above it follow; a remaining gap is filled from the log.
   */
  resetSequence(sequence: number): void {
    this.deliver(this.tracker.reset(sequence));
    if (this.tracker.hasGap()) void this.fill(false);
  }

  // ---------------------------------------------------------------- session

  private setState(state: ConnectionState): void {
    if (this.stateSubject.value !== state && !this.stateSubject.closed)
      this.stateSubject.next(state);
  }

  private settleConnectWaiters(error?: unknown): void {
    const waiters = this.connectWaiters;
    this.connectWaiters = [];
    for (const waiter of waiters) {
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
  }

  /** Protocol scopes the venue said this key lacks; their channels are not followed. */
  get lackingScopes(): readonly Scope[] {
    return [...this.lacking].sort();
  }

  /**
   * After SCOPE_REQUIRED on auth: the scopes the venue named as missing (in the profile's names,
   * mapped back) are remembered and their channels dropped, so the next session asks only for
   * what the key has. False when the answer names no scope that was asked for.
   */
  private learnMissingScopes(error: VenueError): boolean {
    const named = [error.details.missing_scopes, error.details.required_scope].flat();
    const profile = this.rest.wireProfile;
    const missing = named.flatMap((name) => {
      if (typeof name !== 'string') return [];
      const scope = protocolScopeOf(profile, name) ?? Scope.safeParse(name).data ?? null;
      return scope !== null && this.scopes.includes(scope) ? [scope] : [];
    });
    if (missing.length === 0) return false;
    for (const scope of missing) this.lacking.add(scope);
    this.privateChannels = this.privateChannels.filter(
      (channel) => !this.lacking.has(channelScope[channel]),
    );
    this.scopes = scopesOf(this.privateChannels);
    return true;
  }

  private startSession(): void {
    const generation = ++this.generation;
    this.openSession(generation).catch((error: unknown) => {
      if (generation !== this.generation || this.stopped) return;
      let failure = isVenueError(error)
        ? error
        : streamError('TRANSPORT_FAILURE', 'the stream session failed', {
            cause: error,
          });
      if (failure.code === 'SCOPE_REQUIRED' && failure.details.during === 'auth') {
        if (this.learnMissingScopes(failure) && this.privateChannels.length > 0) {
          failure = new VenueError(
            'SCOPE_REQUIRED',
            `the venue says the key lacks ${this.lackingScopes.join(', ')}; following only ${this.privateChannels.join(', ')}`,
            {
              source: failure.source,
              details: { ...failure.details, lacking_scopes: this.lackingScopes },
              cause: failure,
            },
          );
          this.errorSubject.next(failure);
          this.scheduleReconnect(generation);
          return;
        }
      }
      this.errorSubject.next(failure);
      if (FATAL_CODES.has(failure.code) || isLastingSignatureRefusal(failure)) {
        this.fail(failure);
        return;
      }
      this.scheduleReconnect(generation);
    });
  }

  private fail(error: VenueError): void {
    this.stopped = true;
    this.generation += 1;
    this.teardownSocket(error);
    this.setState('failed');
    this.settleConnectWaiters(error);
  }

  private async openSession(generation: number): Promise<void> {
    const isPrivate = this.privateChannels.length > 0;
    if (isPrivate && !this.startFromHead && this.tracker.halted === null) {
      this.setState('recovering');
      await this.fill(true);
      this.assertCurrent(generation);
    }

    this.setState('connecting');
    const challengeFrame = this.waitForChallenge();
    const socket = new WebSocket(this.url, {
      followRedirects: false,
      perMessageDeflate: false,
      maxPayload: this.maxPayloadBytes,
      headers: { 'user-agent': this.userAgent },
      ...webSocketTransportOptions(this.url, this.transport, {
        clock: this.clock,
        timeoutMs: this.connectTimeoutMs,
      }),
    });
    this.socket = socket;
    socket.on('message', (data: WebSocket.RawData) => this.onMessage(generation, data));
    socket.on('close', (code: number) =>
      this.onSocketGone(
        generation,
        streamError('TRANSPORT_FAILURE', `the stream connection closed (code ${code})`, {
          retryable: true,
        }),
      ),
    );
    socket.on('error', (error: Error) =>
      this.onSocketGone(
        generation,
        streamError(
          'TRANSPORT_FAILURE',
          `the stream connection failed: ${describeSocketError(error)}`,
          {
            cause: error,
            retryable: true,
          },
        ),
      ),
    );
    const challenge = await challengeFrame;
    this.assertCurrent(generation);
    this.armWatchdog(generation);

    if (isPrivate && challenge.kind === 'challenge') {
      this.setState('authenticating');
      const fields = await this.rest.signWebSocketAuth(
        challenge.frame.challenge,
        this.scopes,
        this.tracker.lastSequence,
      );
      this.assertCurrent(generation);
      // The fields come named and formatted by the wire profile (SVC1: `timestamp` as text).
      const authenticated = await this.request({ op: 'auth', ...fields }).catch(
        (error: unknown) => {
          throw authRefusal(error, this.rest.wireProfile);
        },
      );
      this.assertCurrent(generation);
      if (authenticated.kind === 'authenticated') {
        // Gaps found here are filled once live (below), not during the session's setup.
        this.observeHead(authenticated.frame.sequence, false);
      }
    }

    this.setState('subscribing');
    if (isPrivate) {
      await this.request({
        op: 'subscribe',
        channels: [...this.privateChannels],
      });
      this.assertCurrent(generation);
    }
    // One frame per market, so a market the service refuses does not take the others with it.
    for (const channel of this.publicChannels.keys())
      this.changeSubscription('subscribe', [channel]);
    this.setState('live');
    this.attempt = 0;
    this.startPinging(generation);
    this.settleConnectWaiters();
    if (this.tracker.hasGap()) void this.fill(false);
  }

  private assertCurrent(generation: number): void {
    if (generation !== this.generation || this.stopped) {
      throw streamError('CLIENT_CLOSED', 'the stream session was replaced');
    }
  }

  private scheduleReconnect(generation: number): void {
    if (generation !== this.generation || this.stopped) return;
    this.generation += 1;
    const next = this.generation;
    this.teardownSocket(streamError('TRANSPORT_FAILURE', 'the stream connection was dropped'));
    this.counters.reconnects += 1;
    this.setState('backoff');
    const delayMs = backoffDelay(this.reconnectPolicy, this.attempt, this.random);
    this.attempt += 1;
    this.clock.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = this.clock.setTimeout(() => {
      if (next !== this.generation || this.stopped) return;
      this.startSession();
    }, delayMs);
  }

  private onSocketGone(generation: number, error: VenueError): void {
    if (generation !== this.generation || this.stopped) return;
    this.errorSubject.next(error);
    this.scheduleReconnect(generation);
  }

  private teardownSocket(error: unknown): void {
    this.clock.clearTimeout(this.watchdogTimer);
    this.clock.clearInterval(this.pingTimer);
    this.watchdogTimer = undefined;
    this.pingTimer = undefined;
    const waiter = this.challengeWaiter;
    this.challengeWaiter = null;
    if (waiter !== null) {
      this.clock.clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    for (const [requestId, reply] of this.replyWaiters) {
      this.clock.clearTimeout(reply.timer);
      reply.reject(error);
      this.replyWaiters.delete(requestId);
    }
    const socket = this.socket;
    this.socket = null;
    if (socket !== null) {
      socket.removeAllListeners('message');
      // A late 'error' must not go unhandled once the socket is abandoned.
      socket.on('error', () => undefined);
      socket.terminate();
    }
  }

  private armWatchdog(generation: number): void {
    this.clock.clearTimeout(this.watchdogTimer);
    this.watchdogTimer = this.clock.setTimeout(() => {
      if (generation !== this.generation) return;
      this.errorSubject.next(
        streamError(
          'HEARTBEAT_TIMEOUT',
          `no heartbeat or pong for ${this.heartbeatTimeoutMs} ms; reconnecting`,
          { retryable: true },
        ),
      );
      this.scheduleReconnect(generation);
    }, this.heartbeatTimeoutMs);
  }

  private startPinging(generation: number): void {
    if (this.pingIntervalMs === null) return;
    this.clock.clearInterval(this.pingTimer);
    this.pingTimer = this.clock.setInterval(() => {
      if (generation !== this.generation) return;
      this.request({ op: 'ping' }).catch(() => undefined);
    }, this.pingIntervalMs);
  }

  // ---------------------------------------------------------------- frames

  private nextRequestId(): string {
    this.frameCounter += 1;
    return `ws-${this.generation}-${this.frameCounter}`;
  }

  private waitForChallenge(): Promise<ServerFrameReading> {
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.challengeWaiter = null;
        reject(
          streamError('REQUEST_TIMEOUT', `no challenge within ${this.connectTimeoutMs} ms`, {
            retryable: true,
          }),
        );
      }, this.connectTimeoutMs);
      this.challengeWaiter = { resolve, reject, timer, answeredBy: null };
    });
  }

  /** Sends a client frame and waits for the reply carrying its request id. */
  private request(frame: Record<string, unknown>): Promise<ServerFrameReading> {
    const socket = this.socket;
    if (socket === null || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(
        streamError('TRANSPORT_FAILURE', 'the stream is not connected', {
          retryable: true,
        }),
      );
    }
    const requestId = this.nextRequestId();
    return new Promise<ServerFrameReading>((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.replyWaiters.delete(requestId);
        reject(
          streamError(
            'REQUEST_TIMEOUT',
            `no answer to ${String(frame.op)} within ${this.replyTimeoutMs} ms`,
            { retryable: true },
          ),
        );
      }, this.replyTimeoutMs);
      this.replyWaiters.set(requestId, {
        resolve,
        reject,
        timer,
        answeredBy: ANSWER_OF[String(frame.op)] ?? null,
      });
      socket.send(JSON.stringify({ ...frame, request_id: requestId }), (error) => {
        if (error === undefined || error === null) return;
        const waiter = this.replyWaiters.get(requestId);
        if (waiter === undefined) return;
        this.replyWaiters.delete(requestId);
        this.clock.clearTimeout(waiter.timer);
        waiter.reject(
          streamError('TRANSPORT_FAILURE', 'could not send a frame', {
            cause: error,
          }),
        );
      });
    });
  }

  private changeSubscription(op: 'subscribe' | 'unsubscribe', channels: Channel[]): void {
    this.request({ op, channels }).catch((error: unknown) => {
      if (isVenueError(error) && !this.stopped) this.errorSubject.next(error);
    });
  }

  private onMessage(generation: number, data: WebSocket.RawData): void {
    if (generation !== this.generation) return;
    // A frame arrives as one Buffer (ws's default): read it in place, not through a copy.
    const text = Buffer.isBuffer(data)
      ? data.toString('utf8')
      : Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data).toString('utf8');
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      this.malformed('a frame is not JSON', text);
      return;
    }
    const monitor = this.rest.reading;
    const { reading, drift } = readServerFrameWith(document, monitor.mode);
    if (drift.length > 0) monitor.report(STREAM_SOURCE, drift);
    if (reading.kind === 'malformed') {
      monitor.refused(STREAM_SOURCE, `stream: ${reading.problem}`);
      this.malformed(reading.problem, text);
      return;
    }
    this.onFrame(generation, deepFreeze(reading));
  }

  private malformed(problem: string, text: string): void {
    this.counters.malformedFrames += 1;
    this.errorSubject.next(
      new VenueError('MALFORMED_RESPONSE', `stream: ${problem}`, {
        source: 'transport',
        bodyExcerpt: excerptOf(text),
      }),
    );
  }

  private onFrame(generation: number, reading: ServerFrameReading): void {
    switch (reading.kind) {
      case 'challenge': {
        const waiter = this.challengeWaiter;
        this.challengeWaiter = null;
        if (waiter !== null) {
          this.clock.clearTimeout(waiter.timer);
          waiter.resolve(reading);
        }
        return;
      }
      case 'pong':
        this.armWatchdog(generation);
        this.resolveReply(reading.frame.request_id, reading);
        return;
      case 'authenticated':
      case 'subscribed':
      case 'unsubscribed':
        this.resolveReply(reading.frame.request_id, reading);
        return;
      case 'heartbeat': {
        this.armWatchdog(generation);
        const sequence = reading.frame.sequence;
        if (typeof sequence === 'number' && this.privateChannels.length > 0) {
          this.observeHead(sequence, true);
        }
        return;
      }
      case 'error': {
        const frame = reading.frame;
        const error = new VenueError(
          frame.error.code,
          `stream: ${frame.error.code}: ${frame.error.message}`,
          {
            source: 'service',
            retryable: frame.error.retryable,
            details: frame.error.details,
          },
        );
        const requestId = typeof frame.request_id === 'string' ? frame.request_id : null;
        const waiter = requestId === null ? undefined : this.replyWaiters.get(requestId);
        if (waiter !== undefined && requestId !== null) {
          this.replyWaiters.delete(requestId);
          this.clock.clearTimeout(waiter.timer);
          waiter.reject(error);
        } else {
          this.errorSubject.next(error);
          // The service ends private access this way when the key is revoked or expires.
          if (FATAL_CODES.has(error.code)) this.fail(error);
        }
        return;
      }
      case 'ticker': {
        const frame = reading.frame;
        if (!this.publicChannels.has(frame.channel)) return;
        this.latestTicker.set(frame.channel, frame);
        this.tickerSubject.next(frame);
        return;
      }
      case 'unreadable':
        this.rest.reading.refused(STREAM_SOURCE, `stream: ${reading.frame.problem}`);
        if (this.privateChannels.length > 0 && !this.startFromHead) {
          this.handleOffer(this.tracker.offerLive(reading.frame));
          if (this.tracker.hasGap()) void this.fill(false);
        }
        return;
      case 'event':
        if (this.privateChannels.length > 0 && !this.startFromHead) {
          this.handleOffer(this.tracker.offerLive(reading.frame));
          if (this.tracker.hasGap()) void this.fill(false);
        }
        return;
      case 'other':
        this.counters.otherFrames += 1;
        this.otherFrameSubject.next(reading.frame);
        return;
    }
  }

  /**
   * A head from `authenticated` or a heartbeat. Starting from the head, the first one known
   * sets it; a missing sequence (a service that does not send one) leaves the tracker as is.
   */
  private observeHead(sequence: number | null | undefined, fillGaps: boolean): void {
    if (typeof sequence !== 'number') return;
    if (this.startFromHead) {
      this.startFromHead = false;
      this.deliver(this.tracker.reset(sequence));
      return;
    }
    this.handleOffer(this.tracker.observeHead(sequence));
    if (fillGaps && this.tracker.hasGap()) void this.fill(false);
  }

  /**
   * Answers the waiter of `requestId`; a confirmation without a request id we sent (the
   * interface does not show its fields) answers the oldest waiter of its kind instead.
   */
  private resolveReply(requestId: string | null | undefined, reading: ServerFrameReading): void {
    let id = typeof requestId === 'string' && this.replyWaiters.has(requestId) ? requestId : null;
    if (id === null) {
      for (const [candidate, waiter] of this.replyWaiters) {
        if (waiter.answeredBy === reading.kind) {
          id = candidate;
          break;
        }
      }
    }
    if (id === null) return;
    const waiter = this.replyWaiters.get(id)!;
    this.replyWaiters.delete(id);
    this.clock.clearTimeout(waiter.timer);
    waiter.resolve(reading);
  }

  // ---------------------------------------------------------------- private sequence

  private deliver(events: readonly StreamEvent[]): void {
    for (const event of events) {
      if (isUnreadablePrivateEvent(event)) {
        this.counters.unreadableEvents += 1;
        this.unreadableEventSubject.next(event);
      } else if (isKnownPrivateEvent(event)) {
        this.eventSubject.next(event);
      } else {
        this.counters.otherEvents += 1;
        this.otherEventSubject.next(event);
      }
    }
  }

  private handleOffer(offer: SequenceOffer<StreamEvent>): void {
    this.deliver(offer.delivered);
    if (offer.problem !== null) this.signalResync(offer.problem, true, null);
  }

  private signalResync(problem: SequenceProblem, halted: boolean, cause: unknown): void {
    this.counters.resyncs += 1;
    this.resyncSubject.next(
      Object.freeze({
        reason: problem.reason,
        message: problem.message,
        lastSequence: problem.lastSequence,
        sequence: problem.sequence,
        halted,
        at: this.clock.now(),
        cause,
      }),
    );
  }

  /**
   * Reads GET /v1/events after the last delivered sequence until `has_more` is false, as long
   * as a gap remains and each round makes progress. `force` reads even without a known gap (on
   * reconnect). One fill runs at a time; a request during it runs another round after.
   */
  private fill(force: boolean): Promise<void> {
    if (this.privateChannels.length === 0) return Promise.resolve();
    if (this.filling !== null) {
      this.fillRequested = true;
      this.forcedFillRequested ||= force;
      return this.filling;
    }
    const run = async (): Promise<void> => {
      let mustRead = force;
      for (;;) {
        mustRead ||= this.forcedFillRequested;
        this.fillRequested = false;
        this.forcedFillRequested = false;
        if (this.tracker.halted !== null || !(mustRead || this.tracker.hasGap())) return;
        const gapAtStart = this.tracker.hasGap();
        const before = this.tracker.lastSequence;
        mustRead = false;
        this.counters.gapFills += 1;
        try {
          for await (const page of this.rest.eventPages({
            after_sequence: before,
            limit: EVENTS_PAGE_LIMIT,
          })) {
            if (this.stopped) return;
            for (const event of eventsOfPage(page)) {
              this.handleOffer(this.tracker.offerLogged(event));
            }
            if (this.tracker.halted !== null) return;
          }
        } catch (error) {
          if (this.stopped) return;
          this.signalResync(
            {
              reason: 'gap_fill_failed',
              message: `reading GET /v1/events after sequence ${before} failed: ${error instanceof Error ? error.message : String(error)}`,
              lastSequence: this.tracker.lastSequence,
              sequence: null,
            },
            false,
            error,
          );
          return;
        }
        if (gapAtStart && this.tracker.hasGap() && this.tracker.lastSequence === before) {
          const problem = this.tracker.stopFor(
            'gap_unfilled',
            `the log has nothing after sequence ${before}, yet sequence ${this.tracker.highestKnown} exists`,
          );
          if (problem !== null) this.signalResync(problem, true, null);
          return;
        }
        if (!this.fillRequested && !this.forcedFillRequested && !this.tracker.hasGap()) return;
      }
    };
    this.filling = run().finally(() => {
      this.filling = null;
    });
    return this.filling;
  }
}
