/**
 * The errors the client raises. One class, `VenueError`, under the project's root
 * `PaperbotError`; callers branch on `code` (design rule 3). A service refusal keeps the
 * service's code, message, retryable flag and details, plus the HTTP status and the server
 * request id; the client's own failures get codes of their own (`CLIENT_ERROR_CODES`).
 */
import { LOCAL_ERROR_CODES } from '../core/error-codes.ts';
import { PaperbotError } from '../core/errors.ts';
import type { EndpointName } from '../protocol/index.ts';

/**
 * Codes the client itself raises, beside the service's codes (src/protocol ErrorCode): listed,
 * each with what it means, once, in the project's registry of codes (src/core/error-codes.ts).
 */
export const CLIENT_ERROR_CODES = LOCAL_ERROR_CODES.client;
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number];

/**
 * Where a failure arose: `service` (the service answered with its error envelope), `transport`
 * (nothing usable came back), `local` (refused before anything was sent).
 */
export type ErrorSource = 'service' | 'transport' | 'local';

/**
 * What is known about a mutation that failed:
 * - `not_sent`: nothing reached the service; sending the same bytes again is safe.
 * - `rejected`: the service refused the command (a 4xx error envelope other than
 *   ORDER_CONFIRMATION_PENDING); it did not apply it.
 * - `unknown`: the service may or may not have applied it. Never treat this as rejected:
 *   recover it by request id (`RestClient.recover`).
 */
export type MutationOutcome = 'not_sent' | 'rejected' | 'unknown';

export interface VenueErrorInit {
  readonly source: ErrorSource;
  readonly retryable?: boolean;
  readonly details?: Readonly<Record<string, unknown>>;
  readonly httpStatus?: number | null;
  readonly serverRequestId?: string | null;
  readonly endpoint?: EndpointName | null;
  /** Set for mutations only; null for reads. */
  readonly outcome?: MutationOutcome | null;
  readonly retryAfterMs?: number | null;
  readonly bodyExcerpt?: string | null;
  readonly cause?: unknown;
}

export class VenueError extends PaperbotError {
  readonly source: ErrorSource;
  readonly httpStatus: number | null;
  /** The server identifier of the failed HTTP request (envelope `request_id`, `SVC-REQUEST-ID`). */
  readonly serverRequestId: string | null;
  readonly endpoint: EndpointName | null;
  readonly outcome: MutationOutcome | null;
  /** How long the service asked to wait (Retry-After), when it did. */
  readonly retryAfterMs: number | null;
  /** The start of an answer that could not be read, for diagnosis. */
  readonly bodyExcerpt: string | null;

  constructor(code: string, message: string, init: VenueErrorInit) {
    super(code, message, {
      cause: init.cause,
      details: init.details ?? {},
      retryable: init.retryable ?? false,
    });
    this.name = 'VenueError';
    this.source = init.source;
    this.httpStatus = init.httpStatus ?? null;
    this.serverRequestId = init.serverRequestId ?? null;
    this.endpoint = init.endpoint ?? null;
    this.outcome = init.outcome ?? null;
    this.retryAfterMs = init.retryAfterMs ?? null;
    this.bodyExcerpt = init.bodyExcerpt ?? null;
  }
}

export function isVenueError(value: unknown): value is VenueError {
  return value instanceof VenueError;
}

/** Characters of an unreadable body kept in `bodyExcerpt`. */
export const BODY_EXCERPT_LENGTH = 512;

export function excerptOf(text: string): string {
  return text.length <= BODY_EXCERPT_LENGTH ? text : `${text.slice(0, BODY_EXCERPT_LENGTH)}…`;
}
