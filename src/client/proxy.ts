/**
 * Which proxy a URL goes through, from HTTPS_PROXY, HTTP_PROXY and NO_PROXY (lower-case names
 * first), with the rules of undici's `EnvHttpProxyAgent`, so REST and the WebSocket agree:
 * a `NO_PROXY` entry matches its host and every subdomain (`.example.com` and `*.example.com`
 * alike), `host:port` only that port, and `*` turns the proxy off.
 */
import { VenueError } from './errors.ts';

export type ProxyEnvironment = Readonly<Record<string, string | undefined>>;

export interface ProxySettings {
  readonly httpProxy: string | null;
  readonly httpsProxy: string | null;
  readonly noProxy: string;
}

function firstSet(env: ProxyEnvironment, names: readonly string[]): string | null {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
  }
  return null;
}

function firstProxy(env: ProxyEnvironment, names: readonly string[]): string | null {
  for (const name of names) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    let url: URL | null = null;
    try {
      url = new URL(value);
    } catch {
      url = null;
    }
    // The value is not repeated: it may carry the proxy's password.
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new VenueError('INVALID_PROXY', `${name} must be an http:// or https:// URL`, {
        source: 'local',
        details: { variable: name },
      });
    }
    return value;
  }
  return null;
}

export function proxySettingsOf(env: ProxyEnvironment): ProxySettings {
  const httpProxy = firstProxy(env, ['http_proxy', 'HTTP_PROXY']);
  return {
    httpProxy,
    // As undici: an https URL without HTTPS_PROXY goes through HTTP_PROXY.
    httpsProxy: firstProxy(env, ['https_proxy', 'HTTPS_PROXY']) ?? httpProxy,
    noProxy: firstSet(env, ['no_proxy', 'NO_PROXY']) ?? '',
  };
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  'http:': 80,
  'ws:': 80,
  'https:': 443,
  'wss:': 443,
};

function bypassed(url: URL, noProxy: string): boolean {
  if (noProxy.trim() === '*') return true;
  // `host` keeps the brackets of an IPv6 address, as undici compares it.
  const hostname = url.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number.parseInt(url.port, 10) || DEFAULT_PORTS[url.protocol] || 0;
  for (const entry of noProxy.split(/[,\s]/)) {
    if (entry === '') continue;
    const parsed = /^(.+):(\d+)$/.exec(entry);
    const entryHost = (parsed === null ? entry : (parsed[1] as string))
      .replace(/^\*?\./, '')
      .toLowerCase();
    const entryPort = parsed === null ? 0 : Number.parseInt(parsed[2] as string, 10);
    if (entryPort !== 0 && entryPort !== port) continue;
    if (hostname === entryHost || hostname.endsWith(`.${entryHost}`)) return true;
  }
  return false;
}

/** The proxy URL that `url` (http, https, ws or wss) goes through, or null for a direct connection. */
export function proxyFor(url: URL, settings: ProxySettings): URL | null {
  const secure = url.protocol === 'https:' || url.protocol === 'wss:';
  const proxy = secure ? settings.httpsProxy : settings.httpProxy;
  if (proxy === null || bypassed(url, settings.noProxy)) return null;
  return new URL(proxy);
}
