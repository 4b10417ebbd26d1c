/**
 * `paperbot keys ...`: developer key files. This file only parses options and prints; the work
 * is in src/signing. Each subcommand has its own `register...` function below, so adding one
 * (registering a key with a service, revoking it) is one more function and one more call.
 */
import type { Command } from 'commander';
import { isoTimestamp, systemClock } from '../../core/clock.ts';
import {
  Credential,
  DEFAULT_API_BASE_URL,
  DEFAULT_WS_URL,
  generateKeyPair,
  generateNonce,
  KEY_FILE_MODE,
  type KeyScope,
  KNOWN_SCOPES,
  writeKeyFile,
} from '../../signing/index.ts';

export const DEFAULT_ACCOUNT_ID = 'acct_local';

export interface KeysCommandDependencies {
  /** Epoch milliseconds, for `created_at`. */
  readonly now: () => number;
  /** Where normal output goes. */
  readonly print: (text: string) => void;
}

const defaultDependencies: KeysCommandDependencies = {
  now: () => systemClock.now(),
  print: (text) => {
    process.stdout.write(text);
  },
};

export function registerKeysCommands(
  program: Command,
  dependencies: Partial<KeysCommandDependencies> = {},
): Command {
  const resolved = { ...defaultDependencies, ...dependencies };
  const keys = program.command('keys').description('Create and manage developer key files');
  registerGenerateCommand(keys, resolved);
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
        // Unknown names are caught by the key-file schema inside Credential.create.
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
