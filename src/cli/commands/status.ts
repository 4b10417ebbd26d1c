/**
 * `paperbot status`: asks a running bot for its status over its local HTTP endpoint
 * (`GET /status`) and prints positions, open orders, PnL and the trading state. The address is
 * `--url`, else the address file the bot wrote beside its journal, else the config's `metrics:`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { request } from 'undici';
import {
  boundedReadFailure,
  deadlineOf,
  type ReadLimits,
  readAtMost,
} from '../../core/bounded-read.ts';
import { systemClock } from '../../core/clock.ts';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import {
  DEFAULT_BOT_CONFIG_PATH,
  readDashboardSection,
  readJournalSection,
  readMetricsSection,
} from '../bot/config.ts';
import { isLoopbackHost, loadOrCreateToken } from '../dashboard/token.ts';
import { readAddressFile } from '../bot/address-file.ts';
import { renderStatus, StatusDocument } from '../bot/status-view.ts';
import { printToStdout } from './terminal.ts';
import { defineCommand } from './define-command.ts';

export interface StatusCommandDependencies {
  readonly print: (text: string) => void;
  readonly fetchText: (
    url: string,
    headers?: Readonly<Record<string, string>>,
  ) => Promise<{ status: number; text: string }>;
  /** Bounds of the real fetch (default `STATUS_READ_LIMITS`). */
  readonly limits: ReadLimits;
}

/** The whole answer within 5 s and 4 MiB (a status document is a few KiB). */
export const STATUS_READ_LIMITS: ReadLimits = { timeoutMs: 5_000, maxBytes: 4 * 1024 * 1024 };

const READ_BOUNDS = new Set(['READ_TIMEOUT', 'RESPONSE_TOO_LARGE']);

interface StatusOptions {
  readonly config: string;
  readonly url?: string;
  readonly json?: boolean;
  readonly tokenFile?: string;
}

/** GET `url`, bounded in total time and size whatever the server does. */
export async function fetchText(
  url: string,
  limits: ReadLimits = STATUS_READ_LIMITS,
  headers: Readonly<Record<string, string>> = {},
): Promise<{ status: number; text: string }> {
  const deadline = deadlineOf(systemClock, limits.timeoutMs);
  try {
    const response = await request(url, { method: 'GET', headers, signal: deadline.signal });
    return { status: response.statusCode, text: await readAtMost(response.body, limits.maxBytes) };
  } catch (error) {
    throw boundedReadFailure(error, deadline, limits.timeoutMs);
  } finally {
    deadline.dispose();
  }
}

/**
 * The bot's base URL: `--url`; else the address file the running bot wrote beside its journal
 * (found whatever port it took, `--metrics-port 0` included); else the config's metrics section.
 */
export function statusBaseUrl(options: { config: string; url?: string }): string {
  if (options.url !== undefined) return options.url.replace(/\/+$/, '');
  const address = readAddressFile(resolve(readJournalSection(options.config).path));
  if (address !== null) return loopbackUrl(address.url);
  const metrics = readMetricsSection(options.config);
  if (!metrics.enabled) {
    throw new PaperbotError(
      'STATUS_UNAVAILABLE',
      `${options.config} disables the bot's HTTP endpoint (metrics.enabled: false), and no running bot of this config wrote its address`,
    );
  }
  if (metrics.port === 0) {
    throw new PaperbotError(
      'STATUS_UNAVAILABLE',
      `${options.config} lets the bot pick its port (metrics.port: 0) and no running bot of this config wrote its address; pass --url with the address from its start line`,
    );
  }
  const host =
    metrics.host === '0.0.0.0' ? '127.0.0.1' : metrics.host === '::' ? '[::1]' : metrics.host;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${metrics.port}`;
}

/**
 * The endpoint's token when it wants one: from `--token-file`, or, for an endpoint the config
 * binds off loopback, the config's `dashboard.token_file`. Never created here.
 */
export function statusToken(options: StatusOptions): string | null {
  let path = options.tokenFile ?? null;
  if (path === null && options.url === undefined) {
    const metrics = readMetricsSection(options.config);
    if (!isLoopbackHost(metrics.host)) path = readDashboardSection(options.config).token_file;
  }
  if (path === null) return null;
  const resolved = resolve(path);
  if (!existsSync(resolved)) {
    throw new PaperbotError('STATUS_UNAVAILABLE', `no token file at ${resolved}`);
  }
  return loadOrCreateToken(resolved);
}

/** A bot bound to every address is asked on loopback. */
function loopbackUrl(url: string): string {
  return url
    .replace(/^http:\/\/0\.0\.0\.0:/, 'http://127.0.0.1:')
    .replace(/^http:\/\/\[::\]:/, 'http://[::1]:')
    .replace(/\/+$/, '');
}

export function registerStatusCommand(
  program: Command,
  dependencies: Partial<StatusCommandDependencies> = {},
): Command {
  const limits = dependencies.limits ?? STATUS_READ_LIMITS;
  const defaults: StatusCommandDependencies = {
    print: printToStdout,
    limits,
    fetchText: (url, headers) => fetchText(url, limits, headers),
  };
  const {
    command,
    dependencies: { print, fetchText: fetch },
  } = defineCommand(
    program,
    'status',
    'Show a running bot: trading state, positions, open orders, PnL.',
    defaults,
    dependencies,
  );
  return command
    .option('--config <file>', 'bot config (its metrics host and port)', DEFAULT_BOT_CONFIG_PATH)
    .option('--url <url>', 'the bot HTTP endpoint, e.g. http://127.0.0.1:9464')
    .option('--json', 'print the JSON document')
    .option('--token-file <file>', "the endpoint's token, for a bot bound off loopback")
    .action(async (options: StatusOptions) => {
      const base = statusBaseUrl(options);
      const token = statusToken(options);
      let answer: { status: number; text: string };
      try {
        answer = await fetch(
          `${base}/status`,
          token === null ? {} : { authorization: `Bearer ${token}` },
        );
      } catch (error) {
        if (isPaperbotError(error) && READ_BOUNDS.has(error.code)) {
          throw new PaperbotError('STATUS_UNAVAILABLE', `${base}/status: ${error.message}`, {
            cause: error,
            details: { reason: error.code },
          });
        }
        throw new PaperbotError(
          'STATUS_UNAVAILABLE',
          `no bot answers at ${base} (${error instanceof Error ? error.message : String(error)}); is it running?`,
          { cause: error },
        );
      }
      if (answer.status !== 200) {
        throw new PaperbotError(
          'STATUS_UNAVAILABLE',
          `${base}/status answered ${answer.status}: ${answer.text.trim().slice(0, 200)}${answer.status === 401 ? ' (pass --token-file, or name it in dashboard.token_file)' : ''}`,
        );
      }
      let document: unknown;
      try {
        document = JSON.parse(answer.text);
      } catch {
        throw new PaperbotError('STATUS_UNAVAILABLE', `${base}/status did not answer JSON`);
      }
      if (options.json === true) {
        print(`${JSON.stringify(document, null, 2)}\n`);
        return;
      }
      const parsed = StatusDocument.safeParse(document);
      if (!parsed.success) {
        throw new PaperbotError(
          'STATUS_UNAVAILABLE',
          `${base}/status answered a document this paperbot cannot read (try --json)`,
        );
      }
      print(renderStatus(parsed.data, base));
    });
}
