/**
 * The WebSocket stream (GET /v1/ws on the HTTP port), exactly as contract section 4: a
 * challenge first, then client frames `auth`, `subscribe`, `unsubscribe` and `ping`. Public
 * ticker channels send a snapshot then updates; private channels (account, positions, risk,
 * orders, fills) need an authenticated connection with the channel's scope, and on subscribe
 * replay the retained events above the auth frame's `last_sequence` before live ones. One
 * sequence per account across all private channels. Heartbeats run on the injected clock.
 *
 * Upgrade refusals are answered with the error envelope and SVC-REQUEST-ID, like HTTP errors.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { describeError, type Logger } from '../../core/logger.ts';
import {
  type AuthFrame,
  ClientFrame,
  channelScope,
  type ErrorFrame,
  FrameRequestId,
  formatTimestamp,
  invalidJsonIssue,
  isPublicChannel,
  marketIdOfChannel,
  type PrivateChannel,
  type PrivateEvent,
  privateEventChannel,
  type Scope,
  type SubscribeFrame,
  type TickerData,
  type UnsubscribeFrame,
  validateWire,
  WEBSOCKET_PATH,
  WIRE_VERSION,
} from '../../protocol/index.ts';
import { parseWireTimestamp } from '../../signing/index.ts';
import type { Exchange } from '../engine/exchange.ts';
import { type Authenticator, protocolAuthFrame, venueScopeNames } from './auth.ts';
import {
  type CodedFailure,
  envelopeOf,
  invalidRequestError,
  ServerError,
} from '../service/errors.ts';
import { answeredFailure } from './failure.ts';
import type { FaultController } from './faults.ts';
import { HEADER_REQUEST_ID, type ServerStats } from './http.ts';
import type { KeyRegistry, RegisteredKey } from './keys.ts';
import { writeRawAnswer } from './raw-answer.ts';
import { checkHttpVersion } from './transport.ts';
import { closeSlowConsumer, hasSendRoom } from './ws-backpressure.ts';

export const DEFAULT_CHALLENGE_TTL_MS = 30_000;
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024;
const REPLAY_PAGE = 200;
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;

export interface WebSocketGatewayOptions {
  readonly clock: Clock;
  readonly exchange: Exchange;
  readonly authenticator: Authenticator;
  readonly registry: KeyRegistry;
  readonly faults: FaultController;
  readonly logger: Logger;
  readonly stats: ServerStats;
  readonly nextRequestId: () => string;
  readonly heartbeatIntervalMs: number;
  readonly challengeTtlMs: number;
  readonly maxFrameBytes: number;
  /** WebSocket connections at once; more upgrades are answered 503. */
  readonly maxConnections: number;
  /** Per connection: bytes waiting to be sent beyond which it is closed with 1008. */
  readonly maxBufferedBytes: number;
}

interface SessionAuth {
  readonly key: RegisteredKey;
  readonly scopes: ReadonlySet<Scope>;
  readonly lastSequence: number;
}

interface Session {
  readonly socket: WebSocket;
  readonly remoteAddress: string | undefined;
  readonly challenge: string;
  readonly challengeExpiresAt: number;
  challengeUsed: boolean;
  auth: SessionAuth | null;
  readonly tickers: Set<string>;
  readonly privateChannels: Set<PrivateChannel>;
}

export interface DisconnectOptions {
  /** Cut the TCP connection without a close frame (default: a 1012 close frame). */
  readonly abrupt?: boolean;
}

function addTo<K, V>(index: Map<K, Set<V>>, key: K, value: V): void {
  const set = index.get(key);
  if (set === undefined) index.set(key, new Set([value]));
  else set.add(value);
}

function removeFrom<K, V>(index: Map<K, Set<V>>, key: K, value: V): void {
  const set = index.get(key);
  if (set === undefined) return;
  set.delete(value);
  if (set.size === 0) index.delete(key);
}

function frameRequestIdOf(value: unknown): string | null {
  const candidate = (value as { request_id?: unknown } | null)?.request_id;
  return FrameRequestId.safeParse(candidate).success ? (candidate as string) : null;
}

export class WebSocketGateway {
  readonly #options: WebSocketGatewayOptions;
  readonly #server: WebSocketServer;
  readonly #sessions = new Set<Session>();
  readonly #byAccount = new Map<string, Set<Session>>();
  readonly #byMarket = new Map<string, Set<Session>>();
  readonly #upgradeIds = new WeakMap<IncomingMessage, string>();
  readonly #unsubscribe: (() => void)[] = [];
  #heartbeat: TimerHandle | undefined;
  #slowConsumerCloses = 0;

  constructor(options: WebSocketGatewayOptions) {
    this.#options = options;
    this.#server = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxFrameBytes,
      perMessageDeflate: false,
    });
    this.#server.on('headers', (headers, request) => {
      const id = this.#upgradeIds.get(request);
      if (id !== undefined) headers.push(`${HEADER_REQUEST_ID}: ${id}`);
    });
    // ws's own handshake checks answer here rather than with a bare text page.
    this.#server.on('wsClientError', (error, socket, request) => {
      const id = this.#upgradeIds.get(request) ?? options.nextRequestId();
      writeRawAnswer(socket, id, new ServerError('BAD_REQUEST', error.message));
    });
    this.#unsubscribe.push(
      options.exchange.onPrivateEvent((accountId, event) =>
        this.#guard(() => this.#deliverPrivate(accountId, event)),
      ),
      options.exchange.onTicker((marketId, data, occurredAt) =>
        this.#guard(() => this.#deliverTicker(marketId, data, occurredAt)),
      ),
      options.registry.onRevoked((key) => this.#guard(() => this.#keyRevoked(key))),
    );
    this.#heartbeat = options.clock.setInterval(
      () => this.#guard(() => this.#sendHeartbeats()),
      options.heartbeatIntervalMs,
    );
  }

  get connectionCount(): number {
    return this.#sessions.size;
  }

  /** Connections closed because their client did not read (see ws-backpressure.ts). */
  get slowConsumerCloses(): number {
    return this.#slowConsumerCloses;
  }

  /** Takes over upgrade requests of `server`. */
  attach(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => socket.destroy());
      const requestId = this.#options.nextRequestId();
      this.#upgradeIds.set(request, requestId);
      const refusal = checkUpgrade(request) ?? this.#checkCapacity();
      if (refusal !== null) {
        writeRawAnswer(socket, requestId, refusal);
        return;
      }
      this.#server.handleUpgrade(request, socket, head, (socket) => this.#open(socket, request));
    });
  }

  /** Closes every connection; returns how many there were. */
  disconnectAll(options: DisconnectOptions = {}): number {
    const count = this.#sessions.size;
    for (const session of [...this.#sessions]) {
      if (options.abrupt === true) session.socket.terminate();
      else session.socket.close(1012, 'service restart');
      this.#forget(session);
    }
    return count;
  }

  close(): void {
    this.#options.clock.clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    for (const session of [...this.#sessions]) {
      session.socket.terminate();
      this.#forget(session);
    }
    this.#server.close();
  }

  #checkCapacity(): ServerError | null {
    const limit = this.#options.maxConnections;
    if (this.#sessions.size < limit) return null;
    return new ServerError(
      'EXECUTION_UNAVAILABLE',
      'too many WebSocket connections; retry shortly',
      {
        details: { reason: 'too_many_websocket_connections', limit },
        headers: { 'retry-after': '1' },
      },
    );
  }

  #open(socket: WebSocket, request: IncomingMessage): void {
    const { clock } = this.#options;
    const session: Session = {
      socket,
      remoteAddress: request.socket.remoteAddress,
      challenge: randomBytes(24).toString('base64url'),
      challengeExpiresAt: clock.now() + this.#options.challengeTtlMs,
      challengeUsed: false,
      auth: null,
      tickers: new Set(),
      privateChannels: new Set(),
    };
    this.#sessions.add(session);
    socket.on('message', (data, isBinary) =>
      this.#guard(() => this.#receive(session, data, isBinary), session),
    );
    socket.on('close', () => this.#forget(session));
    socket.on('error', (error) => {
      this.#options.logger.warn('websocket connection error', { error: describeError(error) });
      this.#forget(session);
    });
    this.#send(session, {
      version: WIRE_VERSION,
      type: 'challenge',
      challenge: session.challenge,
      expires_at_ms: session.challengeExpiresAt,
    });
  }

  #forget(session: Session): void {
    if (!this.#sessions.delete(session)) return;
    if (session.auth !== null) removeFrom(this.#byAccount, session.auth.key.accountId, session);
    for (const marketId of session.tickers) removeFrom(this.#byMarket, marketId, session);
  }

  /** Runs `work`; a coded failure becomes an error frame, anything else is logged too. */
  #guard(work: () => void, session?: Session, requestId: string | null = null): void {
    try {
      work();
    } catch (error) {
      const { stats, logger } = this.#options;
      const message = 'unexpected failure in the websocket gateway';
      const failure = answeredFailure(error, stats, logger, message);
      if (session !== undefined) this.#sendError(session, requestId, failure);
    }
  }

  #receive(session: Session, data: unknown, isBinary: boolean): void {
    if (isBinary) {
      throw invalidRequestError([
        {
          type: 'json_invalid',
          loc: ['body'],
          msg: 'Frames must be JSON text',
        },
      ]);
    }
    let json: unknown;
    try {
      json = JSON.parse(textOf(data));
    } catch {
      throw invalidRequestError([invalidJsonIssue()]);
    }
    const requestId = frameRequestIdOf(json);
    const parsed = validateWire(
      ClientFrame,
      protocolAuthFrame(this.#options.authenticator.profile, json),
      'body',
    );
    if (!parsed.success) {
      this.#sendError(session, requestId, invalidRequestError(parsed.issues));
      return;
    }
    const frame = parsed.data;
    this.#guard(
      () => {
        switch (frame.op) {
          case 'auth':
            this.#authenticate(session, frame);
            return;
          case 'subscribe':
            this.#subscribe(session, frame);
            return;
          case 'unsubscribe':
            this.#unsubscribeChannels(session, frame);
            return;
          case 'ping':
            this.#send(session, {
              version: WIRE_VERSION,
              type: 'pong',
              request_id: frame.request_id,
            });
            return;
        }
      },
      session,
      frame.request_id,
    );
  }

  #authenticate(session: Session, frame: AuthFrame): void {
    const { clock, authenticator, exchange } = this.#options;
    const refuse = (reason: string, message: string) =>
      new ServerError('INVALID_SIGNATURE', message, { details: { reason } });
    if (session.challengeUsed) {
      throw refuse('challenge_reused', 'this connection challenge was already used');
    }
    session.challengeUsed = true;
    if (clock.now() > session.challengeExpiresAt) {
      throw refuse('challenge_expired', 'the connection challenge has expired; reconnect');
    }
    const profile = authenticator.profile;
    const timestampMs = parseWireTimestamp(profile.timestamp, frame.timestamp);
    if (timestampMs === null) {
      throw refuse(
        'malformed_timestamp',
        profile.timestamp === 'ms'
          ? 'timestamp must be decimal epoch milliseconds'
          : `timestamp must be in the unit ${profile.timestamp}`,
      );
    }
    const key = authenticator.authenticateWebSocket(
      {
        challenge: session.challenge,
        keyId: frame.key_id,
        timestampMs,
        nonce: frame.nonce,
        // Signed as sent: in the profile's scope names.
        scopes: venueScopeNames(profile, frame.scopes),
        lastSequence: frame.last_sequence,
        signature: frame.signature,
      },
      session.remoteAddress,
    );
    const missing = frame.scopes.filter((scope) => !key.scopes.has(scope));
    if (missing.length > 0) {
      const names = venueScopeNames(profile, missing);
      throw new ServerError('SCOPE_REQUIRED', `this key lacks the scopes ${names.join(', ')}`, {
        details: { missing_scopes: names, key_id: key.keyId },
      });
    }
    session.auth = {
      key,
      scopes: new Set(frame.scopes),
      lastSequence: frame.last_sequence,
    };
    addTo(this.#byAccount, key.accountId, session);
    this.#send(session, {
      version: WIRE_VERSION,
      type: 'authenticated',
      request_id: frame.request_id,
      key_id: key.keyId,
      scopes: frame.scopes,
      sequence: exchange.lastSequence(key.accountId),
    });
  }

  #subscribe(session: Session, frame: SubscribeFrame): void {
    const { exchange } = this.#options;
    const markets: string[] = [];
    const privateChannels: PrivateChannel[] = [];
    for (const channel of frame.channels) {
      if (isPublicChannel(channel)) {
        const marketId = marketIdOfChannel(channel);
        exchange.getMarket(marketId);
        markets.push(marketId);
        continue;
      }
      const auth = session.auth;
      const scope = channelScope[channel];
      if (auth === null) {
        throw new ServerError(
          'SCOPE_REQUIRED',
          `channel ${channel} needs an authenticated connection`,
          {
            details: { channel, required_scope: scope },
          },
        );
      }
      if (!auth.scopes.has(scope)) {
        throw new ServerError('SCOPE_REQUIRED', `channel ${channel} needs the scope ${scope}`, {
          details: { channel, required_scope: scope },
        });
      }
      this.#options.authenticator.checkUsable(auth.key, session.remoteAddress);
      privateChannels.push(channel);
    }
    const newTickers = markets.filter((marketId) => !session.tickers.has(marketId));
    const newPrivate = privateChannels.filter((channel) => !session.privateChannels.has(channel));
    for (const marketId of newTickers) {
      session.tickers.add(marketId);
      addTo(this.#byMarket, marketId, session);
    }
    for (const channel of newPrivate) session.privateChannels.add(channel);
    this.#send(session, {
      version: WIRE_VERSION,
      type: 'subscribed',
      request_id: frame.request_id,
      channels: frame.channels,
    });
    const occurredAt = formatTimestamp(this.#options.clock.now());
    for (const marketId of new Set(markets)) {
      this.#send(session, {
        version: WIRE_VERSION,
        channel: `market:${marketId}:ticker`,
        type: 'ticker.snapshot',
        occurred_at: occurredAt,
        data: exchange.tickerOf(marketId),
      });
    }
    if (newPrivate.length > 0 && session.auth !== null)
      this.#replay(session, session.auth, new Set(newPrivate));
  }

  #replay(session: Session, auth: SessionAuth, channels: ReadonlySet<PrivateChannel>): void {
    const accountId = auth.key.accountId;
    let after = auth.lastSequence;
    for (;;) {
      const page = this.#options.exchange.listEvents(accountId, after, REPLAY_PAGE);
      for (const event of page.data) {
        if (channels.has(privateEventChannel[event.type]))
          this.#sendPrivate(session, JSON.stringify(event));
      }
      if (!page.has_more || page.next_after_sequence <= after) return;
      after = page.next_after_sequence;
    }
  }

  #unsubscribeChannels(session: Session, frame: UnsubscribeFrame): void {
    for (const channel of frame.channels) {
      if (isPublicChannel(channel)) {
        const marketId = marketIdOfChannel(channel);
        if (session.tickers.delete(marketId)) removeFrom(this.#byMarket, marketId, session);
      } else {
        session.privateChannels.delete(channel);
      }
    }
    this.#send(session, {
      version: WIRE_VERSION,
      type: 'unsubscribed',
      request_id: frame.request_id,
      channels: frame.channels,
    });
  }

  #deliverPrivate(accountId: string, event: PrivateEvent): void {
    const sessions = this.#byAccount.get(accountId);
    if (sessions === undefined) return;
    const channel = privateEventChannel[event.type];
    let text: string | null = null;
    const now = this.#options.clock.now();
    for (const session of [...sessions]) {
      const auth = session.auth;
      if (auth === null || !session.privateChannels.has(channel)) continue;
      if (auth.key.isExpired(now)) {
        this.#endAuth(
          session,
          new ServerError('KEY_EXPIRED', 'this key has expired', {
            details: { key_id: auth.key.keyId },
          }),
        );
        continue;
      }
      text ??= JSON.stringify(event);
      this.#sendPrivate(session, text);
    }
  }

  #deliverTicker(marketId: string, data: TickerData, occurredAt: string): void {
    const sessions = this.#byMarket.get(marketId);
    if (sessions === undefined) return;
    const text = JSON.stringify({
      version: WIRE_VERSION,
      channel: `market:${marketId}:ticker`,
      type: 'ticker.update',
      occurred_at: occurredAt,
      data,
    });
    for (const session of sessions) this.#sendText(session, text);
  }

  #keyRevoked(key: RegisteredKey): void {
    for (const session of [...(this.#byAccount.get(key.accountId) ?? [])]) {
      if (session.auth?.key.keyId !== key.keyId) continue;
      this.#endAuth(
        session,
        new ServerError('KEY_REVOKED', 'this key was revoked', {
          details: { key_id: key.keyId },
        }),
      );
    }
  }

  /** Stops private updates on a connection whose key can no longer be used. */
  #endAuth(session: Session, failure: ServerError): void {
    if (session.auth === null) return;
    removeFrom(this.#byAccount, session.auth.key.accountId, session);
    session.auth = null;
    session.privateChannels.clear();
    this.#sendError(session, null, failure);
  }

  #sendHeartbeats(): void {
    const { clock, exchange } = this.#options;
    const occurredAt = formatTimestamp(clock.now());
    for (const session of this.#sessions) {
      const auth = session.auth;
      this.#send(session, {
        version: WIRE_VERSION,
        type: 'heartbeat',
        occurred_at: occurredAt,
        sequence: auth === null ? null : exchange.lastSequence(auth.key.accountId),
      });
    }
  }

  #sendPrivate(session: Session, text: string): void {
    const fault = this.#options.faults.takeFrameFault();
    if (fault === 'drop') return;
    this.#sendText(session, text);
    if (fault === 'duplicate') this.#sendText(session, text);
  }

  #sendError(session: Session, requestId: string | null, failure: CodedFailure): void {
    const { error } = envelopeOf(failure, '');
    const frame: ErrorFrame = {
      version: WIRE_VERSION,
      type: 'error',
      request_id: requestId,
      error: {
        code: error.code,
        message: error.message,
        retryable: error.retryable,
        details: error.details,
      },
    };
    this.#send(session, frame);
  }

  #send(session: Session, frame: object): void {
    this.#sendText(session, JSON.stringify(frame));
  }

  #sendText(session: Session, text: string): void {
    const socket = session.socket;
    if (socket.readyState !== socket.OPEN) return;
    if (!hasSendRoom(socket, text.length, this.#options.maxBufferedBytes)) {
      this.#closeSlow(session);
      return;
    }
    socket.send(text);
  }

  #closeSlow(session: Session): void {
    if (session.socket.readyState !== session.socket.OPEN) return;
    this.#slowConsumerCloses += 1;
    this.#options.logger.warn('closing a websocket connection whose client does not read', {
      buffered_bytes: session.socket.bufferedAmount,
    });
    closeSlowConsumer(session.socket);
    this.#forget(session);
  }
}

function textOf(data: unknown): string {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  if (Buffer.isBuffer(data)) return decoder.decode(data);
  if (Array.isArray(data)) return decoder.decode(Buffer.concat(data as Buffer[]));
  if (data instanceof ArrayBuffer) return decoder.decode(new Uint8Array(data));
  return String(data);
}

function checkUpgrade(request: IncomingMessage): ServerError | null {
  const unsupported = checkHttpVersion(request);
  if (unsupported !== null) return unsupported;
  const target = request.url ?? '';
  const queryStart = target.indexOf('?');
  const pathname = queryStart < 0 ? target : target.slice(0, queryStart);
  if (pathname !== WEBSOCKET_PATH) {
    return new ServerError('NOT_FOUND', `no WebSocket endpoint at ${pathname}`);
  }
  if (request.method !== 'GET') {
    return new ServerError('METHOD_NOT_ALLOWED', 'WebSocket upgrades use GET', {
      headers: { allow: 'GET' },
    });
  }
  if (request.headers.upgrade?.toLowerCase() !== 'websocket') {
    return new ServerError('BAD_REQUEST', 'invalid Upgrade header');
  }
  const key = request.headers['sec-websocket-key'];
  if (key === undefined || !WEBSOCKET_KEY.test(key)) {
    return new ServerError('BAD_REQUEST', 'missing or invalid Sec-WebSocket-Key header');
  }
  const version = request.headers['sec-websocket-version'];
  if (version !== '13' && version !== '8') {
    return new ServerError('BAD_REQUEST', 'missing or invalid Sec-WebSocket-Version header', {
      headers: { 'sec-websocket-version': '13, 8' },
    });
  }
  return null;
}
