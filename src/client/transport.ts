/**
 * How the client reaches the service: which certificates it trusts and which proxy it goes
 * through. REST gets an undici dispatcher (a `Pool` when no proxy variable is set, undici's
 * `EnvHttpProxyAgent` otherwise), the WebSocket the matching `ws` options (the CA, or a CONNECT
 * tunnel through the same proxy, chosen by the same NO_PROXY rules).
 *
 * Trust: Node's roots plus `NODE_EXTRA_CA_CERTS` (Node reads it at start) when no `ca` is
 * given; with `ca` (from `venue.ca_file`, see `readCaFile`), exactly those certificates.
 */
import type { Socket } from 'node:net';
import { type Dispatcher, EnvHttpProxyAgent, Pool } from 'undici';
import type { ClientOptions } from 'ws';
import type { Clock } from '../core/clock.ts';
import { type ProxyEnvironment, proxyFor, type ProxySettings, proxySettingsOf } from './proxy.ts';
import { openTunnel } from './tunnel.ts';

export interface TransportOptions {
  /** PEM certificates to trust instead of Node's defaults (see `readCaFile`). */
  readonly ca?: readonly string[];
  /** Where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read. Default `process.env`. */
  readonly env?: ProxyEnvironment;
}

export interface PoolSettings {
  readonly connections: number;
  readonly keepAliveTimeoutMs: number;
  readonly connectTimeoutMs: number;
}

export function proxySettingsOfTransport(transport: TransportOptions): ProxySettings {
  return proxySettingsOf(transport.env ?? process.env);
}

/** The REST dispatcher for `origin`. Requests must carry `origin` (an agent needs it). */
export function createRestDispatcher(
  origin: string,
  transport: TransportOptions,
  pool: PoolSettings,
): Dispatcher {
  const tls = {
    timeout: pool.connectTimeoutMs,
    ...(transport.ca === undefined ? {} : { ca: [...transport.ca] }),
  };
  const common = {
    connections: pool.connections,
    keepAliveTimeout: pool.keepAliveTimeoutMs,
    // The request timeout runs on the client's clock, so undici's own are off.
    headersTimeout: 0,
    bodyTimeout: 0,
  };
  const proxies = proxySettingsOfTransport(transport);
  if (proxies.httpProxy === null && proxies.httpsProxy === null) {
    return new Pool(origin, { ...common, connect: tls });
  }
  return new EnvHttpProxyAgent({
    ...common,
    httpProxy: proxies.httpProxy ?? undefined,
    httpsProxy: proxies.httpsProxy ?? undefined,
    noProxy: proxies.noProxy,
    // `connect` for direct connections, `requestTls` inside a tunnel, `proxyTls` to an https proxy.
    connect: tls,
    requestTls: tls,
    proxyTls: tls,
  });
}

/** The options `ws` needs for `url`: the CA, or a CONNECT tunnel when a proxy applies. */
export function webSocketTransportOptions(
  url: string,
  transport: TransportOptions,
  tunnel: { readonly clock: Clock; readonly timeoutMs: number },
): Pick<ClientOptions, 'ca' | 'createConnection'> {
  const parsed = new URL(url);
  const proxy = proxyFor(parsed, proxySettingsOfTransport(transport));
  if (proxy === null) return transport.ca === undefined ? {} : { ca: [...transport.ca] };
  const secure = parsed.protocol === 'wss:';
  const target = {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: Number(parsed.port) || (secure ? 443 : 80),
    secure,
  };
  const createConnection = (
    _options: object,
    callback: (error: Error | null, socket?: Socket) => void,
  ): undefined => {
    openTunnel(
      target,
      {
        proxy,
        clock: tunnel.clock,
        timeoutMs: tunnel.timeoutMs,
        ...(transport.ca === undefined ? {} : { ca: transport.ca }),
      },
      callback,
    );
    return undefined;
  };
  // Node's http client takes the socket from the callback when this returns nothing; the ws
  // typings describe only the synchronous form.
  return { createConnection: createConnection as unknown as ClientOptions['createConnection'] };
}
