/**
 * `paperbot doctor` on a wire profile that is not SVC1, as a real process against the emulator
 * on a loopback port verifying with that profile. With the same profile (from the config's
 * `venue.wire`, or `--wire` with `--key`) every check is green: the signed account probe, the
 * signed reads and simulation and the WebSocket auth are all signed the profile's way. With a
 * profile that differs only in the signature's encoding, the account check fails with
 * INVALID_SIGNATURE, shows the exact signing input it sent and names
 * `venue.wire.signature_encoding`, and no byte of the private key is printed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.ts';
import {
  describeSigningInput,
  parseWireProfile,
  type WireProfileInput,
  writeKeyFile,
} from '../../src/signing/index.ts';
import { FIXTURE_STRATEGIES, REPOSITORY_ROOT, writeBotConfig } from './helpers.ts';
import { NON_DEFAULT_PROFILE } from './fixtures/wire-profile.ts';

const PROFILE = NON_DEFAULT_PROFILE;
/** One setting off: the signature's encoding. */
const MISMATCHED: WireProfileInput = { ...PROFILE, signature_encoding: 'base64url' };

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
const EMPTY_BODY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

interface Check {
  id: string;
  verdict: string;
  summary: string;
  advice: string | null;
  lines: string[];
  details: Record<string, unknown>;
}

interface Report {
  ok: boolean;
  checks: Check[];
}

const directory = mkdtempSync(join(tmpdir(), 'paperbot-doctor-wire-'));
let emulator: RunningEmulator;
let keyPath: string;
let secretForms: string[];

function doctor(
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY']) {
    delete env[name];
  }
  const child = spawn(
    process.execPath,
    ['bin/paperbot.js', 'doctor', '--timeout-ms', '5000', ...args],
    { cwd: REPOSITORY_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

function check(report: Report, id: string): Check {
  const found = report.checks.find((item) => item.id === id);
  if (found === undefined) throw new Error(`no check ${id}`);
  return found;
}

function writeProfile(name: string, profile: WireProfileInput): string {
  const path = join(directory, `${name}.wire.yaml`);
  writeFileSync(path, stringify(profile));
  return path;
}

/** The value of a `name   value` line of the account check's signing input. */
function lineValue(lines: readonly string[], name: string): string {
  const line = lines.find((item) => item.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no line ${name} in ${lines.join('\n')}`);
  return line.slice(name.length).trimStart();
}

beforeAll(async () => {
  emulator = await startEmulator({ seed: 'doctor-wire', wire: parseWireProfile(PROFILE) });
  keyPath = join(directory, 'practice.key.json');
  await writeKeyFile(keyPath, emulator.createKey(), { overwrite: true });
  const seed = Buffer.from(
    (JSON.parse(readFileSync(keyPath, 'utf8')) as { private_key: string }).private_key,
    'base64',
  );
  secretForms = [seed.toString('base64'), seed.toString('base64url'), seed.toString('hex')];
});

afterAll(async () => {
  await emulator?.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('paperbot doctor on a wire profile', () => {
  it('is all green with the same profile from the config (venue.wire)', async () => {
    const configPath = writeBotConfig(directory, {
      venue: { key_file: keyPath, wire: writeProfile('same', PROFILE) },
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
    const { code, stdout, stderr } = await doctor(['--config', configPath, '--json']);
    expect(stderr).toBe('');
    const report = JSON.parse(stdout) as Report;
    expect(report.checks.filter((item) => item.verdict !== 'ok')).toEqual([]);
    expect(report.checks.map((item) => item.id)).toEqual(CHECKS);
    expect(report.ok).toBe(true);
    expect(code).toBe(0);
    expect(check(report, 'config').summary).toContain('wire profile venue.wire');
    expect(check(report, 'stream').summary).toMatch(/authenticated and subscribed/);
  }, 60_000);

  it('is all green with the same profile from --wire next to --key', async () => {
    const { code, stdout } = await doctor([
      '--key',
      keyPath,
      '--wire',
      writeProfile('same-flag', PROFILE),
      '--market',
      'BTC-PERP',
    ]);
    expect(stdout).toMatch(/ok {4}account +the signed GET \/v1\/account is accepted/);
    expect(stdout).toMatch(/ok {4}stream +challenge answered, authenticated and subscribed/);
    expect(stdout).toMatch(/paperbot doctor: the bot can trade/);
    expect(code).toBe(0);
  }, 60_000);

  it('on a mismatched profile fails the account check with the signing input and the setting', async () => {
    const { code, stdout, stderr } = await doctor([
      '--key',
      keyPath,
      '--wire',
      writeProfile('mismatched', MISMATCHED),
      '--json',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as Report;
    expect(report.ok).toBe(false);
    const account = check(report, 'account');
    expect(account.verdict).toBe('fail');
    expect(account.summary).toMatch(
      /^the service refused the signature of GET \/v1\/account \(INVALID_SIGNATURE/,
    );
    expect(account.advice).toContain('venue.wire.signature_encoding (base64url)');
    expect(account.details.settings_to_check).toContain(
      'venue.wire.signature_encoding (base64url)',
    );

    // The signing input shown is exactly the one the profile builds for what was sent.
    const keyId = (JSON.parse(readFileSync(keyPath, 'utf8')) as { key_id: string }).key_id;
    const timestamp = lineValue(account.lines, 'timestamp');
    const nonce = lineValue(account.lines, 'nonce');
    expect(timestamp).toMatch(/^\d{10}$/);
    expect(nonce).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(lineValue(account.lines, 'key id')).toBe(keyId);
    expect(lineValue(account.lines, 'body sha256')).toBe(EMPTY_BODY_SHA256);
    expect(lineValue(account.lines, 'signature')).toBe('Ed25519, sent base64url in X-PT-Signature');
    const signed = JSON.parse(lineValue(account.lines, 'signed')) as string;
    expect(signed).toBe(`GET /v1/account|${keyId}|${timestamp}|${nonce}|${EMPTY_BODY_SHA256}`);
    expect(signed).toBe(
      describeSigningInput(parseWireProfile(MISMATCHED), {
        method: 'GET',
        target: '/v1/account',
        keyId,
        timestampMs: Number(timestamp) * 1000,
        nonce,
        body: null,
      }),
    );
    // Nothing after a refused signature is tried.
    for (const id of ['scopes', 'stream', 'routes', 'simulation', 'rate_limits']) {
      expect(check(report, id).verdict).toBe('skip');
    }
    for (const secret of secretForms) expect(stdout).not.toContain(secret);
  }, 60_000);

  it('prints the signing input and the settings as text, without the private key', async () => {
    const { code, stdout, stderr } = await doctor([
      '--key',
      keyPath,
      '--wire',
      writeProfile('mismatched-text', MISMATCHED),
    ]);
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /FAIL {2}account +the service refused the signature of GET \/v1\/account \(INVALID_SIGNATURE/,
    );
    expect(stdout).toMatch(/signing input sent \(no secret\):/);
    expect(stdout).toMatch(/signed +"GET \/v1\/account\|/);
    expect(stdout).toMatch(
      /-> compare these wire settings .*venue\.wire\.signature_encoding \(base64url\)/,
    );
    expect(stdout).toMatch(/paperbot doctor: the bot cannot trade/);
    for (const secret of secretForms) {
      expect(stdout).not.toContain(secret);
      expect(stderr).not.toContain(secret);
    }
  }, 60_000);
});
