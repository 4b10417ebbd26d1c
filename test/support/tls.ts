/**
 * TLS pieces of the tests, made at test time: a CA and a server certificate it signed for
 * 127.0.0.1 and localhost (openssl), and a CONNECT proxy that counts the tunnels it opened.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';

export interface TestCertificates {
  /** The CA's certificate (PEM file), what a client trusts. */
  readonly caFile: string;
  /** Another CA, which signed nothing here: trusting it must fail. */
  readonly otherCaFile: string;
  readonly cert: string;
  readonly key: string;
  readonly certFile: string;
  readonly keyFile: string;
}

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(directory: string, name: string): void {
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign',
    ],
    directory,
  );
}

/** A CA and a server certificate for 127.0.0.1 and localhost, in `directory`. */
export function makeCertificates(directory: string): TestCertificates {
  makeCa(directory, 'paperbot-test-ca');
  makeCa(directory, 'paperbot-other-ca');
  openssl(
    [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      '/CN=127.0.0.1',
    ],
    directory,
  );
  writeFileSync(
    join(directory, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'paperbot-test-ca.pem',
      '-CAkey',
      'paperbot-test-ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'server.ext',
    ],
    directory,
  );
  const certFile = join(directory, 'server.pem');
  const keyFile = join(directory, 'server.key');
  return {
    caFile: join(directory, 'paperbot-test-ca.pem'),
    otherCaFile: join(directory, 'paperbot-other-ca.pem'),
    cert: readFileSync(certFile, 'utf8'),
    key: readFileSync(keyFile, 'utf8'),
    certFile,
    keyFile,
  };
}

export interface CountingProxy {
  /** `http://127.0.0.1:port`, for HTTPS_PROXY. */
  readonly url: string;
  /** `host:port` of every tunnel opened, in order. */
  readonly tunnels: string[];
  close(): Promise<void>;
}

/** An HTTP proxy that only tunnels (CONNECT) and counts each tunnel. */
export async function startCountingProxy(): Promise<CountingProxy> {
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((_request, response) => {
    response.writeHead(405).end();
  });
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
    const [host, port] = (request.url ?? '').split(':');
    tunnels.push(request.url ?? '');
    const upstream = connect({ host, port: Number(port) }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.byteLength > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
