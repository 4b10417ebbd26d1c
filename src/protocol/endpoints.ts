/**
 * The endpoint table of the interface as data. The client derives its methods from it and the
 * emulator routes with `matchEndpoint`, so the two cannot drift apart. The WebSocket upgrade
 * (GET /v1/ws) is not a request/response endpoint; see `WEBSOCKET_PATH` in frames.ts.
 */
import { z } from 'zod';
import { Account, PositionPage, VenueAccountList } from './account.ts';
import {
  HealthReading,
  HealthResponse,
  ReadyReading,
  ReadyResponse,
  RouteReadinessItemList,
  RouteReadinessList,
  StatusReading,
  StatusResponse,
  TimeReading,
  TimeResponse,
} from './bodies.ts';
import { EventsPage, EventsPageReading } from './frames.ts';
import { Book, CandleList, Market, MarketList, PublicTradeList, RouteList } from './market.ts';
import {
  AmendOrderRequest,
  BatchOrderRequest,
  BatchOrderResponse,
  CancelAllAfterRequest,
  CancelAllAfterResponse,
  CancelAllRequest,
  CancelAllResponse,
  CancelOrderRequest,
  ClosePositionRequest,
  FillPage,
  MutationStatus,
  Order,
  OrderPage,
  OrderRequest,
  SimulationResult,
} from './orders.ts';
import type { Scope } from './primitives.ts';
import {
  BookQuery,
  CandlesQuery,
  EventsQuery,
  FillsQuery,
  OrdersQuery,
  PositionsQuery,
  TradesQuery,
} from './query.ts';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT';
export type EndpointAuth = 'none' | 'signed';

function isSendableSegment(value: string): boolean {
  return value !== '.' && value !== '..';
}

/**
 * A path parameter: any non-empty string except '.' and '..', which URL normalization would
 * turn into a different path (and '%2E' is normalized the same way).
 */
export const PathSegment = z
  .string()
  .min(1)
  .refine(isSendableSegment, {
    error: "Input should not be '.' or '..'",
    params: { type: 'value_error' },
  });

export const NoPathParams = z.strictObject({});
export const MarketPathParams = z.strictObject({ market_id: PathSegment });
export const OrderPathParams = z.strictObject({ order_id: PathSegment });
export const ClientOrderPathParams = z.strictObject({ client_order_id: PathSegment });
export const PositionPathParams = z.strictObject({ position_id: PathSegment });
export const RequestPathParams = z.strictObject({ request_id: PathSegment });

export interface EndpointDefinition {
  readonly method: HttpMethod;
  /** The template, parameters in braces: '/v1/markets/{market_id}'. */
  readonly path: string;
  readonly pathParams: z.ZodType<Record<string, string>>;
  readonly auth: EndpointAuth;
  /** Contract section 3; null for public endpoints. */
  readonly scope: Scope | null;
  /** null: the endpoint takes no query parameter (any one is refused; see EmptyQuery). */
  readonly query: z.ZodObject | null;
  readonly body: z.ZodType | null;
  readonly successStatus: 200 | 202;
  /** What the emulator sends (and checks it sends). */
  readonly response: z.ZodType;
  /**
   * What a client accepts (contract section 7): the same schema where the interface lists the
   * fields; a liberal one, keeping unknown fields, where it leaves the shape open.
   */
  readonly read: z.ZodType;
  /** Changes state: idempotent on request_id, recoverable, never resent by a transport. */
  readonly mutation: boolean;
}

/** The fields every endpoint of a kind shares; each entry below names only what differs. */
const publicRead = {
  method: 'GET',
  pathParams: NoPathParams,
  auth: 'none',
  scope: null,
  query: null,
  body: null,
  successStatus: 200,
  mutation: false,
} as const;

const signedRead = {
  method: 'GET',
  pathParams: NoPathParams,
  auth: 'signed',
  query: null,
  body: null,
  successStatus: 200,
  mutation: false,
} as const;

const signedMutation = {
  pathParams: NoPathParams,
  auth: 'signed',
  scope: 'orders:write',
  query: null,
  successStatus: 202,
  mutation: true,
} as const;

export const endpoints = {
  getTime: {
    ...publicRead,
    path: '/v1/time',
    response: TimeResponse,
    read: TimeReading,
  },
  getStatus: {
    ...publicRead,
    path: '/v1/status',
    response: StatusResponse,
    read: StatusReading,
  },
  listRoutes: {
    ...publicRead,
    path: '/v1/routes',
    response: RouteList,
    read: RouteList,
  },
  listMarkets: {
    ...publicRead,
    path: '/v1/markets',
    response: MarketList,
    read: MarketList,
  },
  getMarket: {
    ...publicRead,
    path: '/v1/markets/{market_id}',
    pathParams: MarketPathParams,
    response: Market,
    read: Market,
  },
  getBook: {
    ...publicRead,
    path: '/v1/markets/{market_id}/book',
    pathParams: MarketPathParams,
    query: BookQuery,
    response: Book,
    read: Book,
  },
  listTrades: {
    ...publicRead,
    path: '/v1/markets/{market_id}/trades',
    pathParams: MarketPathParams,
    query: TradesQuery,
    response: PublicTradeList,
    read: PublicTradeList,
  },
  listCandles: {
    ...publicRead,
    path: '/v1/markets/{market_id}/candles',
    pathParams: MarketPathParams,
    query: CandlesQuery,
    response: CandleList,
    read: CandleList,
  },
  getAccount: {
    ...signedRead,
    path: '/v1/account',
    scope: 'account:read',
    response: Account,
    read: Account,
  },
  listAccounts: {
    ...signedRead,
    path: '/v1/accounts',
    scope: 'account:read',
    response: VenueAccountList,
    read: VenueAccountList,
  },
  listPositions: {
    ...signedRead,
    path: '/v1/positions',
    scope: 'account:read',
    query: PositionsQuery,
    response: PositionPage,
    read: PositionPage,
  },
  listOrders: {
    ...signedRead,
    path: '/v1/orders',
    scope: 'orders:read',
    query: OrdersQuery,
    response: OrderPage,
    read: OrderPage,
  },
  placeOrder: {
    ...signedMutation,
    method: 'POST',
    path: '/v1/orders',
    body: OrderRequest,
    response: Order,
    read: Order,
  },
  getOrderByClientId: {
    ...signedRead,
    path: '/v1/orders/by-client-id/{client_order_id}',
    pathParams: ClientOrderPathParams,
    scope: 'orders:read',
    response: Order,
    read: Order,
  },
  getOrder: {
    ...signedRead,
    path: '/v1/orders/{order_id}',
    pathParams: OrderPathParams,
    scope: 'orders:read',
    response: Order,
    read: Order,
  },
  amendOrder: {
    ...signedMutation,
    method: 'PATCH',
    path: '/v1/orders/{order_id}',
    pathParams: OrderPathParams,
    body: AmendOrderRequest,
    response: Order,
    read: Order,
  },
  cancelOrder: {
    ...signedMutation,
    method: 'POST',
    path: '/v1/orders/{order_id}/cancel',
    pathParams: OrderPathParams,
    body: CancelOrderRequest,
    response: Order,
    read: Order,
  },
  cancelAllOrders: {
    ...signedMutation,
    method: 'POST',
    path: '/v1/orders/cancel-all',
    body: CancelAllRequest,
    response: CancelAllResponse,
    read: CancelAllResponse,
  },
  placeBatch: {
    ...signedMutation,
    method: 'POST',
    path: '/v1/orders/batch',
    body: BatchOrderRequest,
    response: BatchOrderResponse,
    read: BatchOrderResponse,
  },
  simulateOrder: {
    // Creates nothing, so it is neither recorded under its request_id nor recoverable: a read.
    ...signedRead,
    method: 'POST',
    path: '/v1/orders/simulate',
    scope: 'orders:write',
    body: OrderRequest,
    response: SimulationResult,
    read: SimulationResult,
  },
  closePosition: {
    ...signedMutation,
    method: 'POST',
    path: '/v1/positions/{position_id}/close',
    pathParams: PositionPathParams,
    body: ClosePositionRequest,
    response: Order,
    read: Order,
  },
  setCancelAllAfter: {
    ...signedMutation,
    method: 'PUT',
    path: '/v1/cancel-all-after',
    body: CancelAllAfterRequest,
    successStatus: 200,
    response: CancelAllAfterResponse,
    read: CancelAllAfterResponse,
  },
  getRequest: {
    ...signedRead,
    path: '/v1/requests/{request_id}',
    pathParams: RequestPathParams,
    scope: 'orders:read',
    response: MutationStatus,
    read: MutationStatus,
  },
  listFills: {
    ...signedRead,
    path: '/v1/fills',
    scope: 'fills:read',
    query: FillsQuery,
    response: FillPage,
    read: FillPage,
  },
  getRoutesReadiness: {
    ...signedRead,
    path: '/v1/routes/readiness',
    scope: 'account:read',
    response: RouteReadinessList,
    read: RouteReadinessItemList,
  },
  listEvents: {
    ...signedRead,
    path: '/v1/events',
    scope: 'orders:read',
    query: EventsQuery,
    response: EventsPage,
    read: EventsPageReading,
  },
  health: {
    ...publicRead,
    path: '/health',
    response: HealthResponse,
    read: HealthReading,
  },
  ready: {
    ...publicRead,
    path: '/ready',
    response: ReadyResponse,
    read: ReadyReading,
  },
} as const satisfies Record<string, EndpointDefinition>;

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;
export type Endpoint<E extends EndpointName> = Endpoints[E];

export const endpointNames = Object.keys(endpoints) as EndpointName[];

type OutputOrNever<S> = S extends z.ZodType ? z.output<S> : never;
type InputOrNever<S> = S extends z.ZodType ? z.input<S> : never;

/** Path parameters by name (all strings). `{}` for an endpoint without any. */
export type PathParamsOf<E extends EndpointName> = z.output<Endpoint<E>['pathParams']>;
/** The parsed query (defaults applied); never for an endpoint without query parameters. */
export type QueryOf<E extends EndpointName> = OutputOrNever<Endpoint<E>['query']>;
/** What a caller passes: every parameter optional, integers as numbers. */
export type QueryInputOf<E extends EndpointName> = Partial<QueryOf<E>>;
/** The parsed body (defaults applied); never for an endpoint without a body. */
export type BodyOf<E extends EndpointName> = OutputOrNever<Endpoint<E>['body']>;
/** What a caller passes as the body (defaulted fields optional, numbers allowed). */
export type BodyInputOf<E extends EndpointName> = InputOrNever<Endpoint<E>['body']>;
/** The success response as a client reads it (`read`). */
export type ResponseOf<E extends EndpointName> = z.output<Endpoint<E>['read']>;
/** The success response as the emulator sends it (`response`). */
export type EmittedResponseOf<E extends EndpointName> = z.output<Endpoint<E>['response']>;
/** What a server may send as the success response (defaulted fields optional). */
export type ResponseInputOf<E extends EndpointName> = z.input<Endpoint<E>['response']>;

export type EndpointsWithQuery = {
  [E in EndpointName]: Endpoint<E>['query'] extends null ? never : E;
}[EndpointName];
export type EndpointsWithBody = {
  [E in EndpointName]: Endpoint<E>['body'] extends null ? never : E;
}[EndpointName];
// An empty strict object infers as a record of never, so "takes no parameters" is tested as
// "an empty object fits".
export type EndpointsWithPathParams = {
  [E in EndpointName]: Record<never, never> extends PathParamsOf<E> ? never : E;
}[EndpointName];

/** buildPath's arguments after the name: none for a path without parameters. */
export type PathArguments<E extends EndpointName> =
  Record<never, never> extends PathParamsOf<E>
    ? [params?: PathParamsOf<E>]
    : [params: PathParamsOf<E>];

type TemplatePart = { readonly literal: string } | { readonly parameter: string };

interface CompiledEndpoint {
  readonly name: EndpointName;
  readonly method: HttpMethod;
  readonly parts: readonly TemplatePart[];
  readonly literalCount: number;
}

function compile(name: EndpointName): CompiledEndpoint {
  const definition: EndpointDefinition = endpoints[name];
  const parts = definition.path.split('/').map((segment): TemplatePart => {
    const parameter = /^\{(\w+)\}$/.exec(segment)?.[1];
    return parameter === undefined ? { literal: segment } : { parameter };
  });
  return {
    name,
    method: definition.method,
    parts,
    literalCount: parts.filter((part) => 'literal' in part).length,
  };
}

const compiledEndpoints = new Map<EndpointName, CompiledEndpoint>(
  endpointNames.map((name) => [name, compile(name)]),
);

// Literal segments win over parameters ('/v1/orders/batch' before '/v1/orders/{order_id}').
const candidatesByMethod = new Map<string, CompiledEndpoint[]>();
for (const compiled of [...compiledEndpoints.values()].sort(
  (left, right) => right.literalCount - left.literalCount,
)) {
  const list = candidatesByMethod.get(compiled.method) ?? [];
  list.push(compiled);
  candidatesByMethod.set(compiled.method, list);
}

function encodeSegment(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || !isSendableSegment(value)) {
    throw new RangeError(`path parameter ${name} cannot be sent: ${JSON.stringify(value)}`);
  }
  return encodeURIComponent(value);
}

/**
 * The path of an endpoint with each parameter percent-encoded (encodeURIComponent). Throws a
 * RangeError for an empty, '.' or '..' parameter, a URIError for a lone surrogate.
 */
export function buildPath<E extends EndpointName>(name: E, ...params: PathArguments<E>): string {
  const compiled = compiledEndpoints.get(name);
  if (compiled === undefined) throw new RangeError(`unknown endpoint ${String(name)}`);
  const values: Readonly<Record<string, unknown>> = params[0] ?? {};
  return compiled.parts
    .map((part) =>
      'literal' in part ? part.literal : encodeSegment(part.parameter, values[part.parameter]),
    )
    .join('/');
}

/**
 * The query string of a request, '' when empty, else '?' and the parameters in the order of
 * the endpoint's schema, undefined values left out, names and values percent-encoded. The
 * client signs exactly this text (contract section 1: the request target as sent).
 */
export function buildQueryString<E extends EndpointsWithQuery>(
  name: E,
  query: QueryInputOf<E> | undefined,
): string {
  const schema: z.ZodObject | null = endpoints[name].query;
  if (schema === null || query === undefined) return '';
  const values = query as Readonly<Record<string, unknown>>;
  const pairs: string[] = [];
  for (const key of Object.keys(schema.shape)) {
    const value = values[key];
    if (value === undefined) continue;
    pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  }
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}

export type EndpointMatch = {
  [E in EndpointName]: {
    readonly name: E;
    readonly endpoint: Endpoint<E>;
    /** Decoded, not yet validated: parse with `endpoint.pathParams`. */
    readonly params: PathParamsOf<E>;
  };
}[EndpointName];

function matchParts(
  compiled: CompiledEndpoint,
  segments: readonly string[],
): Record<string, string> | null {
  if (compiled.parts.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let index = 0; index < segments.length; index += 1) {
    const part = compiled.parts[index]!;
    const segment = segments[index]!;
    if ('literal' in part) {
      if (part.literal !== segment) return null;
      continue;
    }
    if (segment.length === 0) return null;
    try {
      params[part.parameter] = decodeURIComponent(segment);
    } catch {
      return null;
    }
  }
  return params;
}

/**
 * The endpoint a request addresses and its decoded path parameters, or null. `pathname` is the
 * path without the query string. Methods are matched exactly (upper case).
 */
export function matchEndpoint(method: string, pathname: string): EndpointMatch | null {
  const candidates = candidatesByMethod.get(method);
  if (candidates === undefined) return null;
  const segments = pathname.split('/');
  for (const compiled of candidates) {
    const params = matchParts(compiled, segments);
    if (params !== null) {
      return {
        name: compiled.name,
        endpoint: endpoints[compiled.name],
        params,
      } as EndpointMatch;
    }
  }
  return null;
}

/** The methods some endpoint accepts at `pathname` (for a 405 answer and its Allow header). */
export function allowedMethods(pathname: string): HttpMethod[] {
  const segments = pathname.split('/');
  const methods = new Set<HttpMethod>();
  for (const compiled of compiledEndpoints.values()) {
    if (matchParts(compiled, segments) !== null) methods.add(compiled.method);
  }
  return [...methods].sort();
}
