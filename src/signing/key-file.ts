/**
 * Key files (contract section 2): the JSON a developer key is kept in, and the `Credential` it
 * loads into. The file must be private to its owner: it is written with mode 0600 and a file
 * that group or others can reach is refused before anything else happens.
 *
 * The base64 seed exists as a string only inside `loadKeyFile` and `writeKeyFile`; everywhere
 * else it is a `PrivateKey`, which prints as `[redacted]`. Error messages are built from field
 * names, never from file contents.
 */
import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { isPaperbotError, PaperbotError } from '../core/errors.ts';
import { readUserFile } from '../core/user-file.ts';
import { isValidKeyId, isValidScope } from './canonical.ts';
import { decodeBase64Strict, encodeBase64 } from './encoding.ts';
import { ED25519_PUBLIC_KEY_LENGTH, ED25519_SEED_LENGTH } from './native.ts';
import { inspectCustom, PrivateKey, REDACTED } from './private-key.ts';
import { createSigner, type Signer, type SignerImplementation } from './signer.ts';

export const KEY_FILE_VERSION = 1;
export const KEY_FILE_MODE = 0o600;
/** Larger than any real key file by far; refusing bigger files keeps a wrong path from being read. */
export const KEY_FILE_MAX_BYTES = 64 * 1024;

export const KNOWN_SCOPES = ['account:read', 'orders:read', 'fills:read', 'orders:write'] as const;
export const KeyScope = z.enum(KNOWN_SCOPES);
export type KeyScope = z.infer<typeof KeyScope>;

/**
 * A scope as a key file may name it: the protocol's four, or a venue's own name (kept as it is,
 * with a warning; what the key may do is learned from the venue's SCOPE_REQUIRED answers).
 */
const ScopeName = z.string().refine(isValidScope);

export const DEFAULT_API_BASE_URL = 'http://127.0.0.1:8787';
export const DEFAULT_WS_URL = 'ws://127.0.0.1:8787/v1/ws';

// What each field must be, in words. Validation messages come only from here, so a message can
// never quote a value out of the file.
const fieldRules = {
  version: 'must be 1',
  key_id: 'must be 1 to 128 visible ASCII characters',
  account_id: 'must be 1 to 128 characters',
  api_base_url: 'must be an http or https URL',
  ws_url: 'must be a ws or wss URL',
  private_key: 'must be standard padded base64 of a 32-byte Ed25519 seed',
  public_key: 'must be standard padded base64 of a 32-byte Ed25519 public key',
  scopes:
    'must be a list of distinct scope names of 1 to 64 visible ASCII characters other than ","',
  created_at: 'must be an RFC 3339 date-time',
  expires_at: 'must be an RFC 3339 date-time or null',
} as const;

function base64OfLength(length: number, rule: string) {
  return z
    .string({ error: rule })
    .refine((text) => decodeBase64Strict(text)?.byteLength === length, { error: rule });
}

/**
 * The key file. Fields it does not know are kept out of the way (a website may add its own),
 * counted in a warning, never a reason to refuse the file.
 */
export const KeyFile = z.looseObject({
  version: z.literal(KEY_FILE_VERSION, { error: fieldRules.version }),
  key_id: z.string({ error: fieldRules.key_id }).refine(isValidKeyId, { error: fieldRules.key_id }),
  account_id: z
    .string({ error: fieldRules.account_id })
    .min(1, { error: fieldRules.account_id })
    .max(128, { error: fieldRules.account_id }),
  api_base_url: z.url({ protocol: /^https?$/, error: fieldRules.api_base_url }),
  ws_url: z.url({ protocol: /^wss?$/, error: fieldRules.ws_url }),
  private_key: base64OfLength(ED25519_SEED_LENGTH, fieldRules.private_key),
  public_key: base64OfLength(ED25519_PUBLIC_KEY_LENGTH, fieldRules.public_key),
  scopes: z
    .array(ScopeName, { error: fieldRules.scopes })
    .refine((scopes) => new Set(scopes).size === scopes.length, { error: fieldRules.scopes }),
  created_at: z.iso.datetime({ offset: true, error: fieldRules.created_at }),
  expires_at: z.iso.datetime({ offset: true, error: fieldRules.expires_at }).nullable(),
});
export type KeyFile = z.infer<typeof KeyFile>;

/** What makes a credential: its public fields. */
export type CredentialFields = Pick<
  Credential,
  | 'keyId'
  | 'accountId'
  | 'apiBaseUrl'
  | 'wsUrl'
  | 'scopes'
  | 'createdAt'
  | 'expiresAt'
  | 'privateKey'
>;

// Module-private access to the key-file form, so only `writeKeyFile` can pair it with the seed.
let keyFileOf: (credential: Credential, privateKeyText: string) => KeyFile;

/** A developer key, loaded or freshly made. Prints with its private key as `[redacted]`. */
export class Credential {
  readonly keyId: string;
  readonly accountId: string;
  readonly apiBaseUrl: string;
  readonly wsUrl: string;
  /** As the file names them: the protocol's names, or the venue's own. */
  readonly scopes: readonly string[];
  /** What loading the file noticed and accepted (unknown fields, unknown scope names). */
  readonly warnings: readonly string[];
  /** RFC 3339. */
  readonly createdAt: string;
  /** RFC 3339, or null for a key that does not expire. */
  readonly expiresAt: string | null;
  readonly privateKey: PrivateKey;
  readonly #publicKey: Uint8Array;

  private constructor(fields: CredentialFields, warnings: readonly string[]) {
    this.warnings = Object.freeze([...warnings]);
    this.keyId = fields.keyId;
    this.accountId = fields.accountId;
    this.apiBaseUrl = fields.apiBaseUrl;
    this.wsUrl = fields.wsUrl;
    this.scopes = Object.freeze([...fields.scopes]);
    this.createdAt = fields.createdAt;
    this.expiresAt = fields.expiresAt;
    this.privateKey = fields.privateKey;
    this.#publicKey = fields.privateKey.publicKey;
  }

  /**
   * Checks every field against the key-file schema and throws `KEY_FILE_INVALID` naming the
   * fields at fault.
   */
  static create(fields: CredentialFields, warnings: readonly string[] = []): Credential {
    const credential = new Credential(fields, warnings);
    const problems = KeyFile.safeParse(credential.#toKeyFile(PLACEHOLDER_SEED_BASE64));
    if (!problems.success) {
      throw new PaperbotError(
        'KEY_FILE_INVALID',
        `invalid key settings: ${describeIssues(problems.error.issues)}`,
        { details: { fields: issuePaths(problems.error.issues) } },
      );
    }
    return credential;
  }

  get publicKey(): Uint8Array {
    return Uint8Array.from(this.#publicKey);
  }

  get publicKeyBase64(): string {
    return encodeBase64(this.#publicKey);
  }

  createSigner(implementation: SignerImplementation = 'native'): Signer {
    return createSigner(this.privateKey, implementation);
  }

  /** The key-file shape with the private key redacted. */
  toJSON(): Omit<KeyFile, 'private_key'> & { private_key: typeof REDACTED } {
    return { ...this.#toKeyFile(REDACTED), private_key: REDACTED };
  }

  toString(): string {
    return `Credential(key_id=${this.keyId}, account_id=${this.accountId}, private_key=${REDACTED})`;
  }

  [inspectCustom](): string {
    return this.toString();
  }

  static {
    keyFileOf = (credential, privateKeyText) => credential.#toKeyFile(privateKeyText);
  }

  #toKeyFile(privateKeyText: string): KeyFile {
    return {
      version: KEY_FILE_VERSION,
      key_id: this.keyId,
      account_id: this.accountId,
      api_base_url: this.apiBaseUrl,
      ws_url: this.wsUrl,
      private_key: privateKeyText,
      public_key: encodeBase64(this.#publicKey),
      scopes: [...this.scopes],
      created_at: this.createdAt,
      expires_at: this.expiresAt,
    };
  }
}

// Schema checks of a credential being created use a stand-in seed: the real one is already a
// PrivateKey, and the schema must never see it outside the file writer.
const PLACEHOLDER_SEED_BASE64 = encodeBase64(new Uint8Array(ED25519_SEED_LENGTH));

export interface KeyPair {
  readonly privateKey: PrivateKey;
  readonly publicKey: Uint8Array;
}

/** A fresh Ed25519 key pair from 32 bytes of the system CSPRNG. */
export function generateKeyPair(): KeyPair {
  const privateKey = PrivateKey.generate();
  return { privateKey, publicKey: privateKey.publicKey };
}

export interface WriteKeyFileOptions {
  /** Replace an existing file. Without it an existing file is an error (`KEY_FILE_EXISTS`). */
  readonly overwrite?: boolean;
}

/**
 * Writes `credential` as a key file with mode 0600. The content goes to a temporary file in the
 * same folder, created with mode 0600 from the start, and is then moved into place, so the file
 * is never readable by others and never half-written. Without `overwrite`, the move is a hard
 * link, which fails if the name is taken, so an existing key cannot be lost to a race either.
 * A missing folder is created with mode 0700.
 */
export async function writeKeyFile(
  path: string,
  credential: Credential,
  options: WriteKeyFileOptions = {},
): Promise<void> {
  const folder = dirname(path);
  const temporaryPath = join(folder, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const handle = await open(temporaryPath, 'wx', KEY_FILE_MODE);
    try {
      // The creation mode is filtered by the umask; set it exactly.
      await handle.chmod(KEY_FILE_MODE);
      const contents = `${JSON.stringify(
        keyFileOf(credential, credential.privateKey.revealSeedBase64()),
        null,
        2,
      )}\n`;
      await handle.writeFile(contents, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.overwrite === true) {
      await rename(temporaryPath, path);
    } else {
      await moveWithoutReplacing(temporaryPath, path);
    }
  } catch (error) {
    await unlink(temporaryPath).catch(() => undefined);
    if (isPaperbotError(error)) throw error;
    throw new PaperbotError(
      'KEY_FILE_UNWRITABLE',
      `could not write key file ${path}: ${fileErrorCode(error)}`,
      { cause: error, details: { path } },
    );
  }
}

async function moveWithoutReplacing(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    if (fileErrorCode(error) === 'EEXIST') throw keyFileExists(to);
    // Some file systems have no hard links; fall back to check-then-rename.
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV'].includes(fileErrorCode(error))) {
      throw error;
    }
    const existing = await lstat(to).catch(() => null);
    if (existing !== null) throw keyFileExists(to);
    await rename(from, to);
    return;
  }
  await unlink(from);
}

function keyFileExists(path: string): PaperbotError {
  return new PaperbotError(
    'KEY_FILE_EXISTS',
    `key file ${path} already exists; choose another path or replace it deliberately (--force)`,
    { details: { path } },
  );
}

/**
 * Reads and checks a key file. Refuses, in this order: a missing or unreadable file
 * (`KEY_FILE_NOT_FOUND`, `KEY_FILE_UNREADABLE`), one that group or others can access
 * (`KEY_FILE_INSECURE`, with the `chmod 600` that fixes it), and one whose content is not a
 * valid version 1 key file or whose public key does not match its private key
 * (`KEY_FILE_INVALID`). Purely local: call it before opening any connection.
 */
export async function loadKeyFile(path: string): Promise<Credential> {
  // Opened as every user-named file is (src/core/user-file.ts): a FIFO or a device is refused
  // at once, and the mode is read from the opened file itself, so it is the file that gets read.
  const bytes = await readUserFile(path, {
    what: 'key file',
    maxBytes: KEY_FILE_MAX_BYTES,
    codes: {
      notFound: 'KEY_FILE_NOT_FOUND',
      notRegular: 'KEY_FILE_INVALID',
      tooLarge: 'KEY_FILE_INVALID',
      unreadable: 'KEY_FILE_UNREADABLE',
      timeout: 'KEY_FILE_UNREADABLE',
    },
    inspect: (stats) => {
      // Windows has no POSIX modes to check; its ACLs are out of reach here.
      if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) {
        const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
        throw new PaperbotError(
          'KEY_FILE_INSECURE',
          `key file ${path} has mode ${mode}, so group or others can access it; ` +
            `make it private to you with: chmod 600 ${shellQuote(path)}`,
          { details: { path, mode } },
        );
      }
    },
  });
  try {
    return parseKeyFile(bytes, path);
  } finally {
    bytes.fill(0);
  }
}

/** Checks key-file content; `source` names it in messages. */
export function parseKeyFile(bytes: Uint8Array, source: string): Credential {
  let document: unknown;
  try {
    document = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    // The parser's own message quotes the text around the fault, which may be the key.
    throw new PaperbotError('KEY_FILE_INVALID', `key file ${source} is not valid UTF-8 JSON`, {
      details: { path: source },
    });
  }
  const parsed = KeyFile.safeParse(document);
  if (!parsed.success) {
    throw new PaperbotError(
      'KEY_FILE_INVALID',
      `key file ${source} is invalid: ${describeIssues(parsed.error.issues)}`,
      { details: { path: source, fields: issuePaths(parsed.error.issues) } },
    );
  }
  const file = parsed.data;
  const warnings = keyFileWarnings(source, document as Record<string, unknown>, file.scopes);
  const privateKey = PrivateKey.fromBase64(file.private_key);
  if (encodeBase64(privateKey.publicKey) !== file.public_key) {
    throw new PaperbotError(
      'KEY_FILE_INVALID',
      `key file ${source} is invalid: public_key does not belong to private_key`,
      { details: { path: source, fields: ['public_key'] } },
    );
  }
  return Credential.create(
    {
      keyId: file.key_id,
      accountId: file.account_id,
      apiBaseUrl: file.api_base_url,
      wsUrl: file.ws_url,
      scopes: file.scopes,
      createdAt: file.created_at,
      expiresAt: file.expires_at,
      privateKey,
    },
    warnings,
  );
}

/** A scope name that can be quoted in a message: short and shaped like a name, not a key. */
const quotableScopePattern = /^[A-Za-z][A-Za-z0-9_.:-]{0,31}$/;

/**
 * The warnings of a file that loaded: fields it does not know (counted, never named, since a
 * pasted key can become a field name) and scope names it does not know (named when they look
 * like names, counted otherwise).
 */
function keyFileWarnings(
  source: string,
  document: Record<string, unknown>,
  scopes: readonly string[],
): string[] {
  const warnings: string[] = [];
  const known = new Set(Object.keys(fieldRules));
  const unknownFields = Object.keys(document).filter((name) => !known.has(name)).length;
  if (unknownFields > 0) {
    warnings.push(
      `key file ${source} has ${unknownFields} field${unknownFields === 1 ? '' : 's'} paperbot does not know; kept, not used`,
    );
  }
  const unknownScopes = scopes.filter(
    (scope) => !(KNOWN_SCOPES as readonly string[]).includes(scope),
  );
  if (unknownScopes.length > 0) {
    const quotable = unknownScopes.filter((scope) => quotableScopePattern.test(scope));
    const others = unknownScopes.length - quotable.length;
    const named = [
      ...quotable,
      ...(others > 0 ? [`${others} other${others === 1 ? '' : 's'}`] : []),
    ].join(', ');
    warnings.push(
      `key file ${source} names scopes paperbot does not know (${named}); kept as they are: ` +
        'what the key may do is learned from the venue (SCOPE_REQUIRED), and venue.wire.scopes ' +
        'maps the protocol scopes to the venue names',
    );
  }
  return warnings;
}

type Issue = z.core.$ZodIssue;

function issuePaths(issues: readonly Issue[]): string[] {
  return issues.map((issue) => formatPath(issue.path));
}

function describeIssues(issues: readonly Issue[]): string {
  return issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys') {
        // Never quoted: a pasted key can end up as a field name.
        const count = issue.keys.length;
        return `it has ${count} unknown field${count === 1 ? '' : 's'} (allowed: ${Object.keys(fieldRules).join(', ')})`;
      }
      const path = formatPath(issue.path);
      const field = issue.path[0];
      if (typeof field === 'string' && field in fieldRules) {
        return `${path} ${fieldRules[field as keyof typeof fieldRules]}`;
      }
      return path === '' ? 'the file must hold a JSON object' : `${path} is not valid`;
    })
    .join('; ');
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((part) => String(part)).join('.');
}

function fileErrorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unknown error';
}

function shellQuote(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}
