/**
 * What a failed exchange means: the `VenueError` for a request that timed out, was aborted, met
 * a TLS or connection failure or an oversized answer, with what is known of a mutation's
 * outcome; and a refused signature with the wire settings to check.
 */
import type { EndpointName } from '../protocol/index.ts';
import { type WireProfile, wireSettingsToCheck } from '../signing/index.ts';
import { type MutationOutcome, VenueError } from './errors.ts';
import { ResponseTooLarge } from './exchange.ts';
import { tlsFailureOf } from './tls-errors.ts';

const CONNECT_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function errorCodeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Node's happy-eyeballs connect reports one error per address in an AggregateError.
  const inner = (error as { errors?: unknown }).errors;
  return Array.isArray(inner) ? errorCodeOf(inner[0]) : undefined;
}

/** What the client knew when an exchange failed. */
export interface ExchangeState {
  /** The client's own timer gave up. */
  readonly timedOut: boolean;
  /** The caller's signal aborted the call. */
  readonly callerAborted: boolean;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** The client was closed meanwhile. */
  readonly clientClosed: boolean;
}

/** The error of an exchange that failed before a whole answer came back. */
export function transportFailure(
  endpoint: EndpointName,
  mutation: boolean,
  error: unknown,
  state: ExchangeState,
): VenueError {
  const unknown: MutationOutcome | null = mutation ? 'unknown' : null;
  if (state.timedOut) {
    return new VenueError(
      'REQUEST_TIMEOUT',
      `${endpoint}: no complete answer within ${state.timeoutMs} ms${mutation ? '; the outcome is unknown: recover it by request id before sending anything else' : ''}`,
      {
        source: 'transport',
        endpoint,
        outcome: unknown,
        retryable: !mutation,
        cause: error,
      },
    );
  }
  if (state.callerAborted) {
    return new VenueError('REQUEST_ABORTED', `${endpoint}: the call was aborted by its caller`, {
      source: 'local',
      endpoint,
      outcome: unknown,
      cause: error,
    });
  }
  if (error instanceof ResponseTooLarge) {
    return new VenueError(
      'MALFORMED_RESPONSE',
      `${endpoint}: the answer is larger than ${state.maxBytes} bytes`,
      { source: 'transport', endpoint, outcome: unknown },
    );
  }
  if (state.clientClosed) {
    return new VenueError('CLIENT_CLOSED', `${endpoint}: the client was closed`, {
      source: 'local',
      endpoint,
      outcome: unknown,
      cause: error,
    });
  }
  const code = errorCodeOf(error);
  const tls = tlsFailureOf(code);
  if (tls !== null) {
    return new VenueError(
      'TRANSPORT_FAILURE',
      `${endpoint}: TLS failed (${tls.code}): ${tls.advice}`,
      {
        source: 'transport',
        endpoint,
        outcome: mutation ? 'not_sent' : null,
        details: { transportCode: tls.code, tls: tls.kind },
        cause: error,
      },
    );
  }
  const neverConnected = code !== undefined && CONNECT_ERROR_CODES.has(code);
  return new VenueError(
    'TRANSPORT_FAILURE',
    `${endpoint}: ${neverConnected ? 'could not connect' : 'the connection failed'} (${code ?? (error instanceof Error ? error.message : 'unknown error')})${mutation && !neverConnected ? '; the outcome is unknown: recover it by request id before sending anything else' : ''}`,
    {
      source: 'transport',
      endpoint,
      outcome: mutation ? (neverConnected ? 'not_sent' : 'unknown') : null,
      retryable: !mutation || neverConnected,
      details: { transportCode: code ?? null },
      cause: error,
    },
  );
}

/**
 * INVALID_SIGNATURE with what to check: the venue's reason when it gives one, and the wire
 * settings the signature depends on (`paperbot doctor` shows the signing input itself).
 */
export function signatureRefused(error: VenueError, profile: WireProfile): VenueError {
  const settings = wireSettingsToCheck(profile);
  return new VenueError(
    error.code,
    `${error.message}; if the key and the clock are right, check the wire settings: ${settings.join(', ')}`,
    {
      source: error.source,
      retryable: error.retryable,
      details: { ...error.details, wire_settings: settings },
      httpStatus: error.httpStatus,
      serverRequestId: error.serverRequestId,
      endpoint: error.endpoint,
      outcome: error.outcome,
      retryAfterMs: error.retryAfterMs,
      bodyExcerpt: error.bodyExcerpt,
      cause: error,
    },
  );
}
