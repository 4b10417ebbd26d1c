/**
 * `paperbot doctor` as a real process against the emulator serving HTTPS and WSS on loopback
 * (a certificate made at test time): all green with the right CA (exit 0, the JSON report's
 * shape), and exit 1 naming the cause for a wrong CA (TLS), a key without fills:read (the
 * scope, as the venue's SCOPE_REQUIRED named it), a key whose private key is not the one the
 * venue knows (INVALID_SIGNATURE, with the signing input and without the key) and a stopped
 * service (its URL).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.ts';
import { Credential, generateKeyPair, writeKeyFile } from '../../src/signing/index.ts';
import { makeCertificates, startCountingProxy, type TestCertificates } from '../support/tls.ts';
import { FIXTURE_STRATEGIES, REPOSITORY_ROOT, writeBotConfig } from './helpers.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-doctor-'));
let certificates: TestCertificates;
let emulator: RunningEmulator;
let fullKey: string;

const CHECKS = [
  'config',
  'urls',
  'reachable',
  'tls',
  'clock',
  'public',
  'account',
  'scopes',
  'stream',
  'routes',
  'simulation',
  'rate_limits',
];

interface Check {
  id: string;
  verdict: string;
  summary: string;
  advice: string | null;
  lines: string[];
}

interface Report {
  ok: boolean;
  target: Record<string, unknown>;
  checks: Check[];
}

/** Runs `paperbot doctor ARGS` without proxy variables; resolves with its exit and output. */
function doctor(
  args: readonly string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'HTTPS_PROXY',
    'https_proxy',
    'HTTP_PROXY',
    'http_proxy',
    'NODE_EXTRA_CA_CERTS',
  ]) {
    delete env[name];
  }
  const child = spawn(
    process.execPath,
    ['bin/paperbot.js', 'doctor', '--timeout-ms', '5000', ...args],
    {
      cwd: REPOSITORY_ROOT,
      env: { ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function doctorJson(
  args: readonly string[],
): Promise<{ code: number | null; report: Report }> {
  const { code, stdout, stderr } = await doctor([...args, '--json']);
  expect(stderr).toBe('');
  return { code, report: JSON.parse(stdout) as Report };
}

function check(report: Report, id: string): Check {
  const found = report.checks.find((item) => item.id === id);
  if (found === undefined) throw new Error(`no check ${id}`);
  return found;
}

async function keyFile(name: string, credential: Credential): Promise<string> {
  const path = join(directory, `${name}.key.json`);
  await writeKeyFile(path, credential, { overwrite: true });
  return path;
}

beforeAll(async () => {
  certificates = makeCertificates(directory);
  emulator = await startEmulator({
    seed: 'doctor',
    tls: { cert: certificates.cert, key: certificates.key },
  });
  fullKey = await keyFile('full', emulator.createKey());
});

afterAll(async () => {
  await emulator?.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('paperbot doctor', () => {
  it('is all green against the emulator over TLS with the CA (exit 0, JSON)', async () => {
    const { code, report } = await doctorJson(['--key', fullKey, '--ca-file', certificates.caFile]);
    expect(report.checks.filter((item) => item.verdict !== 'ok')).toEqual([]);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.checks.map((item) => item.id)).toEqual(CHECKS);
    expect(report.target).toMatchObject({ rest_url: emulator.baseUrl, ws_url: emulator.wsUrl });
    for (const item of report.checks) {
      expect(item).toEqual({
        id: expect.any(String),
        verdict: 'ok',
        summary: expect.any(String),
        advice: null,
        lines: expect.any(Array),
        details: expect.any(Object),
      });
    }
    expect(check(report, 'simulation').lines.join('\n')).toMatch(
      /BTC-PERP: buy \S+ @ \S+ -> READY/,
    );
  }, 60_000);

  it('reads the key, CA and markets from a config and prints text', async () => {
    const configPath = writeBotConfig(directory, {
      venue: { key_file: fullKey, ca_file: certificates.caFile },
      strategies_dir: FIXTURE_STRATEGIES,
      strategies: [
        {
          id: 'steady',
          name: 'steady-submitter',
          params: { marketId: 'BTC-PERP', intervalMs: 50 },
        },
      ],
      market_data: { markets: ['BTC-PERP'] },
    });
    const { code, stdout } = await doctor(['--config', configPath]);
    expect(stdout).toMatch(
      /ok {4}simulation +a minimal order would be accepted on 1 configured market/,
    );
    expect(stdout).toMatch(/paperbot doctor: the bot can trade/);
    expect(code).toBe(0);
  }, 60_000);

  it('trusts the CA of NODE_EXTRA_CA_CERTS without a CA file', async () => {
    const { code, stdout } = await doctor(['--key', fullKey, '--market', 'BTC-PERP'], {
      NODE_EXTRA_CA_CERTS: certificates.caFile,
    });
    expect(stdout).toMatch(/ok {4}tls +the certificate verifies/);
    expect(code).toBe(0);
  }, 60_000);

  it('goes through HTTPS_PROXY for every check, and says so', async () => {
    const proxy = await startCountingProxy();
    try {
      const { code, stdout } = await doctor(
        ['--key', fullKey, '--ca-file', certificates.caFile, '--market', 'BTC-PERP'],
        { HTTPS_PROXY: proxy.url },
      );
      expect(stdout).toContain(`answers at ${emulator.baseUrl} (proxy ${new URL(proxy.url).host})`);
      expect(code).toBe(0);
      // The connection check, REST, the signed probe and the WebSocket: a tunnel each at least.
      expect(proxy.tunnels.length).toBeGreaterThanOrEqual(4);
      expect(new Set(proxy.tunnels)).toEqual(new Set([`127.0.0.1:${emulator.port}`]));
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('names TLS and the CA settings when the CA did not sign the certificate (exit 1)', async () => {
    const { code, report } = await doctorJson([
      '--key',
      fullKey,
      '--ca-file',
      certificates.otherCaFile,
    ]);
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    const tls = check(report, 'tls');
    expect(tls.verdict).toBe('fail');
    expect(tls.summary).toMatch(/^TLS with https:\/\/127\.0\.0\.1:\d+ failed/);
    expect(tls.advice).toMatch(/venue\.ca_file or NODE_EXTRA_CA_CERTS/);
    expect(check(report, 'account').verdict).toBe('skip');
  }, 60_000);

  it('names fills:read for a key without it, as the venue named it (exit 1)', async () => {
    const path = await keyFile(
      'no-fills',
      emulator.createKey({ scopes: ['account:read', 'orders:read', 'orders:write'] }),
    );
    const { code, report } = await doctorJson(['--key', path, '--ca-file', certificates.caFile]);
    expect(code).toBe(1);
    const scopes = check(report, 'scopes');
    expect(scopes.verdict).toBe('fail');
    expect(scopes.summary).toBe('the key lacks fills:read (GET /v1/fills)');
    expect(scopes.advice).toContain('fills:read');
    expect(report.checks.filter((item) => item.verdict === 'fail').map((item) => item.id)).toEqual([
      'scopes',
    ]);
  }, 60_000);

  it('shows the signing input on INVALID_SIGNATURE, never the private key (exit 1)', async () => {
    const registered = emulator.createKey();
    const wrong = Credential.create({
      keyId: registered.keyId,
      accountId: registered.accountId,
      apiBaseUrl: registered.apiBaseUrl,
      wsUrl: registered.wsUrl,
      scopes: registered.scopes,
      createdAt: registered.createdAt,
      expiresAt: registered.expiresAt,
      privateKey: generateKeyPair().privateKey,
    });
    const path = await keyFile('wrong-private-key', wrong);
    const secret = String(
      (JSON.parse(readFileSync(path, 'utf8')) as { private_key: string }).private_key,
    );
    const { code, stdout } = await doctor(['--key', path, '--ca-file', certificates.caFile]);
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /FAIL {2}account +the service refused the signature of GET \/v1\/account \(INVALID_SIGNATURE/,
    );
    expect(stdout).toContain(`key id      ${registered.keyId}`);
    expect(stdout).toMatch(/target +\/v1\/account/);
    expect(stdout).toMatch(/nonce +[A-Za-z0-9_-]{16,}/);
    expect(stdout).toMatch(
      /-> compare these wire settings .*venue\.wire\.signature_encoding \(base64\)/,
    );
    expect(stdout).not.toContain(secret);
  }, 60_000);

  it('names the URL of a stopped service (exit 1)', async () => {
    const stopped = await startEmulator({
      seed: 'doctor-stopped',
      tls: { cert: certificates.cert, key: certificates.key },
    });
    const path = await keyFile('stopped', stopped.createKey());
    const url = stopped.baseUrl;
    await stopped.close();
    const { code, report } = await doctorJson(['--key', path, '--ca-file', certificates.caFile]);
    expect(code).toBe(1);
    const reachable = check(report, 'reachable');
    expect(reachable.verdict).toBe('fail');
    expect(reachable.summary).toBe(`nothing answers at ${url} (ECONNREFUSED)`);
    expect(reachable.advice).toContain(`is the service running at ${url}?`);
  }, 60_000);

  it('refuses to run without exactly one of --config and --key', async () => {
    const { code, stderr } = await doctor([]);
    expect(code).toBe(1);
    expect(stderr).toContain('give one of --config FILE and --key FILE');
  }, 30_000);
});
