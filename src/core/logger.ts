/**
 * The one logging seam of the project: `(message, fields?)`, as a strategy writes
 * `ctx.log.info('filled', { orderId })`. Every part (runtime, emulator, CLI) takes this
 * `Logger`; a pino logger enters once, through `fromPino`, where a command hands one in.
 * Nothing secret is ever passed to a logger (the CLI's pino also redacts by field name).
 */

export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const ignore = (): void => {};

/** A logger that drops everything (in-process use, tests and benches that do not read logs). */
export const silentLogger: Logger = Object.freeze({
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
});

type PinoWrite = {
  (fields: Record<string, unknown>, message: string): void;
  (message: string): void;
};

/** What `fromPino` needs of a pino logger: pino's `(fields, message)` order and `child`. */
export interface PinoLike {
  debug: PinoWrite;
  info: PinoWrite;
  warn: PinoWrite;
  error: PinoWrite;
  child(bindings: Record<string, unknown>): PinoLike;
}

const pinoOf = new WeakMap<Logger, PinoLike>();

/**
 * The project's `Logger` over a pino logger (pino writes fields first). Fields named `error`
 * holding an Error are serialized with the stack by pino's own serializers.
 */
export function fromPino(pino: PinoLike): Logger {
  const write =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, fields?: LogFields): void => {
      // pino may keep the object it is handed; a copy keeps the caller's fields its own.
      if (fields === undefined) pino[level](message);
      else pino[level]({ ...fields }, message);
    };
  const logger: Logger = {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
  };
  pinoOf.set(logger, pino);
  return logger;
}

/**
 * `logger` with `bindings` added to every line (a component name, an account). Over pino this
 * is pino's own `child`, serialized once; a silent logger stays silent without a wrapper.
 */
export function withFields(logger: Logger, bindings: LogFields): Logger {
  if (logger === silentLogger) return logger;
  const pino = pinoOf.get(logger);
  if (pino !== undefined) return fromPino(pino.child({ ...bindings }));
  const merged = (fields: LogFields | undefined): LogFields =>
    fields === undefined ? bindings : { ...bindings, ...fields };
  return {
    debug: (message, fields) => logger.debug(message, merged(fields)),
    info: (message, fields) => logger.info(message, merged(fields)),
    warn: (message, fields) => logger.warn(message, merged(fields)),
    error: (message, fields) => logger.error(message, merged(fields)),
  };
}

/** What went wrong in a form safe to log: name, message and stack, never the raw object. */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    return { name: error.name, message: error.message, stack: error.stack };
  }
  return { value: String(error) };
}
