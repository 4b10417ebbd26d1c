/**
 * The bot's logs: pino, one JSON object per line on stdout, with secrets redacted by key at
 * any depth up to four levels (pino's `redact`, applied before serialization). A `Credential`
 * or `PrivateKey` already prints as `[redacted]`; the paths catch raw values under a secret's
 * name, such as a seed read from a file or a header copied into an error.
 */
import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { type Clock, isoTimestamp } from '../../core/clock.ts';
import type { ExecutionLogger, LogFields } from '../../runtime/execution/index.ts';
import type { Logger as StrategyLogger } from '../../runtime/strategy/index.ts';

export const REDACTED_TEXT = '[redacted]';

/** Field names whose values never reach a log line. */
export const SECRET_FIELD_NAMES = [
  'private_key',
  'privateKey',
  'seed',
  'secret',
  'signature',
  'svc-signature',
  'SVC-SIGNATURE',
  'authorization',
  'Authorization',
  'admin_token',
  'adminToken',
  'password',
] as const;

const REDACT_DEPTH = 4;

function pathOf(prefix: string, name: string): string {
  const key = /^[A-Za-z_$][\w$]*$/.test(name) ? (prefix === '' ? name : `.${name}`) : `["${name}"]`;
  return `${prefix}${key}`;
}

/** Every secret name at depths 0..3: `seed`, `*.seed`, `*.*.seed`, `*.*.*.seed`. */
export function redactPaths(): string[] {
  const paths: string[] = [];
  for (let depth = 0; depth < REDACT_DEPTH; depth++) {
    const prefix = Array.from({ length: depth }, () => '*').join('.');
    for (const name of SECRET_FIELD_NAMES) paths.push(pathOf(prefix, name));
  }
  return paths;
}

const PLAIN_DEPTH = 8;

function plain(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value !== 'object' || value === null || value instanceof Error) return value;
  if (seen.has(value) || depth > PLAIN_DEPTH) return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function' && !(value instanceof Date)) {
    return plain(toJSON.call(value), depth, seen);
  }
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => plain(item, depth + 1, seen));
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = plain(item, depth + 1, seen);
  return copy;
}

/**
 * Objects that define their own JSON form (a `Credential`, a decimal) are turned into it before
 * redaction: the redactor copies objects field by field, which would lose a class's private
 * state and make it unprintable.
 */
function plainFields(object: Record<string, unknown>): Record<string, unknown> {
  return plain(object, 0, new WeakSet()) as Record<string, unknown>;
}

export interface BotLoggerOptions {
  readonly level: string;
  /** pino-pretty when installed; JSON otherwise (a warning says so). */
  readonly pretty?: boolean;
  /** Timestamps come from this clock. */
  readonly clock: Clock;
  /** Default: stdout. Tests pass a stream that collects lines. */
  readonly destination?: DestinationStream;
  readonly name?: string;
}

function prettyTransportAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

export function createBotLogger(options: BotLoggerOptions): Logger {
  const settings: LoggerOptions = {
    name: options.name ?? 'paperbot',
    level: options.level,
    base: { pid: process.pid },
    redact: { paths: redactPaths(), censor: REDACTED_TEXT },
    timestamp: () => `,"time":"${isoTimestamp(options.clock.now())}"`,
    formatters: { level: (label) => ({ level: label }), log: (object) => plainFields(object) },
    serializers: { error: pino.stdSerializers.err, err: pino.stdSerializers.err },
  };
  if (options.destination !== undefined) return pino(settings, options.destination);
  if (options.pretty === true) {
    if (prettyTransportAvailable()) {
      return pino({ ...settings, transport: { target: 'pino-pretty' } });
    }
    const logger = pino(settings, pino.destination(1));
    logger.warn('logging.pretty is set but pino-pretty is not installed; writing JSON');
    return logger;
  }
  return pino(settings, pino.destination(1));
}

/**
 * The runtime's `(message, fields)` logger shape (executor, tracker, strategies) over pino's
 * `(fields, message)`. Fields named `error` holding an Error are serialized with the stack.
 */
export function executionLoggerOf(logger: Logger): ExecutionLogger & StrategyLogger {
  const write =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, fields?: LogFields): void => {
      if (fields === undefined) logger[level](message);
      else logger[level]({ ...fields }, message);
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
