/** A webhook receiver on loopback that keeps every body, and can be told to fail. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../src/core/clock.ts';

export interface Receiver {
  readonly url: string;
  readonly bodies: unknown[];
  /** The HTTP status answered; 200 by default, 0 for no answer at all. */
  status: number;
  /** Every request, failed or not. */
  requests: number;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hook'): Promise<Receiver> {
  const state = { bodies: [] as unknown[], status: 200, requests: 0 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      receiver.requests += 1;
      if (receiver.status === 0) return;
      if (receiver.status === 200) {
        receiver.bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      }
      response.writeHead(receiver.status, { 'content-type': 'text/plain' });
      response.end('ok');
    });
  });
  const address = await new Promise<AddressInfo>((resolve) =>
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve(server.address() as AddressInfo)),
  );
  const receiver: Receiver = {
    url: `http://127.0.0.1:${address.port}${path}`,
    ...state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    systemClock.setTimeout(resolve, ms);
  });
}

/** Waits (real time, bounded) until `test` holds. */
export async function until(what: string, test: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = systemClock.now() + timeoutMs;
  while (!test()) {
    if (systemClock.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(5);
  }
}
