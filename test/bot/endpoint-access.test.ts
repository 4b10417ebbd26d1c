/**
 * The one access policy of the bot's HTTP endpoint, over raw HTTP on loopback, on every path:
 * `/status`, `/metrics`, `/health`, `/favicon.ico`, the page, its assets, the snapshot, the
 * event stream and a control. A Host that is not a loopback name with the bound port (DNS
 * rebinding: `rebind.evil.example`, `127.0.0.1.nip.io`, `localhost.evil.example`, an empty
 * one, another port) is refused with 421 everywhere; told it is bound off loopback, the
 * endpoint wants the token on every path, `/health` included, and accepts its configured names.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEndpointAccess, parseHostHeader } from '../../src/cli/bot/endpoint-access.ts';
import { type BotHttpServer, startBotHttpServer } from '../../src/cli/bot/http.ts';
import { createBotMetrics } from '../../src/cli/bot/metrics.ts';
import { createDashboardAssets } from '../../src/cli/dashboard/assets.ts';
import { createDashboardServer, type DashboardServer } from '../../src/cli/dashboard/server.ts';
import { systemClock, VirtualClock } from '../../src/core/clock.ts';
import { REPOSITORY_ROOT } from './helpers.ts';

const TOKEN = 'T'.repeat(20) + 'k'.repeat(23);

const opened: { http: BotHttpServer; dashboard: DashboardServer }[] = [];
afterEach(async () => {
  for (const { http, dashboard } of opened.splice(0)) {
    dashboard.close();
    await http.close();
  }
});

async function serve(binding: string, allowedHosts: readonly string[] = []) {
  const clock = new VirtualClock(0);
  const dashboard = createDashboardServer({
    clock,
    token: TOKEN,
    readOnly: false,
    assets: createDashboardAssets(),
    snapshot: () => ({ trading: { state: 'ACTIVE', reason: null, mayTrade: true } }),
    control: (action) => Promise.resolve({ ok: true, message: `did ${action}` }),
  });
  const metrics = createBotMetrics({ clock, processMetrics: false });
  // Always listening on 127.0.0.1: the policy is told which binding it guards.
  const http = await startBotHttpServer({
    host: '127.0.0.1',
    port: 0,
    registry: metrics.registry,
    health: () => ({ phase: 'running', tradingState: 'ACTIVE', mayTrade: true }),
    status: () => ({ account: { total_equity: '10000' } }),
    access: createEndpointAccess({ binding, token: TOKEN, allowedHosts }),
    routes: (request, response) => dashboard.handle(request, response),
  });
  opened.push({ http, dashboard });
  return http.port;
}

/** One request over a raw socket (so any Host, an empty one included, is sent as written). */
function rawStatus(
  port: number,
  path: string,
  host: string | null,
  extra: Record<string, string> = {},
  method = 'GET',
): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      const lines = [`${method} ${path} HTTP/1.1`];
      if (host !== null) lines.push(`Host: ${host}`);
      for (const [name, value] of Object.entries(extra)) lines.push(`${name}: ${value}`);
      lines.push('Connection: close', '', '');
      socket.write(lines.join('\r\n'));
    });
    let received = '';
    const timer = systemClock.setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer for ${path} within 5 s`));
    }, 5_000);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(received);
      if (match !== null) {
        // The status line is enough (the event stream would never end).
        systemClock.clearTimeout(timer);
        socket.destroy();
        resolve(Number(match[1]));
      }
    });
    socket.on('error', (error) => {
      systemClock.clearTimeout(timer);
      reject(error);
    });
  });
}

const READS = [
  '/status',
  '/metrics',
  '/health',
  '/favicon.ico',
  '/',
  '/dashboard',
  '/dashboard/style.css',
  '/dashboard/snapshot',
  '/dashboard/events',
];
const CONTROL = {
  'content-type': 'application/json',
  'x-paperbot-token': TOKEN,
  'content-length': String('{"confirm":"halt"}'.length),
};

describe('the Host header, on every path of a loopback binding', () => {
  it('is refused with 421 unless it is a loopback name with the bound port', async () => {
    const port = await serve('127.0.0.1');
    const refused = [
      `rebind.evil.example:${port}`,
      `127.0.0.1.nip.io:${port}`,
      `localhost.evil.example:${port}`,
      `127.0.0.1:${port + 1 === 65_536 ? 1 : port + 1}`,
      'rebind.evil.example',
      '',
    ];
    for (const path of [...READS, '/dashboard/control/halt']) {
      const method = path.startsWith('/dashboard/control/') ? 'POST' : 'GET';
      for (const host of refused) {
        expect({ path, host, status: await rawStatus(port, path, host, {}, method) }).toEqual({
          path,
          host,
          status: 421,
        });
      }
    }
    for (const path of READS) {
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
        expect({ path, host, status: await rawStatus(port, path, host) }).toEqual({
          path,
          host,
          status: 200,
        });
      }
    }
    // A control from a loopback name still wants its own checks, and passes them.
    const body = '{"confirm":"halt"}';
    const control = await new Promise<number>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        const head = [
          'POST /dashboard/control/halt HTTP/1.1',
          `Host: 127.0.0.1:${port}`,
          ...Object.entries(CONTROL).map(([name, value]) => `${name}: ${value}`),
          'Connection: close',
          '',
          '',
        ].join('\r\n');
        socket.write(head + body);
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
      });
      socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])));
      socket.on('error', reject);
    });
    expect(control).toBe(200);
  });

  it('answers a missing Host too, never with the account', async () => {
    const port = await serve('127.0.0.1');
    // node refuses an HTTP/1.1 request without Host (400) before the policy; both refuse.
    expect([400, 421]).toContain(await rawStatus(port, '/status', null));
  });

  it('reads Host headers strictly', () => {
    expect(parseHostHeader('127.0.0.1:9464')).toEqual({ name: '127.0.0.1', port: 9464 });
    expect(parseHostHeader('[::1]:80')).toEqual({ name: '[::1]', port: 80 });
    expect(parseHostHeader('LocalHost')).toEqual({ name: 'localhost', port: null });
    expect(parseHostHeader('')).toBeNull();
    expect(parseHostHeader('localhost:')).toBeNull();
    expect(parseHostHeader('localhost:80:80')).toBeNull();
    expect(parseHostHeader('[::1')).toBeNull();
  });
});

describe('bound off loopback', () => {
  it('wants the token on every path, /health included, and only its configured names', async () => {
    const port = await serve('192.0.2.10', ['bot.example.net']);
    const named = `bot.example.net:${port}`;
    for (const path of READS) {
      expect({ path, status: await rawStatus(port, path, named) }).toEqual({ path, status: 401 });
      expect({
        path,
        status: await rawStatus(port, path, named, { authorization: `Bearer ${TOKEN}` }),
      }).toEqual({ path, status: 200 });
      expect({
        path,
        status: await rawStatus(port, path, named, { authorization: `Bearer ${'x'.repeat(43)}` }),
      }).toEqual({ path, status: 401 });
      // The bound address and loopback names are accepted as names; the token is still needed.
      expect(await rawStatus(port, path, `192.0.2.10:${port}`)).toBe(401);
      expect(await rawStatus(port, path, `127.0.0.1:${port}`)).toBe(401);
      expect(await rawStatus(port, path, `rebind.evil.example:${port}`)).toBe(421);
      expect(
        await rawStatus(port, path, `rebind.evil.example:${port}`, {
          authorization: `Bearer ${TOKEN}`,
        }),
      ).toBe(421);
    }
    // The cookie from the token link, and the control header, carry it too.
    expect(await rawStatus(port, '/?token=' + TOKEN, named)).toBe(303);
    expect(await rawStatus(port, '/status', named, { cookie: `paperbot_dashboard=${TOKEN}` })).toBe(
      200,
    );
    expect(await rawStatus(port, '/metrics', named, { 'x-paperbot-token': TOKEN })).toBe(200);
    expect(await rawStatus(port, '/status?token=' + TOKEN, named)).toBe(401);
  });
});

describe('paperbot status off loopback', () => {
  it(
    'sends the token from --token-file, and says what is missing without it',
    {
      timeout: 60_000,
    },
    async () => {
      const port = await serve('192.0.2.10');
      const directory = mkdtempSync(join(tmpdir(), 'paperbot-status-token-'));
      try {
        const tokenFile = join(directory, 'endpoint.token');
        writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
        // Asynchronously: the server answering it lives in this process.
        const run = (...extra: string[]) =>
          new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
            execFile(
              process.execPath,
              [
                'bin/paperbot.js',
                'status',
                '--url',
                `http://127.0.0.1:${port}`,
                '--json',
                ...extra,
              ],
              { cwd: REPOSITORY_ROOT, encoding: 'utf8', timeout: 30_000 },
              (error, stdout, stderr) => {
                const code =
                  error === null ? 0 : typeof error.code === 'number' ? error.code : null;
                resolve({ status: code, stdout, stderr });
              },
            );
          });
        const refused = await run();
        expect(refused.status).not.toBe(0);
        expect(refused.stderr).toContain('401');
        expect(refused.stderr).toContain('--token-file');
        expect(refused.stderr).not.toContain(TOKEN);
        const answered = await run('--token-file', tokenFile);
        expect(answered.stderr).toBe('');
        expect(answered.status).toBe(0);
        expect(JSON.parse(answered.stdout)).toEqual({ account: { total_equity: '10000' } });
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    },
  );
});
