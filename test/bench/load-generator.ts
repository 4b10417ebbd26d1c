/**
 * A lean HTTP/1.1 load generator for server benchmarks, in the manner of wrk: requests are
 * serialized to bytes before the timed run and written to raw keep-alive sockets, and answers
 * are parsed only as far as their status line and `content-length`. A load generator shares the
 * two cores with the server it measures, so every microsecond it spends is taken from the
 * server; undici's Pool costs about 60-95 µs per request here, this about a quarter of that.
 *
 * It reads only answers with a `content-length` (the emulator sets one on every answer) and no
 * `transfer-encoding`, and fails loudly on anything else.
 */
import { connect, type Socket } from 'node:net';

export interface LoadResult {
  readonly seconds: number;
  /** Per request, ms from its write to the end of its answer. */
  readonly latencies: number[];
  /** Per request, in the order given, the answer's status code. */
  readonly statuses: Uint16Array;
}

export interface LoadOptions {
  readonly connections: number;
  /** Requests written on a connection before its first answer arrives (1: one at a time). */
  readonly pipelining: number;
}

/** The bytes of one request, with `host`, `content-length` and the given headers. */
export function serializeRequest(
  method: string,
  target: string,
  host: string,
  headers: Readonly<Record<string, string>>,
  body: Buffer | null,
): Buffer {
  let head = `${method} ${target} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  if (body !== null) head += `content-length: ${body.length}\r\n`;
  head += '\r\n';
  return body === null ? Buffer.from(head, 'latin1') : Buffer.concat([Buffer.from(head), body]);
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;
const TRANSFER_ENCODING = /\r\ntransfer-encoding:/i;

/** Sends every request once over `connections` sockets and waits for every answer. */
export function sendAll(
  port: number,
  requests: readonly Buffer[],
  options: LoadOptions,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses = new Uint16Array(requests.length);
  let next = 0;
  let answered = 0;
  const started = performance.now();

  return new Promise<LoadResult>((resolve, reject) => {
    const sockets: Socket[] = [];
    const fail = (error: Error) => {
      for (const socket of sockets) socket.destroy();
      reject(error);
    };
    const open = () => {
      const socket = connect({ host: '127.0.0.1', port, noDelay: true });
      sockets.push(socket);
      /** Indexes and write times of the requests in flight on this socket, oldest first. */
      const inFlight: { index: number; sentAt: number }[] = [];
      let pending: Buffer = Buffer.alloc(0);
      const fill = () => {
        while (inFlight.length < options.pipelining && next < requests.length) {
          const index = next++;
          inFlight.push({ index, sentAt: performance.now() });
          socket.write(requests[index]!);
        }
        if (inFlight.length === 0) socket.end();
      };
      socket.on('connect', fill);
      socket.on('error', fail);
      socket.on('data', (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        for (;;) {
          const headerEnd = pending.indexOf(HEADER_END);
          if (headerEnd < 0) break;
          const head = pending.toString('latin1', 0, headerEnd);
          const length = CONTENT_LENGTH.exec(head);
          if (length === null || TRANSFER_ENCODING.test(head)) {
            fail(new Error(`an answer without content-length: ${head}`));
            return;
          }
          const end = headerEnd + HEADER_END.length + Number(length[1]);
          if (pending.length < end) break;
          const request = inFlight.shift();
          if (request === undefined) {
            fail(new Error('an answer to no request'));
            return;
          }
          statuses[request.index] = Number(head.slice(9, 12));
          latencies.push(performance.now() - request.sentAt);
          answered += 1;
          pending = pending.subarray(end);
        }
        if (answered === requests.length) {
          for (const socket of sockets) socket.end();
          resolve({ seconds: (performance.now() - started) / 1000, latencies, statuses });
          return;
        }
        fill();
      });
    };
    for (let index = 0; index < options.connections; index += 1) open();
  });
}
