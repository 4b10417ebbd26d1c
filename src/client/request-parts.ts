/**
 * Checks the parts of a request before anything is sent: path and query parameters, each with
 * the endpoint's own schema and reported with the service's issue list (`validateWire`), so a
 * request refused here carries the same issues the service would have answered with. Bodies
 * are the command module's (src/signing/command.ts): `asInvalidRequest` gives its refusals the
 * client's code.
 */
import { isPaperbotError } from '../core/errors.ts';
import {
  buildQueryString,
  type Endpoint,
  type EndpointName,
  type EndpointsWithQuery,
  endpointNames,
  endpoints,
  formatServiceIssues,
  type IssueLocation,
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

export function invalidRequest(
  endpoint: EndpointName,
  issues: ServiceIssue[],
  location: IssueLocation,
): VenueError {
  return new VenueError(
    'INVALID_REQUEST',
    `${endpoint}: the ${location} does not match the endpoint contract (${formatServiceIssues(issues)})`,
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

/**
 * The client's refusal of a command the command module (src/signing/command.ts) refused:
 * INVALID_REQUEST with the same message and issue list, raised locally; other errors pass.
 */
export function asInvalidRequest(error: unknown): unknown {
  if (!isPaperbotError(error) || error.code !== 'INVALID_COMMAND') return error;
  const endpoint = error.details.endpoint as EndpointName;
  return new VenueError('INVALID_REQUEST', error.message, {
    source: 'local',
    endpoint,
    details: { issues: error.details.issues },
    cause: error,
  });
}
