import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format, inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  bytesToHex,
  Credential,
  type CredentialFields,
  createNativeSigner,
  createNobleSigner,
  encodeBase64,
  generateKeyPair,
  KeyFile,
  loadKeyFile,
  PrivateKey,
  verifySignature,
  writeKeyFile,
} from '../../src/signing/index.ts';

const seed = Uint8Array.from({ length: 32 }, (_, index) => (index * 37 + 11) & 0xff);
const seedBase64 = encodeBase64(seed);
const seedHex = bytesToHex(seed);
const privateKey = PrivateKey.fromSeed(seed);

const fields: CredentialFields = {
  keyId: 'key_file_test',
  accountId: 'acct_1',
  apiBaseUrl: 'http://127.0.0.1:8787',
  wsUrl: 'ws://127.0.0.1:8787/v1/ws',
  scopes: ['account:read', 'orders:read', 'fills:read', 'orders:write'],
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: null,
  privateKey,
};

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'paperbot-keys-'));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('expected a rejection');
}

function validDocument(): Record<string, unknown> {
  return {
    version: 1,
    key_id: 'key_file_test',
    account_id: 'acct_1',
    api_base_url: 'http://127.0.0.1:8787',
    ws_url: 'ws://127.0.0.1:8787/v1/ws',
    private_key: seedBase64,
    public_key: encodeBase64(privateKey.publicKey),
    scopes: ['account:read', 'orders:read'],
    created_at: '2026-01-01T00:00:00Z',
    expires_at: null,
  };
}

async function writeRaw(name: string, content: string, mode = 0o600): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, content, { mode });
  await chmod(path, mode);
  return path;
}

describe('writeKeyFile and loadKeyFile', () => {
  it('write a 0600 file in the contract shape that loads back to the same credential', async () => {
    const path = join(folder, 'key.json');
    await writeKeyFile(path, Credential.create(fields));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const document = JSON.parse(await readFile(path, 'utf8'));
    expect(Object.keys(document)).toEqual([
      'version',
      'key_id',
      'account_id',
      'api_base_url',
      'ws_url',
      'private_key',
      'public_key',
      'scopes',
      'created_at',
      'expires_at',
    ]);
    expect(KeyFile.parse(document)).toEqual(document);
    expect(document.private_key).toBe(seedBase64);
    expect(document.public_key).toBe(encodeBase64(privateKey.publicKey));

    const loaded = await loadKeyFile(path);
    expect(loaded.keyId).toBe('key_file_test');
    expect(loaded.accountId).toBe('acct_1');
    expect(loaded.scopes).toEqual(fields.scopes);
    expect(loaded.expiresAt).toBeNull();
    expect(bytesToHex(loaded.privateKey.revealSeed())).toBe(seedHex);
    const message = new TextEncoder().encode('hello');
    for (const implementation of ['native', 'noble'] as const) {
      const signature = loaded.createSigner(implementation).sign(message);
      expect(verifySignature(loaded.publicKey, message, signature)).toBe(true);
    }
    expect(await readdir(folder)).toEqual(['key.json']);
  });

  it('creates the file 0600 whatever the umask, and a missing folder 0700', async () => {
    const previous = process.umask(0);
    try {
      const path = join(folder, 'nested', 'key.json');
      await writeKeyFile(path, Credential.create(fields));
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await stat(join(folder, 'nested'))).mode & 0o777).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });

  it('refuses to replace an existing file unless told to, leaving it untouched', async () => {
    const path = await writeRaw('key.json', 'precious');
    const error = await errorOf(writeKeyFile(path, Credential.create(fields)));
    expect(error.code).toBe('KEY_FILE_EXISTS');
    expect(await readFile(path, 'utf8')).toBe('precious');
    expect(await readdir(folder)).toEqual(['key.json']);

    await writeKeyFile(path, Credential.create(fields), { overwrite: true });
    expect((await loadKeyFile(path)).keyId).toBe('key_file_test');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(folder)).toEqual(['key.json']);
  });

  for (const mode of [0o644, 0o640, 0o604, 0o660, 0o620, 0o602, 0o601, 0o610]) {
    it(`refuses a file with mode ${mode.toString(8)} and says how to fix it`, async () => {
      const path = await writeRaw('key.json', JSON.stringify(validDocument()), mode);
      const error = await errorOf(loadKeyFile(path));
      expect(error.code).toBe('KEY_FILE_INSECURE');
      expect(error.message).toContain(`chmod 600 ${path}`);
      expect(error.message).not.toContain(seedBase64);
    });
  }

  it('checks the mode before it reads the content', async () => {
    const path = await writeRaw('key.json', 'not json at all', 0o644);
    expect((await errorOf(loadKeyFile(path))).code).toBe('KEY_FILE_INSECURE');
  });

  it('accepts a file only its owner can read (0400)', async () => {
    const path = await writeRaw('key.json', JSON.stringify(validDocument()), 0o400);
    expect((await loadKeyFile(path)).keyId).toBe('key_file_test');
  });

  it('quotes a path with spaces in the chmod advice', async () => {
    const path = await writeRaw('my key.json', JSON.stringify(validDocument()), 0o644);
    expect((await errorOf(loadKeyFile(path))).message).toContain(`chmod 600 '${path}'`);
  });

  it('reports a missing file', async () => {
    expect((await errorOf(loadKeyFile(join(folder, 'absent.json')))).code).toBe(
      'KEY_FILE_NOT_FOUND',
    );
  });

  it('refuses a folder', async () => {
    expect((await errorOf(loadKeyFile(folder))).code).toBe('KEY_FILE_INVALID');
  });
});

describe('key file validation', () => {
  const invalidDocuments: Array<[string, (document: Record<string, unknown>) => unknown, string]> =
    [
      ['version 2', (d) => ({ ...d, version: 2 }), 'version'],
      ['a missing key id', ({ key_id: _, ...d }) => d, 'key_id'],
      ['an empty account id', (d) => ({ ...d, account_id: '' }), 'account_id'],
      ['an ftp API URL', (d) => ({ ...d, api_base_url: 'ftp://127.0.0.1' }), 'api_base_url'],
      ['an http WebSocket URL', (d) => ({ ...d, ws_url: 'http://127.0.0.1/v1/ws' }), 'ws_url'],
      ['a scope name with a comma', (d) => ({ ...d, scopes: ['account:read', 'a,b'] }), 'scopes.1'],
      ['a repeated scope', (d) => ({ ...d, scopes: ['account:read', 'account:read'] }), 'scopes'],
      [
        'a created_at without zone',
        (d) => ({ ...d, created_at: '2026-01-01T00:00:00' }),
        'created_at',
      ],
      ['a missing expires_at', ({ expires_at: _, ...d }) => d, 'expires_at'],
      [
        'a short public key',
        (d) => ({ ...d, public_key: encodeBase64(new Uint8Array(31)) }),
        'public_key',
      ],
      ['an array', () => [], 'JSON object'],
    ];

  for (const [name, change, mention] of invalidDocuments) {
    it(`refuses ${name}, naming the field`, async () => {
      const path = await writeRaw('key.json', JSON.stringify(change(validDocument())));
      const error = await errorOf(loadKeyFile(path));
      expect(error.code).toBe('KEY_FILE_INVALID');
      expect(error.message).toContain(mention);
    });
  }

  it('keeps unknown fields and scope names, with warnings that quote no value', async () => {
    const path = await writeRaw(
      'key.json',
      JSON.stringify({
        ...validDocument(),
        comment: 'from the website',
        [seedBase64]: true,
        scopes: ['account:read', 'trade', seedBase64],
      }),
    );
    const loaded = await loadKeyFile(path);
    expect(loaded.scopes).toEqual(['account:read', 'trade', seedBase64]);
    expect(loaded.warnings).toHaveLength(2);
    expect(loaded.warnings[0]).toContain('2 fields paperbot does not know');
    expect(loaded.warnings[1]).toContain('(trade, 1 other)');
    expect(loaded.warnings.join('\n')).not.toContain(seedBase64.slice(0, 10));
    expect(loaded.warnings.join('\n')).not.toContain('from the website');
  });

  it('refuses a public key that does not belong to the private key', async () => {
    const other = generateKeyPair();
    const path = await writeRaw(
      'key.json',
      JSON.stringify({ ...validDocument(), public_key: encodeBase64(other.publicKey) }),
    );
    const error = await errorOf(loadKeyFile(path));
    expect(error.code).toBe('KEY_FILE_INVALID');
    expect(error.message).toContain('public_key does not belong to private_key');
  });

  it('refuses invalid settings when creating a credential', () => {
    expect(() => Credential.create({ ...fields, apiBaseUrl: 'not a url' })).toThrow(/api_base_url/);
  });
});

describe('private key material never shows', () => {
  const credential = Credential.create(fields);
  const renderings = (value: unknown): string[] => [
    String(value),
    `${value}`,
    JSON.stringify(value),
    JSON.stringify({ nested: [value] }),
    inspect(value),
    inspect(value, { showHidden: true, depth: 20, getters: true }),
    inspect({ ...(value as object) }, { showHidden: true, depth: 20 }),
    format('%s %o %O %j', value, value, value, value),
  ];

  // Any ten consecutive characters of the seed, in base64 or hex, count as a leak: parsers
  // quote short snippets around a fault.
  const secretPieces = [seedBase64, seedHex].flatMap((secret) =>
    Array.from({ length: secret.length - 9 }, (_, at) => secret.slice(at, at + 10)),
  );

  function expectNoSecret(texts: readonly string[]): void {
    for (const text of texts) {
      const leaked = secretPieces.find((piece) => text.includes(piece));
      expect(leaked, text).toBeUndefined();
    }
  }

  it('in a PrivateKey, whichever way it is printed', () => {
    expect(String(privateKey)).toBe('[redacted]');
    expect(JSON.stringify(privateKey)).toBe('"[redacted]"');
    expect(inspect(privateKey)).toBe('[redacted]');
    expectNoSecret(renderings(privateKey));
  });

  it('in a Credential, whichever way it is printed', () => {
    const texts = renderings(credential);
    expectNoSecret(texts);
    expect(JSON.parse(JSON.stringify(credential)).private_key).toBe('[redacted]');
    expect(JSON.parse(JSON.stringify(credential)).key_id).toBe('key_file_test');
    expect(inspect(credential)).toContain('key_file_test');
  });

  it('in the signers', () => {
    expectNoSecret(renderings(createNativeSigner(privateKey)));
    expectNoSecret(renderings(createNobleSigner(privateKey)));
    expectNoSecret(renderings(credential.createSigner('noble')));
  });

  it('in the errors of malformed key files', async () => {
    const publicKey = encodeBase64(privateKey.publicKey);
    const documents: string[] = [
      // The seed with one byte too many, one too few, and in hex.
      JSON.stringify({
        ...validDocument(),
        private_key: encodeBase64(new Uint8Array([...seed, 1])),
      }),
      JSON.stringify({ ...validDocument(), private_key: encodeBase64(seed.subarray(0, 31)) }),
      JSON.stringify({ ...validDocument(), private_key: seedHex }),
      JSON.stringify({ ...validDocument(), private_key: `${seedBase64} ` }),
      JSON.stringify({ ...validDocument(), private_key: [seedBase64] }),
      // The seed under a wrong name, in a wrong field, or in broken JSON.
      JSON.stringify({ ...validDocument(), privateKey: seedBase64, private_key: undefined }),
      JSON.stringify({ ...validDocument(), key_id: `${seedBase64} ${seedHex}` }),
      JSON.stringify({ ...validDocument(), created_at: seedBase64, expires_at: seedHex }),
      JSON.stringify({ ...validDocument(), scopes: [`${seedBase64},`, `${seedHex} `] }),
      JSON.stringify({ ...validDocument(), public_key: seedBase64 }),
      `{"private_key": "${seedBase64}", "public_key": "${publicKey}"`,
      `{"private_key": "${seedBase64}" "hex": "${seedHex}"}`,
      `${seedHex}`,
      seedBase64,
      `[${seedBase64}]`,
      `{"private_key": ${seedBase64}}`,
    ];
    for (const [index, content] of documents.entries()) {
      const path = await writeRaw(`bad-${index}.json`, content);
      const error = await errorOf(loadKeyFile(path));
      expect(error.code).toBe('KEY_FILE_INVALID');
      expectNoSecret([
        error.message,
        String(error),
        inspect(error, { depth: 20, showHidden: true }),
        JSON.stringify(error),
        JSON.stringify((error as unknown as { details: unknown }).details),
      ]);
    }
  });

  it('in the errors of a bad seed given directly', () => {
    for (const text of [`${seedBase64}x`, seedHex]) {
      try {
        PrivateKey.fromBase64(text);
        expect.unreachable();
      } catch (error) {
        expect((error as { code: string }).code).toBe('PRIVATE_KEY_INVALID');
        expectNoSecret([String(error), inspect(error, { depth: 20 })]);
      }
    }
  });
});
