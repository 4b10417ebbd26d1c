/**
 * Key files as a website gives them (`paperbot keys import`): a JSON object (or `NAME=value`
 * lines, or a bare PEM private key) with the key id, the private key, the URLs and the account
 * under common names, the private key as PKCS#8 PEM, hex, base64 or base64url (a 32-byte seed,
 * a 64-byte seed-and-public-key, or PKCS#8 DER), with or without the public key, which is then
 * derived and checked. Scope names are kept as they are.
 *
 * Nothing here puts a value of the source into a message: errors and the report name fields
 * (the alias that was read) and encodings, never contents.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { PaperbotError } from '../core/errors.ts';
import { isValidScope } from './canonical.ts';
import { encodeBase64 } from './encoding.ts';
import { Credential } from './key-file.ts';
import { ED25519_PUBLIC_KEY_LENGTH, ED25519_SEED_LENGTH } from './native.ts';
import { PrivateKey } from './private-key.ts';

/** The canonical fields and the names they go by elsewhere (compared without case, `_`, `-`). */
export const KEY_FIELD_ALIASES = {
  // Not `key`: too often the private key itself, and the key id is printed.
  key_id: ['key_id', 'api_key', 'api_key_id', 'access_key', 'access_key_id', 'id'],
  private_key: [
    'private_key',
    'secret',
    'secret_key',
    'api_secret',
    'private_key_pem',
    'signing_key',
    'seed',
  ],
  public_key: ['public_key', 'pub_key', 'pubkey', 'public_key_pem', 'verify_key'],
  api_base_url: ['api_base_url', 'rest_url', 'api_url', 'base_url', 'rest_base_url', 'url'],
  ws_url: ['ws_url', 'stream_url', 'websocket_url', 'wss_url', 'ws_base_url'],
  account_id: ['account_id', 'account', 'practice_account_id', 'account_number'],
  scopes: ['scopes', 'scope', 'permissions'],
  created_at: ['created_at', 'created', 'issued_at'],
  expires_at: ['expires_at', 'expires', 'expiry', 'expiration'],
} as const;
export type ImportedField = keyof typeof KEY_FIELD_ALIASES;

/** Overrides from the command line, for what the source lacks. */
export interface KeyImportOverrides {
  readonly keyId?: string;
  readonly accountId?: string;
  readonly apiBaseUrl?: string;
  readonly wsUrl?: string;
}

export interface KeyImportResult {
  readonly credential: Credential;
  /** Where each field came from: `private_key: "secret" (hex seed)`; never a value. */
  readonly report: readonly string[];
}

const folded = (name: string) => name.toLowerCase().replace(/[-_\s]/g, '');

function importError(source: string, message: string, fields: readonly string[] = []) {
  return new PaperbotError('KEY_IMPORT_INVALID', `cannot import ${source}: ${message}`, {
    details: { source, fields },
  });
}

/** The source's fields by name: a JSON object, `NAME=value` lines, or a bare PEM key. */
function documentOf(text: string, source: string): Record<string, unknown> {
  const trimmed = text.trim();
  if (trimmed.startsWith('-----BEGIN')) return { private_key: trimmed };
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      // The parser's message quotes the text around the fault, which may be the key.
      throw importError(source, 'it is not valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw importError(source, 'it must hold a JSON object');
    }
    return parsed as Record<string, unknown>;
  }
  const fields: Record<string, unknown> = {};
  for (const [index, line] of trimmed.split(/\r?\n/).entries()) {
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]\s*(.*?)\s*$/.exec(line);
    if (match === null) {
      throw importError(
        source,
        `line ${index + 1} is not NAME=value (the source must be JSON, NAME=value lines or a PEM key)`,
      );
    }
    const value = (match[2] as string).replace(/^(["'])(.*)\1$/, '$2');
    fields[match[1] as string] = value;
  }
  return fields;
}

/** The value of `field` under any of its names, and the name it was found under. */
function pick(
  document: Record<string, unknown>,
  field: ImportedField,
  source: string,
): { name: string; value: unknown } | null {
  const aliases = new Set<string>(KEY_FIELD_ALIASES[field].map(folded));
  const found = Object.keys(document).filter((name) => aliases.has(folded(name)));
  if (found.length === 0) return null;
  if (found.length > 1) {
    const names = found.filter((name) => aliasQuotable(name));
    throw importError(
      source,
      `${found.length} fields could be its ${field} (${names.join(', ')}); keep one`,
      [field],
    );
  }
  const name = found[0] as string;
  return { name, value: document[name] };
}

/** A field name to quote: it matched an alias, so it is a name, not a key. */
function aliasQuotable(name: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_.-]{0,40}$/.test(name);
}

type Decoded = { readonly bytes: Uint8Array; readonly encoding: string };

/** Hex, base64 or base64url text (padded or not), or null when it is none of them. */
function decodeText(text: string): Decoded | null {
  if (/^(?:[0-9a-fA-F]{2})+$/.test(text) && (text.length === 64 || text.length === 128)) {
    return { bytes: new Uint8Array(Buffer.from(text, 'hex')), encoding: 'hex' };
  }
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(text)) {
    const bytes = Buffer.from(text, 'base64');
    if (bytes.toString('base64').replace(/=+$/, '') === text.replace(/=+$/, '')) {
      return { bytes: new Uint8Array(bytes), encoding: 'base64' };
    }
  }
  if (/^[A-Za-z0-9_-]+={0,2}$/.test(text)) {
    const bytes = Buffer.from(text.replace(/=+$/, ''), 'base64url');
    if (bytes.toString('base64url') === text.replace(/=+$/, '')) {
      return { bytes: new Uint8Array(bytes), encoding: 'base64url' };
    }
  }
  return null;
}

function ed25519SeedOf(key: KeyObject): Uint8Array | null {
  if (key.asymmetricKeyType !== 'ed25519') return null;
  const jwk = key.export({ format: 'jwk' });
  return typeof jwk.d === 'string' ? new Uint8Array(Buffer.from(jwk.d, 'base64url')) : null;
}

function ed25519PublicOf(key: KeyObject): Uint8Array | null {
  if (key.asymmetricKeyType !== 'ed25519') return null;
  const jwk = key.export({ format: 'jwk' });
  return typeof jwk.x === 'string' ? new Uint8Array(Buffer.from(jwk.x, 'base64url')) : null;
}

interface PrivateKeyRead {
  readonly privateKey: PrivateKey;
  readonly encoding: string;
  /** The public key carried inside the private key (a 64-byte secret key), to check too. */
  readonly embeddedPublicKey: Uint8Array | null;
}

function readPrivateKey(value: unknown, field: string, source: string): PrivateKeyRead {
  const refuse = () =>
    importError(
      source,
      `${quoteName(field)} must be an Ed25519 private key: PKCS#8 PEM, or hex, base64 or base64url of a ` +
        '32-byte seed, a 64-byte seed and public key, or PKCS#8 DER',
      ['private_key'],
    );
  if (typeof value !== 'string') throw refuse();
  const text = value.trim();
  if (text.startsWith('-----BEGIN')) {
    let seed: Uint8Array | null = null;
    try {
      seed = ed25519SeedOf(createPrivateKey({ key: text, format: 'pem' }));
    } catch {
      throw refuse();
    }
    if (seed === null) throw refuse();
    return { ...fromSeed(seed), encoding: 'PKCS#8 PEM', embeddedPublicKey: null };
  }
  const decoded = decodeText(text);
  if (decoded === null) throw refuse();
  try {
    const { bytes, encoding } = decoded;
    if (bytes.byteLength === ED25519_SEED_LENGTH) {
      return { ...fromSeed(bytes), encoding: `${encoding} seed`, embeddedPublicKey: null };
    }
    if (bytes.byteLength === ED25519_SEED_LENGTH + ED25519_PUBLIC_KEY_LENGTH) {
      return {
        ...fromSeed(bytes.subarray(0, ED25519_SEED_LENGTH)),
        encoding: `${encoding} seed and public key`,
        embeddedPublicKey: Uint8Array.from(bytes.subarray(ED25519_SEED_LENGTH)),
      };
    }
    let seed: Uint8Array | null = null;
    try {
      seed = ed25519SeedOf(
        createPrivateKey({ key: Buffer.from(bytes), format: 'der', type: 'pkcs8' }),
      );
    } catch {
      throw refuse();
    }
    if (seed === null) throw refuse();
    return { ...fromSeed(seed), encoding: `${encoding} PKCS#8 DER`, embeddedPublicKey: null };
  } finally {
    decoded.bytes.fill(0);
  }
}

function fromSeed(seed: Uint8Array): { privateKey: PrivateKey } {
  const privateKey = PrivateKey.fromSeed(seed);
  seed.fill(0);
  return { privateKey };
}

function readPublicKey(value: unknown, field: string, source: string): Uint8Array {
  const refuse = () =>
    importError(
      source,
      `${quoteName(field)} must be an Ed25519 public key: SPKI PEM, or hex, base64 or base64url of 32 bytes`,
      ['public_key'],
    );
  if (typeof value !== 'string') throw refuse();
  const text = value.trim();
  if (text.startsWith('-----BEGIN')) {
    try {
      const key = ed25519PublicOf(createPublicKey({ key: text, format: 'pem' }));
      if (key !== null) return key;
    } catch {
      // Refused below.
    }
    throw refuse();
  }
  const decoded = /^[0-9a-fA-F]{64}$/.test(text)
    ? { bytes: new Uint8Array(Buffer.from(text, 'hex')) }
    : decodeText(text);
  if (decoded === null || decoded.bytes.byteLength !== ED25519_PUBLIC_KEY_LENGTH) throw refuse();
  return decoded.bytes;
}

function textValue(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

function scopesOf(value: unknown, field: string, source: string): string[] {
  const list =
    typeof value === 'string'
      ? value.split(/[\s,]+/).filter((scope) => scope !== '')
      : Array.isArray(value)
        ? value
        : null;
  if (list === null || !list.every((scope) => typeof scope === 'string' && isValidScope(scope))) {
    throw importError(
      source,
      `${quoteName(field)} must be a list of scope names (or one string of them separated by spaces or commas)`,
      ['scopes'],
    );
  }
  return [...new Set(list as string[])];
}

/** The WebSocket address under an API base URL: same host, ws(s) scheme, path /v1/ws. */
function webSocketUrlUnder(apiBaseUrl: string): string | undefined {
  try {
    const url = new URL(apiBaseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/ws`;
    url.search = '';
    url.hash = '';
    return url.toString();
  } catch {
    return undefined;
  }
}

/**
 * Reads a key in another layout into a `Credential`. `text` is the source's content, `source`
 * names it in messages, `now` is the RFC 3339 `created_at` used when the source has none.
 * Throws `KEY_IMPORT_INVALID` naming the field (never its value) when something is missing or
 * unreadable, and when a given public key does not belong to the private key.
 */
export function importKey(
  text: string,
  source: string,
  now: string,
  overrides: KeyImportOverrides = {},
): KeyImportResult {
  const document = documentOf(text, source);
  const report: string[] = [];
  const found = (field: ImportedField) => pick(document, field, source);

  const privateField = found('private_key');
  if (privateField === null) {
    throw importError(
      source,
      `no private key (looked for ${KEY_FIELD_ALIASES.private_key.join(', ')})`,
      ['private_key'],
    );
  }
  const read = readPrivateKey(privateField.value, privateField.name, source);
  report.push(`private_key: from ${quoteName(privateField.name)} (${read.encoding})`);
  const derived = read.privateKey.publicKey;
  const publicField = found('public_key');
  const givenPublic =
    publicField === null ? null : readPublicKey(publicField.value, publicField.name, source);
  for (const [given, where] of [
    [givenPublic, publicField?.name ?? ''],
    [read.embeddedPublicKey, `the second half of ${privateField.name}`],
  ] as const) {
    if (given !== null && encodeBase64(given) !== encodeBase64(derived)) {
      throw importError(
        source,
        `the public key in ${quoteName(where)} does not belong to the private key`,
        ['public_key'],
      );
    }
  }
  report.push(
    givenPublic === null
      ? 'public_key: derived from the private key'
      : `public_key: from ${quoteName(publicField?.name ?? '')}, checked against the private key`,
  );

  const take = (field: ImportedField, override: string | undefined): string | undefined => {
    if (override !== undefined) {
      report.push(`${field}: from the command line`);
      return override;
    }
    const entry = found(field);
    const value = entry === null ? undefined : textValue(entry.value);
    if (entry !== null && value === undefined) {
      throw importError(source, `${quoteName(entry.name)} must be text`, [field]);
    }
    if (entry !== null) report.push(`${field}: from ${quoteName(entry.name)}`);
    return value;
  };
  const keyId = take('key_id', overrides.keyId);
  const accountId = take('account_id', overrides.accountId);
  const apiBaseUrl = take('api_base_url', overrides.apiBaseUrl);
  let wsUrl = take('ws_url', overrides.wsUrl);
  if (wsUrl === undefined && apiBaseUrl !== undefined) {
    wsUrl = webSocketUrlUnder(apiBaseUrl);
    if (wsUrl !== undefined) report.push('ws_url: derived from the API URL (path /v1/ws)');
  }
  const missing: [string, string, string | undefined][] = [
    ['key_id', '--key-id', keyId],
    ['account_id', '--account-id', accountId],
    ['api_base_url', '--api', apiBaseUrl],
    ['ws_url', '--ws', wsUrl],
  ];
  const absent = missing.filter(([, , value]) => value === undefined);
  if (absent.length > 0) {
    throw importError(
      source,
      absent
        .map(
          ([field, option]) =>
            `no ${field} (looked for ${KEY_FIELD_ALIASES[field as ImportedField].join(', ')}; or pass ${option})`,
        )
        .join('; '),
      absent.map(([field]) => field),
    );
  }
  const scopesField = found('scopes');
  const scopes = scopesField === null ? [] : scopesOf(scopesField.value, scopesField.name, source);
  report.push(
    scopesField === null
      ? 'scopes: none listed (what the key may do is learned from the venue)'
      : `scopes: from ${quoteName(scopesField.name)}, kept as they are`,
  );
  const createdAt = take('created_at', undefined) ?? now;
  const expiresAt = take('expires_at', undefined) ?? null;
  const credential = Credential.create({
    keyId: keyId as string,
    accountId: accountId as string,
    apiBaseUrl: apiBaseUrl as string,
    wsUrl: wsUrl as string,
    scopes,
    createdAt,
    expiresAt,
    privateKey: read.privateKey,
  });
  return { credential, report };
}

function quoteName(name: string): string {
  return aliasQuotable(name) ? `"${name}"` : 'a field';
}
