/**
 * `paperbot run` as a real process against the emulator serving HTTPS and WSS on loopback, with
 * a certificate made at test time and trusted through `venue.ca_file`: it trades and stops
 * cleanly, directly and through an HTTP CONNECT proxy (which counts the tunnels it opened, so
 * REST and the WebSocket both went through it); with a CA that did not sign the certificate it
 * does not start and says TLS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CountingProxy,
  makeCertificates,
  startCountingProxy,
  type TestCertificates,
} from '../support/tls.ts';
import {
  allOrders,
  FIXTURE_STRATEGIES,
  type PacedEmulator,
  spawnBot,
  startPacedEmulator,
  writeBotConfig,
  writeEmulatorKey,
} from './helpers.ts';

const ACTIVE = new Set(['PENDING', 'SUBMITTED', 'OPEN', 'PARTIALLY_FILLED']);
const root = mkdtempSync(join(tmpdir(), 'paperbot-tls-bot-'));
let certificates: TestCertificates;
let paced: PacedEmulator;
let proxy: CountingProxy;

beforeAll(async () => {
  certificates = makeCertificates(root);
  paced = await startPacedEmulator({
    seed: 'tls-process',
    tls: { cert: certificates.cert, key: certificates.key },
  });
  proxy = await startCountingProxy();
});

afterAll(async () => {
  await proxy?.close();
  await paced?.close();
  rmSync(root, { recursive: true, force: true });
});

/** The environment of the child: this one without any proxy variable, plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'HTTPS_PROXY',
    'https_proxy',
    'HTTP_PROXY',
    'http_proxy',
    'NO_PROXY',
    'no_proxy',
  ]) {
    delete env[name];
  }
  delete env.NODE_EXTRA_CA_CERTS;
  return { ...env, ...extra };
}

async function botConfig(name: string, caFile: string) {
  const directory = mkdtempSync(join(root, `${name}-`));
  const key = await writeEmulatorKey(paced.emulator, directory);
  const configPath = writeBotConfig(directory, {
    venue: { key_file: key.path, ca_file: caFile },
    strategies_dir: FIXTURE_STRATEGIES,
    strategies: [
      {
        id: 'steady',
        name: 'steady-submitter',
        params: { marketId: 'BTC-PERP', intervalMs: 50, maxOpen: 2, churn: false },
      },
    ],
    risk: { kill_switch: { file: null, signal: null } },
    journal: { path: join(directory, 'journal.sqlite') },
    metrics: { enabled: false },
    market_data: { markets: ['BTC-PERP'] },
  });
  return { configPath, accountId: key.accountId };
}

async function tradesAndStops(name: string, env: NodeJS.ProcessEnv): Promise<void> {
  const { configPath, accountId } = await botConfig(name, certificates.caFile);
  const child = spawnBot(configPath, [], env);
  await child.waitFor((record) => record.event === 'bot.started', 'the start', 30_000);
  let placed = 0;
  await child.waitFor(
    (record) => record.msg === 'intent submitted' && ++placed >= 2,
    'two orders placed over TLS',
    30_000,
  );
  expect(allOrders(paced.emulator, accountId).length).toBeGreaterThanOrEqual(1);
  child.process.kill('SIGINT');
  expect(await child.exited).toBe(0);
  expect(child.records.find((record) => record.event === 'bot.shutdown')).toMatchObject({
    cancelled: true,
  });
  expect(allOrders(paced.emulator, accountId).filter((order) => ACTIVE.has(order.status))).toEqual(
    [],
  );
  expect(child.stderr()).toBe('');
}

describe('paperbot run over TLS', () => {
  it('trades and stops cleanly with venue.ca_file', async () => {
    await tradesAndStops('direct', childEnv({}));
  }, 60_000);

  it('goes through HTTPS_PROXY for REST and the WebSocket', async () => {
    const before = proxy.tunnels.length;
    await tradesAndStops('proxied', childEnv({ HTTPS_PROXY: proxy.url }));
    const opened = proxy.tunnels.slice(before);
    // undici's pool opens one or more REST tunnels; the stream opens its own.
    expect(opened.length).toBeGreaterThanOrEqual(2);
    expect(new Set(opened)).toEqual(new Set([`127.0.0.1:${paced.emulator.port}`]));
  }, 60_000);

  it('does not start with a CA that did not sign the certificate, and says TLS', async () => {
    const { configPath } = await botConfig('wrong-ca', certificates.otherCaFile);
    const child = spawnBot(configPath, [], childEnv({}));
    expect(await child.exited).not.toBe(0);
    expect(child.stderr()).toMatch(/could not start: .*TLS failed .*venue\.ca_file/);
  }, 60_000);

  it('refuses a ca_file that holds no certificate before connecting (exit 2)', async () => {
    const { configPath } = await botConfig('bad-ca', certificates.keyFile);
    const child = spawnBot(configPath, [], childEnv({}));
    expect(await child.exited).toBe(2);
    expect(child.stderr()).toContain(`CA file ${certificates.keyFile}: holds no PEM certificate`);
  }, 60_000);
});
