/**
 * The chaos proxy: HTTP and WebSocket between the bot and a venue, on 127.0.0.1. It forwards
 * every request's method, target, headers and body bytes unchanged (the requests are SVC1-signed
 * over the exact target and body) and every WebSocket frame unchanged, except where the
 * scenario's fault policy says otherwise. Each fault it injects is counted.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { systemClock, type TimerHandle } from '../../src/core/clock.ts';

/** What the proxy does with one HTTP request. */
export type HttpAction =
  | { readonly kind: 'forward' }
  /** Forward after waiting (added latency before the venue sees it). */
  | { readonly kind: 'delay_request'; readonly ms: number; readonly afterMs?: number }
  /** Forward (the venue commits), then close the connection without an answer. */
  | { readonly kind: 'drop_response' }
  /** Forward (the venue commits), hold the answer this long, then close without it. */
  | { readonly kind: 'hold_response'; readonly ms: number }
  /** Forward (the venue commits), then answer this error instead of the venue's answer. */
  | { readonly kind: 'error_after_commit'; readonly error: InjectedError }
  /** Do not forward; answer this error (nothing happened at the venue). */
  | { readonly kind: 'error_before_commit'; readonly error: InjectedError };

export interface InjectedError {
  readonly status: number;
  readonly code: string;
  readonly retryable: boolean;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RequestInfo {
  readonly method: string;
  /** The request target as sent: path and query. */
  readonly target: string;
  readonly path: string;
  readonly body: Buffer;
  /** True for every method but GET and HEAD. */
  readonly mutation: boolean;
}

/** What happens to one private WebSocket frame from the venue. */
export type FrameAction = 'pass' | 'drop' | 'duplicate' | 'reorder';

export interface FaultPolicy {
  http?(request: RequestInfo): HttpAction;
  /** Called for frames carrying an integer `sequence` on a channel (private events). */
  privateFrame?(frame: Record<string, unknown>): FrameAction;
}

export interface ProxyOptions {
  /** The venue's `http://127.0.0.1:port`. */
  readonly upstream: string;
  /** Cut every WebSocket connection this often (null: never). */
  readonly cutWebSocketsEveryMs?: number | null;
  /** Upstream read timeout and body cap: bounded like everything else. */
  readonly upstreamTimeoutMs?: number;
  readonly maxBodyBytes?: number;
}

export interface FaultCounts {
  readonly http: Record<string, number>;
  readonly frames: Record<string, number>;
  readonly cuts: number;
}

export interface ChaosProxy {
  readonly baseUrl: string;
  readonly wsUrl: string;
  policy: FaultPolicy;
  /** Faults injected so far, by kind. */
  counts(): FaultCounts;
  totalFaults(): number;
  close(): Promise<void>;
}

const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host']);

function envelope(error: InjectedError): string {
  return JSON.stringify({
    error: {
      code: error.code,
      message: `injected by the chaos proxy (${error.code})`,
      request_id: 'chaos-proxy',
      retryable: error.retryable,
      details: {},
    },
  });
}

function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error('request body too large for the chaos proxy'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

interface UpstreamAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
}

function forward(
  upstream: URL,
  request: IncomingMessage,
  body: Buffer,
  timeoutMs: number,
  limit: number,
): Promise<UpstreamAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = value;
    }
    headers['content-length'] = String(body.length);
    const outgoing = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers,
        timeout: timeoutMs,
      },
      (answer) => {
        const chunks: Buffer[] = [];
        let size = 0;
        answer.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > limit) {
            answer.destroy(new Error('venue answer too large for the chaos proxy'));
            return;
          }
          chunks.push(chunk);
        });
        answer.once('end', () => {
          const out: Record<string, string | string[]> = {};
          for (const [name, value] of Object.entries(answer.headers)) {
            if (value !== undefined && !HOP_HEADERS.has(name)) out[name] = value;
          }
          resolve({ status: answer.statusCode ?? 502, headers: out, body: Buffer.concat(chunks) });
        });
        answer.once('error', reject);
      },
    );
    outgoing.once('timeout', () => outgoing.destroy(new Error('venue timed out')));
    outgoing.once('error', reject);
    outgoing.end(body);
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => systemClock.setTimeout(resolve, ms));
}

function parseFrame(data: RawData): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(String(data));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export async function startChaosProxy(options: ProxyOptions): Promise<ChaosProxy> {
  const upstream = new URL(options.upstream);
  const upstreamWs = `ws://${upstream.host}`;
  const timeoutMs = options.upstreamTimeoutMs ?? 15_000;
  const limit = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const httpCounts: Record<string, number> = {};
  const frameCounts: Record<string, number> = {};
  let cuts = 0;
  const count = (table: Record<string, number>, kind: string) => {
    table[kind] = (table[kind] ?? 0) + 1;
  };
  const proxy: ChaosProxy = {
    baseUrl: '',
    wsUrl: '',
    policy: {},
    counts: () => ({ http: { ...httpCounts }, frames: { ...frameCounts }, cuts }),
    totalFaults: () =>
      Object.values(httpCounts).reduce((a, b) => a + b, 0) +
      Object.values(frameCounts).reduce((a, b) => a + b, 0) +
      cuts,
    close: async () => undefined,
  };

  const sockets = new Set<Socket>();
  const server: Server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request, limit);
      const target = request.url ?? '/';
      const method = request.method ?? 'GET';
      const info: RequestInfo = {
        method,
        target,
        path: target.split('?')[0] ?? target,
        body,
        mutation: method !== 'GET' && method !== 'HEAD',
      };
      const action = proxy.policy.http?.(info) ?? { kind: 'forward' };
      if (action.kind !== 'forward') count(httpCounts, action.kind);
      if (action.kind === 'error_before_commit') {
        const text = envelope(action.error);
        response.writeHead(action.error.status, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(text),
          ...action.error.headers,
        });
        response.end(text);
        return;
      }
      if (action.kind === 'delay_request') await delay(action.ms);
      const answer = await forward(upstream, request, body, timeoutMs, limit);
      if (action.kind === 'delay_request' && action.afterMs !== undefined) {
        await delay(action.afterMs);
      }
      switch (action.kind) {
        case 'drop_response':
          request.socket.destroy();
          return;
        case 'hold_response':
          await delay(action.ms);
          request.socket.destroy();
          return;
        case 'error_after_commit': {
          const text = envelope(action.error);
          response.writeHead(action.error.status, {
            'content-type': 'application/json; charset=utf-8',
            'content-length': Buffer.byteLength(text),
            ...action.error.headers,
          });
          response.end(text);
          return;
        }
        default:
          response.writeHead(answer.status, answer.headers);
          response.end(answer.body);
      }
    })().catch(() => {
      // The venue is gone or refused the transport: the client sees a cut connection, as it
      // would without the proxy. Not a fault of ours.
      request.socket.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  // WebSocket: one upstream connection per client connection, frames relayed as they come.
  const gateway = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  const pairs = new Set<{ client: WebSocket; venue: WebSocket }>();
  server.on('upgrade', (request, socket, head) => {
    gateway.handleUpgrade(request, socket, head, (client) => {
      const venue = new WebSocket(`${upstreamWs}${request.url ?? '/v1/ws'}`, {
        maxPayload: 1024 * 1024,
        handshakeTimeout: timeoutMs,
      });
      const pair = { client, venue };
      pairs.add(pair);
      const pendingToVenue: RawData[] = [];
      let held: RawData | null = null;
      const closeBoth = () => {
        pairs.delete(pair);
        client.terminate();
        venue.terminate();
      };
      client.on('message', (data, isBinary) => {
        if (venue.readyState === WebSocket.OPEN) venue.send(data, { binary: isBinary });
        else if (pendingToVenue.length < 100) pendingToVenue.push(data);
      });
      venue.once('open', () => {
        for (const data of pendingToVenue.splice(0)) venue.send(data, { binary: false });
      });
      venue.on('message', (data) => {
        if (client.readyState !== WebSocket.OPEN) return;
        const frame = parseFrame(data);
        const isPrivate =
          frame !== null &&
          Number.isSafeInteger(frame.sequence) &&
          typeof frame.channel === 'string' &&
          frame.type !== 'heartbeat';
        const action: FrameAction =
          isPrivate && proxy.policy.privateFrame !== undefined
            ? proxy.policy.privateFrame(frame)
            : 'pass';
        if (action !== 'pass') count(frameCounts, action);
        const send = (payload: RawData) => client.send(payload, { binary: false });
        switch (action) {
          case 'drop':
            return;
          case 'duplicate':
            send(data);
            send(data);
            break;
          case 'reorder':
            // Held back and sent after the next frame.
            if (held !== null) send(held);
            held = data;
            // Nothing follows soon: it goes out late on its own rather than never.
            systemClock.setTimeout(() => {
              if (held === data && client.readyState === WebSocket.OPEN) {
                held = null;
                send(data);
              }
            }, 250);
            return;
          default:
            send(data);
        }
        if (held !== null) {
          send(held);
          held = null;
        }
      });
      client.once('close', closeBoth);
      client.once('error', closeBoth);
      venue.once('close', closeBoth);
      venue.once('error', closeBoth);
    });
  });

  let cutter: TimerHandle | null = null;
  if (options.cutWebSocketsEveryMs != null) {
    cutter = systemClock.setInterval(() => {
      for (const pair of [...pairs]) {
        cuts += 1;
        pairs.delete(pair);
        pair.client.terminate();
        pair.venue.terminate();
      }
    }, options.cutWebSocketsEveryMs);
  }

  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve(server.address() as AddressInfo));
  });
  const baseUrl = `http://127.0.0.1:${address.port}`;
  return Object.assign(proxy, {
    baseUrl,
    wsUrl: `ws://127.0.0.1:${address.port}/v1/ws`,
    async close() {
      if (cutter !== null) systemClock.clearInterval(cutter);
      for (const pair of pairs) {
        pair.client.terminate();
        pair.venue.terminate();
      }
      pairs.clear();
      gateway.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  });
}
