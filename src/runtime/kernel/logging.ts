/**
 * The kernel's logger, pino-compatible, and the adapters to the shapes the parts it composes
 * write to: the strategy host and the execution side take `(message, fields)`, the risk gate
 * takes `(fields, message)` as pino does.
 */
import type { ExecutionLogger, LogFields } from '../execution/logger.ts';
import type { RiskLogger } from '../risk/gate.ts';

/** A pino logger satisfies this; so does anything that logs `(fields, message)`. */
export interface KernelLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  child(bindings: Record<string, unknown>): KernelLogger;
}

/** `(message, fields)` over a kernel logger; used by the host, the executor and the venue. */
export function messageFirst(logger: KernelLogger): ExecutionLogger {
  const fieldsOf = (fields: LogFields | undefined): Record<string, unknown> => ({ ...fields });
  return {
    debug: (message, fields) => logger.debug(fieldsOf(fields), message),
    info: (message, fields) => logger.info(fieldsOf(fields), message),
    warn: (message, fields) => logger.warn(fieldsOf(fields), message),
    error: (message, fields) => logger.error(fieldsOf(fields), message),
  };
}

export function riskLogger(logger: KernelLogger): RiskLogger {
  return {
    info: (fields, message) => logger.info(fields, message),
    warn: (fields, message) => logger.warn(fields, message),
  };
}

/** A logger that drops everything (tests and benches that do not look at logs). */
export const silentKernelLogger: KernelLogger = Object.freeze({
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentKernelLogger,
});
