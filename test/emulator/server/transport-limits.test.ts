/**
 * The transport bounds of the emulator, over raw loopback sockets: every answer node:http used
 * to give on its own (an empty 417, a dropped CONNECT, an HTTP/2.0 request line served) is the
 * error envelope with SVC-REQUEST-ID; slow requests are cut at the request timeout; connections
 * over the cap are refused; a WebSocket client that sends without reading is closed with 1008
 * once the server holds its budget of unsent bytes, and never more.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/clock.ts';
import type { RunningEmulator } from '../../../src/emulator/index.ts';
import type { Logger } from '../../../src/core/logger.ts';
import {
  SLOW_CONSUMER_CLOSE_CODE,
  SLOW_CONSUMER_CLOSE_REASON,
} from '../../../src/emulator/server/ws-backpressure.ts';
import { DEFAULT_EMULATOR_CONFIG_INPUT } from '../../../src/emulator/config.ts';
import { expectError, type Reply, startTestEmulator } from './helpers.ts';

let emulator: RunningEmulator | null = null;
const openSockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of openSockets) socket.destroy();
  openSockets.clear();
  await emulator?.close();
  emulator = null;
});

async function start(
  limits: Record<string, unknown> = {},
  logger?: Logger,
): Promise<RunningEmulator> {
  emulator = await startTestEmulator({
    config: { ...DEFAULT_EMULATOR_CONFIG_INPUT, limits },
    ...(logger === undefined ? {} : { logger }),
  });
  return emulator;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => {
    systemClock.setTimeout(resolve, ms);
  });
}

/** A raw TCP connection that keeps every byte it receives. */
class RawConnection {
  readonly socket: Socket;
  readonly chunks: Buffer[] = [];
  closed = false;
  readonly #waiters = new Set<() => void>();

  private constructor(socket: Socket) {
    this.socket = socket;
    openSockets.add(socket);
    socket.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.#wake();
    });
    // A reset after the answer is fine: the answer was read first.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
      this.#wake();
    });
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  /** True when the bytes received so far end with `tail` (looking back over as few chunks as it needs). */
  endsWith(tail: Buffer): boolean {
    const last: Buffer[] = [];
    let length = 0;
    for (let index = this.chunks.length - 1; index >= 0 && length < tail.length; index--) {
      const chunk = this.chunks[index] as Buffer;
      last.unshift(chunk);
      length += chunk.length;
    }
    return length >= tail.length && Buffer.concat(last).subarray(-tail.length).equals(tail);
  }

  /** Waits until `done` holds, failing after `limitMs` (a bound, far above the expected time). */
  async until(done: () => boolean, what: string, limitMs = 5_000): Promise<void> {
    const deadline = systemClock.now() + limitMs;
    while (!done()) {
      if (systemClock.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiters.delete(wake);
          resolve();
        };
        this.#waiters.add(wake);
        systemClock.setTimeout(wake, 50);
      });
    }
  }

  /** The first complete HTTP answer received (by content-length). */
  answer(): Reply | null {
    const text = this.bytes.toString('latin1');
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? '0');
    const body = this.bytes.subarray(end + 4, end + 4 + length);
    if (body.length < length) return null;
    const bodyText = body.toString('utf8');
    return {
      status: Number(statusLine.split(' ')[1]),
      headers,
      text: bodyText,
      json: bodyText === '' ? undefined : (JSON.parse(bodyText) as unknown),
    };
  }

  async readAnswer(): Promise<Reply> {
    await this.until(() => this.answer() !== null, 'an HTTP answer');
    return this.answer() as Reply;
  }
}

async function exchange(port: number, request: string): Promise<RawConnection> {
  const connection = await RawConnection.open(port);
  connection.socket.write(request);
  return connection;
}

describe('HTTP answers node:http used to give on its own', () => {
  it('answers an unknown Expect with the 417 envelope', async () => {
    const { port } = await start();
    const connection = await exchange(
      port,
      'POST /v1/orders HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nContent-Length: 2\r\n\r\n{}',
    );
    const reply = await connection.readAnswer();
    expectError(reply, 417, 'EXPECTATION_FAILED');
  });

  it('still answers Expect: 100-continue with 100, then the request', async () => {
    const { port } = await start();
    const connection = await exchange(
      port,
      'POST /v1/orders HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n',
    );
    await connection.until(
      () => connection.bytes.toString('latin1').startsWith('HTTP/1.1 100 Continue\r\n\r\n'),
      'the 100 Continue',
    );
    connection.chunks.splice(0);
    connection.socket.write('{}');
    // Unsigned: the endpoint's own answer, so the request went through.
    expectError(await connection.readAnswer(), 401, 'INVALID_SIGNATURE');
  });

  it('answers CONNECT with the envelope and closes the connection', async () => {
    const { port } = await start();
    const connection = await exchange(port, 'CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: x\r\n\r\n');
    const reply = await connection.readAnswer();
    const error = expectError(reply, 400, 'BAD_REQUEST');
    expect(error.message).toContain('CONNECT');
    await connection.until(() => connection.closed, 'the connection to close');
  });

  it('answers an HTTP/2.0 request line with the 505 envelope, without serving it', async () => {
    const { port } = await start();
    const connection = await exchange(port, 'GET /v1/markets HTTP/2.0\r\nHost: x\r\n\r\n');
    const reply = await connection.readAnswer();
    expectError(reply, 505, 'HTTP_VERSION_NOT_SUPPORTED');
    await connection.until(() => connection.closed, 'the connection to close');
  });

  it('refuses a WebSocket upgrade on HTTP/2.0 with the 505 envelope', async () => {
    const { port } = await start();
    const connection = await exchange(
      port,
      'GET /v1/ws HTTP/2.0\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    expectError(await connection.readAnswer(), 505, 'HTTP_VERSION_NOT_SUPPORTED');
  });

  it('answers headers over the limit with the 431 envelope', async () => {
    const { port } = await start({ max_header_bytes: 2048 });
    const connection = await exchange(
      port,
      `GET /v1/markets HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(4096)}\r\n\r\n`,
    );
    expectError(await connection.readAnswer(), 431, 'HEADERS_TOO_LARGE');
  });

  it('still serves HTTP/1.0 and HTTP/1.1', async () => {
    const { port } = await start();
    for (const version of ['1.0', '1.1']) {
      const connection = await exchange(
        port,
        `GET /v1/markets HTTP/${version}\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      const reply = await connection.readAnswer();
      expect(reply.status).toBe(200);
      expect(reply.headers['svc-request-id']).toMatch(/^req_/);
    }
  });
});

describe('request timeouts', () => {
  it('cuts a body that trickles in past the request timeout, with the 408 envelope', async () => {
    const { port } = await start({ headers_timeout_ms: 100, request_timeout_ms: 200 });
    const connection = await exchange(
      port,
      'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
    );
    // One more byte now and then, never the whole body.
    let sent = 0;
    while (!connection.closed && sent < 100) {
      connection.socket.write(' ');
      sent += 1;
      await pause(20);
    }
    await connection.until(() => connection.closed, 'the connection to be cut');
    expectError(connection.answer() as Reply, 408, 'REQUEST_TIMEOUT');
    // Cut long before the 100 bytes (2 s) were trickled in.
    expect(sent).toBeLessThan(100);
  });

  it('cuts a request whose headers never end, with the 408 envelope', async () => {
    const { port } = await start({ headers_timeout_ms: 100, request_timeout_ms: 200 });
    const connection = await exchange(port, 'GET /v1/markets HTTP/1.1\r\nHost: x\r\n');
    await connection.until(() => connection.closed, 'the connection to be cut');
    expectError(connection.answer() as Reply, 408, 'REQUEST_TIMEOUT');
  });
});

describe('connection caps', () => {
  it('refuses TCP connections over the cap with the 503 envelope and takes new ones later', async () => {
    const { port } = await start({ max_connections: 2 });
    const kept: RawConnection[] = [];
    for (let index = 0; index < 2; index += 1) {
      const connection = await exchange(port, 'GET /v1/markets HTTP/1.1\r\nHost: x\r\n\r\n');
      expect((await connection.readAnswer()).status).toBe(200);
      kept.push(connection);
    }
    const refused = await exchange(port, 'GET /v1/markets HTTP/1.1\r\nHost: x\r\n\r\n');
    const error = expectError(await refused.readAnswer(), 503, 'EXECUTION_UNAVAILABLE');
    expect(error.details).toEqual({ reason: 'too_many_connections', limit: 2 });
    expect(error.retryable).toBe(true);
    await refused.until(() => refused.closed, 'the refused connection to close');

    kept[0]?.socket.destroy();
    await kept[0]?.until(() => kept[0]?.closed === true, 'the first connection to close');
    // The server sees the close a moment later; a bounded number of tries.
    let served = false;
    for (let attempt = 0; attempt < 50 && !served; attempt += 1) {
      const next = await exchange(port, 'GET /v1/markets HTTP/1.1\r\nHost: x\r\n\r\n');
      served = (await next.readAnswer()).status === 200;
      next.socket.destroy();
      if (!served) await pause(20);
    }
    expect(served).toBe(true);
  });

  it('refuses WebSocket upgrades over the cap with the 503 envelope', async () => {
    const { port } = await start({ websocket: { max_connections: 1 } });
    const first = await WebSocketConnection.open(port);
    expect(first.handshake.status).toBe(101);
    const second = await exchange(port, upgradeRequest());
    const error = expectError(await second.readAnswer(), 503, 'EXECUTION_UNAVAILABLE');
    expect(error.details).toEqual({ reason: 'too_many_websocket_connections', limit: 1 });
  });
});

function upgradeRequest(): string {
  return 'GET /v1/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';
}

/** A client frame, masked with a zero mask (allowed; the payload then goes as is). */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  if (payload.length > 125) throw new Error('short frames only');
  return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | payload.length, 0, 0, 0, 0]), payload]);
}

interface ServerFrame {
  readonly opcode: number;
  readonly payload: Buffer;
}

/** Server frames (unmasked) in `bytes`, as far as they are complete. */
function serverFrames(bytes: Buffer): ServerFrame[] {
  const frames: ServerFrame[] = [];
  let at = 0;
  while (at + 2 <= bytes.length) {
    const opcode = (bytes[at] ?? 0) & 0x0f;
    let length = (bytes[at + 1] ?? 0) & 0x7f;
    let start = at + 2;
    if (length === 126) {
      if (start + 2 > bytes.length) break;
      length = bytes.readUInt16BE(start);
      start += 2;
    } else if (length === 127) {
      if (start + 8 > bytes.length) break;
      length = Number(bytes.readBigUInt64BE(start));
      start += 8;
    }
    if (start + length > bytes.length) break;
    frames.push({ opcode, payload: bytes.subarray(start, start + length) });
    at = start + length;
  }
  return frames;
}

/** A WebSocket client on a raw socket, so the test decides when (and whether) it reads. */
class WebSocketConnection {
  readonly raw: RawConnection;
  readonly handshake: Reply;

  private constructor(raw: RawConnection, handshake: Reply) {
    this.raw = raw;
    this.handshake = handshake;
  }

  static async open(port: number): Promise<WebSocketConnection> {
    const raw = await exchange(port, upgradeRequest());
    await raw.until(() => raw.bytes.includes('\r\n\r\n'), 'the handshake');
    const text = raw.bytes.toString('latin1');
    const status = Number(text.split(' ')[1]);
    return new WebSocketConnection(raw, { status, headers: {}, text: '', json: undefined });
  }

  frames(): ServerFrame[] {
    const bytes = this.raw.bytes;
    return serverFrames(bytes.subarray(bytes.indexOf('\r\n\r\n') + 4));
  }
}

describe('WebSocket send backpressure', () => {
  const maxBufferedBytes = 64 * 1024;

  function capturingLogger(): Logger & { warnings: Record<string, unknown>[] } {
    const warnings: Record<string, unknown>[] = [];
    return {
      warnings,
      info: () => undefined,
      error: () => undefined,
      debug: () => undefined,
      warn: (_message, fields) => warnings.push({ ...fields }),
    };
  }

  async function flood(
    running: RunningEmulator,
    connection: WebSocketConnection,
    frame: Buffer,
  ): Promise<number> {
    // The client stops reading: every answer now waits in the kernel, then in the server.
    connection.raw.socket.pause();
    const batch = Buffer.concat(Array.from({ length: 512 }, () => frame));
    let sent = 0;
    const limit = 64 * 1024 * 1024;
    while (running.stats().webSocketSlowConsumerCloses === 0 && sent < limit) {
      if (!connection.raw.socket.write(batch)) {
        await new Promise<void>((resolve) => {
          connection.raw.socket.once('drain', resolve);
          connection.raw.socket.once('close', resolve);
        });
      }
      sent += batch.length;
      if (connection.raw.closed) break;
    }
    return sent;
  }

  async function expectClosedWith1008(connection: WebSocketConnection): Promise<void> {
    connection.raw.socket.resume();
    // The whole close frame at the end of what arrived; the frames are parsed once, when it is
    // there (parsing megabytes of pongs on every chunk is slow). Its reason alone is not
    // enough: TCP may deliver the frame in two reads, and a frame cut short does not parse.
    const payload = Buffer.concat([
      Buffer.from([SLOW_CONSUMER_CLOSE_CODE >> 8, SLOW_CONSUMER_CLOSE_CODE & 0xff]),
      Buffer.from(SLOW_CONSUMER_CLOSE_REASON),
    ]);
    const closeFrame = Buffer.concat([Buffer.from([0x88, payload.length]), payload]);
    await connection.raw.until(
      () => connection.raw.endsWith(closeFrame) || connection.raw.closed,
      'the close frame',
      20_000,
    );
    const close = connection.frames().find((frame) => frame.opcode === 0x8);
    expect(close?.payload.readUInt16BE(0)).toBe(SLOW_CONSUMER_CLOSE_CODE);
    expect(close?.payload.subarray(2).toString('utf8')).toContain('send buffer full');
  }

  it('closes a client that floods pings without reading, with 1008, holding at most its budget', async () => {
    const logger = capturingLogger();
    const running = await start({ websocket: { max_buffered_bytes: maxBufferedBytes } }, logger);
    const connection = await WebSocketConnection.open(running.port);
    expect(connection.handshake.status).toBe(101);
    await connection.raw.until(() => connection.frames().length >= 1, 'the challenge');
    // The longest request id, so each pong is as large as a pong gets.
    const ping = clientFrame(
      0x1,
      Buffer.from(JSON.stringify({ op: 'ping', request_id: `ping_${'f'.repeat(75)}` })),
    );
    const sent = await flood(running, connection, ping);

    expect(running.stats().webSocketSlowConsumerCloses).toBe(1);
    expect(running.stats().webSocketConnections).toBe(0);
    const warning = logger.warnings.find((fields) => 'buffered_bytes' in fields);
    expect(warning?.buffered_bytes as number).toBeLessThanOrEqual(maxBufferedBytes);
    await expectClosedWith1008(connection);
    // The close frame is the last one: nothing was answered after it.
    const frames = connection.frames();
    expect(frames.at(-1)?.opcode).toBe(0x8);
    expect(sent).toBeGreaterThan(maxBufferedBytes);
  }, 30_000);

  it('cuts a client that floods protocol pings without reading (ws: 60 pending pongs)', async () => {
    const running = await start({ websocket: { max_buffered_bytes: maxBufferedBytes } });
    const connection = await WebSocketConnection.open(running.port);
    await connection.raw.until(() => connection.frames().length >= 1, 'the challenge');
    expect(running.stats().webSocketConnections).toBe(1);
    const ping = clientFrame(0x9, Buffer.alloc(125, 0x61));
    const sent = await flood(running, connection, ping);
    await connection.raw.until(() => connection.raw.closed, 'the connection to be cut');
    expect(running.stats().webSocketConnections).toBe(0);
    // Cut well before the 64 MiB the flood would have sent.
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('closes a client whose frame is over the limit with 1009', async () => {
    const running = await start({ websocket: { max_frame_bytes: 1024 } });
    const connection = await WebSocketConnection.open(running.port);
    await connection.raw.until(() => connection.frames().length >= 1, 'the challenge');
    const payload = Buffer.alloc(2000, 0x20);
    const header = Buffer.from([0x81, 0x80 | 126, 0, 0, 0, 0, 0, 0]);
    header.writeUInt16BE(payload.length, 2);
    connection.raw.socket.write(Buffer.concat([header, payload]));
    await connection.raw.until(
      () => connection.frames().some((frame) => frame.opcode === 0x8),
      'the close frame',
    );
    const close = connection.frames().find((frame) => frame.opcode === 0x8) as ServerFrame;
    expect(close.payload.readUInt16BE(0)).toBe(1009);
  });
});
