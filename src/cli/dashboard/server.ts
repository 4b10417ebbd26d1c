/**
 * The dashboard's routes on the bot's HTTP endpoint: the page (`/`), its assets, a JSON
 * snapshot, a Server-Sent Events stream of snapshots, and the controls.
 *
 * The endpoint's access policy (src/cli/bot/endpoint-access.ts: the Host header on every path,
 * the token for every path off loopback) has run before any of these routes. Here:
 * - Controls: POST only, `content-type: application/json`, the token in `x-paperbot-token`
 *   (a header a cross-site form cannot send, and a cross-site script cannot without a CORS
 *   preflight, which is never granted), an `Origin` (when sent) equal to this endpoint, and a
 *   body `{"confirm": "<action>"}`. In read-only mode there are no controls at all.
 * - Live updates: at most `MAXIMUM_EVENT_CLIENTS` streams, `MAXIMUM_EVENT_CLIENTS_PER_ADDRESS`
 *   of them per client address. A new stream over either cap takes the place of the oldest
 *   (of its own address, else of the address holding the most), which is told `reaped` and
 *   closed; a page told so, or refused, polls the snapshot instead, controls and all.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { pageHtml, type DashboardAssets } from './assets.ts';
import { type ControlAction, type ControlResult, isControlAction } from './controls.ts';
import { EventClients } from './event-clients.ts';
import { tokensEqual } from './token.ts';

export { MAXIMUM_EVENT_CLIENTS, MAXIMUM_EVENT_CLIENTS_PER_ADDRESS } from './event-clients.ts';

export const TOKEN_HEADER = 'x-paperbot-token';
export const TOKEN_COOKIE = 'paperbot_dashboard';
const MAXIMUM_CONTROL_BODY = 1024;

export interface DashboardServerOptions {
  readonly clock: Clock;
  readonly token: string;
  readonly readOnly: boolean;
  readonly assets: DashboardAssets;
  /** The snapshot document; null while the bot is starting. */
  readonly snapshot: () => unknown;
  readonly control: (action: ControlAction) => Promise<ControlResult>;
  /** Called on every tick of the event stream, with or without clients (the equity curve). */
  readonly onTick?: () => void;
  /** Snapshot period of the event stream; default 1000 ms. */
  readonly intervalMs?: number;
}

export interface DashboardServer {
  /** Answers the request when it is the dashboard's; false leaves it to the caller. */
  handle(request: IncomingMessage, response: ServerResponse): Promise<boolean>;
  close(): void;
}

function send(
  response: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  response.end(body);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  send(response, status, 'application/json; charset=utf-8', `${JSON.stringify(body)}\n`);
}

const PAGE_HEADERS = {
  // Everything from this endpoint, nothing from elsewhere; the chart library sets inline styles.
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

async function readBody(request: IncomingMessage, limit: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function createDashboardServer(options: DashboardServerOptions): DashboardServer {
  const clients = new EventClients();
  let timer: TimerHandle | null = null;

  const broadcast = () => {
    options.onTick?.();
    if (clients.size === 0) return;
    const document = options.snapshot();
    if (document === null) return;
    clients.broadcast(`event: snapshot\ndata: ${JSON.stringify(document)}\n\n`);
  };
  timer = options.clock.setInterval(broadcast, options.intervalMs ?? 1000);

  const control = async (
    request: IncomingMessage,
    response: ServerResponse,
    action: string,
  ): Promise<void> => {
    if (options.readOnly) {
      sendJson(response, 403, { error: 'the dashboard is read-only' });
      return;
    }
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      sendJson(response, 405, { error: 'controls are POST requests' });
      return;
    }
    if (!isControlAction(action)) {
      sendJson(response, 404, { error: `no control named ${action}` });
      return;
    }
    const origin = request.headers.origin;
    const fetchSite = request.headers['sec-fetch-site'];
    if (
      (origin !== undefined && origin !== `http://${request.headers.host ?? ''}`) ||
      (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none')
    ) {
      sendJson(response, 403, { error: 'cross-site request refused' });
      return;
    }
    const given = request.headers[TOKEN_HEADER];
    if (!tokensEqual(options.token, typeof given === 'string' ? given : undefined)) {
      sendJson(response, 403, { error: `missing or wrong ${TOKEN_HEADER}` });
      return;
    }
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
      sendJson(response, 415, { error: 'send application/json' });
      return;
    }
    const body = await readBody(request, MAXIMUM_CONTROL_BODY);
    let confirm: unknown;
    try {
      confirm = body === null ? undefined : (JSON.parse(body) as { confirm?: unknown }).confirm;
    } catch {
      confirm = undefined;
    }
    if (confirm !== action) {
      sendJson(response, 400, { error: `confirm with a body {"confirm": "${action}"}` });
      return;
    }
    const result = await options.control(action);
    sendJson(response, result.ok ? 200 : 502, result);
  };

  const events = (request: IncomingMessage, response: ServerResponse) => {
    clients.makeRoom(request.socket.remoteAddress ?? 'unknown');
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    response.write('retry: 2000\n\n');
    const document = options.snapshot();
    if (document !== null) response.write(`event: snapshot\ndata: ${JSON.stringify(document)}\n\n`);
    clients.add(request.socket.remoteAddress ?? 'unknown', response);
    request.once('close', () => clients.delete(response));
  };

  return {
    async handle(request, response) {
      const url = new URL(request.url ?? '/', 'http://dashboard.invalid');
      const path = url.pathname;
      if (path !== '/' && path !== '/dashboard' && !path.startsWith('/dashboard/')) return false;
      if (path.startsWith('/dashboard/control/')) {
        await control(request, response, path.slice('/dashboard/control/'.length));
        return true;
      }
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.setHeader('allow', 'GET, HEAD');
        sendJson(response, 405, { error: 'method not allowed' });
        return true;
      }
      switch (path) {
        case '/':
        case '/dashboard':
          send(
            response,
            200,
            'text/html; charset=utf-8',
            pageHtml(options.readOnly ? null : options.token, options.snapshot()),
            PAGE_HEADERS,
          );
          return true;
        case '/dashboard/app.js':
          send(response, 200, 'text/javascript; charset=utf-8', await options.assets.script());
          return true;
        case '/dashboard/charts.js':
          send(response, 200, 'text/javascript; charset=utf-8', options.assets.charts());
          return true;
        case '/dashboard/style.css':
          send(response, 200, 'text/css; charset=utf-8', options.assets.style());
          return true;
        case '/dashboard/snapshot': {
          const document = options.snapshot();
          if (document === null) sendJson(response, 503, { error: 'the bot has not started yet' });
          else sendJson(response, 200, document);
          return true;
        }
        case '/dashboard/events':
          events(request, response);
          return true;
        default:
          sendJson(response, 404, { error: 'not found' });
          return true;
      }
    },
    close() {
      if (timer !== null) options.clock.clearInterval(timer);
      timer = null;
      clients.closeAll();
    },
  };
}
