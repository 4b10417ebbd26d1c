/**
 * Checks and serializes the parts of a request before anything is sent: path parameters, query
 * parameters and the body, each with the endpoint's own schema and reported with the service's
 * issue list (`validateWire`, which uses `toServiceIssues`), so a request refused here carries
 * the same issues the service would have answered with.
 */
import {
  type AmendOrderRequest,
  type BatchOrderRequest,
  type BodyOf,
  buildQueryString,
  type ClosePositionRequest,
  type Endpoint,
  type EndpointName,
  type EndpointsWithBody,
  type EndpointsWithQuery,
  endpointNames,
  endpoints,
  type IssueLocation,
  invalidJsonIssue,
  normalizeAmendOrderRequest,
  normalizeBatchOrderRequest,
  normalizeClosePositionRequest,
  normalizeOrderRequest,
  type OrderRequest,
  type PathParamsOf,
  type QueryInputOf,
  type ServiceIssue,
  validateWire,
} from '../protocol/index.ts';
import { VenueError } from './errors.ts';

/** Endpoints that change state: idempotent on request_id, recoverable, never resent by a transport. */
export type MutationEndpointName = {
  [E in EndpointName]: Endpoint<E>['mutation'] extends true ? E : never;
}[EndpointName];

export const mutationEndpointNames: readonly MutationEndpointName[] = endpointNames.filter(
  (name) => endpoints[name].mutation,
) as MutationEndpointName[];

export function isMutationEndpoint(name: string): name is MutationEndpointName {
  return (mutationEndpointNames as readonly string[]).includes(name);
}

function describeIssue(issue: ServiceIssue): string {
  return `${issue.loc.join('.')}: ${issue.msg}`;
}

export function invalidRequest(
  endpoint: EndpointName,
  issues: ServiceIssue[],
  location: IssueLocation,
): VenueError {
  const shown = issues.slice(0, 3).map(describeIssue).join('; ');
  const more = issues.length > 3 ? `; and ${issues.length - 3} more` : '';
  return new VenueError(
    'INVALID_REQUEST',
    `${endpoint}: the ${location} does not match the endpoint contract (${shown}${more})`,
    { source: 'local', endpoint, details: { issues } },
  );
}

/** The endpoint's path parameters, checked. Throws INVALID_REQUEST with `loc` ['path', ...]. */
export function checkPathParams<E extends EndpointName>(
  endpoint: E,
  params: unknown,
): PathParamsOf<E> {
  const result = validateWire(endpoints[endpoint].pathParams, params ?? {}, 'path');
  if (!result.success) throw invalidRequest(endpoint, result.issues, 'path');
  return result.data as PathParamsOf<E>;
}

/** A query value as it goes on the wire. */
function queryText(value: unknown): string {
  return String(value);
}

/**
 * The query string to send ('' or '?...'), after checking the parameters exactly as the service
 * will see them: as text. Throws INVALID_REQUEST with `loc` ['query', ...].
 */
export function checkedQueryString<E extends EndpointsWithQuery>(
  endpoint: E,
  query: QueryInputOf<E> | undefined,
): string {
  const schema = endpoints[endpoint].query;
  const record: Record<string, string> = {};
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined) record[name] = queryText(value);
  }
  const result = validateWire(schema, record, 'query');
  if (!result.success) throw invalidRequest(endpoint, result.issues, 'query');
  return buildQueryString(endpoint, query);
}

/** The wire form of a parsed body: numbers-or-decimals become canonical decimal strings. */
function toWire(endpoint: EndpointsWithBody, body: unknown): unknown {
  switch (endpoint) {
    case 'placeOrder':
    case 'simulateOrder':
      return normalizeOrderRequest(body as OrderRequest);
    case 'amendOrder':
      return normalizeAmendOrderRequest(body as AmendOrderRequest);
    case 'closePosition':
      return normalizeClosePositionRequest(body as ClosePositionRequest);
    case 'placeBatch':
      return normalizeBatchOrderRequest(body as BatchOrderRequest);
    default:
      return body;
  }
}

const encoder = new TextEncoder();

export interface SerializedBody<E extends EndpointsWithBody> {
  readonly body: BodyOf<E>;
  readonly bytes: Uint8Array;
}

/**
 * Checks a body against the endpoint's schema and serializes it once. Throws INVALID_REQUEST
 * with `loc` ['body', ...].
 */
export function serializeBody<E extends EndpointsWithBody>(
  endpoint: E,
  input: unknown,
): SerializedBody<E> {
  const result = validateWire(endpoints[endpoint].body, input, 'body');
  if (!result.success) throw invalidRequest(endpoint, result.issues, 'body');
  const body = result.data as BodyOf<E>;
  return {
    body,
    bytes: encoder.encode(JSON.stringify(toWire(endpoint, body))),
  };
}

/**
 * Reads stored body bytes back (a journal entry), checking them like a fresh body but keeping
 * the bytes as they are: a resend must send exactly what was sent before.
 */
export function parseStoredBody<E extends EndpointsWithBody>(
  endpoint: E,
  bytes: Uint8Array,
): BodyOf<E> {
  let document: unknown;
  try {
    document = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw invalidRequest(endpoint, [invalidJsonIssue()], 'body');
  }
  const result = validateWire(endpoints[endpoint].body, document, 'body');
  if (!result.success) throw invalidRequest(endpoint, result.issues, 'body');
  return result.data as BodyOf<E>;
}
