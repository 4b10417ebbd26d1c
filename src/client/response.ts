/**
 * Turns an HTTP answer into a typed result or a `VenueError`. Pure: the status, the headers and
 * the body text go in; nothing is read from the network or the clock here. Success bodies are
 * read with the endpoint's `read` schema through `readWire` (contract section 7) in the
 * monitor's mode: tolerant by default (unknown fields kept, open enums read as their safe
 * meaning, a bad item of a list left out and reported, the others kept), strict for the
 * project's own tests. What the reading met is reported to the `ReadingMonitor`. Anything it
 * refuses (broken JSON, a field the client uses missing or mistyped, an HTML error page) becomes
 * MALFORMED_RESPONSE whose message names the broken paths, the status and the server request id.
 */
import {
  type EndpointName,
  ErrorEnvelope,
  isErrorCode,
  endpoints,
  describeIssues,
  type ResponseOf,
  readWire,
  type ServiceIssue,
  toServiceIssues,
  ValidationFailureBody,
  withSkippedItems,
} from '../protocol/index.ts';
import { parseRetryAfter } from './backoff.ts';
import { excerptOf, type MutationOutcome, VenueError } from './errors.ts';
import { type HeaderBag, headerValue } from './rate-limit.ts';
import { ReadingMonitor } from './reading-monitor.ts';

export const HEADER_REQUEST_ID = 'svc-request-id';

export interface RawResponse {
  readonly status: number;
  readonly headers: HeaderBag;
  readonly text: string;
}

export interface ResponseContext {
  /** Service time now (local clock plus offset), for an HTTP-date Retry-After. */
  readonly serverNowMs: number;
  /** How to read and where to report it; default: tolerant, reported nowhere. */
  readonly reading?: ReadingMonitor;
}

const UNREPORTED = new ReadingMonitor('tolerant');

/** Statuses of gateways and proxies, whose error pages are not the service's and may pass. */
const GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function issuesFromValidationFailure(body: ValidationFailureBody): ServiceIssue[] {
  return body.detail.map((item) => {
    const [first, ...rest] = item.loc;
    const location = first === 'query' || first === 'path' ? first : 'body';
    const path = first === location ? rest : item.loc;
    return { type: item.type, loc: [location, ...path], msg: item.msg };
  });
}

export function interpretResponse<E extends EndpointName>(
  endpoint: E,
  raw: RawResponse,
  context: ResponseContext,
): ResponseOf<E> {
  const definition = endpoints[endpoint];
  const mutation = definition.mutation;
  const headerRequestId = headerValue(raw.headers, HEADER_REQUEST_ID) ?? null;
  const status = raw.status;
  const unknownOutcome: MutationOutcome | null = mutation ? 'unknown' : null;

  const malformed = (problem: string, extra: Record<string, unknown> = {}): VenueError =>
    new VenueError(
      'MALFORMED_RESPONSE',
      `${endpoint}: ${problem} (HTTP ${status}${headerRequestId ? `, request ${headerRequestId}` : ''})`,
      {
        source: 'transport',
        endpoint,
        httpStatus: status,
        serverRequestId: headerRequestId,
        outcome: unknownOutcome,
        retryable: !mutation && GATEWAY_STATUSES.has(status),
        bodyExcerpt: excerptOf(raw.text),
        details: extra,
      },
    );

  if (status >= 300 && status < 400) {
    throw new VenueError(
      'REDIRECT_REFUSED',
      `${endpoint}: the service answered with a redirect (HTTP ${status}); redirects are never followed, so signed requests stay on their origin`,
      {
        source: 'transport',
        endpoint,
        httpStatus: status,
        serverRequestId: headerRequestId,
        outcome: unknownOutcome,
        details: { location: headerValue(raw.headers, 'location') ?? null },
      },
    );
  }

  if (status >= 200 && status < 300) {
    if (status !== definition.successStatus) {
      throw malformed(`expected HTTP ${definition.successStatus}`);
    }
    const json = parseJson(raw.text);
    if (!json.ok) throw malformed('the body is not JSON');
    const monitor = context.reading ?? UNREPORTED;
    const source = { where: endpoint, httpStatus: status, serverRequestId: headerRequestId };
    const read = readWire(definition.read, json.value, monitor.mode);
    monitor.report(source, read.drift, read.skipped, json.value);
    if (!read.ok) {
      const error = malformed(
        `the body does not match the interface: ${describeIssues(read.issues, json.value)}`,
        { issues: toServiceIssues({ issues: read.issues }, 'body', json.value) },
      );
      monitor.refused(source, error.message);
      throw error;
    }
    return withSkippedItems(read.value as ResponseOf<E>, read.skipped);
  }

  const json = parseJson(raw.text);
  if (json.ok) {
    // The error envelope is read like any answer: a field it does not know is no reason to
    // mistake a service's refusal for a broken answer.
    const monitor = context.reading ?? UNREPORTED;
    const envelope = readWire(ErrorEnvelope, json.value, monitor.mode);
    if (envelope.ok) {
      monitor.report(
        { where: endpoint, httpStatus: status, serverRequestId: headerRequestId },
        envelope.drift,
      );
      const error = envelope.value.error;
      return throwServiceError(endpoint, raw, context, {
        code: error.code,
        message: error.message,
        retryable: error.retryable,
        details: error.details,
        serverRequestId: error.request_id || headerRequestId,
      });
    }
    if (status === 422) {
      const failure = readWire(ValidationFailureBody, json.value, monitor.mode);
      if (failure.ok) {
        return throwServiceError(endpoint, raw, context, {
          code: 'INVALID_REQUEST',
          message: 'the request does not match the endpoint contract',
          retryable: false,
          details: { issues: issuesFromValidationFailure(failure.value) },
          serverRequestId: headerRequestId,
        });
      }
    }
  }
  throw malformed(
    json.ok ? 'the error body is not the error envelope' : 'the error body is not JSON',
  );
}

/**
 * What a service refusal says about a mutation. ORDER_CONFIRMATION_PENDING means the command
 * was taken and is still being confirmed; a 5xx may come from a failure after the command was
 * taken. Both stay unknown (design rule 4), to be recovered by request id. Other refusals
 * (4xx) mean the command was not applied.
 */
export function serviceOutcome(code: string, status: number): MutationOutcome {
  if (code === 'ORDER_CONFIRMATION_PENDING' || status >= 500) return 'unknown';
  return 'rejected';
}

interface ServiceErrorFields {
  readonly code: string;
  readonly message: string;
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>>;
  readonly serverRequestId: string | null;
}

function throwServiceError(
  endpoint: EndpointName,
  raw: RawResponse,
  context: ResponseContext,
  fields: ServiceErrorFields,
): never {
  throw new VenueError(
    fields.code,
    `${endpoint}: HTTP ${raw.status} ${fields.code}: ${fields.message}`,
    {
      source: 'service',
      endpoint,
      httpStatus: raw.status,
      serverRequestId: fields.serverRequestId,
      // The protocol's rule: a code the project does not know is never retried.
      retryable: fields.retryable && isErrorCode(fields.code),
      details: fields.details,
      outcome: endpoints[endpoint].mutation ? serviceOutcome(fields.code, raw.status) : null,
      retryAfterMs: parseRetryAfter(headerValue(raw.headers, 'retry-after'), context.serverNowMs),
    },
  );
}

function differs(sent: unknown, answered: unknown): boolean {
  return typeof sent === 'string' && typeof answered === 'string' && sent !== answered;
}

/**
 * A placement's answer must be the order of this request: a `request_id` or `client_order_id`
 * that differs from the one sent means the answer belongs to another command, so what became of
 * this one is unknown (design rule 4). Throws RESPONSE_ID_MISMATCH with outcome `unknown`; the
 * executor then resolves it by GET /v1/requests/{request_id}. A null id in the answer says
 * nothing and passes.
 */
export function checkPlacementIds(endpoint: EndpointName, body: unknown, response: unknown): void {
  if (endpoint !== 'placeOrder') return;
  const sent = body as { readonly request_id?: unknown; readonly client_order_id?: unknown };
  const answered = response as {
    readonly request_id?: unknown;
    readonly client_order_id?: unknown;
  };
  const mismatched: string[] = [];
  if (differs(sent.request_id, answered.request_id)) mismatched.push('request_id');
  if (differs(sent.client_order_id, answered.client_order_id)) mismatched.push('client_order_id');
  if (mismatched.length === 0) return;
  throw new VenueError(
    'RESPONSE_ID_MISMATCH',
    `${endpoint}: the answer carries another command's ${mismatched.join(' and ')} (sent ${mismatched
      .map((field) => `${field} ${String(sent[field as keyof typeof sent])}`)
      .join(', ')}; answered ${mismatched
      .map((field) => `${field} ${String(answered[field as keyof typeof answered])}`)
      .join(', ')}); the outcome of request ${String(sent.request_id)} is unknown`,
    {
      source: 'transport',
      endpoint,
      outcome: 'unknown',
      details: {
        mismatched,
        sent: {
          request_id: sent.request_id ?? null,
          client_order_id: sent.client_order_id ?? null,
        },
        answered: {
          request_id: answered.request_id ?? null,
          client_order_id: answered.client_order_id ?? null,
        },
      },
    },
  );
}
