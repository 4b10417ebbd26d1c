/**
 * The dashboard's guards over real HTTP on loopback: the controls want the token, a JSON body
 * that confirms the action, and a same-origin request; a loopback binding answers to loopback
 * host names only; off loopback every read wants the token too, and the config refuses such a
 * binding without a token file; read-only mode has no controls at all.
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createEndpointAccess } from '../../src/cli/bot/endpoint-access.ts';
import { type BotHttpServer, startBotHttpServer } from '../../src/cli/bot/http.ts';
import { resolveBotConfig } from '../../src/cli/bot/config.ts';
import { createBotMetrics } from '../../src/cli/bot/metrics.ts';
import { createDashboardAssets } from '../../src/cli/dashboard/assets.ts';
import type { ControlAction } from '../../src/cli/dashboard/controls.ts';
import { createDashboardServer, type DashboardServer } from '../../src/cli/dashboard/server.ts';
import { loadOrCreateToken } from '../../src/cli/dashboard/token.ts';
import { VirtualClock } from '../../src/core/clock.ts';
import { isPaperbotError } from '../../src/core/errors.ts';
import { marketMakerBot, temporaryDirectory } from './helpers.ts';

const directory = temporaryDirectory();
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const TOKEN = 'a'.repeat(20) + 'B'.repeat(23);

const opened: { http: BotHttpServer; dashboard: DashboardServer }[] = [];
afterEach(async () => {
  for (const { http, dashboard } of opened.splice(0)) {
    dashboard.close();
    await http.close();
  }
});

async function serve(options: { host?: string; readOnly?: boolean } = {}) {
  const clock = new VirtualClock(0);
  const actions: ControlAction[] = [];
  const dashboard = createDashboardServer({
    clock,
    token: TOKEN,
    readOnly: options.readOnly ?? false,
    assets: createDashboardAssets(),
    snapshot: () => ({ trading: { state: 'ACTIVE' } }),
    control: (action) => {
      actions.push(action);
      return Promise.resolve({ ok: true, message: `did ${action}` });
    },
  });
  const metrics = createBotMetrics({ clock, processMetrics: false });
  // Always listening on loopback: an off-loopback binding is what the dashboard is told.
  const http = await startBotHttpServer({
    host: '127.0.0.1',
    port: 0,
    registry: metrics.registry,
    health: () => ({ phase: 'running', tradingState: 'ACTIVE', mayTrade: true }),
    status: () => ({}),
    access: createEndpointAccess({ binding: options.host ?? '127.0.0.1', token: TOKEN }),
    routes: (req, res) => dashboard.handle(req, res),
  });
  opened.push({ http, dashboard });
  return { url: http.url, actions };
}

async function call(
  url: string,
  options: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
) {
  const response = await request(url, {
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    text: await response.body.text(),
  };
}

const json = { 'content-type': 'application/json' };

describe('dashboard controls', () => {
  it('run only with the token, a confirming body, and from the same origin', async () => {
    const { url, actions } = await serve();
    const halt = `${url}/dashboard/control/halt`;
    const body = JSON.stringify({ confirm: 'halt' });
    const good = { ...json, 'x-paperbot-token': TOKEN, origin: url };

    expect((await call(halt, { method: 'POST', headers: json, body })).status).toBe(403);
    expect(
      (await call(halt, { method: 'POST', headers: { ...json, 'x-paperbot-token': 'x' }, body }))
        .status,
    ).toBe(403);
    // A page elsewhere: its Origin, or the browser's own cross-site mark.
    expect(
      (await call(halt, { method: 'POST', headers: { ...good, origin: 'http://evil.test' }, body }))
        .status,
    ).toBe(403);
    expect(
      (
        await call(halt, {
          method: 'POST',
          headers: { ...good, 'sec-fetch-site': 'cross-site' },
          body,
        })
      ).status,
    ).toBe(403);
    // A form post cannot send JSON; a GET never acts; the body must name the action.
    expect(
      (
        await call(halt, {
          method: 'POST',
          headers: { ...good, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'confirm=halt',
        })
      ).status,
    ).toBe(415);
    expect((await call(halt, { headers: good })).status).toBe(405);
    expect(
      (
        await call(halt, {
          method: 'POST',
          headers: good,
          body: JSON.stringify({ confirm: 'clear' }),
        })
      ).status,
    ).toBe(400);
    expect(actions).toEqual([]);

    const done = await call(halt, { method: 'POST', headers: good, body });
    expect(done.status).toBe(200);
    expect(JSON.parse(done.text)).toEqual({ ok: true, message: 'did halt' });
    expect(actions).toEqual(['halt']);
    expect(
      (
        await call(`${url}/dashboard/control/sell-everything`, {
          method: 'POST',
          headers: good,
          body,
        })
      ).status,
    ).toBe(404);
  });

  it('answers a loopback binding only under a loopback host name (no DNS rebinding)', async () => {
    const { url } = await serve();
    expect((await call(`${url}/`)).status).toBe(200);
    expect((await call(`${url}/`, { headers: { host: 'attacker.example:80' } })).status).toBe(421);
    // The bot's own endpoints too (the whole policy: test/bot/endpoint-access.test.ts).
    expect((await call(`${url}/health`, { headers: { host: 'attacker.example' } })).status).toBe(
      421,
    );
  });

  it('serves the page with a strict content policy and the token for the controls', async () => {
    const { url } = await serve();
    const page = await call(`${url}/`);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.text).toContain(`<meta name="paperbot-token" content="${TOKEN}">`);
    const script = await call(`${url}/dashboard/app.js`);
    expect(script.status).toBe(200);
    expect(script.text.length).toBeGreaterThan(5_000);
    const charts = await call(`${url}/dashboard/charts.js`);
    expect(charts.text).toContain('PaperbotCharts');
  });
});

describe('read-only mode', () => {
  it('has no token on the page and refuses every control', async () => {
    const { url, actions } = await serve({ readOnly: true });
    const page = await call(`${url}/`);
    expect(page.text).not.toContain('paperbot-token');
    const refused = await call(`${url}/dashboard/control/halt`, {
      method: 'POST',
      headers: { ...json, 'x-paperbot-token': TOKEN },
      body: JSON.stringify({ confirm: 'halt' }),
    });
    expect(refused.status).toBe(403);
    expect(actions).toEqual([]);
  });
});

describe('bound off loopback', () => {
  it('wants the token for every read, once by link, then by cookie', async () => {
    const { url } = await serve({ host: '192.0.2.10' });
    expect((await call(`${url}/`)).status).toBe(401);
    expect((await call(`${url}/dashboard/snapshot`)).status).toBe(401);
    expect((await call(`${url}/?token=wrong`)).status).toBe(401);
    const login = await call(`${url}/?token=${TOKEN}`);
    expect(login.status).toBe(303);
    expect(login.headers.location).toBe('/');
    const cookie = String(login.headers['set-cookie']).split(';')[0] ?? '';
    expect(String(login.headers['set-cookie'])).toContain('HttpOnly; SameSite=Strict');
    expect((await call(`${url}/dashboard/snapshot`, { headers: { cookie } })).status).toBe(200);
    expect(
      (await call(`${url}/dashboard/snapshot`, { headers: { authorization: `Bearer ${TOKEN}` } }))
        .status,
    ).toBe(200);
  });

  it('is refused by the config without a token file', async () => {
    const document = marketMakerBot(directory, { metrics: { host: '0.0.0.0', port: 0 } });
    const error = await resolveBotConfig(document, 'test').catch((caught: unknown) => caught);
    expect(isPaperbotError(error) && error.code).toBe('INVALID_CONFIG');
    expect(JSON.stringify((error as { details: unknown }).details)).toContain(
      'dashboard.token_file',
    );
    // With a token file, or with the dashboard read from loopback only, it is accepted.
    await expect(
      resolveBotConfig(
        marketMakerBot(directory, {
          metrics: { host: '0.0.0.0', port: 0 },
          dashboard: { token_file: join(directory, 'token') },
        }),
        'test',
      ),
    ).resolves.toBeDefined();
  });

  it('keeps the token in a file of mode 0600, and refuses one others can read', () => {
    const path = join(directory, 'tokens', 'dashboard.token');
    const token = loadOrCreateToken(path);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadOrCreateToken(path)).toBe(token);
    const open = join(directory, 'open.token');
    mkdirSync(directory, { recursive: true });
    writeFileSync(open, `${token}\n`, { mode: 0o644 });
    expect(() => loadOrCreateToken(open)).toThrow(/0600/);
  });
});
