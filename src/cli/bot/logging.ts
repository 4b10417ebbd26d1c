/**
 * The bot's logs: the shared logger of every command (src/cli/logging.ts), on stdout. Kept as
 * the bot's entry point so its callers and tests read as before.
 */
import type { DestinationStream, Logger } from 'pino';
import type { Clock } from '../../core/clock.ts';
import { createLogger, type LogFormat } from '../logging.ts';

export { REDACTED_TEXT, redactPaths, SECRET_FIELD_NAMES } from '../logging.ts';

export interface BotLoggerOptions {
  readonly level: string;
  /** `auto` (default): readable lines on a terminal, JSON otherwise. */
  readonly format?: LogFormat;
  /** Timestamps come from this clock. */
  readonly clock: Clock;
  /** Default: stdout. Tests pass a stream that collects lines. */
  readonly destination?: DestinationStream;
  readonly name?: string;
}

export function createBotLogger(options: BotLoggerOptions): Logger {
  return createLogger({
    level: options.level,
    clock: options.clock,
    fd: 1,
    ...(options.format === undefined ? {} : { format: options.format }),
    ...(options.destination === undefined ? {} : { destination: options.destination }),
    ...(options.name === undefined ? {} : { name: options.name }),
  });
}
