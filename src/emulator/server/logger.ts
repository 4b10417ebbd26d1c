/**
 * The logging seam of the server: a pino logger fits it, and in-process use defaults to
 * silence. Nothing secret is ever passed to it (no admin token, no key material, no signature).
 */
export interface EmulatorLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export const silentLogger: EmulatorLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** What went wrong in a form safe to log: name, message and stack, never the raw object. */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    return { name: error.name, message: error.message, stack: error.stack };
  }
  return { value: String(error) };
}
