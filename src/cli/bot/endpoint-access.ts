/**
 * The one access policy of the bot's HTTP endpoint, applied to every path before any route
 * (`/status`, `/metrics`, `/health`, the dashboard, its event stream and its controls):
 *
 * - Host: bound to loopback, the Host header must name loopback (`127.0.0.1`, `localhost`,
 *   `[::1]`) with the bound port, so a page whose DNS name was rebound to 127.0.0.1 is refused
 *   (421). Bound off loopback (which needs a token), the names in `metrics.allowed_hosts`, the
 *   bound address itself and the loopback names are accepted. An empty or missing Host is
 *   refused everywhere.
 * - Token: bound off loopback, every path wants the token: `Authorization: Bearer <token>`,
 *   the `x-paperbot-token` header, or the cookie a browser gets by opening `/?token=<token>`
 *   once. On loopback reads are open (`/health` for probes, `paperbot status`); the dashboard's
 *   controls want the token wherever the endpoint is bound (checked by the dashboard).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { TOKEN_COOKIE, TOKEN_HEADER } from '../dashboard/server.ts';
import { isLoopbackHost, tokensEqual } from '../dashboard/token.ts';

export interface EndpointAccessOptions {
  /** The address the endpoint is bound to (the config's `metrics.host`). */
  readonly binding: string;
  /** The endpoint's token; null only on a loopback binding without a dashboard. */
  readonly token: string | null;
  /** Off loopback: the host names clients use to reach the endpoint (`metrics.allowed_hosts`). */
  readonly allowedHosts?: readonly string[];
}

export type AccessVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly status: 401 | 421; readonly error: string };

export interface EndpointAccess {
  /** Whether the request may go on; a refusal is answered by `refuse`. */
  check(request: IncomingMessage, port: number): AccessVerdict;
  /** The token, for the dashboard's controls and the page. */
  readonly token: string | null;
  readonly loopback: boolean;
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** `name` and `port` of a Host header, the name lower-cased; null when it is not one. */
export function parseHostHeader(
  header: string | undefined,
): { readonly name: string; readonly port: number | null } | null {
  if (header === undefined) return null;
  const text = header.trim().toLowerCase();
  if (text === '') return null;
  let name: string;
  let rest: string;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0) return null;
    name = text.slice(0, end + 1);
    rest = text.slice(end + 1);
  } else {
    const colon = text.indexOf(':');
    name = colon < 0 ? text : text.slice(0, colon);
    rest = colon < 0 ? '' : text.slice(colon);
  }
  if (name === '' || name === '[]') return null;
  if (rest === '') return { name, port: null };
  if (!/^:\d{1,5}$/.test(rest)) return null;
  return { name, port: Number(rest.slice(1)) };
}

function bracketed(host: string): string {
  const name = host.toLowerCase();
  return isIP(name) === 6 ? `[${name}]` : name;
}

function cookieToken(request: IncomingMessage): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === TOKEN_COOKIE) return rest.join('=');
  }
  return undefined;
}

function bearerToken(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  return header?.startsWith('Bearer ') === true ? header.slice('Bearer '.length) : undefined;
}

function headerToken(request: IncomingMessage): string | undefined {
  const given = request.headers[TOKEN_HEADER];
  return typeof given === 'string' ? given : undefined;
}

/** The token of a request, from any of the three places it may be carried. */
export function requestCarriesToken(request: IncomingMessage, token: string): boolean {
  return (
    tokensEqual(token, bearerToken(request)) ||
    tokensEqual(token, headerToken(request)) ||
    tokensEqual(token, cookieToken(request))
  );
}

export function createEndpointAccess(options: EndpointAccessOptions): EndpointAccess {
  const loopback = isLoopbackHost(options.binding);
  const token = options.token;
  const names = new Set(LOOPBACK_NAMES);
  if (!loopback) {
    for (const name of options.allowedHosts ?? []) names.add(bracketed(name));
    // A wildcard binding is not a name anyone reaches it by.
    if (options.binding !== '0.0.0.0' && options.binding !== '::') {
      names.add(bracketed(options.binding));
    }
  }

  const hostAllowed = (request: IncomingMessage, port: number): boolean => {
    const host = parseHostHeader(request.headers.host);
    if (host === null || !names.has(host.name)) return false;
    // Loopback names carry the bound port (a browser always sends it for a port other than 80).
    if (LOOPBACK_NAMES.includes(host.name)) return (host.port ?? 80) === port;
    return true;
  };

  return {
    token,
    loopback,
    check(request, port) {
      if (!hostAllowed(request, port)) {
        return {
          allowed: false,
          status: 421,
          error: loopback
            ? 'this endpoint answers to a loopback host name with its port only'
            : 'this endpoint answers to its configured host names only (metrics.allowed_hosts)',
        };
      }
      if (loopback) return { allowed: true };
      if (token === null || !requestCarriesToken(request, token)) {
        return {
          allowed: false,
          status: 401,
          error:
            'this endpoint wants its token: Authorization: Bearer <token>, or open the dashboard with /?token=...',
        };
      }
      return { allowed: true };
    },
  };
}

/**
 * The dashboard's link with the token (`/?token=...`, off loopback): once, it sets the cookie
 * and sends the browser to `/`, so the token leaves the address bar. True when it answered.
 */
export function answerTokenLink(
  access: EndpointAccess,
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  if (access.loopback || access.token === null) return false;
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const url = new URL(request.url ?? '/', 'http://endpoint.invalid');
  if (url.pathname !== '/' && url.pathname !== '/dashboard') return false;
  const given = url.searchParams.get('token') ?? undefined;
  if (!tokensEqual(access.token, given)) return false;
  const body = 'see /\n';
  response.writeHead(303, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    location: '/',
    'set-cookie': `${TOKEN_COOKIE}=${access.token}; HttpOnly; SameSite=Strict; Path=/`,
    'referrer-policy': 'no-referrer',
  });
  response.end(body);
  return true;
}
