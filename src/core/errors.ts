/**
 * The one error root of the project. Callers branch on `code`, never on `instanceof`
 * (design rule 3). Venue errors add the HTTP status and the server request id in `details`
 * or in subclasses defined next to the code that raises them.
 */
export interface PaperbotErrorOptions {
  readonly cause?: unknown;
  readonly details?: Readonly<Record<string, unknown>>;
  readonly retryable?: boolean;
}

export class PaperbotError extends Error {
  readonly code: string;
  readonly details: Readonly<Record<string, unknown>>;
  readonly retryable: boolean;

  constructor(code: string, message: string, options: PaperbotErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PaperbotError';
    this.code = code;
    this.details = options.details ?? {};
    this.retryable = options.retryable ?? false;
  }
}

export function isPaperbotError(value: unknown): value is PaperbotError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    value instanceof Error
  );
}
