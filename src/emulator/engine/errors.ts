/**
 * The refusals the engine raises. Each carries a service error code and its HTTP status, so the
 * server maps it 1:1 onto the error envelope, and batch and cancel-all results onto a
 * CommandError.
 */
import { PaperbotError } from '../../core/errors.ts';
import {
  type CommandError,
  type ErrorCode,
  errorRetryable,
  errorStatus,
  formatServiceIssues,
  type ServiceIssue,
} from '../../protocol/index.ts';

export class ExchangeError extends PaperbotError {
  declare readonly code: ErrorCode;
  readonly httpStatus: number;

  constructor(
    code: ErrorCode,
    message: string,
    details: Readonly<Record<string, unknown>> = {},
    retryable: boolean = errorRetryable[code],
  ) {
    super(code, message, { details, retryable });
    this.name = 'ExchangeError';
    this.httpStatus = errorStatus[code];
  }

  toCommandError(): CommandError {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      details: { ...this.details },
    };
  }
}

export function isExchangeError(value: unknown): value is ExchangeError {
  return value instanceof ExchangeError;
}

/** INVALID_REQUEST with `details.issues` (each `loc` starts with body, query or path). */
export function invalidRequest(issues: ServiceIssue[]): ExchangeError {
  const message = issues.length === 0 ? 'invalid request' : formatServiceIssues(issues);
  return new ExchangeError('INVALID_REQUEST', message, { issues });
}

/** A problem with one field of the request body. */
export function bodyIssue(field: string, type: string, msg: string): ServiceIssue {
  return { type, loc: ['body', field], msg };
}
