/**
 * The bot's local HTTP endpoint (node:http): `/metrics` (Prometheus text), `/health` and
 * `/status` (JSON, read by `paperbot status`), `/favicon.ico`, and the dashboard's routes. It
 * binds to 127.0.0.1 by default: the status holds positions and orders, so it is meant for the
 * machine the bot runs on. Every request passes the one access policy first
 * (`endpoint-access.ts`: the Host header everywhere, the token off loopback).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Registry } from 'prom-client';
import { isoTimestamp } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import { FAVICON_SVG } from '../dashboard/assets.ts';
import { answerTokenLink, createEndpointAccess, type EndpointAccess } from './endpoint-access.ts';

/** Route readiness as `/health` shows it while it is not ready or its last read failed. */
export interface HealthRouteReadiness {
  readonly ready: boolean;
  readonly reason: string | null;
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly cause: string | null;
  } | null;
  /** Epoch milliseconds of the last read; null before any. */
  readonly checkedAt: number | null;
}

/**
 * What `/health` reports: `running` answers 200, anything else 503. While running, a gate that
 * refuses new exposure makes the status `degraded` (still 200: the process is alive and can
 * reduce) and the body names the gate and why.
 */
export interface HealthReport {
  readonly phase: 'starting' | 'running' | 'stopping' | 'stopped';
  readonly tradingState: string | null;
  readonly mayTrade: boolean;
  /** The gates refusing new exposure, with their reasons; absent or empty when none. */
  readonly refusing?: readonly { readonly gate: string; readonly reason: string }[];
  /** The venue's route readiness; shown only while not ready or after a failed read. */
  readonly routeReadiness?: HealthRouteReadiness | null;
}

/** The `/health` body: the three fields always, the refusal and readiness only when they say no. */
export function healthBody(health: HealthReport): Record<string, unknown> {
  const running = health.phase === 'running';
  const refusing = health.refusing ?? [];
  const readiness = health.routeReadiness ?? null;
  const body: Record<string, unknown> = {
    status: running ? (refusing.length > 0 ? 'degraded' : 'ok') : health.phase,
    trading_state: health.tradingState,
    may_trade: health.mayTrade,
  };
  if (refusing.length > 0) body.refusing = refusing;
  if (readiness !== null && (!readiness.ready || readiness.error !== null)) {
    body.route_readiness = {
      ready: readiness.ready,
      reason: readiness.reason,
      error: readiness.error,
      checked_at: readiness.checkedAt === null ? null : isoTimestamp(readiness.checkedAt),
    };
  }
  return body;
}

export interface BotHttpServerOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  readonly health: () => HealthReport;
  /** The JSON of `/status`; null while there is nothing to report yet (answered 503). */
  readonly status: () => unknown;
  /** More routes (the dashboard's), tried first; true when it answered the request. */
  readonly routes?: (request: IncomingMessage, response: ServerResponse) => Promise<boolean>;
  /**
   * Who may ask: default the Host check of a loopback binding at `host` without a token. A
   * test may hand a policy for another binding than the one listened on.
   */
  readonly access?: EndpointAccess;
}

export interface BotHttpServer {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  response.end(text);
}

async function handle(
  options: BotHttpServerOptions,
  access: EndpointAccess,
  port: number,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const verdict = access.check(request, port);
  if (!verdict.allowed) {
    // The token link is the one way in without the token: it hands the browser its cookie.
    if (verdict.status === 421 || !answerTokenLink(access, request, response)) {
      sendJson(response, verdict.status, { error: verdict.error });
    }
    return;
  }
  if (options.routes !== undefined && (await options.routes(request, response))) return;
  const path = (request.url ?? '/').split('?')[0];
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('allow', 'GET, HEAD');
    sendJson(response, 405, { error: 'method not allowed' });
    return;
  }
  switch (path) {
    case '/favicon.ico':
      response.writeHead(200, {
        'content-type': 'image/svg+xml',
        'content-length': Buffer.byteLength(FAVICON_SVG),
        'cache-control': 'max-age=86400',
        'x-content-type-options': 'nosniff',
      });
      response.end(FAVICON_SVG);
      return;
    case '/metrics': {
      const text = await options.registry.metrics();
      response.writeHead(200, {
        'content-type': options.registry.contentType,
        'content-length': Buffer.byteLength(text),
      });
      response.end(text);
      return;
    }
    case '/health': {
      const health = options.health();
      sendJson(response, health.phase === 'running' ? 200 : 503, healthBody(health));
      return;
    }
    case '/status': {
      const status = options.status();
      if (status === null) sendJson(response, 503, { error: 'the bot has not started yet' });
      else sendJson(response, 200, status);
      return;
    }
    default:
      sendJson(response, 404, {
        error: 'not found',
        endpoints: ['/metrics', '/health', '/status'],
      });
  }
}

export async function startBotHttpServer(options: BotHttpServerOptions): Promise<BotHttpServer> {
  const access = options.access ?? createEndpointAccess({ binding: options.host, token: null });
  let port = 0;
  const server = createServer((request, response) => {
    handle(options, access, port, request, response).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      sendJson(response, 500, {
        error: error instanceof Error ? error.message : 'internal error',
      });
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new PaperbotError(
          'METRICS_LISTEN_FAILED',
          `cannot listen on ${options.host}:${options.port} for metrics: ${error.message}`,
          { cause: error },
        ),
      ),
    );
    server.listen({ host: options.host, port: options.port }, () =>
      resolve(server.address() as AddressInfo),
    );
  });
  port = address.port;
  const host = address.address.includes(':') ? `[${address.address}]` : address.address;
  let closed: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
  };
}
