/**
 * `paperbot run [--config FILE] [--log-format auto|pretty|json]`: the long-lived bot process.
 * It checks the whole config first (every problem listed with its path, exit code 2, nothing
 * started), then runs until SIGINT or SIGTERM and shuts down cleanly: every order cancelled and
 * confirmed closed by a read of the open orders, the dead-man switch disarmed, exit 0. When the
 * shutdown cannot confirm that within its deadline it names the orders that may remain and exits
 * 3. A second signal during shutdown forces the exit (code 130). `--log-format` replaces the
 * config's `logging.format`.
 */
import { type Command, CommanderError, InvalidArgumentError } from 'commander';
import { systemClock } from '../../core/clock.ts';
import { isPaperbotError } from '../../core/errors.ts';
import { Bot, isConfigurationError, type StartBotOptions } from '../bot/bot.ts';
import { DEFAULT_BOT_CONFIG_PATH, type LoadedBotConfig, loadBotConfig } from '../bot/config.ts';
import { type LogFormat, logFormatOption } from '../logging.ts';
import { listenForStopSignals, printToStderr } from './terminal.ts';
import { defineCommand } from './define-command.ts';

/** Exit codes of `paperbot run`. */
export const RUN_EXIT = {
  /** Stopped by a signal, cleanly. */
  ok: 0,
  /** Could not start, or failed while running. */
  failed: 1,
  /** The config or the key file is wrong; nothing was started. */
  invalidConfig: 2,
  /**
   * Stopped, but the shutdown could not confirm every order closed: some may rest until the
   * dead-man deadline, left armed, passes. The orders are named on stderr and in the log.
   */
  ordersMayRemain: 3,
  /** A second signal cut the shutdown short. */
  forced: 130,
} as const;

/** A repeat of the first signal within this long is the same request (npm forwards Ctrl-C). */
const REPEAT_WINDOW_MS = 1_000;
/** After a clean shutdown, handles still open get this long before the process exits anyway. */
const EXIT_GRACE_MS = 3_000;

export interface RunCommandDependencies {
  readonly printError: (text: string) => void;
  readonly load: (path: string) => Promise<LoadedBotConfig>;
  readonly start: (options: StartBotOptions) => Promise<Bot>;
  /** Calls `onSignal` for each SIGINT / SIGTERM; returns a function that stops listening. */
  readonly onSignal: (onSignal: (signal: NodeJS.Signals) => void) => () => void;
  /** After a clean stop. */
  readonly exit: (code: number) => void;
  /** On a second signal: now, whatever is still running. */
  readonly forceExit: (code: number) => void;
  /** Wall time, to tell a repeated delivery of the first signal from a second one. */
  readonly now: () => number;
}

const defaultDependencies: RunCommandDependencies = {
  printError: printToStderr,
  load: loadBotConfig,
  start: (options) => Bot.start(options),
  onSignal: listenForStopSignals,
  exit: (code) => {
    // Lets stdout drain; exits anyway if a forgotten handle would keep the process alive.
    process.exitCode = code;
    systemClock.unref(systemClock.setTimeout(() => process.exit(code), EXIT_GRACE_MS));
  },
  forceExit: (code) => process.exit(code),
  now: () => systemClock.now(),
};

interface RunOptions {
  readonly config: string;
  readonly logFormat?: LogFormat;
  readonly metricsPort?: number;
}

/** `--metrics-port`: a TCP port, 0 for any free one. */
function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(port) || port > 65_535) {
    throw new InvalidArgumentError(
      `must be a port from 0 to 65535 (0: any free port), got ${text}`,
    );
  }
  return port;
}

/** `--metrics-port` replaces `metrics.port` (and turns the endpoint on). */
function withMetricsPort(loaded: LoadedBotConfig, port: number | undefined): LoadedBotConfig {
  if (port === undefined) return loaded;
  const metrics = { ...loaded.config.metrics, enabled: true, port };
  return { ...loaded, config: { ...loaded.config, metrics } };
}

/** `--log-format` replaces the config's `logging.format`. */
function withLogFormat(loaded: LoadedBotConfig, format: LogFormat | undefined): LoadedBotConfig {
  if (format === undefined) return loaded;
  const config = { ...loaded.config, logging: { ...loaded.config.logging, format } };
  return { ...loaded, config };
}

function fail(code: number, message: string): CommanderError {
  return new CommanderError(code, 'paperbot.run', message);
}

export function registerRunCommand(
  program: Command,
  dependencies: Partial<RunCommandDependencies> = {},
): Command {
  const { command, dependencies: resolved } = defineCommand(
    program,
    'run',
    'Run the trading bot until SIGINT or SIGTERM. Without venue.key_file in the config, it trades on an embedded emulator.',
    defaultDependencies,
    dependencies,
  );
  return command
    .option('--config <file>', 'bot config (YAML)', DEFAULT_BOT_CONFIG_PATH)
    .addOption(logFormatOption())
    .option(
      '--metrics-port <port>',
      'port of the HTTP endpoint (metrics, status, dashboard); 0 for any free port, printed at start',
      parsePort,
    )
    .action(async (options: RunOptions) => {
      let loaded: LoadedBotConfig;
      try {
        loaded = withMetricsPort(
          withLogFormat(await resolved.load(options.config), options.logFormat),
          options.metricsPort,
        );
      } catch (error) {
        if (isPaperbotError(error) && error.code === 'INVALID_CONFIG') {
          resolved.printError(`paperbot: ${error.message}\n`);
          throw fail(RUN_EXIT.invalidConfig, error.message);
        }
        throw error;
      }

      // Signals are taken from here on, so one arriving during start stops the bot cleanly.
      let bot: Bot | null = null;
      let firstSignalAt: number | null = null;
      let firstSignal: NodeJS.Signals | null = null;
      const aborter = new AbortController();
      let stopRequested!: (signal: NodeJS.Signals) => void;
      const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
        stopRequested = resolve;
      });
      const stopListening = resolved.onSignal((signal) => {
        const now = resolved.now();
        if (firstSignalAt === null) {
          firstSignalAt = now;
          firstSignal = signal;
          stopRequested(signal);
          if (bot === null) aborter.abort();
          return;
        }
        if (signal === firstSignal && now - firstSignalAt < REPEAT_WINDOW_MS) return;
        resolved.printError(`paperbot: ${signal} again; exiting without a clean shutdown\n`);
        bot?.logger.warn('forced exit', { event: 'bot.forced_exit', signal });
        resolved.forceExit(RUN_EXIT.forced);
      });

      try {
        try {
          bot = await resolved.start({ loaded, signal: aborter.signal });
        } catch (error) {
          if (isPaperbotError(error) && error.code === 'BOT_START_ABORTED') {
            resolved.exit(RUN_EXIT.ok);
            return;
          }
          const configuration = isConfigurationError(error);
          const code = isPaperbotError(error) ? `${error.code}: ` : '';
          const message = error instanceof Error ? error.message : String(error);
          resolved.printError(`paperbot: could not start: ${code}${message}\n`);
          throw fail(configuration ? RUN_EXIT.invalidConfig : RUN_EXIT.failed, message);
        }
        // A signal that came during start has already settled this.
        const stopped = await bot.stop(await stopSignal);
        if (!stopped.confirmed) {
          const ids = stopped.remainingOrderIds;
          const message = `shutdown could not confirm every order closed; the dead-man deadline is left armed; these may remain open: ${ids.length > 0 ? ids.join(', ') : '(none known)'}`;
          resolved.printError(`paperbot: ${message}\n`);
          // The grace timer exits with this code too if a handle outlives the shutdown.
          resolved.exit(RUN_EXIT.ordersMayRemain);
          throw fail(RUN_EXIT.ordersMayRemain, message);
        }
      } finally {
        stopListening();
      }
      resolved.exit(RUN_EXIT.ok);
    });
}
