/**
 * `paperbot keys ...`: developer key files. This file only parses options and prints; the work
 * is in src/signing (key pairs, key files) and, for `create` and `revoke`, the emulator's admin
 * API. Each subcommand has its own `register...` function below.
 */
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import type { Command } from 'commander';
import { isoTimestamp, systemClock } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import { AdminClient, readAdminToken } from '../../emulator/index.ts';
import {
  Credential,
  DEFAULT_API_BASE_URL,
  DEFAULT_WS_URL,
  encodeBase64,
  generateKeyPair,
  generateNonce,
  importKey,
  KEY_FILE_MODE,
  type KeyScope,
  KNOWN_SCOPES,
  writeKeyFile,
} from '../../signing/index.ts';
import { printToStdout } from './terminal.ts';
import { defineCommand } from './define-command.ts';

export const DEFAULT_ACCOUNT_ID = 'acct_local';

export interface KeysCommandDependencies {
  /** Epoch milliseconds, for `created_at`. */
  readonly now: () => number;
  /** Where normal output goes. */
  readonly print: (text: string) => void;
}

const defaultDependencies: KeysCommandDependencies = {
  now: () => systemClock.now(),
  print: printToStdout,
};

export function registerKeysCommands(
  program: Command,
  dependencies: Partial<KeysCommandDependencies> = {},
): Command {
  const { command: keys, dependencies: resolved } = defineCommand(
    program,
    'keys',
    'Create and manage developer key files',
    defaultDependencies,
    dependencies,
  );
  registerGenerateCommand(keys, resolved);
  registerCreateCommand(keys, resolved);
  registerRevokeCommand(keys, resolved);
  registerImportCommand(keys, resolved);
  return keys;
}

interface GenerateOptions {
  readonly out: string;
  readonly keyId?: string;
  readonly accountId: string;
  readonly api: string;
  readonly ws: string;
  readonly scopes: string;
  readonly force?: boolean;
}

function registerGenerateCommand(keys: Command, dependencies: KeysCommandDependencies): void {
  keys
    .command('generate')
    .description(
      'Generate an Ed25519 key pair and write it as a key file with mode 0600. The private key ' +
        'never leaves this machine; register the printed public key with the service.',
    )
    .requiredOption('--out <file>', 'where to write the key file')
    .option('--key-id <id>', 'key id (default: a random "key_..." id)')
    .option('--account-id <id>', 'practice account id', DEFAULT_ACCOUNT_ID)
    .option('--api <url>', 'API base URL', DEFAULT_API_BASE_URL)
    .option('--ws <url>', 'WebSocket URL', DEFAULT_WS_URL)
    .option('--scopes <list>', 'comma-separated scopes', KNOWN_SCOPES.join(','))
    .option('--force', 'replace the file if it exists')
    .action(async (options: GenerateOptions) => {
      const { privateKey } = generateKeyPair();
      const credential = Credential.create({
        keyId: options.keyId ?? `key_${generateNonce(20)}`,
        accountId: options.accountId,
        apiBaseUrl: options.api,
        wsUrl: options.ws,
        // A name the project does not know is kept (a venue may name its scopes its own way).
        scopes: splitList(options.scopes) as KeyScope[],
        createdAt: isoTimestamp(dependencies.now()),
        expiresAt: null,
        privateKey,
      });
      await writeKeyFile(options.out, credential, { overwrite: options.force === true });
      dependencies.print(
        [
          `wrote key file ${options.out} (mode ${KEY_FILE_MODE.toString(8).padStart(4, '0')})`,
          `key id:     ${credential.keyId}`,
          `account id: ${credential.accountId}`,
          `public key: ${credential.publicKeyBase64}`,
          `scopes:     ${credential.scopes.join(',')}`,
          '',
        ].join('\n'),
      );
    });
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** The environment variable `keys create` and `keys revoke` read the admin token from. */
export const ADMIN_TOKEN_ENVIRONMENT = 'PAPERBOT_ADMIN_TOKEN';

interface AdminOptions {
  readonly api: string;
  readonly data?: string;
  readonly adminToken?: string;
}

async function adminClientOf(options: AdminOptions): Promise<AdminClient> {
  const fromEnvironment = process.env[ADMIN_TOKEN_ENVIRONMENT];
  const token =
    options.adminToken ??
    (options.data === undefined ? undefined : await readAdminToken(options.data)) ??
    (fromEnvironment === undefined || fromEnvironment === '' ? undefined : fromEnvironment);
  if (token === undefined) {
    throw new PaperbotError(
      'ADMIN_TOKEN_REQUIRED',
      `the admin token is needed: pass --data DIR (the emulator's data folder), --admin-token T, or set ${ADMIN_TOKEN_ENVIRONMENT}`,
    );
  }
  return new AdminClient({ baseUrl: options.api, token });
}

/** The WebSocket address under an API base URL: same host, ws(s) scheme, path /v1/ws. */
export function webSocketUrlOf(apiBaseUrl: string): string {
  let url: URL;
  try {
    url = new URL(apiBaseUrl);
  } catch {
    throw new PaperbotError('INVALID_ARGUMENT', `--api must be an http or https URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new PaperbotError('INVALID_ARGUMENT', `--api must be an http or https URL`);
  }
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/ws`;
  url.search = '';
  url.hash = '';
  return url.toString();
}

function addAdminOptions(command: Command): Command {
  return command
    .requiredOption('--api <url>', 'the emulator base URL, for example http://127.0.0.1:8787')
    .option('--data <dir>', "the emulator's data folder (its admin token is read from there)")
    .option('--admin-token <token>', `the admin token (or set ${ADMIN_TOKEN_ENVIRONMENT})`);
}

interface CreateOptions extends AdminOptions {
  readonly out: string;
  readonly scopes: string;
  readonly expiresAt?: string;
  readonly allowIp?: string;
  readonly maxOrderNotional?: string;
  readonly maxOpenOrders?: string;
  readonly accountId?: string;
  readonly resetAccount?: boolean;
  readonly force?: boolean;
}

function registerCreateCommand(keys: Command, dependencies: KeysCommandDependencies): void {
  addAdminOptions(
    keys
      .command('create')
      .description(
        'Generate a key pair here, register only its public key with a running emulator, and ' +
          'write the key file (mode 0600) with the account id and the addresses.',
      ),
  )
    .requiredOption('--out <file>', 'where to write the key file')
    .option('--scopes <list>', 'comma-separated scopes', KNOWN_SCOPES.join(','))
    .option('--expires-at <time>', 'RFC 3339 expiry (UTC); no expiry without it')
    .option('--allow-ip <list>', 'comma-separated IPv4/IPv6 addresses or CIDR blocks')
    .option('--max-order-notional <amount>', 'refuse orders above this notional (pUSDC)')
    .option('--max-open-orders <n>', 'refuse orders beyond this many open orders')
    .option('--account-id <id>', 'bind the key to this existing account (default: a new account)')
    .option('--reset-account', 'retire --account-id and bind the key to a fresh account')
    .option('--force', 'replace the key file if it exists')
    .action(async (options: CreateOptions) => {
      const wsUrl = webSocketUrlOf(options.api);
      if (options.force !== true && (await lstat(options.out).catch(() => null)) !== null) {
        throw new PaperbotError(
          'KEY_FILE_EXISTS',
          `key file ${options.out} already exists; choose another path or pass --force`,
        );
      }
      let maxOpenOrders: number | null = null;
      if (options.maxOpenOrders !== undefined) {
        if (!/^\d+$/.test(options.maxOpenOrders)) {
          throw new PaperbotError('INVALID_ARGUMENT', '--max-open-orders must be a whole number');
        }
        maxOpenOrders = Number(options.maxOpenOrders);
      }
      const client = await adminClientOf(options);
      const { privateKey, publicKey } = generateKeyPair();
      const created = await client.createKey({
        public_key: encodeBase64(publicKey),
        scopes: splitList(options.scopes) as KeyScope[],
        expires_at: options.expiresAt ?? null,
        allow_ip: options.allowIp === undefined ? [] : splitList(options.allowIp),
        max_order_notional: options.maxOrderNotional ?? null,
        max_open_orders: maxOpenOrders,
        account_id: options.accountId ?? null,
        reset_account: options.resetAccount === true,
      });
      const credential = Credential.create({
        keyId: created.key_id,
        accountId: created.account_id,
        apiBaseUrl: options.api,
        wsUrl,
        scopes: created.scopes as KeyScope[],
        createdAt: created.created_at,
        expiresAt: created.expires_at,
        privateKey,
      });
      try {
        await writeKeyFile(options.out, credential, {
          overwrite: options.force === true,
        });
      } catch (error) {
        // A registered key whose private half was never saved is useless; take it back.
        await client.revokeKey(created.key_id).catch(() => undefined);
        throw error;
      }
      const lines = [
        `wrote key file ${options.out} (mode ${KEY_FILE_MODE.toString(8).padStart(4, '0')})`,
        `key id:     ${credential.keyId}`,
        `account id: ${credential.accountId}`,
        `scopes:     ${credential.scopes.join(',')}`,
      ];
      if (created.replaced_account_id !== null) {
        lines.push(`reset:      account ${created.replaced_account_id} retired, its keys revoked`);
      }
      dependencies.print(`${lines.join('\n')}\n`);
    });
}

interface RevokeOptions extends AdminOptions {
  readonly keyId: string;
}

function registerRevokeCommand(keys: Command, dependencies: KeysCommandDependencies): void {
  addAdminOptions(
    keys
      .command('revoke')
      .description('Revoke a key on a running emulator: its requests and private streams stop.'),
  )
    .requiredOption('--key-id <id>', 'the key to revoke')
    .action(async (options: RevokeOptions) => {
      const client = await adminClientOf(options);
      const revoked = await client.revokeKey(options.keyId);
      dependencies.print(`revoked key ${revoked.key_id} at ${revoked.revoked_at}\n`);
    });
}

interface ImportOptions {
  readonly out: string;
  readonly keyId?: string;
  readonly accountId?: string;
  readonly api?: string;
  readonly ws?: string;
  readonly force?: boolean;
}

/** A downloaded key file is a few hundred bytes; larger sources are refused unread. */
const IMPORT_MAX_BYTES = 64 * 1024;

/** The source's text, at most IMPORT_MAX_BYTES, from a regular file; and whether others can read it. */
async function readImportSource(path: string): Promise<{ text: string; shared: boolean }> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new PaperbotError(
      'KEY_IMPORT_INVALID',
      code === 'ENOENT' ? `${path} does not exist` : `cannot open ${path}: ${String(code)}`,
      { details: { source: path } },
    );
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > IMPORT_MAX_BYTES) {
      throw new PaperbotError(
        'KEY_IMPORT_INVALID',
        `${path} is ${stats.isFile() ? `larger than ${IMPORT_MAX_BYTES} bytes` : 'not a regular file'}`,
        { details: { source: path } },
      );
    }
    const buffer = Buffer.alloc(IMPORT_MAX_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, IMPORT_MAX_BYTES, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    buffer.fill(0);
    return { text, shared: process.platform !== 'win32' && (stats.mode & 0o077) !== 0 };
  } finally {
    await handle.close();
  }
}

function registerImportCommand(keys: Command, dependencies: KeysCommandDependencies): void {
  keys
    .command('import')
    .description(
      'Read a key as a website gives it (JSON under common field names, NAME=value lines, or a ' +
        'PEM key; the private key as PKCS#8 PEM, hex, base64 or base64url) and write the ' +
        'canonical key file with mode 0600. Prints where each field came from, never key material.',
    )
    .argument('<file>', 'the downloaded key')
    .requiredOption('--out <file>', 'where to write the canonical key file')
    .option('--key-id <id>', 'the key id, when the source has none')
    .option('--account-id <id>', 'the practice account id, when the source has none')
    .option('--api <url>', 'the API base URL, when the source has none')
    .option('--ws <url>', 'the WebSocket URL (default: /v1/ws under the API URL)')
    .option('--force', 'replace the key file if it exists')
    .action(async (file: string, options: ImportOptions) => {
      const { text, shared } = await readImportSource(file);
      const { credential, report } = importKey(text, file, isoTimestamp(dependencies.now()), {
        ...(options.keyId === undefined ? {} : { keyId: options.keyId }),
        ...(options.accountId === undefined ? {} : { accountId: options.accountId }),
        ...(options.api === undefined ? {} : { apiBaseUrl: options.api }),
        ...(options.ws === undefined ? {} : { wsUrl: options.ws }),
      });
      await writeKeyFile(options.out, credential, { overwrite: options.force === true });
      const lines = [
        `wrote key file ${options.out} (mode ${KEY_FILE_MODE.toString(8).padStart(4, '0')}) from ${file}`,
        `key id:     ${credential.keyId}`,
        `account id: ${credential.accountId}`,
        `scopes:     ${credential.scopes.length === 0 ? '(none listed)' : `${credential.scopes.length} kept as listed`}`,
        ...report.map((line) => `  ${line}`),
      ];
      if (shared) {
        lines.push(
          `${file} can be read by group or others; delete it now that ${options.out} holds the key`,
        );
      }
      dependencies.print(`${lines.join('\n')}\n`);
    });
}
