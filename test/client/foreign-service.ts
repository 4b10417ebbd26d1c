/**
 * A second implementation of the service's open shapes, written apart from the emulator: it
 * answers every shape the interface leaves "not shown" differently from `shared/spec/contract.md`
 * (other and extra fields, readiness items as `{route_id, ready}`, an events page without
 * `next_after_sequence`, control frames without request ids or sequences, frame and event types
 * the project does not know). The listed resources it sends as the interface lists them, except
 * where a test asks for one that breaks them. It checks no signature: what is under test is the
 * client's reading, not the service's auth.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { Credential, PrivateKey } from '../../src/signing/index.ts';
import * as fixtures from '../protocol/fixtures.ts';

export type ForeignHandler = (
  request: { readonly method: string; readonly path: string; readonly query: URLSearchParams },
  body: unknown,
) => { readonly status: number; readonly body: unknown; readonly raw?: string } | undefined;

export interface ForeignService {
  readonly baseUrl: string;
  readonly wsUrl: string;
  /** Paths read, in order (`GET /v1/time` included). */
  readonly requests: string[];
  /** Frames the clients sent over the WebSocket, parsed. */
  readonly clientFrames: Record<string, unknown>[];
  /** Answers a path differently for the rest of the test (undefined: the default answer). */
  override(handler: ForeignHandler): void;
  /** The readiness list the service answers from now on. */
  setReadiness(items: unknown): void;
  /** The account's highest sequence, sent in `authenticated` from now on (default 0). */
  setSequenceHead(sequence: number): void;
  /** Sends a frame to every open WebSocket. */
  broadcast(frame: unknown): void;
  /** How many WebSockets are open. */
  openSockets(): number;
  close(): Promise<void>;
}

export interface ForeignServiceOptions {
  /** The service's clock (epoch ms). */
  readonly now: () => number;
}

let answered = 0;

function send(response: ServerResponse, status: number, body: unknown, raw?: string): void {
  const text = raw ?? JSON.stringify(body);
  answered += 1;
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    // A fresh server request id on every answer, as a real service sends.
    'svc-request-id': `foreign-${answered}`,
  });
  response.end(text);
}

function readBody(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text === '' ? null : JSON.parse(text));
      } catch {
        resolve(null);
      }
    });
  });
}

/** A private event of a type the project does not know. */
export function marginCallEvent(sequence: number): Record<string, unknown> {
  return {
    version: 1,
    channel: 'risk',
    sequence,
    event_id: fixtures.uuid(sequence),
    type: 'margin_call',
    occurred_at: fixtures.TIME,
    data: { level: 'warning', ratio: '0.81', venue_note: { tier: 2 } },
  };
}

export async function startForeignService(options: ForeignServiceOptions): Promise<ForeignService> {
  const requests: string[] = [];
  const clientFrames: Record<string, unknown>[] = [];
  let override: ForeignHandler | null = null;
  let readiness: unknown = [{ route_id: 'svc-paper', ready: true }];
  let head = 0;

  const defaults = (method: string, path: string, query: URLSearchParams, body: unknown) => {
    const now = options.now();
    if (path === '/v1/time') {
      // No epoch_ms: the time is in server_time, beside fields the contract does not have.
      return {
        status: 200,
        body: {
          server_time: new Date(now).toISOString(),
          epoch_seconds: Math.floor(now / 1000),
          zone: 'UTC',
        },
      };
    }
    if (path === '/v1/status') {
      return {
        status: 200,
        body: { status: 'OPERATIONAL', region: 'eu-1', build: { sha: 'abc' }, maintenance: null },
      };
    }
    if (path === '/health') return { status: 200, body: { healthy: true, checks: { db: 'up' } } };
    if (path === '/ready') return { status: 200, body: { ready: 'yes', since: fixtures.TIME } };
    if (path === '/v1/routes/readiness') return { status: 200, body: readiness };
    if (path === '/v1/markets') return { status: 200, body: [fixtures.market()] };
    if (path === '/v1/events') {
      const after = Number(query.get('after_sequence') ?? '0');
      // Two pages, neither with next_after_sequence; extra fields on both.
      if (after < 2) {
        return {
          status: 200,
          body: {
            data: [fixtures.orderStatusEvent(1), marginCallEvent(2)],
            has_more: true,
            page_token: 'opaque-1',
          },
        };
      }
      return {
        status: 200,
        body: {
          data: after < 3 ? [fixtures.orderStatusEvent(3)] : [],
          has_more: false,
          retained_from: 1,
        },
      };
    }
    if (method === 'POST' && path === '/v1/orders/simulate') {
      return {
        status: 200,
        body: {
          ...fixtures.simulationResult(),
          decision: 'REVIEW',
          issues: [
            { severity: 'warning', text: 'size near the limit', refs: ['quantity'], score: 0.4 },
            { rule: 42 },
          ],
        },
      };
    }
    if (method === 'POST' && path === '/v1/orders') {
      const sent = body as { request_id?: unknown; client_order_id?: unknown };
      return {
        status: 202,
        body: {
          ...fixtures.order(),
          request_id: sent.request_id,
          client_order_id: sent.client_order_id ?? null,
          provenance: { source: 'smart-router', hops: [1, 2], signed: false },
          error: { reason: 'none', detail: { nested: [null, { ok: true }] } },
        },
      };
    }
    if (path === '/v1/account') {
      return {
        status: 409,
        body: {
          error: {
            code: 'INSUFFICIENT_READY_CAPITAL',
            message: 'not enough ready capital',
            request_id: 'srv-req-7',
            retryable: false,
            details: { shortfall: { asset: 'pUSDC', amount: '12.5' }, hints: ['top up', 3, null] },
          },
        },
      };
    }
    return {
      status: 404,
      body: {
        error: {
          code: 'NOT_FOUND',
          message: `nothing at ${path}`,
          request_id: 'srv-req-404',
          retryable: false,
          details: {},
        },
      },
    };
  };

  const server: Server = createServer((request, response) => {
    void readBody(request).then((body) => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const method = request.method ?? 'GET';
      requests.push(`${method} ${url.pathname}`);
      const answer =
        override?.({ method, path: url.pathname, query: url.searchParams }, body) ??
        defaults(method, url.pathname, url.searchParams, body);
      send(response, answer.status, answer.body, 'raw' in answer ? answer.raw : undefined);
    });
  });

  const sockets = new Set<WebSocket>();
  const wss = new WebSocketServer({ server, path: '/v1/ws' });
  wss.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A challenge with fields of its own and without `version` or `expires_at_ms`.
    socket.send(JSON.stringify({ type: 'challenge', challenge: 'c-123', algorithm: 'ed25519' }));
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as Record<string, unknown>;
      clientFrames.push(frame);
      if (frame.op === 'auth') {
        // No request_id and no version: the client pairs it with its auth frame by kind.
        socket.send(JSON.stringify({ type: 'authenticated', session_id: 's-9', sequence: head }));
      } else if (frame.op === 'subscribe') {
        socket.send(
          JSON.stringify({
            type: 'subscribed',
            request_id: frame.request_id,
            channels: frame.channels,
            subscription_id: 'sub-1',
            limits: { max_channels: 20 },
          }),
        );
      } else if (frame.op === 'ping') {
        socket.send(JSON.stringify({ type: 'pong', request_id: frame.request_id, rtt_hint: 3 }));
      }
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    wsUrl: `ws://127.0.0.1:${port}/v1/ws`,
    requests,
    clientFrames,
    override(handler) {
      override = handler;
    },
    setReadiness(items) {
      readiness = items;
    },
    setSequenceHead(sequence) {
      head = sequence;
    },
    broadcast(frame) {
      for (const socket of sockets) socket.send(JSON.stringify(frame));
    },
    openSockets: () => sockets.size,
    async close() {
      for (const socket of sockets) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A credential for the foreign service (it checks no signature; the client needs one). */
export function foreignCredential(service: ForeignService, keyId: string): Credential {
  return Credential.create({
    keyId,
    accountId: 'account-1',
    apiBaseUrl: service.baseUrl,
    wsUrl: service.wsUrl,
    scopes: ['account:read', 'orders:read', 'fills:read', 'orders:write'],
    createdAt: '2025-01-01T00:00:00Z',
    expiresAt: null,
    privateKey: PrivateKey.generate(),
  });
}
