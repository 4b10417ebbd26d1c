/**
 * `paperbot download`: a service's candles and trades as a recording for backtests and warm-up
 * (docs/backtesting.md, "Downloading history"). Connects as `paperbot record` does: `--config`
 * names a bot config whose `venue:` section has a key file, or none (an embedded emulator, whose
 * seeded past is the history).
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { type Clock, isoTimestamp, systemClock } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import {
  type RunningEmulator,
  type StartEmulatorOptions,
  startEmulator,
} from '../../emulator/index.ts';
import type { CandleInterval } from '../../protocol/index.ts';
import { type DownloadResult, downloadHistory } from '../../replay/download/download.ts';
import { configIssuesOf } from '../../runtime/config-file.ts';
import { CANDLE_INTERVALS, isCandleInterval } from '../../runtime/streams/candles.ts';
import {
  BotConfig,
  DEFAULT_BOT_CONFIG_PATH,
  invalidConfigError,
  readConfigDocument,
} from '../bot/config.ts';
import { looksLikeDuration } from '../../core/duration.ts';
import { parseDuration } from '../options.ts';
import { connectVenue } from '../bot/venue-connection.ts';
import { inputOrRunFailure, type CommandOutput, standardOutput } from './terminal.ts';
import { defineCommand } from './define-command.ts';

export const DOWNLOAD_EXIT = { ok: 0, failed: 1, invalidArguments: 2 } as const;

export interface DownloadCommandDependencies extends CommandOutput {
  readonly clock: Clock;
  readonly startEmulator: (options: StartEmulatorOptions) => Promise<RunningEmulator>;
}

const defaultDependencies: DownloadCommandDependencies = {
  ...standardOutput,
  clock: systemClock,
  startEmulator,
};

interface DownloadCliOptions {
  readonly markets: string;
  readonly interval: string;
  readonly since: string;
  readonly until?: string;
  readonly out: string;
  readonly config: string;
  readonly gzip?: boolean;
}

/** An RFC 3339 time, or a duration before now (`6h`, `2d`). */
function timeArgument(text: string, option: string, now: number): number {
  if (looksLikeDuration(text)) {
    return now - parseDuration(text, option);
  }
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || !Number.isFinite(ms)) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `--${option} ${JSON.stringify(text)}: write an RFC 3339 time (2025-01-01T00:00:00Z) or a duration before now (6h)`,
    );
  }
  return ms;
}

function marketIdsOf(text: string): string[] {
  const ids = text
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (ids.length === 0) throw new PaperbotError('INVALID_ARGUMENT', '--markets lists no market');
  return [...new Set(ids)];
}

const VenueSection = z.object({ venue: BotConfig.shape.venue });

async function download(
  options: DownloadCliOptions,
  dependencies: DownloadCommandDependencies,
): Promise<DownloadResult> {
  const { clock } = dependencies;
  if (!isCandleInterval(options.interval)) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `--interval must be one of ${CANDLE_INTERVALS.join(', ')}; not ${options.interval}`,
    );
  }
  const interval: CandleInterval = options.interval;
  const marketIds = marketIdsOf(options.markets);
  const now = clock.now();
  const sinceMs = timeArgument(options.since, 'since', now);
  const untilMs = options.until === undefined ? null : timeArgument(options.until, 'until', now);
  // Checked whole before anything connects.
  const document = readConfigDocument(options.config);
  const parsed = VenueSection.safeParse({ venue: document.venue ?? {} }, { reportInput: true });
  if (!parsed.success) {
    throw invalidConfigError(options.config, configIssuesOf(parsed.error, [], VenueSection));
  }
  const connection = await connectVenue(parsed.data.venue, clock, dependencies.startEmulator);
  try {
    const client = connection.rest;
    const kind = await connection.kind();
    return await downloadHistory({
      source: {
        listMarkets: () => client.listMarkets(),
        listCandles: (marketId, candleInterval, limit) =>
          client.listCandles({ market_id: marketId }, { interval: candleInterval, limit }),
        listTrades: (marketId, limit) => client.listTrades({ market_id: marketId }, { limit }),
      },
      sourceInfo: { kind, baseUrl: connection.baseUrl },
      directory: resolve(options.out),
      clock,
      marketIds,
      interval,
      sinceMs,
      untilMs,
      compression: options.gzip === true ? 'gzip' : 'none',
      onWarning: (message) => dependencies.printError(`paperbot download: ${message}\n`),
    });
  } finally {
    await connection.close();
  }
}

function describe(result: DownloadResult, directory: string, interval: string): string {
  const lines = result.markets.map(
    (market) =>
      `  ${market.marketId}: ${market.candles} ${interval} candles, ${market.trades} trades` +
      (market.firstCandleMs === null
        ? ''
        : ` (candles served from ${isoTimestamp(market.firstCandleMs)})`),
  );
  return `downloaded into ${directory} (events ${result.manifest.counts.total}, candles.json):\n${lines.join('\n')}\n`;
}

export function registerDownloadCommand(
  program: Command,
  dependencies: Partial<DownloadCommandDependencies> = {},
): Command {
  const { command, dependencies: resolved } = defineCommand(
    program,
    'download',
    "Download a service's candles and trades into a recording (events and candles.json) for backtests and warm-up.",
    defaultDependencies,
    dependencies,
  );
  return command
    .requiredOption('--markets <ids>', 'comma-separated market ids')
    .option('--interval <interval>', `candle interval (${CANDLE_INTERVALS.join(', ')})`, '1m')
    .requiredOption('--since <time>', 'first time kept: RFC 3339, or a duration before now (6h)')
    .option('--until <time>', 'first time no longer kept (default: now)')
    .requiredOption('--out <dir>', 'the recording folder to create (must be empty or missing)')
    .option(
      '--config <file>',
      'bot config whose venue: section says where to connect (no key file: an embedded emulator)',
      DEFAULT_BOT_CONFIG_PATH,
    )
    .option('--gzip', 'write events.jsonl.gz')
    .action(async (options: DownloadCliOptions) => {
      let result: DownloadResult;
      try {
        result = await download(options, resolved);
      } catch (error) {
        throw inputOrRunFailure('download', error, DOWNLOAD_EXIT, resolved.printError);
      }
      resolved.print(describe(result, options.out, options.interval));
    });
}
