/**
 * `paperbot record`: records a session for backtests (docs/backtesting.md, "Recording").
 *
 * - Against a service: `--config` names a bot config whose `venue:` and `market_data:` sections
 *   say where to connect. With `venue.key_file` the service is the key's, and the account's
 *   private events are recorded too; without one an embedded emulator is started, as the bot
 *   does, and only public data is recorded. It runs for `--duration`, or until SIGINT or SIGTERM;
 *   either way the recording is closed cleanly (manifest `complete: true`). Killed outright, it
 *   leaves a file readable up to its last complete record.
 * - `--emulator-virtual`: the emulator in this process on virtual time (`--seed`, `--start`),
 *   for sample sessions: an hour is recorded in seconds, and the same seed gives the same bytes.
 */
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { StreamClient } from '../../client/index.ts';
import { type Clock, isoTimestamp, systemClock } from '../../core/clock.ts';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import {
  type EmulatorConfig,
  loadEmulatorConfig,
  type RunningEmulator,
  type StartEmulatorOptions,
  startEmulator,
} from '../../emulator/index.ts';
import type { CandleInterval, Market } from '../../protocol/index.ts';
import type { RecordingManifest } from '../../replay/format/manifest.ts';
import { RecordingSink } from '../../replay/format/recorder-sink.ts';
import {
  DEFAULT_HISTORY_INTERVALS,
  DEFAULT_HISTORY_LIMIT,
  recordCandleHistory,
} from '../../replay/recorder/candle-history.ts';
import { recordEmulatorSession } from '../../replay/recorder/emulator-session.ts';
import { Recorder } from '../../replay/recorder/recorder.ts';
import { clientSource } from '../../replay/recorder/sources.ts';
import { createProgress } from '../../replay/report/progress.ts';
import { MAX_CANDLE_HISTORY } from '../../runtime/strategy/index.ts';
import { CANDLE_INTERVALS, isCandleInterval } from '../../runtime/streams/candles.ts';
import {
  BotConfig,
  DEFAULT_BOT_CONFIG_PATH,
  invalidConfigError,
  readConfigDocument,
} from '../bot/config.ts';
import { configIssuesOf } from '../../runtime/config-file.ts';
import {
  DEFAULT_PROGRESS_INTERVAL_MS,
  formatBytes,
  formatElapsed,
  startProgressLine,
} from '../progress-line.ts';
import { connectVenue } from '../bot/venue-connection.ts';
import { integerOption, parseDuration } from '../options.ts';
import {
  inputOrRunFailure,
  listenForStopSignals,
  printToStderr,
  printToStdout,
} from './terminal.ts';
import { defineCommand } from './define-command.ts';

/** Exit codes of `paperbot record`. */
export const RECORD_EXIT = { ok: 0, failed: 1, invalidArguments: 2 } as const;

/** Where virtual recordings start unless `--start` says otherwise (2025-01-01T00:00:00Z). */
export const DEFAULT_VIRTUAL_START_MS = Date.UTC(2025, 0, 1);

export interface RecordCommandDependencies {
  readonly print: (text: string) => void;
  readonly printError: (text: string) => void;
  readonly clock: Clock;
  /** Calls `onSignal` on SIGINT or SIGTERM; returns a function that stops listening. */
  readonly onSignal: (onSignal: () => void) => () => void;
  readonly startEmulator: (options: StartEmulatorOptions) => Promise<RunningEmulator>;
  /** Whether progress may be drawn (stdout is a terminal). */
  readonly interactive: boolean;
  /** Whether stderr is a terminal: the progress line then rewrites itself in place. */
  readonly stderrIsTerminal: boolean;
  /** How often the progress line is written while recording from a service, on the clock. */
  readonly progressIntervalMs: number;
}

const defaultDependencies: RecordCommandDependencies = {
  print: printToStdout,
  printError: printToStderr,
  clock: systemClock,
  onSignal: listenForStopSignals,
  startEmulator,
  interactive: process.stdout.isTTY === true,
  stderrIsTerminal: process.stderr.isTTY === true,
  progressIntervalMs: DEFAULT_PROGRESS_INTERVAL_MS,
};

interface RecordOptions {
  readonly out: string;
  readonly config: string;
  readonly duration?: string;
  readonly markets?: string;
  readonly bookDepth: string;
  readonly bookInterval?: string;
  readonly tradesInterval?: string;
  readonly gzip?: boolean;
  readonly emulatorVirtual?: boolean;
  readonly seed?: string;
  readonly emulatorConfig?: string;
  readonly start?: string;
  readonly candleHistory: string;
  readonly candleHistoryLimit: string;
}

/** `--candle-history`: intervals to keep in candles.json, or `none`. */
function historyIntervals(text: string): CandleInterval[] {
  if (text.trim() === 'none') return [];
  const intervals = text.split(',').map((interval) => interval.trim());
  const unknown = intervals.filter((interval) => !isCandleInterval(interval));
  if (unknown.length > 0 || intervals.length === 0) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `--candle-history takes intervals among ${CANDLE_INTERVALS.join(', ')} (or none); not ${unknown.join(', ')}`,
    );
  }
  return intervals as CandleInterval[];
}

function marketList(text: string | undefined): string[] | null {
  if (text === undefined) return null;
  const ids = text
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (ids.length === 0) throw new PaperbotError('INVALID_ARGUMENT', '--markets lists no market');
  return ids;
}

function seedOf(text: string | undefined): string | number {
  if (text === undefined) return 42;
  return /^-?\d{1,15}$/.test(text) ? Number(text) : text;
}

function describe(manifest: RecordingManifest, directory: string): string {
  const kinds = manifest.counts.by_kind;
  const range = manifest.time_range;
  const span =
    range.first_t === null || range.last_t === null
      ? 'no records'
      : `${isoTimestamp(range.first_t)} to ${isoTimestamp(range.last_t)}`;
  return `recorded ${manifest.counts.total} records (ticker ${kinds.ticker}, book ${kinds.book}, trade ${kinds.trade}, private ${kinds.private}, gap ${kinds.gap}), ${span}, into ${directory}\n`;
}

function selectMarkets(listed: readonly Market[], wanted: readonly string[] | null): Market[] {
  if (wanted === null) return [...listed];
  const missing = wanted.filter((id) => !listed.some((market) => market.market_id === id));
  if (missing.length > 0) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `--markets: no market ${missing.join(', ')} (the venue lists ${listed.map((market) => market.market_id).join(', ')})`,
    );
  }
  return listed.filter((market) => wanted.includes(market.market_id));
}

async function recordVirtual(
  options: RecordOptions,
  dependencies: RecordCommandDependencies,
): Promise<RecordingManifest> {
  if (options.duration === undefined) {
    throw new PaperbotError('INVALID_ARGUMENT', '--emulator-virtual needs --duration');
  }
  const durationMs = parseDuration(options.duration);
  const startMs =
    options.start === undefined ? DEFAULT_VIRTUAL_START_MS : Date.parse(options.start);
  if (!Number.isSafeInteger(startMs)) {
    throw new PaperbotError('INVALID_ARGUMENT', '--start must be an RFC 3339 time');
  }
  let emulatorConfig: EmulatorConfig | undefined;
  if (options.emulatorConfig !== undefined)
    emulatorConfig = loadEmulatorConfig(options.emulatorConfig);
  const progress = createProgress({
    total: durationMs,
    label: 'record',
    unit: 'ms',
    stdoutIsTerminal: dependencies.interactive,
  });
  try {
    const result = await recordEmulatorSession({
      directory: resolve(options.out),
      seed: seedOf(options.seed),
      startMs,
      durationMs,
      ...(emulatorConfig === undefined ? {} : { emulatorConfig }),
      marketIds: marketList(options.markets),
      bookDepth: integerOption(options.bookDepth, 'book-depth', { maximum: 200 }),
      bookIntervalMs: parseDuration(options.bookInterval ?? '1s', 'book-interval'),
      tradesIntervalMs: parseDuration(options.tradesInterval ?? '1s', 'trades-interval'),
      compression: options.gzip === true ? 'gzip' : 'none',
      onProgress: (t) => progress.update(t - startMs),
      candleHistory: {
        intervals: historyIntervals(options.candleHistory),
        limit: integerOption(options.candleHistoryLimit, 'candle-history-limit', {
          maximum: MAX_CANDLE_HISTORY,
        }),
      },
    });
    return result.manifest;
  } finally {
    progress.stop();
  }
}

const RecordSections = z.object({
  venue: BotConfig.shape.venue,
  market_data: BotConfig.shape.market_data,
});

async function recordFromService(
  options: RecordOptions,
  dependencies: RecordCommandDependencies,
): Promise<RecordingManifest> {
  const document = readConfigDocument(options.config);
  const sections = RecordSections.safeParse(
    { venue: document.venue ?? {}, market_data: document.market_data ?? {} },
    { reportInput: true },
  );
  if (!sections.success) {
    throw invalidConfigError(options.config, configIssuesOf(sections.error, [], RecordSections));
  }
  const { venue, market_data: marketData } = sections.data;
  const clock = dependencies.clock;
  const bookDepth = integerOption(options.bookDepth, 'book-depth', { maximum: 200 });
  const bookIntervalMs =
    options.bookInterval === undefined
      ? marketData.book_poll_ms
      : parseDuration(options.bookInterval, 'book-interval');
  const tradesIntervalMs =
    options.tradesInterval === undefined
      ? marketData.trades_poll_ms
      : parseDuration(options.tradesInterval, 'trades-interval');
  const durationMs = options.duration === undefined ? null : parseDuration(options.duration);
  const wanted = marketList(options.markets) ?? marketData.markets;

  const connection = await connectVenue(venue, clock, dependencies.startEmulator);
  const { credential, emulator, rest } = connection;
  let stream: StreamClient | null = null;
  try {
    stream = new StreamClient(
      emulator === null ? { rest, clock } : { rest, url: emulator.wsUrl, clock },
    );
    const kind = await connection.kind();
    const markets = selectMarkets(await rest.listMarkets(), wanted);
    const privateEvents = credential !== null;
    const failures: string[] = [];
    const sink = await RecordingSink.create({
      directory: resolve(options.out),
      clock,
      source: { kind, baseUrl: emulator?.baseUrl ?? credential!.apiBaseUrl },
      markets,
      bookDepth,
      bookIntervalMs,
      privateEvents,
      compression: options.gzip === true ? 'gzip' : 'none',
      onError: (error) => failures.push(error.message),
    });
    const recorder = new Recorder({
      source: clientSource({ rest, stream, privateEvents }),
      sink,
      clock,
      marketIds: markets.map((market) => market.market_id),
      bookDepth,
      bookIntervalMs,
      tradesIntervalMs,
      privateEvents,
      onError: (error, context) =>
        dependencies.printError(
          `paperbot record: ${context}: ${isPaperbotError(error) ? `${error.code}: ${error.message}` : String(error)}\n`,
        ),
    });
    const intervals = historyIntervals(options.candleHistory);
    const historyLimit = integerOption(options.candleHistoryLimit, 'candle-history-limit', {
      maximum: MAX_CANDLE_HISTORY,
    });
    await recordCandleHistory({
      source: clientSource({ rest, stream, privateEvents: false }),
      directory: resolve(options.out),
      clock,
      marketIds: markets.map((market) => market.market_id),
      intervals,
      limit: historyLimit,
      onError: (error, context) =>
        dependencies.printError(
          `paperbot record: ${context}: ${isPaperbotError(error) ? `${error.code}: ${error.message}` : String(error)}\n`,
        ),
    });
    recorder.start();
    const startedAt = clock.now();
    const eventsFile = join(sink.directory, sink.currentManifest.events_file);
    const progress = startProgressLine({
      clock,
      write: dependencies.printError,
      terminal: dependencies.stderrIsTerminal,
      intervalMs: dependencies.progressIntervalMs,
      render: async () => {
        const elapsed = formatElapsed(clock.now() - startedAt);
        const of = durationMs === null ? '' : ` of ${formatElapsed(durationMs)}`;
        const size = await stat(eventsFile).then(
          (file) => formatBytes(file.size),
          () => 'no file yet',
        );
        return `recording ${elapsed}${of}: ${sink.recordedCount} events, ${size}`;
      },
    });
    try {
      await stream.connect();
      await new Promise<void>((done) => {
        let finished = false;
        const finish = () => {
          if (finished) return;
          finished = true;
          stopListening();
          clock.clearTimeout(timer);
          done();
        };
        const stopListening = dependencies.onSignal(finish);
        const timer = durationMs === null ? undefined : clock.setTimeout(finish, durationMs);
      });
    } finally {
      await progress.stop();
    }
    const manifest = await recorder.stop();
    if (failures.length > 0) {
      throw new PaperbotError(
        'RECORDING_WRITE_FAILED',
        `writing the recording failed: ${failures[0]}`,
      );
    }
    return manifest;
  } finally {
    await stream?.close();
    await connection.close();
  }
}

export function registerRecordCommand(
  program: Command,
  dependencies: Partial<RecordCommandDependencies> = {},
): Command {
  const { command, dependencies: resolved } = defineCommand(
    program,
    'record',
    "Record a session for backtests: tickers, book snapshots and trades (and, with a key, the account's private events).",
    defaultDependencies,
    dependencies,
  );
  return command
    .requiredOption('--out <dir>', 'the session folder to create (must be empty or missing)')
    .option(
      '--config <file>',
      'bot config whose venue: and market_data: sections say where to connect',
      DEFAULT_BOT_CONFIG_PATH,
    )
    .option(
      '--duration <time>',
      'stop after this long (10m, 1h30m); until SIGINT or SIGTERM without it',
    )
    .option(
      '--markets <ids>',
      'comma-separated market ids (default: market_data.markets, else all)',
    )
    .option('--book-depth <n>', 'levels kept per book side', '10')
    .option('--book-interval <time>', 'book snapshot period (default: market_data.book_poll_ms)')
    .option(
      '--trades-interval <time>',
      'trades polling period (default: market_data.trades_poll_ms)',
    )
    .option('--gzip', 'write events.jsonl.gz')
    .option(
      '--candle-history <intervals>',
      "candle history kept in candles.json for strategies' warm-up (comma-separated, or none)",
      DEFAULT_HISTORY_INTERVALS.join(','),
    )
    .option(
      '--candle-history-limit <n>',
      'candles per market and interval in candles.json',
      String(DEFAULT_HISTORY_LIMIT),
    )
    .option(
      '--emulator-virtual',
      'record the emulator in this process on virtual time (needs --duration; ignores --config)',
    )
    .option('--seed <seed>', 'with --emulator-virtual: the emulator seed', '42')
    .option('--emulator-config <file>', 'with --emulator-virtual: emulator config (YAML)')
    .option(
      '--start <time>',
      'with --emulator-virtual: virtual start, RFC 3339',
      '2025-01-01T00:00:00Z',
    )
    .action(async (options: RecordOptions) => {
      let manifest: RecordingManifest;
      try {
        manifest =
          options.emulatorVirtual === true
            ? await recordVirtual(options, resolved)
            : await recordFromService(options, resolved);
      } catch (error) {
        throw inputOrRunFailure('record', error, RECORD_EXIT, resolved.printError);
      }
      resolved.print(describe(manifest, options.out));
    });
}
