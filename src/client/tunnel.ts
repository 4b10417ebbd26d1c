/**
 * An HTTP CONNECT tunnel through a proxy, as a `createConnection` for `ws` (node's http client
 * takes the socket through the callback): CONNECT host:port, then TLS to the service inside
 * the tunnel for `wss`. Bounded: the proxy's answer head is capped and the whole setup has a
 * timeout on the injected clock. The proxy's password, when its URL has one, is sent as
 * Proxy-Authorization and never reported.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { isIP } from 'node:net';
import type { Clock } from '../core/clock.ts';

/** The proxy's answer head (status line and headers) is refused beyond this. */
export const MAX_PROXY_ANSWER_BYTES = 16 * 1024;

export interface TunnelOptions {
  readonly proxy: URL;
  readonly clock: Clock;
  /** Proxy connection, CONNECT answer and TLS handshake, together. */
  readonly timeoutMs: number;
  /** Trusted certificates for the service (and an https proxy); Node's defaults when absent. */
  readonly ca?: readonly string[];
}

export interface TunnelTarget {
  readonly host: string;
  readonly port: number;
  readonly secure: boolean;
}

function proxyAuthorization(proxy: URL): string | null {
  if (proxy.username === '' && proxy.password === '') return null;
  const user = decodeURIComponent(proxy.username);
  const password = decodeURIComponent(proxy.password);
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

function authority(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Opens a tunnel to `target` and calls back with the socket (TLS inside it when secure). */
export function openTunnel(
  target: TunnelTarget,
  options: TunnelOptions,
  callback: (error: Error | null, socket?: Socket) => void,
): void {
  const { proxy } = options;
  const proxyPort = Number(proxy.port) || (proxy.protocol === 'https:' ? 443 : 80);
  const proxyHost = proxy.hostname.replace(/^\[|\]$/g, '');
  const ca = options.ca === undefined ? {} : { ca: [...options.ca] };
  const raw: Socket =
    proxy.protocol === 'https:'
      ? tlsConnect({ host: proxyHost, port: proxyPort, servername: sniOf(proxyHost), ...ca })
      : netConnect({ host: proxyHost, port: proxyPort });
  let settled = false;
  let current: Socket = raw;
  const finish = (error: Error | null, socket?: Socket): void => {
    if (settled) return;
    settled = true;
    options.clock.clearTimeout(timer);
    raw.off('data', onData);
    if (error !== null) {
      current.destroy();
      callback(error);
      return;
    }
    callback(null, socket);
  };
  const timer = options.clock.setTimeout(
    () =>
      finish(
        new Error(`the proxy ${proxy.host} did not open a tunnel within ${options.timeoutMs} ms`),
      ),
    options.timeoutMs,
  );
  raw.on('error', (error: Error) =>
    finish(new Error(`the proxy ${proxy.host} failed: ${error.message}`, { cause: error })),
  );
  raw.once('close', () => finish(new Error(`the proxy ${proxy.host} closed the connection`)));

  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    size += chunk.byteLength;
    const received = Buffer.concat(chunks);
    const end = received.indexOf('\r\n\r\n');
    if (end === -1) {
      if (size > MAX_PROXY_ANSWER_BYTES) {
        finish(new Error(`the proxy ${proxy.host} answered CONNECT with an oversized head`));
      }
      return;
    }
    const statusLine = received.subarray(0, received.indexOf('\r\n')).toString('latin1');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
    if (status === undefined || !status.startsWith('2')) {
      finish(
        new Error(
          `the proxy ${proxy.host} refused the tunnel to ${authority(target.host, target.port)} (${status === undefined ? 'not HTTP' : `HTTP ${status}`})`,
        ),
      );
      return;
    }
    raw.off('data', onData);
    // Neither an HTTP nor a TLS server speaks first: bytes after the head are not the service's.
    if (received.byteLength > end + 4) {
      finish(new Error(`the proxy ${proxy.host} sent data after its answer, before the request`));
      return;
    }
    // The socket stays flowing: its next listener (the http client's, or TLS) is attached
    // before any further read can be delivered.
    if (!target.secure) {
      finish(null, raw);
      return;
    }
    const secured = tlsConnect({
      socket: raw,
      servername: sniOf(target.host),
      ...ca,
    } satisfies ConnectionOptions);
    current = secured;
    secured.once('secureConnect', () => finish(null, secured));
    secured.once('error', (error: Error) => finish(error));
  };
  raw.on('data', onData);
  const ready = proxy.protocol === 'https:' ? 'secureConnect' : 'connect';
  raw.once(ready, () => {
    const lines = [
      `CONNECT ${authority(target.host, target.port)} HTTP/1.1`,
      `Host: ${authority(target.host, target.port)}`,
    ];
    const auth = proxyAuthorization(proxy);
    if (auth !== null) lines.push(`Proxy-Authorization: ${auth}`);
    raw.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

/** The server name sent for TLS: none for an IP address (RFC 6066 forbids it). */
function sniOf(host: string): string | undefined {
  return isIP(host) === 0 ? host : undefined;
}
