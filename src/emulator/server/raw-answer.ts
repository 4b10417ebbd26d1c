/**
 * An error envelope written straight to a socket, for the answers given where node:http has no
 * response object: refused upgrades, unparseable requests, CONNECT, timeouts and connections
 * over the cap. The connection is closed after it, as the `connection: close` header says.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { envelopeOf, type ServerError } from '../service/errors.ts';
import { HEADER_REQUEST_ID } from './http.ts';

export function writeRawAnswer(socket: Duplex, requestId: string, error: ServerError): void {
  if (socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(envelopeOf(error, requestId));
  const headers: Record<string, string> = {
    [HEADER_REQUEST_ID]: requestId,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
    ...error.headers,
  };
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${error.httpStatus} ${STATUS_CODES[error.httpStatus] ?? ''}\r\n${Object.entries(
      headers,
    )
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n')}\r\n\r\n${body}`,
  );
}
