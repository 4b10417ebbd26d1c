/**
 * The map from endpoint to engine call: one handler per endpoint of the protocol table. Each
 * receives the command already checked (path, query and body parsed by the table's schemas, the
 * account known) and returns the success body; refusals are thrown (ExchangeError from the
 * engine, ServerError from here). Idempotency is applied around mutations by the service core.
 */
import {
  API_VERSION,
  type BodyOf,
  type EndpointName,
  formatTimestamp,
  normalizeAmendOrderRequest,
  normalizeBatchOrderRequest,
  normalizeClosePositionRequest,
  normalizeOrderRequest,
  type OrderRequest,
  type PathParamsOf,
  type QueryOf,
  type ResponseInputOf,
  type ServiceStatus,
} from '../../protocol/index.ts';
import type { Exchange, KeyRiskLimits } from '../engine/exchange.ts';
import { invalidRequestError, ServerError } from './errors.ts';
import type { IdempotencyLedger } from './idempotency.ts';

/** Who a command acts for: an account and the risk limits of the key it came with. */
export interface ServiceAccount {
  readonly accountId: string;
  /** Checked by the engine on orders (RISK_LIMIT_EXCEEDED); undefined: no key limits. */
  readonly riskLimits?: KeyRiskLimits | undefined;
}

export interface EndpointContext<E extends EndpointName> {
  readonly name: E;
  readonly params: PathParamsOf<E>;
  /** The parsed query (defaults applied); an empty object for endpoints without parameters. */
  readonly query: QueryValues<E>;
  /** The normalized body (decimals as canonical strings, defaults applied). */
  readonly body: BodyOf<E>;
  /** The account the command acts for (the authenticated key's), null on public endpoints. */
  readonly account: ServiceAccount | null;
  readonly now: number;
}

type QueryValues<E extends EndpointName> = [QueryOf<E>] extends [never]
  ? Record<string, never>
  : QueryOf<E>;

export interface EndpointServices {
  readonly exchange: Exchange;
  readonly ledger: IdempotencyLedger;
  /** /ready and /v1/status. */
  readonly isReady: () => boolean;
  /** Places a batch with per-item idempotency (see dispatch). */
  readonly placeBatch: (context: EndpointContext<'placeBatch'>) => ResponseInputOf<'placeBatch'>;
}

export type EndpointHandlers = {
  readonly [E in EndpointName]: (context: EndpointContext<E>) => ResponseInputOf<E>;
};

function accountOf(context: { readonly account: ServiceAccount | null }): string {
  if (context.account === null) {
    throw new ServerError('INVALID_SIGNATURE', 'this endpoint needs a signed request');
  }
  return context.account.accountId;
}

function limitsOf(context: { readonly account: ServiceAccount | null }) {
  return context.account?.riskLimits;
}

/** A `route_id` query other than a route of the market's finds nothing to serve. */
function checkRoute(exchange: Exchange, marketId: string, routeId: string | undefined): void {
  if (routeId === undefined) return;
  const market = exchange.getMarket(marketId);
  if (!market.routes.includes(routeId)) {
    throw invalidRequestError([
      {
        type: 'value_error',
        loc: ['query', 'route_id'],
        msg: `Market ${marketId} is not offered on route ${routeId}`,
      },
    ]);
  }
}

export function createEndpointHandlers(services: EndpointServices): EndpointHandlers {
  const { exchange, ledger } = services;
  const serviceStatus = (): ServiceStatus => {
    if (!services.isReady()) return 'degraded';
    return exchange.listMarkets().every((market) => market.data_status === 'live')
      ? 'ok'
      : 'degraded';
  };
  return {
    getTime: ({ now }) => ({
      server_time: formatTimestamp(now),
      epoch_ms: now,
    }),
    getStatus: ({ now }) => ({
      status: serviceStatus(),
      environment: 'practice',
      api_version: API_VERSION,
      server_time: formatTimestamp(now),
    }),
    listRoutes: () => exchange.listRoutes(),
    listMarkets: () => exchange.listMarkets(),
    getMarket: ({ params }) => exchange.getMarket(params.market_id),
    getBook: ({ params, query }) => {
      checkRoute(exchange, params.market_id, query.route_id);
      return exchange.getBook(params.market_id, query.depth);
    },
    listTrades: ({ params, query }) => {
      checkRoute(exchange, params.market_id, query.route_id);
      return exchange.listTradesWithPast(params.market_id, query.limit);
    },
    listCandles: ({ params, query }) => {
      checkRoute(exchange, params.market_id, query.route_id);
      return exchange.listCandlesWithPast(params.market_id, query.interval, query.limit);
    },
    getAccount: (context) => exchange.getAccount(accountOf(context)),
    listAccounts: (context) => exchange.listVenueAccounts(accountOf(context)),
    listPositions: (context) => exchange.listPositions(accountOf(context), context.query),
    listOrders: (context) => exchange.listOrders(accountOf(context), context.query),
    placeOrder: (context) =>
      exchange.placeOrder(accountOf(context), context.body as OrderRequest, limitsOf(context)),
    getOrderByClientId: (context) =>
      exchange.getOrderByClientId(accountOf(context), context.params.client_order_id),
    getOrder: (context) => exchange.getOrder(accountOf(context), context.params.order_id),
    amendOrder: (context) =>
      exchange.amendOrder(
        accountOf(context),
        context.params.order_id,
        context.body,
        limitsOf(context),
      ),
    cancelOrder: (context) =>
      exchange.cancelOrder(accountOf(context), context.params.order_id, context.body.request_id),
    cancelAllOrders: (context) =>
      exchange.cancelAll(accountOf(context), context.body.request_id, context.body.market_id),
    placeBatch: (context) => services.placeBatch(context),
    simulateOrder: (context) =>
      exchange.simulateOrder(accountOf(context), context.body as OrderRequest, limitsOf(context)),
    closePosition: (context) =>
      exchange.closePosition(
        accountOf(context),
        context.params.position_id,
        context.body,
        limitsOf(context),
      ),
    setCancelAllAfter: (context) =>
      exchange.setCancelAllAfter(
        accountOf(context),
        context.body.request_id,
        context.body.timeout_seconds,
      ),
    getRequest: (context) =>
      ledger.status(accountOf(context), context.params.request_id, context.now),
    listFills: (context) => exchange.listFills(accountOf(context), context.query),
    getRoutesReadiness: (context) => exchange.routesReadiness(accountOf(context)),
    listEvents: (context) =>
      exchange.listEvents(accountOf(context), context.query.after_sequence, context.query.limit),
    health: () => ({ status: 'ok' }),
    ready: () => {
      if (!services.isReady()) {
        throw new ServerError('EXECUTION_UNAVAILABLE', 'the emulator is not ready for orders', {
          details: { route_health: exchange.listRoutes()[0]?.health ?? null },
        });
      }
      return { ready: true };
    },
  };
}

/**
 * The body as the engine and the idempotency fingerprint see it: decimals as canonical strings,
 * defaults applied. Bodies without number-or-decimal fields pass through.
 */
export function normalizeBody(name: EndpointName, body: unknown): unknown {
  switch (name) {
    case 'placeOrder':
    case 'simulateOrder':
      return normalizeOrderRequest(body as OrderRequest);
    case 'amendOrder':
      return normalizeAmendOrderRequest(body as BodyOf<'amendOrder'>);
    case 'closePosition':
      return normalizeClosePositionRequest(body as BodyOf<'closePosition'>);
    case 'placeBatch':
      return normalizeBatchOrderRequest(body as BodyOf<'placeBatch'>);
    default:
      return body;
  }
}
