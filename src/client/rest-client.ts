/**
 * The REST client: the endpoints of the shared endpoint table. Every request goes through
 * `call`; the named methods are `call`, typed. A read is checked and sent (retried per the
 * Errors rules, by `RestTransport`); a command is `send(prepare(...))`: checked and serialized
 * once by the command module (src/signing/command.ts), signed over its exact bytes, sent once.
 * A mutation is never resent here: a caller that journals it uses `prepare` and `send` itself,
 * and after an unknown outcome `recover`s it by request id, resending the very same bytes.
 * How a request travels (limits, signing, the pool, timeouts) is rest-transport.ts.
 */
import { systemClock } from '../core/clock.ts';
import {
  type BodyInputOf,
  buildPath,
  type EndpointName,
  type EndpointsWithQuery,
  endpoints,
  type MutationStatus,
  matchEndpoint,
  nextAfterSequence,
  type PathParamsOf,
  type PrivateEventReading,
  type QueryInputOf,
  type ResponseOf,
} from '../protocol/index.ts';
import {
  type Command,
  type Credential,
  DEFAULT_WIRE_PROFILE,
  type PreparedCommand,
  prepareCommand,
  restoreCommand,
  signWebSocketAuthFrame,
  type WireProfile,
} from '../signing/index.ts';
import { checkBaseUrl } from './base-url.ts';
import type { ClockOffsetEstimate } from './clock-offset.ts';
import { isVenueError, VenueError } from './errors.ts';
import { PUBLIC_RATE_LIMIT_KEY, type RateLimitState } from './rate-limit.ts';
import { ReadingMonitor } from './reading-monitor.ts';
import {
  asInvalidRequest,
  checkedQueryString,
  checkPathParams,
  isMutationEndpoint,
  type MutationEndpointName,
} from './request-parts.ts';
import { checkPlacementIds } from './response.ts';
import type {
  CallArguments,
  CallOptions,
  PagedEndpointName,
  PrepareArguments,
  PreparedMutation,
  RecoverOptions,
  RecoveryResult,
  RestClientOptions,
  SendableEndpoint,
} from './rest-options.ts';
import { type RequestSpec, RestTransport } from './rest-transport.ts';
import type { TransportOptions } from './transport.ts';

export class RestClient {
  readonly origin: string;
  readonly credential: Credential | null;
  readonly transport: TransportOptions;
  /** How this client and the stream clients built on it read, and what they met. */
  readonly reading: ReadingMonitor;
  /** How this client signs (`venue.wire`); the stream client signs its auth frame with it too. */
  readonly wireProfile: WireProfile;
  private readonly pathPrefix: string;
  /** How each request travels: limits, signing, the pool, timeouts, read retries. */
  private readonly requests: RestTransport;

  constructor(options: RestClientOptions) {
    const credential = options.credential ?? null;
    const baseUrl = options.baseUrl ?? credential?.apiBaseUrl;
    if (baseUrl === undefined) {
      throw new VenueError('UNSAFE_URL', 'a base URL or a credential with one is required', {
        source: 'local',
      });
    }
    const checked = checkBaseUrl(baseUrl);
    this.origin = checked.origin;
    this.pathPrefix = checked.pathPrefix;
    this.credential = credential;
    this.wireProfile = options.wireProfile ?? DEFAULT_WIRE_PROFILE;
    const clock = options.clock ?? systemClock;
    this.reading =
      options.readingMonitor ??
      new ReadingMonitor(options.reading ?? 'tolerant', () => clock.now());
    this.transport = options.transport ?? {};
    this.requests = new RestTransport(
      {
        origin: this.origin,
        pathPrefix: this.pathPrefix,
        credential,
        wireProfile: this.wireProfile,
        reading: this.reading,
        transport: this.transport,
      },
      { ...options, clock },
    );
  }

  /** Closes the connection pool after in-flight requests finish. */
  close(): Promise<void> {
    return this.requests.close();
  }

  // ---------------------------------------------------------------- clock

  /** Measures the clock offset with GET /v1/time (midpoint of the round trip) and keeps it. */
  syncClock(options: CallOptions = {}): Promise<ClockOffsetEstimate> {
    return this.requests.syncClock(options);
  }

  /** The last offset estimate, or null before any. */
  clockOffset(): ClockOffsetEstimate | null {
    return this.requests.clockOffset();
  }

  /**
   * The timestamp to sign now: local clock corrected by the offset. Throws CLOCK_SKEW when the
   * offset is beyond the limit. Measures the offset first in `auto` mode.
   */
  signingTimestamp(): Promise<number> {
    return this.requests.signingTimestamp();
  }

  /**
   * The signed fields of a WebSocket `auth` frame for `challenge` (contract section 4), named,
   * formatted and signed as the wire profile says; `scopes` are the protocol's names, sent as
   * the profile's names for them.
   */
  async signWebSocketAuth(
    challenge: string,
    scopes: readonly string[],
    lastSequence: number,
  ): Promise<Record<string, string | number | string[]>> {
    const { credential, signer } = this.requests.requireCredential('stream authentication');
    const timestampMs = await this.signingTimestamp();
    const names = this.wireProfile.scopes as Readonly<Record<string, string>>;
    return signWebSocketAuthFrame(this.wireProfile, {
      signer,
      keyId: credential.keyId,
      challenge,
      scopes: scopes.map((scope) => names[scope] ?? scope),
      lastSequence,
      timestampMs,
    });
  }

  // ---------------------------------------------------------------- rate limits

  /** The quota last advertised for this client's key (public calls: `PUBLIC_RATE_LIMIT_KEY`). */
  rateLimit(
    keyId: string = this.credential?.keyId ?? PUBLIC_RATE_LIMIT_KEY,
  ): RateLimitState | null {
    return this.requests.tracker.get(keyId);
  }

  rateLimits(): ReadonlyMap<string, RateLimitState> {
    return this.requests.tracker.snapshot();
  }

  // ---------------------------------------------------------------- generic calls

  /**
   * The one way to call the service: any endpoint by name, with its path parameters, query and
   * body. A read is checked, sent and retried per the retry policy; a command (a mutation or a
   * simulation) is `send(prepare(...))`: checked and serialized once by the command module,
   * signed and sent once, never retried here. The named methods are this call, typed.
   */
  async call<E extends EndpointName>(
    endpoint: E,
    args: CallArguments<E>,
    options: CallOptions = {},
  ): Promise<ResponseOf<E>> {
    const definition = endpoints[endpoint];
    if (definition.body !== null) {
      const command = endpoint as SendableEndpoint;
      const prepared = this.prepare(command, args as unknown as PrepareArguments<typeof command>);
      return (await this.send(prepared, options)) as ResponseOf<E>;
    }
    const params = checkPathParams(endpoint, args.params);
    const query =
      definition.query === null
        ? ''
        : checkedQueryString(
            endpoint as EndpointsWithQuery,
            args.query as QueryInputOf<EndpointsWithQuery> | undefined,
          );
    const spec: RequestSpec = {
      endpoint,
      method: definition.method,
      target: `${this.pathPrefix}${pathOf(endpoint, params)}${query}`,
      bodyBytes: null,
    };
    return (await this.requests.executeWithRetries(spec, options)) as ResponseOf<E>;
  }

  /**
   * Checks and serializes a command once (the command module, src/signing/command.ts); nothing
   * is sent. Journal its `endpoint`, `path` and `bodyBytes` before `send`. Throws
   * INVALID_REQUEST locally.
   */
  prepare<E extends SendableEndpoint>(endpoint: E, args: PrepareArguments<E>): PreparedCommand<E> {
    const params = checkPathParams(endpoint, args.params);
    try {
      return prepareCommand({ endpoint, params, body: args.body } as unknown as Extract<
        Command,
        { endpoint: E }
      >);
    } catch (error) {
      throw asInvalidRequest(error);
    }
  }

  /**
   * Rebuilds a prepared mutation from its journaled path (`PreparedMutation.path`) and bytes,
   * checking them but keeping the bytes exactly, so a restarted process resends what was sent
   * before. The path must address `endpoint`.
   */
  fromStoredPath<E extends MutationEndpointName>(
    endpoint: E,
    path: string,
    bodyBytes: Uint8Array,
  ): PreparedMutation<E> {
    if (!isMutationEndpoint(endpoint)) {
      throw new VenueError('INVALID_REQUEST', `${String(endpoint)} is not a mutation endpoint`, {
        source: 'local',
      });
    }
    const match = matchEndpoint(endpoints[endpoint].method, path);
    if (match === null || match.name !== endpoint) {
      throw new VenueError('INVALID_REQUEST', `${endpoint}: the path ${path} does not address it`, {
        source: 'local',
        endpoint,
        details: { path },
      });
    }
    checkPathParams(endpoint, match.params);
    try {
      return restoreCommand(endpoint, path, bodyBytes);
    } catch (error) {
      throw asInvalidRequest(error);
    }
  }

  /** `fromStoredPath` from the path parameters instead of the path. */
  fromStoredMutation<E extends MutationEndpointName>(
    endpoint: E,
    pathParams: PathParamsOf<E> | Record<string, never>,
    bodyBytes: Uint8Array,
  ): PreparedMutation<E> {
    const params = checkPathParams(endpoint, pathParams);
    return this.fromStoredPath(endpoint, pathOf(endpoint, params), bodyBytes);
  }

  /**
   * Signs (fresh timestamp, nonce and signature) and sends a prepared mutation once. On a
   * failure the error's `outcome` says whether the service may have applied it.
   */
  async send<E extends SendableEndpoint>(
    prepared: PreparedCommand<E>,
    options: CallOptions = {},
  ): Promise<ResponseOf<E>> {
    // No second hash: the signature carries `bodySha256`, so bytes altered after they were
    // prepared fail the service's signature check and are never applied.
    const spec: RequestSpec = {
      endpoint: prepared.endpoint,
      method: endpoints[prepared.endpoint].method,
      target: `${this.pathPrefix}${prepared.path}`,
      bodyBytes: prepared.bodyBytes,
      bodySha256: prepared.bodySha256,
    };
    const response = await this.requests.executeOnce(spec, options);
    checkPlacementIds(prepared.endpoint, prepared.body, response);
    return response as ResponseOf<E>;
  }

  /**
   * Interface Errors rule 5: asks GET /v1/requests/{request_id} what became of the mutation, and
   * resends only the same request id with exactly the same bytes.
   */
  async recover<E extends MutationEndpointName>(
    prepared: PreparedMutation<E>,
    options: RecoverOptions = {},
  ): Promise<RecoveryResult<E>> {
    let status: MutationStatus;
    try {
      status = await this.getRequest({ request_id: prepared.requestId }, options);
    } catch (error) {
      if (isVenueError(error) && error.code === 'ORDER_NOT_FOUND') {
        return {
          outcome: 'resent',
          response: await this.send(prepared, options),
        };
      }
      throw error;
    }
    if (status.state === 'PENDING') return { outcome: 'pending', status };
    const response = options.replayResult === false ? null : await this.send(prepared, options);
    return { outcome: 'completed', status, response };
  }

  // ---------------------------------------------------------------- public market data

  getTime(options?: CallOptions): Promise<ResponseOf<'getTime'>> {
    return this.call('getTime', {}, options);
  }

  getStatus(options?: CallOptions): Promise<ResponseOf<'getStatus'>> {
    return this.call('getStatus', {}, options);
  }

  health(options?: CallOptions): Promise<ResponseOf<'health'>> {
    return this.call('health', {}, options);
  }

  ready(options?: CallOptions): Promise<ResponseOf<'ready'>> {
    return this.call('ready', {}, options);
  }

  listRoutes(options?: CallOptions): Promise<ResponseOf<'listRoutes'>> {
    return this.call('listRoutes', {}, options);
  }

  listMarkets(options?: CallOptions): Promise<ResponseOf<'listMarkets'>> {
    return this.call('listMarkets', {}, options);
  }

  getMarket(
    params: PathParamsOf<'getMarket'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'getMarket'>> {
    return this.call('getMarket', { params }, options);
  }

  getBook(
    params: PathParamsOf<'getBook'>,
    query?: QueryInputOf<'getBook'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'getBook'>> {
    return this.call('getBook', { params, query }, options);
  }

  listTrades(
    params: PathParamsOf<'listTrades'>,
    query?: QueryInputOf<'listTrades'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listTrades'>> {
    return this.call('listTrades', { params, query }, options);
  }

  listCandles(
    params: PathParamsOf<'listCandles'>,
    query?: QueryInputOf<'listCandles'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listCandles'>> {
    return this.call('listCandles', { params, query }, options);
  }

  // ---------------------------------------------------------------- account reads

  getAccount(options?: CallOptions): Promise<ResponseOf<'getAccount'>> {
    return this.call('getAccount', {}, options);
  }

  listAccounts(options?: CallOptions): Promise<ResponseOf<'listAccounts'>> {
    return this.call('listAccounts', {}, options);
  }

  listPositions(
    query?: QueryInputOf<'listPositions'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listPositions'>> {
    return this.call('listPositions', { query }, options);
  }

  getRoutesReadiness(options?: CallOptions): Promise<ResponseOf<'getRoutesReadiness'>> {
    return this.call('getRoutesReadiness', {}, options);
  }

  // ---------------------------------------------------------------- order reads

  listOrders(
    query?: QueryInputOf<'listOrders'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listOrders'>> {
    return this.call('listOrders', { query }, options);
  }

  getOrder(
    params: PathParamsOf<'getOrder'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'getOrder'>> {
    return this.call('getOrder', { params }, options);
  }

  getOrderByClientId(
    params: PathParamsOf<'getOrderByClientId'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'getOrderByClientId'>> {
    return this.call('getOrderByClientId', { params }, options);
  }

  listFills(
    query?: QueryInputOf<'listFills'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listFills'>> {
    return this.call('listFills', { query }, options);
  }

  listEvents(
    query?: QueryInputOf<'listEvents'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'listEvents'>> {
    return this.call('listEvents', { query }, options);
  }

  getRequest(
    params: PathParamsOf<'getRequest'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'getRequest'>> {
    return this.call('getRequest', { params }, options);
  }

  // ---------------------------------------------------------------- order commands

  /** A simulation creates nothing; it is prepared and sent like a command, never retried. */
  simulateOrder(
    body: BodyInputOf<'simulateOrder'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'simulateOrder'>> {
    return this.call('simulateOrder', { body }, options);
  }

  placeOrder(
    body: BodyInputOf<'placeOrder'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'placeOrder'>> {
    return this.call('placeOrder', { body }, options);
  }

  amendOrder(
    params: PathParamsOf<'amendOrder'>,
    body: BodyInputOf<'amendOrder'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'amendOrder'>> {
    return this.call('amendOrder', { params, body }, options);
  }

  cancelOrder(
    params: PathParamsOf<'cancelOrder'>,
    body: BodyInputOf<'cancelOrder'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'cancelOrder'>> {
    return this.call('cancelOrder', { params, body }, options);
  }

  cancelAllOrders(
    body: BodyInputOf<'cancelAllOrders'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'cancelAllOrders'>> {
    return this.call('cancelAllOrders', { body }, options);
  }

  placeBatch(
    body: BodyInputOf<'placeBatch'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'placeBatch'>> {
    return this.call('placeBatch', { body }, options);
  }

  closePosition(
    params: PathParamsOf<'closePosition'>,
    body: BodyInputOf<'closePosition'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'closePosition'>> {
    return this.call('closePosition', { params, body }, options);
  }

  setCancelAllAfter(
    body: BodyInputOf<'setCancelAllAfter'>,
    options?: CallOptions,
  ): Promise<ResponseOf<'setCancelAllAfter'>> {
    return this.call('setCancelAllAfter', { body }, options);
  }

  // ---------------------------------------------------------------- pagination

  /** Every page of a list, passing `next_cursor` on unchanged until `has_more` is false. */
  async *pages<E extends PagedEndpointName>(
    endpoint: E,
    query: QueryInputOf<E> = {},
    options: CallOptions = {},
  ): AsyncGenerator<ResponseOf<E>, void, undefined> {
    let cursor = query.cursor;
    for (;;) {
      const page = (await this.call(
        endpoint,
        { query: { ...query, cursor } } as CallArguments<E>,
        options,
      )) as ResponseOf<PagedEndpointName>;
      yield page as ResponseOf<E>;
      if (!page.page.has_more) return;
      const next = page.page.next_cursor;
      if (next === null || next === cursor) {
        throw new VenueError(
          'MALFORMED_RESPONSE',
          `${endpoint}: has_more is true but next_cursor is ${next === null ? 'null' : 'unchanged'}`,
          { source: 'transport', endpoint },
        );
      }
      cursor = next;
    }
  }

  iteratePositions(
    query?: QueryInputOf<'listPositions'>,
    options?: CallOptions,
  ): AsyncGenerator<ResponseOf<'listPositions'>['data'][number], void, undefined> {
    return itemsOf(this.pages('listPositions', query, options));
  }

  iterateOrders(
    query?: QueryInputOf<'listOrders'>,
    options?: CallOptions,
  ): AsyncGenerator<ResponseOf<'listOrders'>['data'][number], void, undefined> {
    return itemsOf(this.pages('listOrders', query, options));
  }

  iterateFills(
    query?: QueryInputOf<'listFills'>,
    options?: CallOptions,
  ): AsyncGenerator<ResponseOf<'listFills'>['data'][number], void, undefined> {
    return itemsOf(this.pages('listFills', query, options));
  }

  /**
   * Pages of GET /v1/events, passing `next_after_sequence` on (derived from the events when the
   * service leaves it out, `nextAfterSequence`) until `has_more` is false.
   */
  async *eventPages(
    query: QueryInputOf<'listEvents'> = {},
    options: CallOptions = {},
  ): AsyncGenerator<ResponseOf<'listEvents'>, void, undefined> {
    let afterSequence = query.after_sequence ?? 0;
    for (;;) {
      const page = await this.listEvents({ ...query, after_sequence: afterSequence }, options);
      yield page;
      if (!page.has_more) return;
      const next = nextAfterSequence(page, afterSequence);
      if (next <= afterSequence) {
        throw new VenueError(
          'MALFORMED_RESPONSE',
          `listEvents: has_more is true but the next after_sequence ${next} does not pass ${afterSequence}`,
          { source: 'transport', endpoint: 'listEvents' },
        );
      }
      afterSequence = next;
    }
  }

  async *iterateEvents(
    query: QueryInputOf<'listEvents'> = {},
    options: CallOptions = {},
  ): AsyncGenerator<PrivateEventReading, void, undefined> {
    for await (const page of this.eventPages(query, options)) yield* page.data;
  }
}

function pathOf(endpoint: EndpointName, params: Readonly<Record<string, string>>): string {
  return (buildPath as (name: EndpointName, params: Readonly<Record<string, string>>) => string)(
    endpoint,
    params,
  );
}

async function* itemsOf<Item>(
  pages: AsyncGenerator<{ readonly data: readonly Item[] }, void, undefined>,
): AsyncGenerator<Item, void, undefined> {
  for await (const page of pages) yield* page.data;
}
