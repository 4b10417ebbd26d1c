/**
 * Base URL safety. Signed headers and private data travel only over TLS, except to this very
 * machine: plain `http`/`ws` is accepted for loopback hosts only (127.0.0.0/8, ::1,
 * `localhost`). User information in a URL is refused, because it would be sent to the server
 * and could end up in its logs. Redirects are never followed (see the REST client).
 */
import { isIPv4 } from 'node:net';
import { VenueError } from './errors.ts';

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '[::1]' || host === '::1') return true;
  return isIPv4(host) && host.startsWith('127.');
}

export interface CheckedBaseUrl {
  /** `scheme://host[:port]`, what a connection pool is keyed by. */
  readonly origin: string;
  /** A path prefix without a trailing slash, '' for none; every request target starts with it. */
  readonly pathPrefix: string;
  readonly secure: boolean;
  readonly hostname: string;
}

function unsafe(message: string, url: string): VenueError {
  return new VenueError('UNSAFE_URL', message, {
    source: 'local',
    details: { url },
  });
}

function checkUrl(
  text: string,
  secureScheme: 'https:' | 'wss:',
  plainScheme: 'http:' | 'ws:',
): { url: URL; checked: CheckedBaseUrl } {
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    throw new VenueError('UNSAFE_URL', 'the URL does not parse', {
      source: 'local',
      cause: error,
    });
  }
  // Reported without the URL itself, which would repeat the user information.
  if (url.username !== '' || url.password !== '') {
    throw new VenueError('UNSAFE_URL', 'a service URL must not carry user information', {
      source: 'local',
      details: { host: url.host },
    });
  }
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  if (url.protocol !== secureScheme && url.protocol !== plainScheme) {
    throw unsafe(`a service URL must use ${secureScheme.slice(0, -1)}`, shown);
  }
  if (url.protocol === plainScheme && !isLoopbackHost(url.hostname)) {
    throw unsafe(
      `${plainScheme.slice(0, -1)} is accepted for loopback hosts only (127.0.0.0/8, ::1, localhost); use ${secureScheme.slice(0, -1)}`,
      shown,
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw unsafe('a service URL must not carry a query or a fragment', shown);
  }
  return {
    url,
    checked: {
      origin: url.origin,
      pathPrefix: url.pathname.replace(/\/+$/, ''),
      secure: url.protocol === secureScheme,
      hostname: url.hostname,
    },
  };
}

/** Checks the REST base URL (`https`, or `http` on loopback). Throws `UNSAFE_URL`. */
export function checkBaseUrl(text: string): CheckedBaseUrl {
  return checkUrl(text, 'https:', 'http:').checked;
}

/** Checks the WebSocket URL (`wss`, or `ws` on loopback) and returns it normalized. */
export function checkWebSocketUrl(text: string): string {
  return checkUrl(text, 'wss:', 'ws:').url.href;
}
