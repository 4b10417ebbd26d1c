/**
 * How a failed command is classified (design rule 4): a refusal the venue gave for certain is
 * Rejected; anything that leaves open whether the venue acted is Unknown and is never treated as
 * rejected.
 */
import { isPaperbotError } from '../../core/errors.ts';
import { UNKNOWN_OUTCOME_TRANSPORT_CODES } from '../venue.ts';

export type FailureClass =
  | {
      readonly kind: 'rejected';
      readonly code: string;
      readonly message: string;
      readonly httpStatus: number | null;
      readonly issues: readonly unknown[] | undefined;
    }
  | {
      readonly kind: 'unknown';
      readonly code: string;
      readonly message: string;
      readonly httpStatus: number | null;
    };

/**
 * Codes that leave the outcome open whatever their status: ORDER_CONFIRMATION_PENDING (the
 * service is still confirming) and IDEMPOTENCY_CONFLICT (the id is already taken with other
 * bytes; what it did under that id must be read back, never replaced by a new id).
 */
const UNKNOWN_SERVICE_CODES: ReadonlySet<string> = new Set([
  'ORDER_CONFIRMATION_PENDING',
  'IDEMPOTENCY_CONFLICT',
]);

/**
 * RESPONSE_ID_MISMATCH: the venue answered a placement with another command's order, so what
 * it did with this one is open (the client also marks it `outcome: 'unknown'`).
 */
const UNKNOWN_TRANSPORT_CODES: ReadonlySet<string> = new Set([
  ...UNKNOWN_OUTCOME_TRANSPORT_CODES,
  'RESPONSE_ID_MISMATCH',
]);

function integerOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
}

/** `details.httpStatus` (the venue contract), else an `httpStatus` field of the error itself. */
function httpStatusOf(error: {
  readonly details: Readonly<Record<string, unknown>>;
}): number | null {
  return (
    integerOrNull(error.details.httpStatus) ??
    integerOrNull((error as { readonly httpStatus?: unknown }).httpStatus)
  );
}

/**
 * What the transport knows of a mutation's effect (`details.outcome`, else an `outcome` field of
 * the error itself, as the REST client sets it): `unknown` means the venue may have acted.
 */
function outcomeOf(error: { readonly details: Readonly<Record<string, unknown>> }): unknown {
  return error.details.outcome ?? (error as { readonly outcome?: unknown }).outcome;
}

function issuesOf(details: Readonly<Record<string, unknown>>): readonly unknown[] | undefined {
  return Array.isArray(details.issues) ? details.issues : undefined;
}

export function classifyFailure(error: unknown): FailureClass {
  if (!isPaperbotError(error)) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      kind: 'unknown',
      code: 'UNEXPECTED_ERROR',
      message,
      httpStatus: null,
    };
  }
  const httpStatus = httpStatusOf(error);
  if (
    UNKNOWN_TRANSPORT_CODES.has(error.code) ||
    UNKNOWN_SERVICE_CODES.has(error.code) ||
    outcomeOf(error) === 'unknown'
  ) {
    return {
      kind: 'unknown',
      code: error.code,
      message: error.message,
      httpStatus,
    };
  }
  if (httpStatus !== null && httpStatus >= 400 && httpStatus < 500) {
    return {
      kind: 'rejected',
      code: error.code,
      message: error.message,
      httpStatus,
      issues: issuesOf(error.details),
    };
  }
  // A 5xx, or an error that says nothing about the venue's answer: the venue may have acted.
  return {
    kind: 'unknown',
    code: error.code,
    message: error.message,
    httpStatus,
  };
}

/** Exponential backoff without jitter (deterministic under replay): base * 2^attempt, capped. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  const exponent = Math.min(Math.max(attempt, 0), 30);
  return Math.min(maxMs, baseMs * 2 ** exponent);
}

/** A failure's code: a `PaperbotError`'s own, else `UNEXPECTED_ERROR`. */
export function errorCode(error: unknown): string {
  return isPaperbotError(error) ? error.code : 'UNEXPECTED_ERROR';
}

/** A failure's message, whatever was thrown. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
