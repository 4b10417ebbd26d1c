/**
 * `startEmulator`: the whole local Practice service in one call, HTTP and WebSocket on one
 * port, on an injected clock. The CLI (`paperbot emulator`) and the tests both start it here.
 */
import { randomBytes } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Clock, systemClock } from '../core/clock.ts';
import { PaperbotError } from '../core/errors.ts';
import { describeError, type Logger, silentLogger } from '../core/logger.ts';
import { DEFAULT_HEARTBEAT_INTERVAL_MS, type Scope, validateWire } from '../protocol/index.ts';
import {
  Credential,
  encodeBase64,
  generateKeyPair,
  type KeyScope,
  type WireProfile,
} from '../signing/index.ts';
import {
  defaultEmulatorConfig,
  type EmulatorConfig,
  type EmulatorConfigInput,
  loadEmulatorConfig,
  parseEmulatorConfig,
} from './config.ts';
import { Exchange } from './engine/exchange.ts';
import {
  ADMIN_TOKEN_FILE,
  CreateKeyRequest,
  createAdminApi,
  createKeyService,
} from './server/admin.ts';
import { Authenticator } from './server/auth.ts';
import { createControls, type EmulatorControls } from './server/controls.ts';
import { ServiceCore } from './service/core.ts';
import { invalidRequestError } from './service/errors.ts';
import { FaultController } from './server/faults.ts';
import {
  createHttpDispatcher,
  DEFAULT_MAX_BODY_BYTES,
  responseChecker,
  type ServerStats,
} from './server/http.ts';
import { KeyRegistry } from './server/keys.ts';
import { DEFAULT_RATE_LIMIT, RateLimiter, type RateLimitSettings } from './server/rate-limit.ts';
import { DEFAULT_CHALLENGE_TTL_MS, WebSocketGateway } from './server/ws.ts';
import { createTransport, type EmulatorTls } from './server/transport.ts';
import { sharedSignaturePool } from './server/signature-pool.ts';
import { MemoryStore } from './store/memory-store.ts';
import { SqliteStore, type SqliteStoreOptions } from './store/sqlite-store.ts';
import type { Store } from './store/store.ts';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8787;
export const DATABASE_FILE = 'emulator.sqlite';

export interface StartEmulatorOptions {
  /** Default systemClock; tests pass a VirtualClock so nothing moves until they advance it. */
  readonly clock?: Clock;
  /** Overrides the config's seed. */
  readonly seed?: string | number;
  /** A config object (parsed or not) or the path of a YAML file; the default markets otherwise. */
  readonly config?: EmulatorConfig | EmulatorConfigInput | string;
  /** SQLite persistence in this folder (created with mode 0700); memory only when absent. */
  readonly dataDir?: string | null;
  /** The data dir's windows (events, fills, idempotency records, terminal orders kept). */
  readonly storeWindows?: SqliteStoreOptions;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0 (a free port); the CLI defaults to 8787. */
  readonly port?: number;
  /** The admin bearer token; by default read from (or created in) the data dir, else random. */
  readonly adminToken?: string;
  /** Per-key request quota (default 1200 requests per 60 s window). */
  readonly rateLimit?: RateLimitSettings;
  /** Accepted SVC-TIMESTAMP distance from server time (default 10 s). */
  readonly signatureWindowMs?: number;
  /** WebSocket heartbeat period on the clock (default 10 s). */
  readonly heartbeatIntervalMs?: number;
  /** How long a WebSocket challenge can be answered (default 30 s). */
  readonly challengeTtlMs?: number;
  /** Request body limit (default 64 KiB; 413 beyond). */
  readonly maxBodyBytes?: number;
  readonly logger?: Logger;
  /** Check every success body against the protocol's response schema (for tests). */
  readonly checkResponses?: boolean;
  /**
   * Check HTTP signatures on worker threads (the process's shared pool), for throughput. Off by
   * default: an in-process emulator (tests, the bot's embedded one) then does its work in the
   * order requests arrive, which keeps runs on a virtual clock repeatable. `paperbot emulator`
   * turns it on.
   */
  readonly verifySignaturesOnWorkers?: boolean;
  /** Serve HTTPS and WSS on the one port with this certificate and key (PEM); plain without. */
  readonly tls?: EmulatorTls;
  /**
   * How requests and WebSocket auth frames are signed (`paperbot emulator --wire FILE`, the bot's
   * `venue.wire`); the contract's SVC1 by default.
   */
  readonly wire?: WireProfile;
}

export interface CreateKeyOptions {
  /** Default: all four scopes. */
  readonly scopes?: readonly Scope[];
  /** RFC 3339; null (default) for a key that does not expire. */
  readonly expiresAt?: string | null;
  /** CIDR blocks or addresses, IPv4 or IPv6; empty (default) allows any source. */
  readonly allowIp?: readonly string[];
  /** Decimal string; orders with a larger notional are refused (RISK_LIMIT_EXCEEDED). */
  readonly maxOrderNotional?: string | null;
  readonly maxOpenOrders?: number | null;
  /** Bind the key to this existing account (default: a new account). */
  readonly accountId?: string | null;
  /** Retire `accountId` and bind the key to a fresh account with a fresh balance. */
  readonly resetAccount?: boolean;
}

export interface EmulatorStats extends ServerStats {
  readonly webSocketConnections: number;
  /** WebSocket connections closed (1008) because their client did not read its messages. */
  readonly webSocketSlowConsumerCloses: number;
}

export interface RunningEmulator {
  /** `http://host:port` (`https` with TLS), loopback when bound to every interface. */
  readonly baseUrl: string;
  /** `ws://host:port/v1/ws`. */
  readonly wsUrl: string;
  readonly host: string;
  readonly port: number;
  /** The admin bearer token (never logged). */
  readonly adminToken: string;
  /** The file holding the admin token, or null when it lives only in this process. */
  readonly adminTokenFile: string | null;
  readonly dataDir: string | null;
  readonly clock: Clock;
  readonly config: EmulatorConfig;
  readonly exchange: Exchange;
  readonly controls: EmulatorControls;
  /**
   * Generates a key pair here, registers only its public key, and returns the Credential (with
   * the account id and this emulator's addresses), as `paperbot keys create` does.
   */
  createKey(options?: CreateKeyOptions): Credential;
  revokeKey(keyId: string): void;
  stats(): EmulatorStats;
  /** Stops timers, closes every socket and the store. Safe to call twice. */
  close(): Promise<void>;
}

function resolveConfig(options: StartEmulatorOptions): EmulatorConfig {
  const source = options.config;
  const base: EmulatorConfig | EmulatorConfigInput =
    source === undefined
      ? defaultEmulatorConfig()
      : typeof source === 'string'
        ? loadEmulatorConfig(source)
        : source;
  return parseEmulatorConfig(options.seed === undefined ? base : { ...base, seed: options.seed });
}

/** Reads the admin token kept in a data dir, creating it (mode 0600) when there is none. */
function adminTokenIn(dataDir: string): string {
  const path = join(dataDir, ADMIN_TOKEN_FILE);
  try {
    const text = readFileSync(path, 'utf8').trim();
    if (text.length > 0) {
      chmodSync(path, 0o600);
      return text;
    }
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
  }
  const token = randomBytes(32).toString('base64url');
  const descriptor = openSync(path, 'w', 0o600);
  try {
    writeSync(descriptor, `${token}\n`);
  } finally {
    closeSync(descriptor);
  }
  chmodSync(path, 0o600);
  return token;
}

function urlHost(address: AddressInfo): string {
  const host =
    address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
  return host.includes(':') ? `[${host}]` : host;
}

/** The certificate and key load and belong together; the library's reason otherwise. */
function checkTls(tls: EmulatorTls): void {
  try {
    createSecureContext({ cert: tls.cert, key: tls.key });
  } catch (error) {
    throw new PaperbotError(
      'INVALID_CONFIG',
      `the TLS certificate and key cannot be used: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen({ host, port }, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function startEmulator(options: StartEmulatorOptions = {}): Promise<RunningEmulator> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const config = resolveConfig(options);
  // Checked before anything is opened, so a bad option leaves nothing behind.
  if (options.tls !== undefined) checkTls(options.tls);
  const rateLimiter = new RateLimiter(options.rateLimit ?? DEFAULT_RATE_LIMIT);
  const dataDir = options.dataDir ?? null;
  let store: Store;
  let adminToken: string;
  let adminTokenFile: string | null = null;
  if (dataDir !== null) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    store = new SqliteStore(join(dataDir, DATABASE_FILE), {
      retainedEvents: config.retention.store_events,
      retainedFills: config.retention.store_fills,
      retainedIdempotency: config.retention.store_idempotency,
      retainedTerminalOrders: config.retention.store_terminal_orders,
      ...options.storeWindows,
    });
    if (options.adminToken === undefined) {
      adminToken = adminTokenIn(dataDir);
      adminTokenFile = join(dataDir, ADMIN_TOKEN_FILE);
    } else {
      adminToken = options.adminToken;
    }
  } else {
    store = new MemoryStore();
    adminToken = options.adminToken ?? randomBytes(32).toString('base64url');
  }
  if (adminToken.length < 16) {
    store.close();
    throw new PaperbotError('INVALID_CONFIG', 'the admin token must be at least 16 characters');
  }

  let exchange: Exchange;
  try {
    exchange = Exchange.open({ clock, config, store });
  } catch (error) {
    store.close();
    throw error;
  }
  const stats = { internalErrors: 0, responseMismatches: 0 };
  const bootId = randomBytes(4).toString('hex');
  let requestCounter = 0;
  const nextRequestId = () => `req_${bootId}_${(++requestCounter).toString(36)}`;
  let started = false;
  let closing = false;
  let urls = { baseUrl: '', wsUrl: '' };

  const registry = new KeyRegistry(store);
  const authenticator = new Authenticator({
    registry,
    now: () => clock.now(),
    isAccountActive: (accountId) => exchange.hasAccount(accountId),
    signaturePool: options.verifySignaturesOnWorkers === true ? sharedSignaturePool() : null,
    ...(options.wire === undefined ? {} : { profile: options.wire }),
    ...(options.signatureWindowMs === undefined
      ? {}
      : { signatureWindowMs: options.signatureWindowMs }),
  });
  const isReady = () => started && !closing && exchange.listRoutes()[0]?.health === 'ready';
  const core = new ServiceCore({
    exchange,
    clock,
    store,
    isReady,
    ...(options.checkResponses === true ? { checkResponse: responseChecker(logger, stats) } : {}),
    onObserveError: (error) =>
      logger.error('could not update a request record', { error: describeError(error) }),
  });
  const faults = new FaultController(String(config.seed));
  const gateway = new WebSocketGateway({
    clock,
    exchange,
    authenticator,
    registry,
    faults,
    logger,
    stats,
    nextRequestId,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS,
    challengeTtlMs: options.challengeTtlMs ?? DEFAULT_CHALLENGE_TTL_MS,
    maxFrameBytes: config.limits.websocket.max_frame_bytes,
    maxConnections: config.limits.websocket.max_connections,
    maxBufferedBytes: config.limits.websocket.max_buffered_bytes,
  });
  const controls = createControls({ exchange, faults, gateway, rateLimiter });
  const keys = createKeyService({
    exchange,
    registry,
    now: () => clock.now(),
    urls: () => urls,
  });
  const admin = createAdminApi({ token: adminToken, keys, registry, controls });
  const dispatcher = createHttpDispatcher({
    clock,
    authenticator,
    rateLimiter,
    core,
    faults,
    admin,
    logger,
    nextRequestId,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    stats,
  });

  const { server, sockets } = createTransport({
    limits: config.limits,
    nextRequestId,
    handle: (request, response) => dispatcher.handle(request, response),
    ...(options.tls === undefined ? {} : { tls: options.tls }),
  });
  gateway.attach(server);

  let address: AddressInfo;
  try {
    address = await listen(server, options.host ?? DEFAULT_HOST, options.port ?? 0);
  } catch (error) {
    gateway.close();
    core.close();
    exchange.stop();
    store.close();
    throw new PaperbotError(
      'EMULATOR_LISTEN_FAILED',
      `cannot listen on ${options.host ?? DEFAULT_HOST}:${options.port ?? 0}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  // After listening, a server error (out of file descriptors, say) is logged, never thrown.
  server.on('error', (error: Error) => {
    logger.error('the HTTP server reported an error', { error: describeError(error) });
  });
  const host = urlHost(address);
  const secure = options.tls !== undefined;
  urls = {
    baseUrl: `${secure ? 'https' : 'http'}://${host}:${address.port}`,
    wsUrl: `${secure ? 'wss' : 'ws'}://${host}:${address.port}/v1/ws`,
  };
  exchange.start();
  started = true;
  logger.info('emulator started', { base_url: urls.baseUrl, data_dir: dataDir });

  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      gateway.close();
      dispatcher.close();
      exchange.stop();
      core.close();
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await serverClosed;
      store.close();
      logger.info('emulator stopped', { base_url: urls.baseUrl });
    })();
    return closed;
  };

  return {
    baseUrl: urls.baseUrl,
    wsUrl: urls.wsUrl,
    host: address.address,
    port: address.port,
    adminToken,
    adminTokenFile,
    dataDir,
    clock,
    config,
    exchange,
    controls,
    createKey(keyOptions: CreateKeyOptions = {}): Credential {
      const { privateKey, publicKey } = generateKeyPair();
      const request = validateWire(
        CreateKeyRequest,
        {
          public_key: encodeBase64(publicKey),
          ...(keyOptions.scopes === undefined ? {} : { scopes: [...keyOptions.scopes] }),
          expires_at: keyOptions.expiresAt ?? null,
          allow_ip: [...(keyOptions.allowIp ?? [])],
          max_order_notional: keyOptions.maxOrderNotional ?? null,
          max_open_orders: keyOptions.maxOpenOrders ?? null,
          account_id: keyOptions.accountId ?? null,
          reset_account: keyOptions.resetAccount ?? false,
        },
        'body',
      );
      if (!request.success) throw invalidRequestError(request.issues);
      const created = keys.create(request.data);
      return Credential.create({
        keyId: created.key_id,
        accountId: created.account_id,
        apiBaseUrl: urls.baseUrl,
        wsUrl: urls.wsUrl,
        scopes: created.scopes as KeyScope[],
        createdAt: created.created_at,
        expiresAt: created.expires_at,
        privateKey,
      });
    },
    revokeKey(keyId: string): void {
      keys.revoke(keyId);
    },
    stats: () => ({
      ...stats,
      webSocketConnections: gateway.connectionCount,
      webSocketSlowConsumerCloses: gateway.slowConsumerCloses,
    }),
    close,
  };
}
