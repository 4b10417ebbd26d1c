/**
 * The client and the emulator on a wire profile: REST and the stream work when both sides share
 * it; a client on another profile is refused with INVALID_SIGNATURE and told which settings to
 * check; a scope the key lacks is learned from the venue's answer in the venue's own scope
 * names; `paperbot emulator --wire FILE` verifies with the file's profile and refuses a bad file
 * with every problem before it listens.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stringify } from 'yaml';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RestClient } from '../../src/client/index.ts';
import { systemClock } from '../../src/core/clock.ts';
import { AdminClient } from '../../src/emulator/index.ts';
import {
  Credential,
  encodeBase64,
  generateKeyPair,
  parseWireProfile,
  type WireProfileInput,
} from '../../src/signing/index.ts';
import { Environment } from './environment.ts';

const PROFILE: WireProfileInput = {
  timestamp: 'rfc3339',
  signature_encoding: 'base64url',
  nonce: { format: 'uuid' },
  request_input: {
    fields: ['method', 'path', 'query', 'timestamp', 'nonce', 'body_sha256'],
    separator: ';',
  },
  headers: {
    api_key: 'Api-Key',
    timestamp: 'Api-Timestamp',
    nonce: 'Api-Nonce',
    signature: 'Api-Signature',
  },
  websocket_auth: { fields: { key_id: 'key', signature: 'sig' } },
  scopes: { 'fills:read': 'fills.read', 'orders:read': 'orders.read' },
};
const profile = parseWireProfile(PROFILE);

let environment: Environment | null = null;
const folders: string[] = [];

afterEach(async () => {
  await environment?.close();
  environment = null;
});
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('REST on a wire profile', () => {
  it('works when both sides share the profile', async () => {
    environment = await Environment.start({
      emulator: { wire: profile },
      rest: { wireProfile: profile },
    });
    const account = await environment.rest.getAccount();
    expect(account.account_id).toBe(environment.accountId);
  });

  it('a client on SVC1 is refused with INVALID_SIGNATURE naming the settings to check', async () => {
    environment = await Environment.start({ emulator: { wire: profile } });
    const refusal = await environment.rest.getAccount().then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toMatchObject({
      code: 'INVALID_SIGNATURE',
      source: 'service',
      httpStatus: 401,
      details: expect.objectContaining({ reason: 'missing_header', field: 'Api-Key' }),
    });
    const message = (refusal as Error).message;
    expect(message).toContain('check the wire settings');
    for (const setting of [
      'venue.wire.request_input ({version}\\n{method}\\n{target}',
      'venue.wire.timestamp (ms)',
      'venue.wire.signature_encoding (base64)',
      'venue.wire.headers (SVC-API-KEY',
    ]) {
      expect(message).toContain(setting);
    }
  });
});

describe('scopes on a wire profile', () => {
  it('a REST refusal names the scope as the venue names it', async () => {
    environment = await Environment.start({
      emulator: { wire: profile },
      rest: { wireProfile: profile },
      key: { scopes: ['account:read', 'orders:read'] },
    });
    await expect(environment.rest.listFills({})).rejects.toMatchObject({
      code: 'SCOPE_REQUIRED',
      details: expect.objectContaining({ required_scope: 'fills.read' }),
    });
  });
});

describe('the stream on a wire profile', () => {
  it('authenticates with the renamed frame and learns a missing scope in the venue names', async () => {
    environment = await Environment.start({
      emulator: { wire: profile },
      rest: { wireProfile: profile },
      key: { scopes: ['account:read', 'orders:read', 'orders:write'] },
    });
    const stream = environment.stream({ startAfterSequence: 0 });
    const errors: string[] = [];
    stream.errors$.subscribe((error) => errors.push(error.message));
    await stream.connect();
    expect(stream.state).toBe('live');
    // The venue answered `fills.read`; the client mapped it back through the profile.
    expect(stream.lackingScopes).toEqual(['fills:read']);
    expect(errors.join('\n')).toContain('following only account, positions, risk, orders');
  });
});

describe('paperbot emulator --wire FILE', () => {
  function startCli(...args: string[]) {
    const child = spawn(process.execPath, ['bin/paperbot.js', 'emulator', '--port', '0', ...args], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const listening = new Promise<string | null>((resolve) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        lines.push(line);
        const match = /^paperbot emulator listening on (\S+)$/.exec(line);
        if (match !== null) resolve(match[1]!);
      });
      child.once('exit', () => resolve(null));
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    return { child, lines, listening, exited, stderr: () => stderr };
  }

  function profileFile(content: unknown): string {
    const folder = mkdtempSync(join(tmpdir(), 'paperbot-wire-cli-'));
    folders.push(folder);
    const path = join(folder, 'wire.yaml');
    writeFileSync(path, stringify(content));
    return path;
  }

  it('verifies with the profile of the file', async () => {
    const cli = startCli('--wire', profileFile(PROFILE));
    const baseUrl = await cli.listening;
    expect(baseUrl).not.toBeNull();
    const token = /: (\S+)$/.exec(cli.lines[0] ?? '')![1]!;
    const { privateKey, publicKey } = generateKeyPair();
    const created = await new AdminClient({ baseUrl: baseUrl!, token }).createKey({
      public_key: encodeBase64(publicKey),
    });
    const credential = Credential.create({
      keyId: created.key_id,
      accountId: created.account_id,
      apiBaseUrl: baseUrl!,
      wsUrl: `${baseUrl!.replace('http', 'ws')}/v1/ws`,
      scopes: created.scopes,
      createdAt: created.created_at,
      expiresAt: null,
      privateKey,
    });
    const onProfile = new RestClient({ credential, wireProfile: profile, clock: systemClock });
    const onSvc1 = new RestClient({ credential, clock: systemClock });
    try {
      expect((await onProfile.getAccount()).account_id).toBe(created.account_id);
      await expect(onSvc1.getAccount()).rejects.toMatchObject({ code: 'INVALID_SIGNATURE' });
    } finally {
      await onProfile.close();
      await onSvc1.close();
      cli.child.kill('SIGINT');
    }
    expect(await cli.exited).toBe(0);
  }, 30_000);

  it('refuses a bad profile with every problem and its path, before it listens', async () => {
    const cli = startCli(
      '--wire',
      profileFile({ timestamp: 'minutes', headers: { nonce: 'X-A', signature: 'x-a' }, colour: 1 }),
    );
    expect(await cli.listening).toBeNull();
    expect(await cli.exited).not.toBe(0);
    const stderr = cli.stderr();
    expect(stderr).toContain('invalid wire profile');
    expect(stderr).toContain('timestamp: must be one of: ms, s, rfc3339');
    expect(stderr).toContain('headers.signature: the same header name as nonce');
    expect(stderr).toContain('colour');
    expect(cli.lines.filter((line) => line.includes('listening'))).toEqual([]);
  }, 30_000);
});
