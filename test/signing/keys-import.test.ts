/**
 * `paperbot keys import FILE --out KEY`: keys as a website gives them (other field names, the
 * private key as PKCS#8 PEM, hex, base64 or base64url, with or without the public key, unknown
 * scope names) become the canonical key file, mode 0600, that signs like the original key. Not
 * a byte of the private key, in any encoding, reaches the output or an error.
 */
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { bytesToHex, encodeBase64, loadKeyFile, PrivateKey } from '../../src/signing/index.ts';

const seed = Uint8Array.from({ length: 32 }, (_, index) => (index * 53 + 7) & 0xff);
const publicKey = PrivateKey.fromSeed(seed).publicKey;
const other = PrivateKey.fromSeed(Uint8Array.from({ length: 32 }, (_, index) => index)).publicKey;
const seedAnd = (tail: Uint8Array) => Buffer.concat([Buffer.from(seed), Buffer.from(tail)]);

/** PKCS#8 of the seed: the fixed Ed25519 prefix, then the 32 bytes. */
const pkcs8Der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
const pem = createPrivateKey({ key: pkcs8Der, format: 'der', type: 'pkcs8' })
  .export({ format: 'pem', type: 'pkcs8' })
  .toString();

/** Every spelling of the seed (and of the 64-byte secret key) a leak could take. */
const secretSpellings = [
  bytesToHex(seed),
  bytesToHex(seed).toUpperCase(),
  encodeBase64(seed),
  Buffer.from(seed).toString('base64url'),
  seedAnd(publicKey).toString('base64'),
  seedAnd(publicKey).toString('base64url'),
  pkcs8Der.toString('base64'),
  ...pem.split('\n').filter((line) => line !== '' && !line.startsWith('-----')),
];
const secretPieces = secretSpellings.flatMap((secret) =>
  Array.from({ length: secret.length - 11 }, (_, at) => secret.slice(at, at + 12)),
);

let folder: string;
let output: string[];
let errors: string[];

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'paperbot-keys-import-'));
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

function expectNoKeyMaterial(): void {
  const text = [...output, ...errors].join('');
  const leaked = secretPieces.find((piece) => text.includes(piece));
  expect(leaked, text).toBeUndefined();
}

async function importSource(content: string, ...options: string[]) {
  const source = join(folder, 'downloaded.txt');
  await writeFile(source, content, { mode: 0o644 });
  const out = join(folder, 'key.json');
  const code = await main(['node', 'paperbot', 'keys', 'import', source, '--out', out, ...options]);
  expectNoKeyMaterial();
  return { code, out };
}

async function expectImported(out: string): Promise<void> {
  expect((await stat(out)).mode & 0o777).toBe(0o600);
  const credential = await loadKeyFile(out);
  expect(encodeBase64(credential.publicKey)).toBe(encodeBase64(publicKey));
  const document = JSON.parse(await readFile(out, 'utf8'));
  expect(document.private_key).toBe(encodeBase64(seed));
  expect(document.public_key).toBe(encodeBase64(publicKey));
}

const website = {
  keyId: 'pk_live_0001',
  accountId: 'acct_web_9',
  apiUrl: 'https://practice.example.test/api',
  permissions: 'account:read orders:read fills:read trade',
};

describe('paperbot keys import', () => {
  it('reads aliased names with a PKCS#8 PEM key, derives the public key and keeps scope names', async () => {
    const { code, out } = await importSource(JSON.stringify({ ...website, privateKey: pem }));
    expect(errors.join('')).toBe('');
    expect(code).toBe(0);
    await expectImported(out);
    const credential = await loadKeyFile(out);
    expect(credential).toMatchObject({
      keyId: 'pk_live_0001',
      accountId: 'acct_web_9',
      apiBaseUrl: 'https://practice.example.test/api',
      wsUrl: 'wss://practice.example.test/api/v1/ws',
      scopes: ['account:read', 'orders:read', 'fills:read', 'trade'],
    });
    const printed = output.join('');
    expect(printed).toContain('private_key: from "privateKey" (PKCS#8 PEM)');
    expect(printed).toContain('public_key: derived from the private key');
    expect(printed).toContain('ws_url: derived from the API URL');
    expect(printed).toContain('can be read by group or others; delete it');
  });

  it('reads a hex seed with the public key in hex under snake_case aliases', async () => {
    const { code, out } = await importSource(
      JSON.stringify({
        api_key: 'key_hex',
        secret_key: bytesToHex(seed),
        public_key: bytesToHex(publicKey),
        account_id: 'acct_1',
        base_url: 'http://127.0.0.1:8787',
        stream_url: 'ws://127.0.0.1:8787/v1/ws',
        scopes: ['account:read', 'orders:write'],
      }),
    );
    expect(code).toBe(0);
    await expectImported(out);
    expect(output.join('')).toContain('(hex seed)');
    expect(output.join('')).toContain('checked against the private key');
  });

  it('reads base64url of the 64-byte seed and public key, and unpadded base64', async () => {
    for (const [index, privateText] of [
      seedAnd(publicKey).toString('base64url'),
      encodeBase64(seed).replace(/=+$/, ''),
    ].entries()) {
      const { code, out } = await importSource(
        JSON.stringify({
          id: `key_${index}`,
          secret: privateText,
          account: 'acct_2',
          rest_url: 'http://127.0.0.1:8787',
          websocket_url: 'ws://127.0.0.1:8787/v1/ws',
        }),
        '--force',
      );
      expect(code).toBe(0);
      await expectImported(out);
    }
  });

  it('reads NAME=value lines and a bare PEM with the rest on the command line', async () => {
    const lines = await importSource(
      [
        '# downloaded from the website',
        'KEY_ID=key_env',
        `PRIVATE_KEY="${Buffer.from(pkcs8Der).toString('base64')}"`,
        'ACCOUNT_ID=acct_env',
        'API_URL=http://127.0.0.1:8787',
      ].join('\n'),
    );
    expect(lines.code).toBe(0);
    await expectImported(lines.out);
    expect(output.join('')).toContain('base64 PKCS#8 DER');
    const bare = await importSource(
      pem,
      '--key-id',
      'key_pem',
      '--account-id',
      'acct_pem',
      '--api',
      'http://127.0.0.1:8787',
      '--force',
    );
    expect(bare.code).toBe(0);
    await expectImported(bare.out);
  });

  it('refuses a public key that does not belong to the private key, writing nothing', async () => {
    for (const layout of [
      { private_key: bytesToHex(seed), public_key: encodeBase64(other) },
      { private_key: seedAnd(other).toString('base64') },
    ]) {
      const { code } = await importSource(
        JSON.stringify({ ...layout, key_id: 'k', account_id: 'a', api_url: 'http://127.0.0.1:1' }),
      );
      expect(code).not.toBe(0);
      expect(errors.join('')).toContain('does not belong to the private key');
      expect(await readdir(folder)).toEqual(['downloaded.txt']);
    }
  });

  it('names what is missing or unreadable, never a value', async () => {
    const cases: [Record<string, unknown> | string, string][] = [
      [{ key_id: 'k', account_id: 'a', api_url: 'http://x.test' }, 'no private key'],
      [{ secret: `${bytesToHex(seed)}00`, key_id: 'k' }, '"secret" must be an Ed25519 private key'],
      [{ secret: bytesToHex(seed) }, 'no key_id'],
      [{ secret: bytesToHex(seed), key_id: 'k', apiKey: 'k2' }, '2 fields could be its key_id'],
      [`{"secret": "${bytesToHex(seed)}"`, 'not valid JSON'],
      [`${encodeBase64(seed)}`, 'is not NAME=value'],
      [
        {
          secret: generateKeyPairSync('x25519')
            .privateKey.export({ format: 'pem', type: 'pkcs8' })
            .toString(),
          key_id: 'k',
        },
        '"secret" must be an Ed25519 private key',
      ],
    ];
    for (const [content, mention] of cases) {
      errors.length = 0;
      const { code } = await importSource(
        typeof content === 'string' ? content : JSON.stringify(content),
      );
      expect(code, mention).not.toBe(0);
      expect(errors.join(''), mention).toContain(mention);
    }
    expect(inspect(errors)).not.toContain(bytesToHex(seed).slice(0, 12));
  });
});
