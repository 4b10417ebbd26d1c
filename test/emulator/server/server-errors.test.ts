/**
 * The only 5xx answers the emulator sends on its own, over raw loopback sockets, each with the
 * error envelope and SVC-REQUEST-ID: 505 for a request line that is not HTTP/1.0 or HTTP/1.1
 * (`HTTP/2.0`, `HTTP/0.9`, a bare HTTP/0.9 line without a version), not retryable; and 503
 * `EXECUTION_UNAVAILABLE` for a connection over `limits.max_connections`, retryable, with
 * `Retry-After`. Neither serves the request.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/clock.ts';
import { DEFAULT_EMULATOR_CONFIG_INPUT } from '../../../src/emulator/config.ts';
import type { RunningEmulator } from '../../../src/emulator/index.ts';
import { expectError, type Reply, startTestEmulator } from './helpers.ts';

let emulator: RunningEmulator | null = null;
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await emulator?.close();
  emulator = null;
});

/** Sends `text`, reads until the server closes or a full answer arrived; bounded at 5 s. */
function exchange(
  port: number,
  text: string,
  keepOpen = false,
): Promise<{ reply: Reply; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write(text));
    sockets.add(socket);
    let bytes = Buffer.alloc(0);
    let closed = false;
    const parse = (): Reply | null => {
      const all = bytes.toString('latin1');
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return null;
      const [statusLine = '', ...lines] = all.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? '0');
      const body = bytes.subarray(end + 4, end + 4 + length);
      if (body.length < length) return null;
      const bodyText = body.toString('utf8');
      return {
        status: Number(statusLine.split(' ')[1]),
        headers,
        text: bodyText,
        json: bodyText === '' ? undefined : (JSON.parse(bodyText) as unknown),
      };
    };
    const timer = systemClock.setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer within 5 s'));
    }, 5_000);
    const finish = () => {
      const reply = parse();
      if (reply === null) return;
      if (!closed && !keepOpen) return;
      systemClock.clearTimeout(timer);
      resolve({ reply, closed });
    };
    socket.on('data', (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      finish();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      finish();
    });
  });
}

describe('the 5xx answers of the emulator', () => {
  it('answers HTTP/2.0 and HTTP/0.9 request lines with the 505 envelope and closes', async () => {
    emulator = await startTestEmulator({ config: { ...DEFAULT_EMULATOR_CONFIG_INPUT } });
    for (const line of [
      'GET /v1/markets HTTP/2.0\r\nHost: x\r\n\r\n',
      'GET /v1/markets HTTP/0.9\r\nHost: x\r\n\r\n',
      'GET /v1/markets HTTP/0.9\r\n\r\n',
      'GET /v1/markets\r\n\r\n',
    ]) {
      const { reply, closed } = await exchange(emulator.port, line);
      const error = expectError(reply, 505, 'HTTP_VERSION_NOT_SUPPORTED');
      expect(error.retryable).toBe(false);
      expect(error.details).toEqual({ supported: ['HTTP/1.0', 'HTTP/1.1'] });
      expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(closed).toBe(true);
    }
    expect(emulator.stats().internalErrors).toBe(0);
  });

  it('sheds a connection over the cap with a retryable 503 envelope', async () => {
    emulator = await startTestEmulator({
      config: { ...DEFAULT_EMULATOR_CONFIG_INPUT, limits: { max_connections: 1 } },
    });
    const held = await exchange(emulator.port, 'GET /v1/markets HTTP/1.1\r\nHost: x\r\n\r\n', true);
    expect(held.reply.status).toBe(200);
    const { reply, closed } = await exchange(
      emulator.port,
      'GET /v1/markets HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    const error = expectError(reply, 503, 'EXECUTION_UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(error.details).toEqual({ reason: 'too_many_connections', limit: 1 });
    expect(reply.headers['retry-after']).toBe('1');
    expect(closed).toBe(true);
  });
});
