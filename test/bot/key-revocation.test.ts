/**
 * A revoked key is seen: the real bot (a child process) trades through a counting proxy to the
 * emulator; the test revokes its key through the emulator's admin API. The bot halts at once
 * and says why on `/status`, in `paperbot status`, on the dashboard's snapshot and to its
 * webhook; afterwards it sends nothing more signed to the venue, its shutdown included: a
 * dead key is not retried.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/emulator/index.ts';
import { writeKeyFile } from '../../src/signing/index.ts';
import { startReceiver, type Receiver } from '../notifications/receiver.ts';
import {
  type BotChild,
  delay,
  FIXTURE_STRATEGIES,
  type PacedEmulator,
  REPOSITORY_ROOT,
  spawnBot,
  startPacedEmulator,
  writeBotConfig,
} from './helpers.ts';

/** A TCP proxy to the emulator's HTTP port that counts the signed requests passing through. */
interface CountingProxy {
  readonly port: number;
  signedRequests(): number;
  /** The request lines of the signed requests, in order. */
  signedLines(): string[];
  close(): Promise<void>;
}

async function startCountingProxy(targetPort: number): Promise<CountingProxy> {
  const streams: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const index = streams.push('') - 1;
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', (chunk: Buffer) => {
      streams[index] += chunk.toString('latin1');
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  const port = await new Promise<number>((resolve) => {
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
  return {
    port,
    signedRequests: () =>
      streams.reduce((sum, text) => sum + (text.match(/\r\nsvc-signature:/gi)?.length ?? 0), 0),
    signedLines: () =>
      streams.flatMap((text) =>
        text
          .split(/\r\n\r\n/)
          .filter((head) => /\r\nsvc-signature:/i.test(head))
          .map((head) =>
            head.slice(head.search(/(GET|POST|PUT|DELETE) \//), head.indexOf(' HTTP/')),
          ),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let paced: PacedEmulator;
let proxy: CountingProxy;
let receiver: Receiver;
const directory = mkdtempSync(join(tmpdir(), 'paperbot-revoked-'));

beforeAll(async () => {
  paced = await startPacedEmulator();
  proxy = await startCountingProxy(paced.emulator.port);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await proxy.close();
  await paced.close();
  rmSync(directory, { recursive: true, force: true });
});

async function getJson(url: string): Promise<Record<string, unknown>> {
  const response = await request(url);
  return (await response.body.json()) as Record<string, unknown>;
}

describe('a key revoked while the bot runs', () => {
  it(
    'halts trading at once, says why everywhere, and stops calling the venue',
    {
      timeout: 90_000,
    },
    async () => {
      // The key file points the REST client at the proxy; the stream goes straight to the emulator.
      const credential = paced.emulator.createKey();
      const keyPath = join(directory, 'bot.key.json');
      await writeKeyFile(keyPath, credential, { overwrite: true });
      const file = JSON.parse(readFileSync(keyPath, 'utf8')) as Record<string, unknown>;
      file.api_base_url = `http://127.0.0.1:${proxy.port}`;
      writeFileSync(keyPath, `${JSON.stringify(file, null, 2)}\n`);
      chmodSync(keyPath, 0o600);

      const configPath = writeBotConfig(directory, {
        venue: { key_file: keyPath },
        strategies_dir: FIXTURE_STRATEGIES,
        strategies: [
          {
            id: 'steady',
            name: 'steady-submitter',
            params: { marketId: 'BTC-PERP', intervalMs: 200, maxOpen: 2 },
          },
        ],
        risk: { kill_switch: { file: null, signal: null } },
        journal: { path: join(directory, 'journal.sqlite'), durability: 'normal' },
        metrics: { host: '127.0.0.1', port: 0 },
        market_data: { markets: ['BTC-PERP'] },
        notifications: {
          webhooks: [{ url: receiver.url, events: ['venue_key'] }],
          batch_ms: 100,
        },
      });
      const child: BotChild = spawnBot(configPath);
      try {
        const started = await child.waitFor((record) => record.event === 'bot.started', 'start');
        const statusUrl = String(started.status);
        const base = statusUrl.replace(/\/status$/, '');
        await child.waitFor((record) => record.msg === 'intent submitted', 'a first intent');
        // The real bot's endpoint refuses a rebound name on every path of its own.
        for (const path of ['/status', '/metrics', '/health', '/', '/dashboard/snapshot']) {
          const port = new URL(base).port;
          const refused = await request(`${base}${path}`, {
            headers: { host: `rebind.evil.example:${port}` },
          });
          await refused.body.dump();
          expect({ path, status: refused.statusCode }).toEqual({ path, status: 421 });
        }
        const before = await getJson(statusUrl);
        expect(before.tradingState).toBe('ACTIVE');
        expect((before.venueKey as { state: string }).state).toBe('valid');

        await new AdminClient({
          baseUrl: paced.emulator.baseUrl,
          token: paced.emulator.adminToken,
        }).revokeKey(credential.keyId);

        // Halted with the reason, quickly: polled at most 100 times, 100 ms apart.
        let status: Record<string, unknown> = before;
        for (let attempt = 0; attempt < 100 && status.tradingState !== 'HALTED'; attempt += 1) {
          await delay(100);
          status = await getJson(statusUrl);
        }
        expect(status.tradingState).toBe('HALTED');
        expect(String(status.tradingReason)).toContain('venue key revoked');
        expect(status.mayTrade).toBe(false);
        expect((status.venueKey as { state: string }).state).toBe('revoked');
        expect(status.refusing).toContainEqual({
          gate: 'venue key',
          reason: expect.stringContaining('revoked') as unknown,
        });
        const health = await getJson(`${base}/health`);
        expect(health.may_trade).toBe(false);
        expect(health.status).toBe('degraded');

        // `paperbot status` says the same.
        const printed = spawnSync(process.execPath, ['bin/paperbot.js', 'status', '--url', base], {
          cwd: REPOSITORY_ROOT,
          encoding: 'utf8',
          timeout: 30_000,
        });
        expect(printed.status).toBe(0);
        expect(printed.stdout).toContain('HALTED (venue key revoked');
        expect(printed.stdout).toContain('may trade: no');
        expect(printed.stdout).toMatch(/Venue key: +revoked/);

        // The dashboard's snapshot, and the webhook.
        const snapshot = await getJson(`${base}/dashboard/snapshot`);
        expect((snapshot.trading as { state: string }).state).toBe('HALTED');
        expect((snapshot.venueKey as { state: string }).state).toBe('revoked');
        for (let attempt = 0; attempt < 100 && receiver.bodies.length === 0; attempt += 1) {
          await delay(50);
        }
        expect(JSON.stringify(receiver.bodies)).toContain('venue_key');
        expect(JSON.stringify(receiver.bodies)).toContain('revoked');

        // No retry storm: over three seconds, at most the one read that was already under way.
        const afterHalt = proxy.signedRequests();
        await delay(3_000);
        expect(
          proxy.signedRequests() - afterHalt,
          proxy.signedLines().slice(-8).join(', '),
        ).toBeLessThanOrEqual(1);
        expect(child.records.filter((record) => record.event === 'venue_key.revoked')).toHaveLength(
          1,
        );

        // The shutdown does not knock either: the dead key's calls are refused in the bot.
        const beforeStop = proxy.signedRequests();
        child.process.kill('SIGTERM');
        await child.exited;
        expect(
          proxy.signedRequests() - beforeStop,
          proxy.signedLines().slice(-8).join(', '),
        ).toBeLessThanOrEqual(1);
      } finally {
        if (child.process.exitCode === null) child.process.kill('SIGKILL');
        await child.exited;
      }
    },
  );
});
