/**
 * The CONNECT tunnel of the WebSocket, bounded: a proxy that refuses says so with its status, a
 * proxy that answers an endless head is cut at the cap, and one that never answers is given up
 * on at the timeout (on a virtual clock, moved by the test).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_PROXY_ANSWER_BYTES, openTunnel } from '../../src/client/index.ts';
import { type Clock, systemClock, VirtualClock } from '../../src/core/clock.ts';

const servers: Server[] = [];
const sockets = new Set<Socket>();

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))));
});

/** A fake proxy: `onRequest` gets each connection once the CONNECT head has arrived. */
async function fakeProxy(onRequest: (socket: Socket, head: string) => void): Promise<URL> {
  const server = createServer((socket) => {
    sockets.add(socket);
    let received = '';
    const onData = (chunk: Buffer): void => {
      received += String(chunk);
      if (!received.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      onRequest(socket, received);
    };
    socket.on('data', onData);
    socket.on('error', () => socket.destroy());
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return new URL(`http://user:secret@127.0.0.1:${address.port}`);
}

function tunnel(proxy: URL, clock: Clock = systemClock, timeoutMs = 5_000): Promise<Error | null> {
  return new Promise((resolve) => {
    openTunnel(
      { host: 'svc.example', port: 443, secure: false },
      { proxy, clock, timeoutMs },
      (error, socket) => {
        socket?.destroy();
        resolve(error);
      },
    );
  });
}

describe('the CONNECT tunnel', () => {
  it('sends CONNECT with the proxy credentials and names a refusal by its status', async () => {
    let head = '';
    const proxy = await fakeProxy((socket, received) => {
      head = received;
      socket.end('HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n');
    });
    const error = await tunnel(proxy);
    expect(head).toMatch(/^CONNECT svc\.example:443 HTTP\/1\.1\r\nHost: svc\.example:443\r\n/);
    expect(head).toContain(`Proxy-Authorization: Basic ${btoa('user:secret')}`);
    expect(error?.message).toMatch(/refused the tunnel to svc\.example:443 \(HTTP 407\)/);
    expect(error?.message).not.toContain('secret');
  });

  it('cuts a proxy answer head larger than the cap', async () => {
    const proxy = await fakeProxy((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nx-pad: ${'a'.repeat(MAX_PROXY_ANSWER_BYTES + 10)}`);
    });
    expect((await tunnel(proxy))?.message).toMatch(/oversized head/);
  });

  it('gives up on a silent proxy at the timeout', async () => {
    const clock = new VirtualClock(0);
    let arrived!: () => void;
    const connected = new Promise<void>((resolve) => (arrived = resolve));
    const proxy = await fakeProxy(() => arrived());
    const result = tunnel(proxy, clock, 2_000);
    await connected;
    clock.advanceBy(2_000);
    expect((await result)?.message).toMatch(/did not open a tunnel within 2000 ms/);
  });

  it('hands over a flowing socket on 200, and refuses bytes before the request', async () => {
    const proxy = await fakeProxy((socket, head) => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      socket.once('data', (chunk) => socket.write(`echo ${String(chunk)}`));
      void head;
    });
    const socket = await new Promise<Socket>((resolve, reject) => {
      openTunnel(
        { host: 'svc.example', port: 80, secure: false },
        { proxy, clock: systemClock, timeoutMs: 5_000 },
        (error, opened) =>
          error === null && opened !== undefined ? resolve(opened) : reject(error),
      );
    });
    sockets.add(socket);
    const answer = new Promise<string>((resolve) =>
      socket.once('data', (chunk) => resolve(String(chunk))),
    );
    socket.write('GET / HTTP/1.1\r\n\r\n');
    expect(await answer).toBe('echo GET / HTTP/1.1\r\n\r\n');

    const eager = await fakeProxy((socket) => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\nearly');
    });
    expect((await tunnel(eager))?.message).toMatch(
      /sent data after its answer, before the request/,
    );
  });
});
