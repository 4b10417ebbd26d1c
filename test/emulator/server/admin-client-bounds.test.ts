/** The admin client (`paperbot keys create/revoke`) bounds each exchange in time and size. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type TimerHandle } from '../../../src/core/clock.ts';
import { AdminClient } from '../../../src/emulator/index.ts';

let server: Server | null = null;
let timer: TimerHandle | undefined;
afterEach(async () => {
  systemClock.clearTimeout(timer);
  if (server !== null) {
    server.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = null;
  }
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function failureOf(work: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await work;
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('expected a failure');
}

describe('AdminClient bounds', () => {
  it('gives up on an answer that trickles in, at the total timeout', async () => {
    const baseUrl = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const drip = () => {
        if (response.destroyed) return;
        response.write(' ');
        timer = systemClock.setTimeout(drip, 10);
      };
      drip();
    });
    const client = new AdminClient({ baseUrl, token: 'x'.repeat(32), timeoutMs: 200 });
    const error = await failureOf(client.clearFaults());
    expect(error.code).toBe('EMULATOR_UNREACHABLE');
    expect(error.message).toContain('did not answer within 200 ms');
  });

  it('refuses an answer over 1 MiB', async () => {
    const baseUrl = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(Buffer.alloc(2 * 1024 * 1024, 0x20));
    });
    const client = new AdminClient({ baseUrl, token: 'x'.repeat(32), timeoutMs: 5_000 });
    const error = await failureOf(client.clearFaults());
    expect(error.code).toBe('EMULATOR_BAD_RESPONSE');
    expect(error.message).toContain('larger than 1048576 bytes');
  });
});
