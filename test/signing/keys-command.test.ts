import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { KNOWN_SCOPES, loadKeyFile } from '../../src/signing/index.ts';

let folder: string;
let output: string[];
let errors: string[];

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'paperbot-cli-keys-'));
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

function run(...args: string[]): Promise<number> {
  return main(['node', 'paperbot', 'keys', ...args]);
}

describe('paperbot keys generate', () => {
  it('writes a 0600 key file with defaults and prints the public key, never the private one', async () => {
    const path = join(folder, 'key.json');
    expect(await run('generate', '--out', path)).toBe(0);
    expect((await stat(path)).mode & 0o777).toBe(0o600);

    const document = JSON.parse(await readFile(path, 'utf8'));
    expect(document.version).toBe(1);
    expect(document.key_id).toMatch(/^key_[A-Za-z0-9_-]{20}$/);
    expect(document.account_id).toBe('acct_local');
    expect(document.api_base_url).toBe('http://127.0.0.1:8787');
    expect(document.ws_url).toBe('ws://127.0.0.1:8787/v1/ws');
    expect(document.scopes).toEqual([...KNOWN_SCOPES]);
    expect(document.expires_at).toBeNull();
    expect(Number.isNaN(Date.parse(document.created_at))).toBe(false);

    const credential = await loadKeyFile(path);
    const printed = output.join('');
    expect(printed).toContain(path);
    expect(printed).toContain(credential.publicKeyBase64);
    expect(printed).toContain(document.key_id);
    expect(printed).not.toContain(document.private_key);
    expect(errors).toEqual([]);
  });

  it('takes every field from options', async () => {
    const path = join(folder, 'key.json');
    const code = await run(
      'generate',
      '--out',
      path,
      '--key-id',
      'key_custom_1',
      '--account-id',
      'acct_42',
      '--api',
      'https://practice.example.test',
      '--ws',
      'wss://practice.example.test/v1/ws',
      '--scopes',
      'account:read, fills:read',
    );
    expect(code).toBe(0);
    const credential = await loadKeyFile(path);
    expect(credential.keyId).toBe('key_custom_1');
    expect(credential.accountId).toBe('acct_42');
    expect(credential.apiBaseUrl).toBe('https://practice.example.test');
    expect(credential.wsUrl).toBe('wss://practice.example.test/v1/ws');
    expect(credential.scopes).toEqual(['account:read', 'fills:read']);
  });

  it('refuses to overwrite without --force and replaces the key with it', async () => {
    const path = join(folder, 'key.json');
    expect(await run('generate', '--out', path)).toBe(0);
    const first = await readFile(path, 'utf8');

    expect(await run('generate', '--out', path)).toBe(1);
    expect(errors.join('')).toContain('already exists');
    expect(await readFile(path, 'utf8')).toBe(first);

    expect(await run('generate', '--out', path, '--force')).toBe(0);
    const second = await readFile(path, 'utf8');
    expect(JSON.parse(second).private_key).not.toBe(JSON.parse(first).private_key);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(folder)).toEqual(['key.json']);
  });

  it('refuses a malformed scope name or a bad URL and writes nothing', async () => {
    const path = join(folder, 'key.json');
    expect(await run('generate', '--out', path, '--scopes', 'account:read,bad scope')).toBe(1);
    expect(errors.join('')).toContain('scopes');
    expect(await run('generate', '--out', path, '--api', 'ftp://example.test')).toBe(1);
    expect(errors.join('')).toContain('api_base_url');
    expect(await readdir(folder)).toEqual([]);
  });

  it('requires --out', async () => {
    expect(await run('generate')).not.toBe(0);
    expect(errors.join('')).toContain('--out');
  });

  it('does not replace a file it did not write either', async () => {
    const path = join(folder, 'notes.txt');
    await writeFile(path, 'keep me');
    expect(await run('generate', '--out', path)).toBe(1);
    expect(await readFile(path, 'utf8')).toBe('keep me');
  });
});
