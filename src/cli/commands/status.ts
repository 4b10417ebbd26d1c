/**
 * `paperbot status`: asks a running bot for its status over its local HTTP endpoint
 * (`GET /status`) and prints positions, open orders, PnL and the trading state. The address is
 * the `metrics:` section of the config, or `--url`.
 */
import type { Command } from 'commander';
import { request } from 'undici';
import { PaperbotError } from '../../core/errors.ts';
import { DEFAULT_BOT_CONFIG_PATH, readMetricsSection } from '../bot/config.ts';
import { renderStatus, StatusDocument } from '../bot/status-view.ts';

export interface StatusCommandDependencies {
  readonly print: (text: string) => void;
  readonly fetchText: (url: string) => Promise<{ status: number; text: string }>;
}

interface StatusOptions {
  readonly config: string;
  readonly url?: string;
  readonly json?: boolean;
}

async function fetchText(url: string): Promise<{ status: number; text: string }> {
  const response = await request(url, { method: 'GET', headersTimeout: 5_000, bodyTimeout: 5_000 });
  return { status: response.statusCode, text: await response.body.text() };
}

/** The bot's base URL from `--url` or the config's metrics section. */
export function statusBaseUrl(options: { config: string; url?: string }): string {
  if (options.url !== undefined) return options.url.replace(/\/+$/, '');
  const metrics = readMetricsSection(options.config);
  if (!metrics.enabled) {
    throw new PaperbotError(
      'STATUS_UNAVAILABLE',
      `${options.config} disables the bot's HTTP endpoint (metrics.enabled: false)`,
    );
  }
  if (metrics.port === 0) {
    throw new PaperbotError(
      'STATUS_UNAVAILABLE',
      `${options.config} lets the bot pick its port (metrics.port: 0); pass --url with the address from its start line`,
    );
  }
  const host =
    metrics.host === '0.0.0.0' ? '127.0.0.1' : metrics.host === '::' ? '[::1]' : metrics.host;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${metrics.port}`;
}

export function registerStatusCommand(
  program: Command,
  dependencies: Partial<StatusCommandDependencies> = {},
): Command {
  const print =
    dependencies.print ??
    ((text: string) => {
      process.stdout.write(text);
    });
  const fetch = dependencies.fetchText ?? fetchText;
  return program
    .command('status')
    .description('Show a running bot: trading state, positions, open orders, PnL.')
    .option('--config <file>', 'bot config (its metrics host and port)', DEFAULT_BOT_CONFIG_PATH)
    .option('--url <url>', 'the bot HTTP endpoint, e.g. http://127.0.0.1:9464')
    .option('--json', 'print the JSON document')
    .action(async (options: StatusOptions) => {
      const base = statusBaseUrl(options);
      let answer: { status: number; text: string };
      try {
        answer = await fetch(`${base}/status`);
      } catch (error) {
        throw new PaperbotError(
          'STATUS_UNAVAILABLE',
          `no bot answers at ${base} (${error instanceof Error ? error.message : String(error)}); is it running?`,
          { cause: error },
        );
      }
      if (answer.status !== 200) {
        throw new PaperbotError(
          'STATUS_UNAVAILABLE',
          `${base}/status answered ${answer.status}: ${answer.text.trim().slice(0, 200)}`,
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
