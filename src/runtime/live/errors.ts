/**
 * The client's errors as the runtime expects them from a venue (`ExecutionVenue.send`): a
 * `PaperbotError` whose `code` is the service's or the transport's code, with the HTTP status,
 * the server request id and what is known of a mutation's effect in `details`. The execution
 * side then classifies Rejected against Unknown (`src/runtime/execution/classify.ts`) without
 * knowing the client: a timeout, a broken connection, a malformed answer, any 5xx and
 * ORDER_CONFIRMATION_PENDING all carry `details.outcome: 'unknown'`.
 */
import { isVenueError } from '../../client/index.ts';
import { PaperbotError } from '../../core/errors.ts';

export function toRuntimeError(error: unknown): unknown {
  if (!isVenueError(error)) return error;
  return new PaperbotError(error.code, error.message, {
    cause: error,
    retryable: error.retryable,
    details: {
      ...error.details,
      httpStatus: error.httpStatus,
      serverRequestId: error.serverRequestId,
      outcome: error.outcome,
      endpoint: error.endpoint,
      source: error.source,
      // How long the venue asked to wait (Retry-After, seconds or HTTP date), in milliseconds.
      retryAfterMs: error.retryAfterMs,
    },
  });
}

/** Runs a client call, rethrowing its failure as `toRuntimeError` describes. */
export async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toRuntimeError(error);
  }
}
