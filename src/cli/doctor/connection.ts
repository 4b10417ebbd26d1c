/**
 * The first two checks below HTTP: does something answer at the service's host and port
 * (directly or through the proxy the environment names), and does its TLS certificate verify
 * (trusted CA, this host name, in its validity period). One connection, closed at once,
 * bounded by a timeout on the clock.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type PeerCertificate, type TLSSocket } from 'node:tls';
import {
  openTunnel,
  proxyFor,
  proxySettingsOf,
  type TransportOptions,
} from '../../client/index.ts';
import type { Clock } from '../../core/clock.ts';

export interface CertificateFacts {
  readonly subject: string;
  readonly issuer: string;
  readonly validTo: string;
  readonly altNames: string;
}

export type ConnectionProbe =
  | {
      readonly ok: true;
      /** `direct`, or the proxy's host:port. */
      readonly via: string;
      readonly certificate: CertificateFacts | null;
    }
  | {
      readonly ok: false;
      readonly stage: 'connect' | 'tls';
      readonly via: string;
      /** The system's or TLS library's code, when there is one. */
      readonly code: string | null;
      readonly message: string;
    };

function factsOf(certificate: PeerCertificate): CertificateFacts {
  const name = (entry: PeerCertificate['subject'] | undefined): string =>
    entry === undefined ? '' : [entry.CN ?? Object.values(entry)].flat().join(' ');
  return {
    subject: name(certificate.subject),
    issuer: name(certificate.issuer),
    validTo: certificate.valid_to,
    altNames: certificate.subjectaltname ?? '',
  };
}

function codeOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

/** Connects to `url` (http, https, ws or wss) the way the client would, and closes. */
export function probeConnection(
  url: URL,
  transport: TransportOptions,
  clock: Clock,
  timeoutMs: number,
): Promise<ConnectionProbe> {
  const secure = url.protocol === 'https:' || url.protocol === 'wss:';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || (secure ? 443 : 80);
  const proxy = proxyFor(url, proxySettingsOf(transport.env ?? process.env));
  const via = proxy === null ? 'direct' : `proxy ${proxy.host}`;
  const ca = transport.ca === undefined ? {} : { ca: [...transport.ca] };
  return new Promise((resolve) => {
    let socket: Socket | null = null;
    let settled = false;
    const settle = (probe: ConnectionProbe): void => {
      if (settled) return;
      settled = true;
      clock.clearTimeout(timer);
      socket?.destroy();
      resolve(probe);
    };
    const timer = clock.setTimeout(
      () =>
        settle({
          ok: false,
          stage: 'connect',
          via,
          code: 'CONNECT_TIMEOUT',
          message: `no connection within ${timeoutMs} ms`,
        }),
      timeoutMs,
    );
    const failed = (stage: 'connect' | 'tls') => (error: Error) =>
      settle({ ok: false, stage, via, code: codeOf(error), message: error.message });
    const secured = (tlsSocket: TLSSocket): void => {
      socket = tlsSocket;
      settle({ ok: true, via, certificate: factsOf(tlsSocket.getPeerCertificate()) });
    };
    const startTls = (raw: Socket): void => {
      const tlsSocket = tlsConnect({
        socket: raw,
        ...(isIP(host) === 0 ? { servername: host } : {}),
        ...ca,
      });
      socket = tlsSocket;
      tlsSocket.once('secureConnect', () => secured(tlsSocket));
      tlsSocket.once('error', failed('tls'));
    };
    if (proxy !== null) {
      // The tunnel is opened in the clear here, so a TLS failure is told from a proxy failure.
      openTunnel(
        { host, port, secure: false },
        { proxy, clock, timeoutMs, ...(transport.ca === undefined ? {} : { ca: transport.ca }) },
        (error, tunnel) => {
          if (error !== null || tunnel === undefined) {
            failed('connect')(error ?? new Error('the proxy gave no connection'));
            return;
          }
          socket = tunnel;
          if (secure) startTls(tunnel);
          else settle({ ok: true, via, certificate: null });
        },
      );
      return;
    }
    const raw = netConnect({ host, port });
    socket = raw;
    raw.once('error', failed('connect'));
    raw.once('connect', () => {
      if (secure) startTls(raw);
      else settle({ ok: true, via, certificate: null });
    });
  });
}
