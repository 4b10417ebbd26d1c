import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main.ts';
import type { VirtualClock } from '../../../src/core/clock.ts';
import type { RunningEmulator } from '../../../src/emulator/index.ts';
import { Account } from '../../../src/protocol/index.ts';
import { loadKeyFile } from '../../../src/signing/index.ts';
import { expectError, SignedClient, startTestEmulator, TestHttp } from './helpers.ts';

type TestEmulator = RunningEmulator & { clock: VirtualClock };
let emulator: TestEmulator;
let dataDir: string;
let folder: string;
let output: string[];
let errors: string[];
const http = new TestHttp();

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'paperbot-cli-emulator-data-'));
  emulator = await startTestEmulator({ dataDir });
});

afterAll(async () => {
  await http.close();
  await emulator.close();
  await rm(dataDir, { recursive: true, force: true });
});

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'paperbot-cli-keys-create-'));
  output = [];
  errors = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    output.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    errors.push(String(chunk));
    return true;
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await rm(folder, { recursive: true, force: true });
});

function keys(...args: string[]): Promise<number> {
  return main(['node', 'paperbot', 'keys', ...args]);
}

describe('paperbot keys create and revoke', () => {
  it('registers only the public key and writes a 0600 key file that works', async () => {
    const path = join(folder, 'key.json');
    const code = await keys(
      'create',
      '--api',
      emulator.baseUrl,
      '--data',
      dataDir,
      '--out',
      path,
      '--scopes',
      'account:read,orders:read',
      '--allow-ip',
      '127.0.0.1/32,::1',
      '--max-order-notional',
      '5000',
      '--max-open-orders',
      '4',
    );
    expect(errors.join('')).toBe('');
    expect(code).toBe(0);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const credential = await loadKeyFile(path);
    expect(credential.apiBaseUrl).toBe(emulator.baseUrl);
    expect(credential.wsUrl).toBe(emulator.wsUrl);
    expect(credential.scopes).toEqual(['account:read', 'orders:read']);
    const file = JSON.parse(await readFile(path, 'utf8'));
    expect(output.join('')).toContain(credential.keyId);
    expect(output.join('')).not.toContain(file.private_key);
    const client = new SignedClient(http, emulator, credential);
    expect(Account.parse((await client.get('/v1/account')).json).account_id).toBe(
      credential.accountId,
    );
    // The emulator holds the public key only.
    const listed = await http.send(emulator.baseUrl, 'GET', '/admin/v1/keys', undefined, {
      headers: { authorization: `Bearer ${emulator.adminToken}` },
    });
    expect(listed.text).toContain(file.public_key);
    expect(listed.text).not.toContain(file.private_key);
    expect(listed.text).toContain('"max_open_orders":4');

    expect(
      await keys(
        'revoke',
        '--api',
        emulator.baseUrl,
        '--data',
        dataDir,
        '--key-id',
        credential.keyId,
      ),
    ).toBe(0);
    expectError(await client.get('/v1/account'), 401, 'KEY_REVOKED');
  });

  it('resets an account: fresh balance and history under the new key, old keys revoked', async () => {
    const first = join(folder, 'first.json');
    const second = join(folder, 'second.json');
    const token = ['--admin-token', emulator.adminToken];
    expect(await keys('create', '--api', emulator.baseUrl, ...token, '--out', first)).toBe(0);
    const old = await loadKeyFile(first);
    const code = await keys(
      'create',
      '--api',
      emulator.baseUrl,
      ...token,
      '--out',
      second,
      '--account-id',
      old.accountId,
      '--reset-account',
    );
    expect(code).toBe(0);
    const fresh = await loadKeyFile(second);
    expect(fresh.accountId).not.toBe(old.accountId);
    expect(output.join('')).toContain(`account ${old.accountId} retired`);
    expectError(await new SignedClient(http, emulator, old).get('/v1/account'), 401, 'KEY_REVOKED');
    expect((await new SignedClient(http, emulator, fresh).get('/v1/account')).status).toBe(200);
  });

  it('refuses without an admin token, with a wrong one, and before overwriting a key file', async () => {
    const path = join(folder, 'key.json');
    const saved = process.env.PAPERBOT_ADMIN_TOKEN;
    delete process.env.PAPERBOT_ADMIN_TOKEN;
    try {
      expect(await keys('create', '--api', emulator.baseUrl, '--out', path)).toBe(1);
      expect(errors.join('')).toContain('admin token is needed');
      expect(
        await keys(
          'create',
          '--api',
          emulator.baseUrl,
          '--admin-token',
          'wrong-token-0123456789',
          '--out',
          path,
        ),
      ).toBe(1);
      expect(errors.join('')).toContain('admin token');
      expect(
        await keys('create', '--api', emulator.baseUrl, '--data', dataDir, '--out', path),
      ).toBe(0);
      expect(
        await keys('create', '--api', emulator.baseUrl, '--data', dataDir, '--out', path),
      ).toBe(1);
      expect(errors.join('')).toContain('already exists');
      expect(
        await keys(
          'create',
          '--api',
          emulator.baseUrl,
          '--data',
          dataDir,
          '--out',
          path,
          '--scopes',
          'admin',
        ),
      ).toBe(1);
      expect(
        await keys(
          'revoke',
          '--api',
          emulator.baseUrl,
          '--data',
          dataDir,
          '--key-id',
          'key_missing',
        ),
      ).toBe(1);
    } finally {
      if (saved !== undefined) process.env.PAPERBOT_ADMIN_TOKEN = saved;
    }
  });
});

describe('paperbot emulator', () => {
  it('prints one listening line, serves, and closes cleanly on SIGTERM', async () => {
    const data = join(folder, 'data');
    const child = spawn(
      process.execPath,
      ['bin/paperbot.js', 'emulator', '--port', '0', '--data', data, '--seed', '7'],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const lines = createInterface({ input: child.stdout });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    const first = await new Promise<string>((resolve) => lines.once('line', resolve));
    const match = /^paperbot emulator listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(first);
    expect(match).not.toBeNull();
    const baseUrl = match![1]!;
    const health = await http.send(baseUrl, 'GET', '/health');
    expect(health.json).toEqual({ status: 'ok' });
    const token = (await readFile(join(data, 'admin-token'), 'utf8')).trim();
    expect(stderr).not.toContain(token);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(http.send(baseUrl, 'GET', '/health')).rejects.toThrow();
  }, 20_000);

  it('without --data prints the admin token once, before the listening line', async () => {
    const child = spawn(process.execPath, ['bin/paperbot.js', 'emulator', '--port', '0'], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines = createInterface({ input: child.stdout });
    const received: string[] = [];
    const listening = new Promise<void>((resolve) =>
      lines.on('line', (line) => {
        received.push(line);
        if (line.startsWith('paperbot emulator listening on')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    await listening;
    expect(received).toHaveLength(2);
    expect(received[0]).toMatch(
      /^paperbot emulator admin token \(not saved.*\): [A-Za-z0-9_-]{43}$/,
    );
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  }, 20_000);
});
