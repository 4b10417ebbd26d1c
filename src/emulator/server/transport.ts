/**
 * The emulator's HTTP server: node:http with the transport bounds of the config's `limits`, and
 * an error envelope with SVC-REQUEST-ID for every answer node:http would otherwise give on its
 * own (an empty 417, a bare 400 or 408, a silently dropped CONNECT or extra connection):
 *
 * - more than `max_connections` TCP connections: 503 EXECUTION_UNAVAILABLE, then closed;
 * - request line and headers over `max_header_bytes`: 431 HEADERS_TOO_LARGE;
 * - headers or the whole request slower than their timeouts: 408 REQUEST_TIMEOUT, then closed;
 * - an `Expect` other than `100-continue`: 417 EXPECTATION_FAILED;
 * - CONNECT (this is not a proxy): 400 BAD_REQUEST, then closed;
 * - an HTTP version other than 1.0 and 1.1: 505 HTTP_VERSION_NOT_SUPPORTED, then closed;
 * - anything node cannot parse: 400 BAD_REQUEST, then closed.
 *
 * With `tls` (a certificate and its key) the same server speaks HTTPS and WSS on its one port;
 * a TLS handshake is bounded by the headers timeout, and a connection over the cap is closed
 * without an answer (none can be written before the handshake).
 *
 * Routing and endpoints stay in the dispatcher (http.ts); upgrades go to the gateway (ws.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { EmulatorConfig } from '../config.ts';
import { envelopeOf, ServerError } from '../service/errors.ts';
import { HEADER_REQUEST_ID } from './http.ts';
import { writeRawAnswer } from './raw-answer.ts';

export type TransportLimits = Omit<EmulatorConfig['limits'], 'websocket'>;

export interface TransportOptions {
  readonly limits: TransportLimits;
  readonly nextRequestId: () => string;
  /** The dispatcher: called for every request that passed the transport checks. */
  readonly handle: (request: IncomingMessage, response: ServerResponse) => void;
  /** Serve HTTPS and WSS with this certificate (PEM, the chain after it) and private key. */
  readonly tls?: EmulatorTls;
}

export interface EmulatorTls {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

export interface Transport {
  readonly server: Server;
  /** Every open TCP connection (HTTP and upgraded), to cut them all on close. */
  readonly sockets: ReadonlySet<Socket>;
}

/** How often node checks the two timeouts: a quarter of the shorter, within 10 ms to 1 s. */
function checkingIntervalOf(limits: TransportLimits): number {
  const shorter = Math.min(limits.headers_timeout_ms, limits.request_timeout_ms);
  return Math.min(1000, Math.max(10, Math.floor(shorter / 4)));
}

/** Null for HTTP/1.0 and HTTP/1.1, the only versions this server speaks. */
export function checkHttpVersion(request: IncomingMessage): ServerError | null {
  if (request.httpVersionMajor === 1 && request.httpVersionMinor <= 1) return null;
  return new ServerError(
    'HTTP_VERSION_NOT_SUPPORTED',
    `HTTP/${request.httpVersion} is not supported; use HTTP/1.1`,
    { details: { supported: ['HTTP/1.0', 'HTTP/1.1'] } },
  );
}

/** The envelope for a request node:http refused before it reached a handler. */
function clientErrorOf(error: NodeJS.ErrnoException): ServerError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ServerError('REQUEST_TIMEOUT', 'the request was not received in time');
    case 'HPE_HEADER_OVERFLOW':
      return new ServerError('HEADERS_TOO_LARGE', 'the request line and headers are too large');
    default:
      return new ServerError('BAD_REQUEST', 'the request is not valid HTTP');
  }
}

function answer(response: ServerResponse, requestId: string, error: ServerError): void {
  const body = JSON.stringify(envelopeOf(error, requestId));
  response.writeHead(error.httpStatus, {
    [HEADER_REQUEST_ID]: requestId,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
    ...error.headers,
  });
  response.end(body);
}

export function createTransport(options: TransportOptions): Transport {
  const { limits, nextRequestId } = options;
  const sockets = new Set<Socket>();
  // The last response of each socket: a timeout while one is half written cannot be answered
  // on the same connection any more, only cut.
  const responses = new WeakMap<Socket, ServerResponse>();
  // Connections refused over the cap: node may still parse a request already sent on one.
  const refused = new WeakSet<Socket>();

  const serverOptions = {
    headersTimeout: limits.headers_timeout_ms,
    requestTimeout: limits.request_timeout_ms,
    connectionsCheckingInterval: checkingIntervalOf(limits),
    maxHeaderSize: limits.max_header_bytes,
  };
  const tls = options.tls;
  const onRequest = (request: IncomingMessage, response: ServerResponse): void => {
    const socket = request.socket;
    if (refused.has(socket)) {
      request.resume();
      return;
    }
    responses.set(socket, response);
    const refusal = checkHttpVersion(request);
    if (refusal !== null) {
      request.resume();
      answer(response, nextRequestId(), refusal);
      return;
    }
    options.handle(request, response);
  };
  // An https server is an http server with TLS underneath: the same events and methods.
  const server: Server =
    tls === undefined
      ? createServer(serverOptions, onRequest)
      : (createHttpsServer(
          {
            ...serverOptions,
            cert: tls.cert,
            key: tls.key,
            handshakeTimeout: limits.headers_timeout_ms,
          },
          onRequest,
        ) as unknown as Server);

  server.on('connection', (socket: Socket) => {
    if (sockets.size >= limits.max_connections) {
      // No request on it reaches an endpoint, whatever node has parsed already.
      refused.add(socket);
      if (tls !== undefined) {
        socket.destroy();
        return;
      }
      socket.pause();
      socket.on('error', () => socket.destroy());
      writeRawAnswer(
        socket,
        nextRequestId(),
        new ServerError('EXECUTION_UNAVAILABLE', 'too many connections; retry shortly', {
          details: { reason: 'too_many_connections', limit: limits.max_connections },
          headers: { 'retry-after': '1' },
        }),
      );
      return;
    }
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const response = responses.get(socket as Socket);
    const halfWritten = response !== undefined && response.headersSent && !response.writableEnded;
    if (error.code === 'ECONNRESET' || halfWritten) {
      socket.destroy();
      return;
    }
    writeRawAnswer(socket, nextRequestId(), clientErrorOf(error));
  });

  // Without this listener node answers an empty 417.
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    answer(
      response,
      nextRequestId(),
      new ServerError('EXPECTATION_FAILED', 'only Expect: 100-continue is supported'),
    );
  });

  // Without this listener node drops the connection without a word.
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    writeRawAnswer(
      socket,
      nextRequestId(),
      checkHttpVersion(request) ??
        new ServerError('BAD_REQUEST', 'CONNECT is not supported: the emulator is not a proxy'),
    );
  });

  return { server, sockets };
}
