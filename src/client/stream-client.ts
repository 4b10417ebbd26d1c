/**
 * The stream client (GET /v1/ws, contract section 4) as RxJS observables. It connects, reads the
 * challenge, authenticates with the requested scopes and the last processed sequence,
 * subscribes, and keeps the connection alive with a heartbeat watchdog, reconnecting with
 * capped jittered backoff on the injected clock. After a reconnect the log is read first, then
 * the new socket is authenticated with the recovered sequence (interface Recovery section).
 *
 * This file owns the connection and its sessions; the rest is in parts: `stream-auth.ts`
 * (scopes, auth refusals), `stream-frames.ts` (messages read, replies matched),
 * `stream-sequence.ts` (private events exactly once and in order, gap fills, resync) and
 * `stream-tickers.ts` (public channels).
 */
import { BehaviorSubject, filter, type Observable, Subject } from 'rxjs';
import WebSocket from 'ws';
import { type Clock, systemClock, type TimerHandle } from '../core/clock.ts';
import {
  type AccountEventReading,
  type Channel,
  type FillEventReading,
  isPublicChannel,
  type KnownPrivateEventReading,
  type OrderStatusEvent,
  type OtherPrivateEvent,
  type PositionEventReading,
  PrivateChannel as PrivateChannelSchema,
  type Scope,
  type ServerFrameReading,
  type UnreadablePrivateEvent,
  tickerChannel,
} from '../protocol/index.ts';
import { type BackoffPolicy, backoffDelay } from './backoff.ts';
import { checkWebSocketUrl } from './base-url.ts';
import { isVenueError, VenueError } from './errors.ts';
import { PrivateSequence } from './stream-sequence.ts';
import type { RestClient } from './rest-client.ts';
import { authRefusal, FATAL_CODES, isFatalRefusal, StreamScopes } from './stream-auth.ts';
import {
  describeSocketError,
  malformedFrame,
  readMessage,
  STREAM_SOURCE,
  StreamReplies,
  streamError,
} from './stream-frames.ts';
import type {
  ConnectionState,
  ResyncSignal,
  RiskEvent,
  StreamClientOptions,
  StreamStatistics,
  TickerFrame,
} from './stream-types.ts';
import { TickerSubscriptions } from './stream-tickers.ts';
import { type TransportOptions, webSocketTransportOptions } from './transport.ts';

const DEFAULT_RECONNECT: BackoffPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
};

export class StreamClient {
  readonly url: string;
  private readonly rest: RestClient;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly scopes: StreamScopes;
  private readonly heartbeatTimeoutMs: number;
  private readonly pingIntervalMs: number | null;
  private readonly connectTimeoutMs: number;
  private readonly replyTimeoutMs: number;
  private readonly reconnectPolicy: BackoffPolicy;
  private readonly maxPayloadBytes: number;
  private readonly userAgent: string;
  private readonly transport: TransportOptions;
  private readonly sequence: PrivateSequence;
  private readonly replies: StreamReplies;
  private readonly tickers: TickerSubscriptions;

  private readonly stateSubject = new BehaviorSubject<ConnectionState>('idle');
  private readonly otherFrameSubject = new Subject<Readonly<Record<string, unknown>>>();
  private readonly errorSubject = new Subject<VenueError>();

  /** Connection state. */
  readonly state$: Observable<ConnectionState> = this.stateSubject.asObservable();
  /**
   * Every private event of a known type, exactly once, in sequence order; fields beyond the
   * ones the client checks are kept (contract section 7), except on the order event.
   */
  readonly events$: Observable<KnownPrivateEventReading>;
  readonly orders$: Observable<OrderStatusEvent>;
  readonly fills$: Observable<FillEventReading>;
  readonly positions$: Observable<PositionEventReading>;
  readonly account$: Observable<AccountEventReading>;
  readonly risk$: Observable<RiskEvent>;
  /**
   * Private events of types the project does not know, in sequence order among the others and
   * counted in the sequence; their payload as sent (contract section 7: passed on, not refused).
   */
  readonly otherEvents$: Observable<OtherPrivateEvent>;
  /**
   * Private events of known types that broke their schema but carry a sequence (tolerant
   * reading), in sequence order among the others: what they said must be read back.
   */
  readonly unreadableEvents$: Observable<UnreadablePrivateEvent>;
  /** Frames of unknown types without a private sequence, as sent. */
  readonly otherFrames$: Observable<Readonly<Record<string, unknown>>> =
    this.otherFrameSubject.asObservable();
  /** Fail-closed signals: the private sequence cannot be trusted until reconciled. */
  readonly resync$: Observable<ResyncSignal>;
  /** Error frames, unreadable frames and connection failures, for logs and metrics. */
  readonly errors$: Observable<VenueError> = this.errorSubject.asObservable();

  private socket: WebSocket | null = null;
  private generation = 0;
  private attempt = 0;
  /** No more sessions: closed, or failed for good. */
  private stopped = false;
  private closed = false;
  private reconnectTimer: TimerHandle | undefined;
  private watchdogTimer: TimerHandle | undefined;
  private pingTimer: TimerHandle | undefined;
  private connectWaiters: {
    resolve: () => void;
    reject: (error: unknown) => void;
  }[] = [];
  private counters = {
    reconnects: 0,
    malformedFrames: 0,
    otherFrames: 0,
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
    const privateChannels =
      options.privateChannels ??
      (credential === undefined || credential === null ? [] : PrivateChannelSchema.options);
    if (privateChannels.length > 0 && (credential === undefined || credential === null)) {
      throw new VenueError(
        'CREDENTIAL_REQUIRED',
        'private channels need a developer key; create the REST client with a credential',
        { source: 'local' },
      );
    }
    this.scopes = new StreamScopes(privateChannels);
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 25_000;
    this.pingIntervalMs = options.pingIntervalMs ?? null;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.replyTimeoutMs = options.replyTimeoutMs ?? 10_000;
    this.reconnectPolicy = { ...DEFAULT_RECONNECT, ...options.reconnect };
    this.maxPayloadBytes = options.maxPayloadBytes ?? 16 * 1024 * 1024;
    this.userAgent = options.userAgent ?? 'paperbot-client/0.1';
    this.transport = options.transport ?? options.rest.transport;
    this.replies = new StreamReplies(this.clock);
    this.tickers = new TickerSubscriptions((op, channel) => {
      if (this.state === 'live') this.changeSubscription(op, [channel]);
    });
    this.sequence = new PrivateSequence(
      {
        rest: this.rest,
        clock: this.clock,
        isPrivate: () => this.isPrivate,
        isStopped: () => this.stopped,
      },
      {
        startAfterSequence: options.startAfterSequence ?? 'latest',
        bufferLimit: options.bufferLimit,
      },
    );
    this.events$ = this.sequence.events$;
    this.orders$ = this.events$.pipe(
      filter((event): event is OrderStatusEvent => event.channel === 'orders'),
    );
    this.fills$ = this.events$.pipe(
      filter((event): event is FillEventReading => event.channel === 'fills'),
    );
    this.positions$ = this.events$.pipe(
      filter((event): event is PositionEventReading => event.channel === 'positions'),
    );
    this.account$ = this.events$.pipe(
      // By type: a funding payment travels on the account channel too.
      filter((event): event is AccountEventReading => event.type === 'account'),
    );
    this.risk$ = this.events$.pipe(filter((event): event is RiskEvent => event.channel === 'risk'));
    this.otherEvents$ = this.sequence.otherEvents$;
    this.unreadableEvents$ = this.sequence.unreadableEvents$;
    this.resync$ = this.sequence.resync$;
  }

  get state(): ConnectionState {
    return this.stateSubject.value;
  }

  /** The last private sequence delivered: persist it to resume after a restart. */
  get lastSequence(): number {
    return this.sequence.lastSequence;
  }

  /** Protocol scopes the venue said this key lacks; their channels are not followed. */
  get lackingScopes(): readonly Scope[] {
    return this.scopes.lackingScopes;
  }

  statistics(): StreamStatistics {
    const sequence = this.sequence.counters;
    return {
      delivered: this.sequence.delivered,
      duplicatesDropped: this.sequence.duplicates,
      gapFills: sequence.gapFills,
      ...this.counters,
      otherEvents: sequence.otherEvents,
      unreadableEvents: sequence.unreadableEvents,
      resyncs: sequence.resyncs,
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
    await this.sequence.complete();
    this.otherFrameSubject.complete();
    this.tickers.complete();
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
    return this.tickers.observe(channel);
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
    this.sequence.reset(sequence);
  }

  // ---------------------------------------------------------------- session

  private get isPrivate(): boolean {
    return this.scopes.privateChannels.length > 0;
  }

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
        if (this.scopes.learnMissingScopes(failure, this.rest.wireProfile) && this.isPrivate) {
          const lacking = this.scopes.lackingScopes;
          failure = new VenueError(
            'SCOPE_REQUIRED',
            `the venue says the key lacks ${lacking.join(', ')}; following only ${this.scopes.privateChannels.join(', ')}`,
            {
              source: failure.source,
              details: { ...failure.details, lacking_scopes: lacking },
              cause: failure,
            },
          );
          this.errorSubject.next(failure);
          this.scheduleReconnect(generation);
          return;
        }
      }
      this.errorSubject.next(failure);
      if (isFatalRefusal(failure)) {
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
    const isPrivate = this.isPrivate;
    if (isPrivate && this.sequence.recovers) {
      this.setState('recovering');
      await this.sequence.fill(true);
      this.assertCurrent(generation);
    }

    this.setState('connecting');
    const challengeFrame = this.replies.waitForChallenge(this.connectTimeoutMs);
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
        this.scopes.scopes,
        this.sequence.lastSequence,
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
        this.sequence.observeHead(authenticated.frame.sequence, false);
      }
    }

    this.setState('subscribing');
    if (isPrivate) {
      await this.request({
        op: 'subscribe',
        channels: [...this.scopes.privateChannels],
      });
      this.assertCurrent(generation);
    }
    // One frame per market, so a market the service refuses does not take the others with it.
    for (const channel of this.tickers.channels()) this.changeSubscription('subscribe', [channel]);
    this.setState('live');
    this.attempt = 0;
    this.startPinging(generation);
    this.settleConnectWaiters();
    this.sequence.fillIfGap();
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
    this.replies.rejectAll(error);
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

  /** Sends a client frame and waits for the reply carrying its request id. */
  private request(frame: Record<string, unknown>): Promise<ServerFrameReading> {
    return this.replies.request(this.socket, this.generation, frame, this.replyTimeoutMs);
  }

  private changeSubscription(op: 'subscribe' | 'unsubscribe', channels: Channel[]): void {
    this.request({ op, channels }).catch((error: unknown) => {
      if (isVenueError(error) && !this.stopped) this.errorSubject.next(error);
    });
  }

  private onMessage(generation: number, data: WebSocket.RawData): void {
    if (generation !== this.generation) return;
    const message = readMessage(data, this.rest.reading);
    if (message.problem !== undefined) {
      this.counters.malformedFrames += 1;
      this.errorSubject.next(malformedFrame(message.problem, message.text));
      return;
    }
    this.onFrame(generation, message.reading);
  }

  private onFrame(generation: number, reading: ServerFrameReading): void {
    switch (reading.kind) {
      case 'challenge':
        this.replies.answerChallenge(reading);
        return;
      case 'pong':
        this.armWatchdog(generation);
        this.replies.resolve(reading.frame.request_id, reading);
        return;
      case 'authenticated':
      case 'subscribed':
      case 'unsubscribed':
        this.replies.resolve(reading.frame.request_id, reading);
        return;
      case 'heartbeat': {
        this.armWatchdog(generation);
        const sequence = reading.frame.sequence;
        if (typeof sequence === 'number' && this.isPrivate) {
          this.sequence.observeHead(sequence, true);
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
        if (!this.replies.reject(requestId, error)) {
          this.errorSubject.next(error);
          // The service ends private access this way when the key is revoked or expires.
          if (FATAL_CODES.has(error.code)) this.fail(error);
        }
        return;
      }
      case 'ticker':
        this.tickers.onFrame(reading.frame);
        return;
      case 'unreadable':
        this.rest.reading.refused(STREAM_SOURCE, `stream: ${reading.frame.problem}`);
        if (this.isPrivate && this.sequence.following) this.sequence.offerLive(reading.frame);
        return;
      case 'event':
        if (this.isPrivate && this.sequence.following) this.sequence.offerLive(reading.frame);
        return;
      case 'other':
        this.counters.otherFrames += 1;
        this.otherFrameSubject.next(reading.frame);
        return;
    }
  }
}
