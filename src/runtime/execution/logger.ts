/**
 * The logger the execution side writes to: the same shape as the strategy host's logger, so the
 * kernel can hand both one adapter over pino.
 */
export type LogFields = Readonly<Record<string, unknown>>;

export interface ExecutionLogger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const ignore = (): void => {};

export const silentLogger: ExecutionLogger = Object.freeze({
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
});
