/**
 * The one translator of venue failures, for every `ExecutionVenue` (the live client's adapter,
 * the in-process emulator of the replay venue): a `PaperbotError` with the venue's `code` and,
 * in `details`, the HTTP status, the server request id and what is known of a mutation's effect
 * (`outcome`). The execution side then classifies Rejected against Unknown on `code` and
 * `details` alone (`execution/classify.ts`), whichever venue raised it.
 *
 * The status is the error's own `httpStatus` where it has that field (the client's errors, null
 * when nothing answered), else its `status` (the emulator's errors), else the one in `details`,
 * else the interface's status for a service code, else null. An error
 * without a code is a fault, not a venue answer: it is passed on as it is (classified Unknown,
 * `UNEXPECTED_ERROR`).
 */
import { isPaperbotError, PaperbotError } from '../core/errors.ts';
import { type ErrorCode, errorStatus } from '../protocol/index.ts';
import type { SendInterceptor } from './venue-send.ts';

/** Fields a venue error may carry on itself that the execution side reads from `details`. */
const CARRIED = ['serverRequestId', 'outcome', 'endpoint', 'source', 'retryAfterMs'] as const;

function integerOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
}

function statusOf(error: PaperbotError): number | null {
  const own = error as unknown as { readonly httpStatus?: unknown; readonly status?: unknown };
  // A transport error that says it has no status (the client's: null) keeps none.
  if ('httpStatus' in error) return integerOrNull(own.httpStatus);
  return (
    integerOrNull(own.status) ??
    integerOrNull(error.details.httpStatus) ??
    (Object.hasOwn(errorStatus, error.code) ? errorStatus[error.code as ErrorCode] : null)
  );
}

export function toVenueFailure(error: unknown): unknown {
  if (!isPaperbotError(error)) return error;
  const own = error as unknown as Readonly<Record<string, unknown>>;
  const details: Record<string, unknown> = { ...error.details, httpStatus: statusOf(error) };
  for (const field of CARRIED) {
    if (own[field] !== undefined) details[field] = own[field];
  }
  return new PaperbotError(error.code, error.message, {
    cause: error,
    retryable: error.retryable,
    details,
  });
}

/** Runs a venue call, rethrowing its failure as `toVenueFailure` describes. */
export async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toVenueFailure(error);
  }
}

/** `translated` as an interceptor of a venue's `send` (venue-send.ts): its failures translated. */
export const translateFailures: SendInterceptor = (next) => (prepared, signal, timeoutMs) =>
  translated(() => next(prepared, signal, timeoutMs));
