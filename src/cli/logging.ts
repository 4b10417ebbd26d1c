/**
 * One logger for every command (`run`, `backtest`, `emulator`, `record`, `keys`...): pino with
 * the same shape everywhere — `"level":"info"` labels, an RFC 3339 `time` from the injected
 * clock, `name` and `pid`, no hostname — and secrets redacted by key at any depth up to four
 * levels (pino's `redact`, applied before serialization). A `Credential` or `PrivateKey`
 * already prints as `[redacted]`; the paths catch raw values under a secret's name, such as a
 * seed read from a file or a header copied into an error.
 *
 * Two formats: JSON lines with every field (the fast path, for files and pipes) and readable
 * lines, one per event within 120 columns (`log-line.ts`), written in process. `auto` picks
 * readable lines when the destination is a terminal. Redaction runs before either: the
 * readable line is made from the redacted JSON line.
 */
import { Option } from 'commander';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { type Clock, isoTimestamp } from '../core/clock.ts';
import type { OrderIntent } from '../runtime/intents.ts';
import { formatPrettyLine } from './log-line.ts';

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

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `auto`: readable on a terminal, JSON otherwise. */
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

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

export interface CreateLoggerOptions {
  readonly level: string;
  /** Timestamps come from this clock. */
  readonly clock: Clock;
  /** Default `auto`. */
  readonly format?: LogFormat;
  /** The file descriptor written to when no `destination` is given. Default 1 (stdout). */
  readonly fd?: 1 | 2;
  /** Tests pass a stream that collects lines; `auto` then means JSON. */
  readonly destination?: DestinationStream;
  /** Whether the destination is a terminal (`auto`); default: the fd's `isTTY`. */
  readonly terminal?: boolean;
  /** Default `paperbot`; each command names itself (`paperbot-backtest`). */
  readonly name?: string;
}

/** `--log-format auto|pretty|json`, for the commands that log. */
export function logFormatOption(defaultFormat?: LogFormat): Option {
  const option = new Option(
    '--log-format <format>',
    'log lines: auto (readable on a terminal, JSON otherwise), pretty or json',
  ).choices(LOG_FORMATS);
  return defaultFormat === undefined ? option : option.default(defaultFormat);
}

/** Whether a format writes readable lines to a destination that is (or is not) a terminal. */
export function isPrettyFormat(format: LogFormat, terminal: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && terminal);
}

function isTerminal(fd: 1 | 2): boolean {
  return (fd === 1 ? process.stdout : process.stderr).isTTY === true;
}

/** The logger of every command; see the module comment for the shape. */
export function createLogger(options: CreateLoggerOptions): Logger {
  const settings: LoggerOptions = {
    name: options.name ?? 'paperbot',
    level: options.level,
    base: { pid: process.pid },
    redact: { paths: redactPaths(), censor: REDACTED_TEXT },
    timestamp: () => `,"time":"${isoTimestamp(options.clock.now())}"`,
    formatters: { level: (label) => ({ level: label }), log: (object) => plainFields(object) },
    serializers: { error: pino.stdSerializers.err, err: pino.stdSerializers.err },
  };
  const fd = options.fd ?? 1;
  const terminal = options.terminal ?? (options.destination === undefined && isTerminal(fd));
  if (isPrettyFormat(options.format ?? 'auto', terminal)) {
    // In process and synchronous, so the last lines before an exit are not lost.
    const out = options.destination ?? pino.destination({ dest: fd, sync: true });
    const pretty: DestinationStream = {
      write: (line: string) => out.write(formatPrettyLine(line, { colorize: terminal })),
    };
    return pino(settings, pretty);
  }
  return pino(settings, options.destination ?? pino.destination(fd));
}

/** What an intent asks for, in the log's snake_case: market, side, type, price, quantity, tag. */
export function intentLogFields(intent: OrderIntent): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const put = (key: string, value: unknown) => {
    if (value !== undefined) fields[key] = value;
  };
  switch (intent.kind) {
    case 'place':
      put('market', intent.marketId);
      put('side', intent.side);
      put('type', intent.type);
      put('price', intent.price);
      put('quantity', intent.quantity);
      break;
    case 'amend':
      put('price', intent.price);
      put('quantity', intent.quantity);
      break;
    case 'cancel_all':
      put('market', intent.marketId);
      break;
    case 'close_position':
      put('market', intent.marketId);
      put('quantity_percent', intent.quantityPercent);
      break;
    case 'cancel':
      break;
  }
  put('tag', intent.tag);
  return fields;
}
