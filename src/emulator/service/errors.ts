/**
 * Errors the server answers with, and how they are written. Every error leaves as the
 * interface's envelope (`{error: {code, message, request_id, retryable, details}}`) with the
 * server request id, whether it came from the engine (ExchangeError), from a server check
 * (ServerError) or from a bug (an unexpected exception, answered 503 and logged).
 *
 * Codes outside the interface's table are used only where no request reaches an endpoint:
 * routing (NOT_FOUND, METHOD_NOT_ALLOWED), transport (PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE,
 * BAD_REQUEST, UPGRADE_REQUIRED, REQUEST_TIMEOUT, EXPECTATION_FAILED, HEADERS_TOO_LARGE,
 * HTTP_VERSION_NOT_SUPPORTED) and the admin API (ADMIN_UNAUTHORIZED, KEY_NOT_FOUND,
 * ACCOUNT_NOT_FOUND). Clients treat a code they do not know as not retryable.
 */
import { PaperbotError } from '../../core/errors.ts';
import {
  buildErrorEnvelope,
  type ErrorCode,
  type ErrorEnvelope,
  errorRetryable,
  errorStatus,
  formatServiceIssues,
  isErrorCode,
  type ServiceIssue,
} from '../../protocol/index.ts';

export const SERVER_ERROR_STATUS = {
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BAD_REQUEST: 400,
  UPGRADE_REQUIRED: 426,
  REQUEST_TIMEOUT: 408,
  EXPECTATION_FAILED: 417,
  HEADERS_TOO_LARGE: 431,
  HTTP_VERSION_NOT_SUPPORTED: 505,
  ADMIN_UNAUTHORIZED: 401,
  KEY_NOT_FOUND: 404,
  ACCOUNT_NOT_FOUND: 404,
} as const;
export type ServerOnlyErrorCode = keyof typeof SERVER_ERROR_STATUS;
export type ServerErrorCode = ErrorCode | ServerOnlyErrorCode;

/** A refusal decided by the server itself (auth, validation, routing, faults, admin). */
export class ServerError extends PaperbotError {
  declare readonly code: ServerErrorCode;
  readonly httpStatus: number;
  /** Extra response headers (Allow, Retry-After). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ServerErrorCode,
    message: string,
    options: {
      details?: Record<string, unknown>;
      retryable?: boolean;
      headers?: Record<string, string>;
      httpStatus?: number;
    } = {},
  ) {
    super(code, message, {
      details: options.details ?? {},
      retryable: options.retryable ?? (isErrorCode(code) ? errorRetryable[code] : false),
    });
    this.name = 'ServerError';
    this.httpStatus =
      options.httpStatus ?? (isErrorCode(code) ? errorStatus[code] : SERVER_ERROR_STATUS[code]);
    this.headers = options.headers ?? {};
  }
}

export function invalidRequestError(issues: ServiceIssue[]): ServerError {
  const message =
    issues.length === 0
      ? 'the request does not match the endpoint contract'
      : formatServiceIssues(issues);
  return new ServerError('INVALID_REQUEST', message, { details: { issues } });
}

/** Anything carrying a service code and an HTTP status: ExchangeError and ServerError alike. */
export interface CodedFailure {
  readonly code: string;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
  readonly retryable: boolean;
  readonly httpStatus: number;
  readonly headers: Readonly<Record<string, string>>;
}

interface ExchangeErrorShape {
  readonly code: string;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
  readonly retryable: boolean;
  readonly httpStatus: number;
}

function isExchangeErrorShape(error: unknown): error is ExchangeErrorShape {
  if (!(error instanceof Error)) return false;
  const candidate = error as Partial<ExchangeErrorShape>;
  return (
    typeof candidate.code === 'string' &&
    isErrorCode(candidate.code) &&
    typeof candidate.httpStatus === 'number' &&
    typeof candidate.retryable === 'boolean' &&
    typeof candidate.details === 'object' &&
    candidate.details !== null
  );
}

/**
 * The coded failure an error stands for, or null for an unexpected exception (a bug). The
 * engine's ExchangeError is recognised by shape, so this module needs nothing from the engine.
 */
export function codedFailureOf(error: unknown): CodedFailure | null {
  if (error instanceof ServerError) return error;
  if (isExchangeErrorShape(error)) {
    return {
      code: error.code,
      message: error.message,
      details: error.details,
      retryable: error.retryable,
      httpStatus: error.httpStatus,
      headers: {},
    };
  }
  return null;
}

export function envelopeOf(failure: CodedFailure, requestId: string): ErrorEnvelope {
  const envelope = buildErrorEnvelope({
    // The envelope keeps codes as strings; the server-only codes are documented in errors.ts.
    code: failure.code as ErrorCode,
    message: failure.message,
    requestId,
    details: { ...failure.details },
    retryable: failure.retryable,
  });
  return envelope;
}

/** The failure answered for an unexpected exception: retryable, since it says nothing about input. */
export function internalFailure(): CodedFailure {
  return {
    code: 'EXECUTION_UNAVAILABLE',
    message: 'the emulator failed to process this request; it has been logged',
    details: {},
    retryable: true,
    httpStatus: errorStatus.EXECUTION_UNAVAILABLE,
    headers: {},
  };
}
