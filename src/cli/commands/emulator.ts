/**
 * `paperbot emulator`: runs the local Practice service until SIGINT or SIGTERM. When it is
 * ready it prints exactly one line, `paperbot emulator listening on <base URL>`, which scripts
 * can wait for. Without --data the admin token exists only in this process and is printed once,
 * on the line before; with --data it is kept in DIR/admin-token (mode 0600) and never printed.
 */
import type { Command } from 'commander';
import { readFileAtMost } from '../../core/bounded-file.ts';
import { systemClock } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import { fromPino, type Logger } from '../../core/logger.ts';
import {
  ADMIN_TOKEN_FILE,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_RATE_LIMIT,
  loadWireProfileFile,
  type RunningEmulator,
  type StartEmulatorOptions,
  startEmulator,
} from '../../emulator/index.ts';
import { createLogger, type LogFormat, logFormatOption } from '../logging.ts';
import { nextStopSignal, printToStdout } from './terminal.ts';
import { defineCommand } from './define-command.ts';
import { integerOption } from '../options.ts';

export interface EmulatorCommandDependencies {
  readonly print: (text: string) => void;
  /** Resolves when the emulator should stop (SIGINT or SIGTERM by default). */
  readonly stopSignal: () => Promise<string>;
  /** Logs on stderr, in the shape of every command's logs. */
  readonly logger: (format: LogFormat) => Logger;
  readonly start: (options: StartEmulatorOptions) => Promise<RunningEmulator>;
}

const defaultDependencies: EmulatorCommandDependencies = {
  print: printToStdout,
  stopSignal: nextStopSignal,
  logger: (format) =>
    fromPino(
      createLogger({ name: 'paperbot-emulator', level: 'info', format, clock: systemClock, fd: 2 }),
    ),
  start: startEmulator,
};

interface EmulatorOptions {
  readonly host: string;
  readonly port: string;
  readonly data?: string;
  readonly seed?: string;
  readonly config?: string;
  readonly wire?: string;
  readonly rateLimitQuota?: string;
  readonly rateLimitWindowMs?: string;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  readonly logFormat: LogFormat;
}

/** A certificate chain or a key is a few KiB; this bounds the read. */
const MAX_TLS_FILE_BYTES = 256 * 1024;

async function tlsOption(options: EmulatorOptions): Promise<StartEmulatorOptions['tls']> {
  if (options.tlsCert === undefined && options.tlsKey === undefined) return undefined;
  if (options.tlsCert === undefined || options.tlsKey === undefined) {
    throw new PaperbotError('INVALID_ARGUMENT', '--tls-cert and --tls-key go together');
  }
  return {
    cert: await readFileAtMost(
      options.tlsCert,
      MAX_TLS_FILE_BYTES,
      '--tls-cert',
      'INVALID_ARGUMENT',
    ),
    key: await readFileAtMost(options.tlsKey, MAX_TLS_FILE_BYTES, '--tls-key', 'INVALID_ARGUMENT'),
  };
}

export function registerEmulatorCommands(
  program: Command,
  dependencies: Partial<EmulatorCommandDependencies> = {},
): Command {
  const { command, dependencies: resolved } = defineCommand(
    program,
    'emulator',
    'Run the local Practice Trading Service (HTTP and WebSocket on one port) until SIGINT or SIGTERM.',
    defaultDependencies,
    dependencies,
  );
  return command
    .option('--tls-cert <file>', 'serve HTTPS and WSS with this certificate (PEM, chain after it)')
    .option('--tls-key <file>', 'the private key of --tls-cert (PEM)')
    .option('--host <host>', 'address to listen on', DEFAULT_HOST)
    .option('--port <port>', 'port to listen on; 0 picks a free one', String(DEFAULT_PORT))
    .option('--data <dir>', 'keep state in this folder (SQLite); memory only without it')
    .option('--seed <seed>', 'seed of every random choice (overrides the config)')
    .option('--config <file>', 'emulator config (YAML); built-in defaults without it')
    .option(
      '--wire <file>',
      'wire profile (YAML or JSON, the keys of venue.wire): how requests are signed; SVC1 without it',
    )
    .option(
      '--rate-limit-quota <n>',
      'requests per key and window',
      String(DEFAULT_RATE_LIMIT.quota),
    )
    .option(
      '--rate-limit-window-ms <ms>',
      'rate-limit window length',
      String(DEFAULT_RATE_LIMIT.windowMs),
    )
    .addOption(logFormatOption('auto'))
    .action(async (options: EmulatorOptions) => {
      const port = integerOption(options.port, 'port', { minimum: 0, maximum: 65_535 });
      // Checked before anything starts: a bad profile is refused with every problem.
      const wire = options.wire === undefined ? undefined : loadWireProfileFile(options.wire);
      const quota = integerOption(
        options.rateLimitQuota ?? String(DEFAULT_RATE_LIMIT.quota),
        'rate-limit-quota',
      );
      const windowMs = integerOption(
        options.rateLimitWindowMs ?? String(DEFAULT_RATE_LIMIT.windowMs),
        'rate-limit-window-ms',
      );
      const seed =
        options.seed === undefined
          ? undefined
          : /^-?\d{1,15}$/.test(options.seed)
            ? Number(options.seed)
            : options.seed;
      const tls = await tlsOption(options);
      const emulator = await resolved.start({
        host: options.host,
        port,
        dataDir: options.data ?? null,
        ...(seed === undefined ? {} : { seed }),
        ...(options.config === undefined ? {} : { config: options.config }),
        ...(wire === undefined ? {} : { wire }),
        rateLimit: { quota, windowMs },
        logger: resolved.logger(options.logFormat),
        verifySignaturesOnWorkers: true,
        ...(tls === undefined ? {} : { tls }),
      });
      // Registered before printing, so a signal right after the line is never missed.
      const stopped = resolved.stopSignal();
      if (emulator.adminTokenFile === null) {
        resolved.print(
          `paperbot emulator admin token (not saved; use --data DIR to keep one in DIR/${ADMIN_TOKEN_FILE}): ${emulator.adminToken}\n`,
        );
      }
      resolved.print(`paperbot emulator listening on ${emulator.baseUrl}\n`);
      await stopped;
      await emulator.close();
    });
}
