/**
 * A second, minimal server of the Practice Trading Service interface, written from
 * /work/shared/spec (practice-trading-service.md and contract.md) alone: no code of the
 * emulator, the client, the protocol or the signing module. It serves the endpoints and
 * channels a bot uses, strictly where the interface lists fields, and with its own choices
 * where the interface says "not shown", which differ from the emulator's:
 *
 * - routes readiness items are `{route_id, ready}`;
 * - /v1/time, /v1/status and /health carry other fields than the emulator's;
 * - the /v1/events page has no `next_after_sequence`;
 * - heartbeats carry no `sequence`;
 * - confirmations (`authenticated`, `subscribed`) carry extra fields;
 * - the first order event is PENDING -> SUBMITTED (no creation event), `execution_stage` is
 *   `WORKING` while the order rests, and the dead-man expiry is a `deadline.expired` event on
 *   `risk`;
 * - fill events carry a field of its own in their envelope and their payload.
 *
 * With `additive: true` it also sends what a later 1.x service may add at any time (the
 * interface states no compatibility policy): a field `svc_ext` in every object it sends, an event
 * type the project does not know (`order.routed` on `orders` after each submission), three keys
 * (`reason`, `actor`, `context`) in every event's data, and values outside the enums the
 * interface leaves open: `market_structure` `order_book_l1`, `execution_stage` `WORKING_L1`,
 * `trading_mode` `practice`, a public trade's `side` `taker_buy`. The enums whose safe meaning
 * stops trading (`data_status`, route `health`) keep known values, or nothing would trade.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import {
  type AccountState,
  iso,
  MARKET_ID,
  MinimalModel,
  type OrderState,
  price,
  quantity,
  ROUTE_ID,
} from './model.ts';
import {
  checkHttpRequest,
  checkSocketAuth,
  type KeyRecord,
  newKeyPair,
  NonceBook,
} from './svc1.ts';

const MAX_BODY = 64 * 1024;
const SIGNATURE_WINDOW_MS = 10_000;
const HEARTBEAT_MS = 2_000;
const WALK_MS = 100;
const PUBLIC = new Set([
  '/health',
  '/ready',
  '/v1/time',
  '/v1/status',
  '/v1/routes',
  '/v1/markets',
]);
const ID = /^[A-Za-z0-9:_-]+$/;

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const invalid = (field: string, message: string) =>
  new Refusal(422, 'INVALID_REQUEST', message, {
    issues: [{ type: 'value_error', loc: ['body', field], msg: message }],
  });

interface Stored {
  readonly fingerprint: string;
  readonly status: number;
  readonly body: unknown;
  readonly commandType: string;
  readonly result: Record<string, unknown> | null;
  readonly at: number;
}

export interface MinimalServer {
  readonly baseUrl: string;
  /** Creates an account and a key (all four scopes), writes the key file (0600); the account id. */
  writeKeyFile(path: string, apiBaseUrl: string): string;
  orders(
    accountId: string,
  ): { order_id: string; client_order_id: string; request_id: string; status: string }[];
  fills(accountId: string): { fill_id: string; order_id: string }[];
  crossRestingOrders(accountId: string): number;
  onDeadlineFired(accountId: string, listener: () => void): () => void;
  quiesce(): void;
  close(): Promise<void>;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : 1,
    );
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonical(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function decimalOf(value: unknown, field: string): number {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value;
  if (typeof value === 'string' && /^\+?(\d+(\.\d*)?|\.\d+)$/.test(value) && Number(value) > 0) {
    return Number(value);
  }
  throw invalid(field, `${field} must be a positive decimal`);
}

function onGrid(value: number, size: number, field: string): number {
  const units = Math.round(value / size);
  if (Math.abs(units * size - value) > size * 1e-6 || units < 1) {
    throw invalid(field, `${field} must be a multiple of ${size}`);
  }
  return units;
}

function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) throw invalid(field, `unknown field ${field}`);
  }
}

function requestIdOf(body: Record<string, unknown>): string {
  const id = body.request_id;
  if (typeof id !== 'string' || id.length < 8 || id.length > 80 || !ID.test(id)) {
    throw invalid('request_id', 'request_id must be 8..80 letters, digits, ":", "_" or "-"');
  }
  return id;
}

const ORDER_FIELDS = [
  'request_id',
  'client_order_id',
  'market_id',
  'side',
  'type',
  'quantity',
  'leverage',
  'price',
  'trigger_price',
  'time_in_force',
  'post_only',
  'reduce_only',
  'position_id',
  'margin_mode',
  'max_slippage_percent',
  'expires_at',
];

function parseOrder(body: Record<string, unknown>) {
  onlyFields(body, ORDER_FIELDS);
  const request_id = requestIdOf(body);
  const client = body.client_order_id;
  if (typeof client !== 'string' || client.length < 1 || client.length > 100 || !ID.test(client)) {
    throw invalid(
      'client_order_id',
      'client_order_id must be 1..100 letters, digits, ":", "_" or "-"',
    );
  }
  if (body.market_id !== MARKET_ID) throw new Refusal(404, 'UNKNOWN_MARKET', 'no such market');
  if (body.side !== 'buy' && body.side !== 'sell')
    throw invalid('side', 'side must be buy or sell');
  if ('expires_at' in body)
    throw new Refusal(422, 'UNSUPPORTED_ORDER', 'expires_at', { field: 'expires_at' });
  if ('trigger_price' in body && body.trigger_price !== null) {
    throw new Refusal(422, 'UNSUPPORTED_ORDER', 'trigger_price', { field: 'trigger_price' });
  }
  if (body.type !== 'market' && body.type !== 'limit') {
    throw new Refusal(422, 'UNSUPPORTED_ORDER', 'only market and limit orders', { field: 'type' });
  }
  const tif = body.time_in_force ?? 'GTC';
  if (tif !== 'GTC' && tif !== 'IOC') {
    throw new Refusal(422, 'UNSUPPORTED_ORDER', 'only GTC and IOC', { field: 'time_in_force' });
  }
  const leverage = body.leverage;
  if (!Number.isInteger(leverage) || (leverage as number) < 1 || (leverage as number) > 10) {
    throw invalid('leverage', 'leverage must be an integer from 1 to 10');
  }
  const steps = onGrid(decimalOf(body.quantity, 'quantity'), 0.001, 'quantity');
  let priceTicks: number | null = null;
  if (body.type === 'limit') priceTicks = onGrid(decimalOf(body.price, 'price'), 0.5, 'price');
  return {
    request_id,
    client_order_id: client,
    side: body.side,
    type: body.type,
    priceTicks,
    steps,
    time_in_force: tif,
    post_only: body.post_only === true,
    reduce_only: body.reduce_only === true,
  } as const;
}

export interface MinimalServerOptions {
  readonly seed: string;
  /**
   * `own` (default): this server's own open shapes, listed above. `contract`: the shapes
   * contract.md fixes, as the emulator sends them; a control that tells a bot that cannot read
   * the open shapes from a server that is wrong.
   */
  readonly shapes?: 'own' | 'contract';
  /** Additive drift on top of the shapes (see the header). */
  readonly additive?: boolean;
  /** Every n-th private event breaks its schema, if an order or fill event (model.ts). */
  readonly breakEvery?: number;
}

/** The extension object an additive server puts in every object it sends. */
export const SVC_EXT = Object.freeze({ schema: '1.1', region: 'loopback', flags: ['additive'] });

/** Values outside the open enums, by field (additive mode). */
const UNKNOWN_VALUES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  market_structure: { order_book: 'order_book_l1' },
  execution_stage: { WORKING: 'WORKING_L1' },
  trading_mode: { paper: 'practice' },
};

/** `value` with `svc_ext` in every object and the open enums' values replaced. */
export function additiveForm(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(additiveForm);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const replaced = typeof inner === 'string' ? UNKNOWN_VALUES[key]?.[inner] : undefined;
    out[key] = replaced ?? additiveForm(inner);
  }
  out.svc_ext = SVC_EXT;
  return out;
}

export async function startMinimalServer(options: MinimalServerOptions): Promise<MinimalServer> {
  const now = () => Date.now();
  const own = (options.shapes ?? 'own') === 'own';
  const additive = options.additive === true;
  const wire = (value: unknown): unknown => (additive ? additiveForm(value) : value);
  const model = new MinimalModel(options.seed, now, own, additive, options.breakEvery ?? 0);
  const keys = new Map<string, KeyRecord>();
  const nonces = new NonceBook(SIGNATURE_WINDOW_MS);
  const ledgers = new Map<string, Map<string, Stored>>();
  let counter = 0;
  let walking = true;

  const marketView = () => ({
    market_id: MARKET_ID,
    display_name: 'Bitcoin perpetual (minimal)',
    base_asset: 'BTC',
    quote_asset: 'pUSDC',
    category: 'perpetual',
    status: 'active',
    routes: [ROUTE_ID],
    preferred_route_id: ROUTE_ID,
    price_tick: '0.5',
    quantity_step: '0.001',
    minimum_quantity: '0.001',
    minimum_notional: '10',
    maximum_leverage: 10,
    margin_modes: ['isolated', 'cross'],
    order_types: ['market', 'limit'],
    mark_price: price(model.markTicks),
    index_price: price(model.markTicks),
    last_price: price(model.markTicks),
    funding_rate: '0.0001',
    next_funding_time: iso(Math.ceil(now() / 3_600_000) * 3_600_000),
    volume_24h: null,
    open_interest: null,
    observed_at: iso(now()),
    data_status: walking ? 'live' : 'stale',
  });
  const routeView = () => ({
    route_id: ROUTE_ID,
    provider: 'minimal',
    environment: 'practice',
    network: 'loopback',
    market_structure: 'order_book',
    settlement_asset: 'pUSDC',
    capital_location: 'native',
    capabilities: {
      order_types: ['market', 'limit'],
      time_in_force: ['GTC', 'IOC'],
      post_only: true,
      reduce_only: true,
      attached_exits: false,
      amendment: 'cancel_replace',
      batch_atomicity: 'non_atomic',
      cancel_all_after: 'supported',
    },
    order_submission_enabled: true,
    health: 'ready',
    observed_at: iso(now()),
  });
  const bookView = () => {
    const level = (ticks: number) => ({ price: price(ticks), quantity: '0.500', order_count: 1 });
    return {
      market_id: MARKET_ID,
      route_id: ROUTE_ID,
      market_structure: 'order_book',
      sequence: counter,
      checksum: null,
      bids: [1, 2, 3, 4, 5].map((offset) => level(model.markTicks - offset)),
      asks: [1, 2, 3, 4, 5].map((offset) => level(model.markTicks + offset)),
      oracle: null,
      observed_at: iso(now()),
    };
  };
  const accountView = (account: AccountState) => {
    const equity = model.equity(account);
    const inPositions = Math.abs(account.positionSteps) * 0.001 * model.markTicks * 0.5;
    return {
      trading_mode: 'paper',
      settlement_asset: 'pUSDC',
      account_id: account.account_id,
      snapshot_version: account.snapshot,
      observed_at: iso(now()),
      total_equity: equity.toFixed(2),
      available: (equity - inPositions).toFixed(2),
      in_positions: inPositions.toFixed(2),
      unrealized_pnl: '0.00',
      complete: true,
      data_status: 'live',
    };
  };
  const positionsOf = (account: AccountState) => {
    if (account.positionSteps === 0) return [];
    const fills = account.fills;
    const last = fills[fills.length - 1];
    const mark = price(model.markTicks);
    const value = Math.abs(account.positionSteps) * 0.001 * model.markTicks * 0.5;
    return [
      {
        position_id: `pos-${account.account_id}-btc`,
        market_id: MARKET_ID,
        route_id: ROUTE_ID,
        side: account.positionSteps > 0 ? 'long' : 'short',
        quantity: quantity(Math.abs(account.positionSteps)),
        entry_price: last === undefined ? mark : price(last.priceTicks),
        margin_mode: 'isolated',
        observed_at: iso(now()),
        data_status: 'live',
        mark_price: mark,
        position_value: value.toFixed(2),
        unrealized_pnl: null,
        leverage: '1',
        liquidation_price: null,
      },
    ];
  };
  const page = <T>(items: readonly T[], query: URLSearchParams) => {
    const limit = Math.min(200, Math.max(1, Number(query.get('limit') ?? '50') || 50));
    const start = Number(query.get('cursor') ?? '0') || 0;
    const data = items.slice(start, start + limit);
    const more = start + limit < items.length;
    return { data, page: { next_cursor: more ? String(start + limit) : null, has_more: more } };
  };
  const findOrder = (account: AccountState, test: (order: OrderState) => boolean) => {
    const order = account.orders.find(test);
    if (order === undefined) throw new Refusal(404, 'ORDER_NOT_FOUND', 'no such order');
    return order;
  };

  /** Runs a mutation once per request_id; a repeat with the same body gets the stored answer. */
  const once = (
    account: AccountState,
    body: Record<string, unknown>,
    commandType: string,
    work: () => { status: number; body: unknown; result: Record<string, unknown> | null },
  ): { status: number; body: unknown } => {
    const requestId = requestIdOf(body);
    let ledger = ledgers.get(account.account_id);
    if (ledger === undefined) ledgers.set(account.account_id, (ledger = new Map()));
    const fingerprint = `${commandType}\n${canonical(body)}`;
    const stored = ledger.get(requestId);
    if (stored !== undefined) {
      if (stored.fingerprint !== fingerprint) {
        throw new Refusal(409, 'IDEMPOTENCY_CONFLICT', 'request_id reused with different content');
      }
      return stored;
    }
    const answer = work();
    ledger.set(requestId, { fingerprint, commandType, at: now(), ...answer });
    return answer;
  };

  const handle = (
    method: string,
    url: URL,
    account: AccountState | null,
    body: Record<string, unknown>,
  ): { status: number; body: unknown } => {
    const path = url.pathname;
    const ok = (value: unknown, status = 200) => ({ status, body: value });
    if (method === 'GET' && path === '/health') {
      return ok(own ? { healthy: true, checked_at: iso(now()) } : { status: 'ok' });
    }
    if (method === 'GET' && path === '/ready') return ok({ ready: true });
    if (method === 'GET' && path === '/v1/time') {
      return ok(
        own
          ? { epoch_ms: now(), iso_time: iso(now()), source: 'minimal-server' }
          : { server_time: iso(now()), epoch_ms: now() },
      );
    }
    if (method === 'GET' && path === '/v1/status') {
      return ok(
        own
          ? { state: 'running', api_version: '1.0.0', server_time: iso(now()), uptime_s: 1 }
          : {
              status: 'ok',
              environment: 'practice',
              api_version: '1.0.0',
              server_time: iso(now()),
            },
      );
    }
    if (method === 'GET' && path === '/v1/routes') return ok([routeView()]);
    if (method === 'GET' && path === '/v1/markets') return ok([marketView()]);
    const market = /^\/v1\/markets\/([^/]+)(?:\/(book|trades|candles))?$/.exec(path);
    if (method === 'GET' && market !== null) {
      if (market[1] !== MARKET_ID) throw new Refusal(404, 'UNKNOWN_MARKET', 'no such market');
      if (market[2] === 'book') return ok(bookView());
      if (market[2] === 'trades' && additive) {
        return ok([
          {
            trade_id: `trade-min-${counter}`,
            market_id: MARKET_ID,
            route_id: ROUTE_ID,
            price: price(model.markTicks),
            quantity: '0.001',
            side: 'taker_buy',
            occurred_at: iso(now()),
          },
        ]);
      }
      if (market[2] === 'trades' || market[2] === 'candles') return ok([]);
      return ok(marketView());
    }
    if (account === null) throw new Refusal(404, 'NOT_FOUND', `no endpoint ${method} ${path}`);

    if (method === 'GET') {
      if (path === '/v1/account') return ok(accountView(account));
      if (path === '/v1/accounts') {
        const view = accountView(account);
        return ok([
          {
            account_id: account.account_id,
            route_id: ROUTE_ID,
            settlement_asset: 'pUSDC',
            capital_location: 'native',
            account_value: view.total_equity,
            available: view.available,
            in_positions: view.in_positions,
            unrealized_pnl: view.unrealized_pnl,
            observed_at: view.observed_at,
            source: 'minimal-ledger',
            data_status: 'live',
          },
        ]);
      }
      if (path === '/v1/positions') return ok(page(positionsOf(account), url.searchParams));
      if (path === '/v1/routes/readiness') {
        return ok([
          own
            ? { route_id: ROUTE_ID, ready: true }
            : {
                route_id: ROUTE_ID,
                ready: true,
                health: 'ready',
                order_submission_enabled: true,
                reasons: [],
                observed_at: iso(now()),
              },
        ]);
      }
      if (path === '/v1/orders') {
        const status = url.searchParams.get('status');
        const orders = account.orders
          .filter((order) => status === null || order.status === status)
          .reverse()
          .map((order) => model.orderView(order));
        return ok(page(orders, url.searchParams));
      }
      if (path === '/v1/fills') {
        return ok(
          page(
            [...account.fills].reverse().map((fill) => model.fillView(fill)),
            url.searchParams,
          ),
        );
      }
      if (path === '/v1/events') {
        const after = Number(url.searchParams.get('after_sequence') ?? '0');
        const limit = Math.min(
          200,
          Math.max(1, Number(url.searchParams.get('limit') ?? '100') || 100),
        );
        if (!Number.isSafeInteger(after) || after < 0)
          throw invalid('after_sequence', 'after_sequence must be >= 0');
        const events = account.events.filter((event) => event.sequence > after);
        const data = events.slice(0, limit);
        return ok({
          data: data.map((event) => event.frame),
          has_more: events.length > limit,
          ...(own ? {} : { next_after_sequence: data.at(-1)?.sequence ?? after }),
        });
      }
      const byClient = /^\/v1\/orders\/by-client-id\/([^/]+)$/.exec(path);
      if (byClient !== null) {
        const id = decodeURIComponent(byClient[1] ?? '');
        return ok(model.orderView(findOrder(account, (order) => order.client_order_id === id)));
      }
      const byId = /^\/v1\/orders\/([^/]+)$/.exec(path);
      if (byId !== null)
        return ok(model.orderView(findOrder(account, (order) => order.order_id === byId[1])));
      const request = /^\/v1\/requests\/([^/]+)$/.exec(path);
      if (request !== null) {
        const stored = ledgers.get(account.account_id)?.get(decodeURIComponent(request[1] ?? ''));
        if (stored === undefined) throw new Refusal(404, 'ORDER_NOT_FOUND', 'no such request');
        return ok({
          request_id: decodeURIComponent(request[1] ?? ''),
          command_type: stored.commandType,
          state: 'COMPLETED',
          result: stored.result,
          created_at: iso(stored.at),
          updated_at: iso(stored.at),
          completed_at: iso(stored.at),
        });
      }
    }
    if (method === 'POST' && path === '/v1/orders') {
      return once(account, body, 'order.open', () => {
        const order = model.place(account, parseOrder(body));
        setImmediate(() => model.submit(account, order));
        return {
          status: 202,
          body: model.orderView(order),
          result: { order_id: order.order_id, status: order.status },
        };
      });
    }
    if (method === 'POST' && path === '/v1/orders/simulate') {
      const order = parseOrder(body);
      const reference = order.priceTicks ?? model.markTicks;
      return ok({
        market_id: MARKET_ID,
        route_id: ROUTE_ID,
        decision: 'READY',
        required_margin: (order.steps * 0.001 * reference * 0.5).toFixed(2),
        reference_price: price(reference),
        maximum_quantity: null,
        issues: [],
        evaluated_at: iso(now()),
        expires_at: iso(now() + 5_000),
      });
    }
    if (method === 'POST' && path === '/v1/orders/cancel-all') {
      onlyFields(body, ['request_id', 'market_id']);
      return once(account, body, 'order.cancel_all', () => {
        const marketId = typeof body.market_id === 'string' ? body.market_id : null;
        const cancelled = model.cancelAll(account, marketId);
        const requestId = requestIdOf(body);
        return {
          status: 202,
          body: {
            request_id: requestId,
            results: cancelled.map((order) => model.orderView(order)),
          },
          result: null,
        };
      });
    }
    const cancel = /^\/v1\/orders\/([^/]+)\/cancel$/.exec(path);
    if (method === 'POST' && cancel !== null) {
      onlyFields(body, ['request_id']);
      return once(account, body, 'order.cancel', () => {
        const order = findOrder(account, (candidate) => candidate.order_id === cancel[1]);
        model.cancel(account, order);
        return {
          status: 202,
          body: model.orderView(order),
          result: { order_id: order.order_id, status: order.status },
        };
      });
    }
    if (method === 'PUT' && path === '/v1/cancel-all-after') {
      onlyFields(body, ['request_id', 'timeout_seconds']);
      const timeout = body.timeout_seconds;
      if (!Number.isInteger(timeout) || (timeout as number) < 0 || (timeout as number) > 86_400) {
        throw invalid('timeout_seconds', 'timeout_seconds must be an integer from 0 to 86400');
      }
      return once(account, body, 'cancel_all_after', () => {
        const deadline = model.setDeadline(account, timeout as number);
        return {
          status: 200,
          body: {
            request_id: requestIdOf(body),
            deadline_at: deadline === null ? null : iso(deadline),
          },
          result: null,
        };
      });
    }
    if (path.startsWith('/v1/orders') || path.startsWith('/v1/positions/')) {
      throw new Refusal(422, 'UNSUPPORTED_ORDER', 'this server does not support that command', {
        field: 'path',
      });
    }
    throw new Refusal(404, 'NOT_FOUND', `no endpoint ${method} ${path}`);
  };

  const send = (response: ServerResponse, status: number, value: unknown, requestId: string) => {
    const text = JSON.stringify(wire(value));
    response.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      'svc-request-id': requestId,
    });
    response.end(text);
  };

  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    request.once('end', () => {
      const requestId = `min-${++counter}`;
      try {
        if (size > MAX_BODY) throw new Refusal(413, 'INVALID_REQUEST', 'body too large');
        const raw = Buffer.concat(chunks);
        const target = request.url ?? '/';
        const url = new URL(target, 'http://127.0.0.1');
        const method = request.method ?? 'GET';
        let account: AccountState | null = null;
        const isPublic = PUBLIC.has(url.pathname) || url.pathname.startsWith('/v1/markets/');
        if (!isPublic) {
          const key = checkHttpRequest({
            method,
            target,
            body: raw,
            header: (name) => {
              const value = request.headers[name];
              return Array.isArray(value) ? value[0] : value;
            },
            keys,
            nonces,
            nowMs: now(),
          });
          if (typeof key === 'string') throw new Refusal(401, 'INVALID_SIGNATURE', key);
          account = model.accounts.get(key.accountId) ?? null;
        }
        let body: Record<string, unknown> = {};
        if (raw.length > 0) {
          const parsed: unknown = JSON.parse(raw.toString('utf8'));
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
            throw invalid('body', 'the body must be a JSON object');
          }
          body = parsed as Record<string, unknown>;
        }
        const answer = handle(method, url, account, body);
        send(response, answer.status, answer.body, requestId);
      } catch (error) {
        const refusal =
          error instanceof Refusal
            ? error
            : error instanceof SyntaxError
              ? new Refusal(422, 'INVALID_REQUEST', 'the body is not JSON')
              : new Refusal(503, 'EXECUTION_UNAVAILABLE', 'internal error');
        send(
          response,
          refusal.status,
          {
            error: {
              code: refusal.code,
              message: refusal.message,
              request_id: requestId,
              retryable: refusal.status === 503,
              details: refusal.details,
            },
          },
          requestId,
        );
      }
    });
  };

  const server = createServer(onRequest);
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  // WebSocket: challenge, auth, subscribe, retained events above last_sequence, then live ones.
  interface Session {
    readonly socket: WebSocket;
    readonly challenge: string;
    account: AccountState | null;
    lastSequence: number;
    readonly channels: Set<string>;
  }
  const sessions = new Set<Session>();
  const gateway = new WebSocketServer({ server, path: '/v1/ws', maxPayload: 64 * 1024 });
  const frame = (session: Session, value: Record<string, unknown>) => {
    if (session.socket.readyState === session.socket.OPEN)
      session.socket.send(JSON.stringify(wire({ version: 1, ...value })));
  };
  const ticker = () => ({
    channel: `market:${MARKET_ID}:ticker`,
    type: 'ticker.snapshot',
    occurred_at: iso(now()),
    data: {
      market_id: MARKET_ID,
      mark_price: price(model.markTicks),
      index_price: price(model.markTicks),
      last_price: price(model.markTicks),
      data_status: walking ? 'live' : 'stale',
    },
  });
  gateway.on('connection', (socket) => {
    const session: Session = {
      socket,
      challenge: randomBytes(24).toString('base64url'),
      account: null,
      lastSequence: 0,
      channels: new Set(),
    };
    sessions.add(session);
    socket.once('close', () => sessions.delete(session));
    const expiresAt = now() + 30_000;
    frame(session, { type: 'challenge', challenge: session.challenge, expires_at_ms: expiresAt });
    socket.on('message', (data) => {
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(String(data)) as Record<string, unknown>;
      } catch {
        frame(session, {
          type: 'error',
          request_id: null,
          error: { code: 'INVALID_REQUEST', message: 'not JSON', retryable: false, details: {} },
        });
        return;
      }
      const requestId = typeof message.request_id === 'string' ? message.request_id : null;
      const fail = (code: string, text: string) =>
        frame(session, {
          type: 'error',
          request_id: requestId,
          error: { code, message: text, retryable: false, details: {} },
        });
      if (message.op === 'ping') {
        frame(session, { type: 'pong', request_id: requestId });
      } else if (message.op === 'auth') {
        if (now() > expiresAt || session.account !== null)
          return fail('INVALID_SIGNATURE', 'challenge expired or used');
        const key = checkSocketAuth({
          frame: message,
          challenge: session.challenge,
          keys,
          nonces,
          nowMs: now(),
        });
        if (typeof key === 'string') return fail('INVALID_SIGNATURE', key);
        session.account = model.accounts.get(key.accountId) ?? null;
        session.lastSequence = message.last_sequence as number;
        frame(session, {
          type: 'authenticated',
          request_id: requestId,
          key_id: key.keyId,
          scopes: message.scopes,
          sequence: session.account?.sequence ?? 0,
          ...(own ? { session_id: randomBytes(8).toString('hex') } : {}),
        });
      } else if (message.op === 'subscribe' || message.op === 'unsubscribe') {
        const channels = Array.isArray(message.channels)
          ? message.channels.filter((c) => typeof c === 'string')
          : [];
        const privateOnes = channels.filter((channel) => !channel.startsWith('market:'));
        if (message.op === 'subscribe' && privateOnes.length > 0 && session.account === null) {
          return fail('SCOPE_REQUIRED', 'authenticate first');
        }
        for (const channel of channels) {
          if (message.op === 'subscribe') session.channels.add(channel);
          else session.channels.delete(channel);
        }
        frame(session, {
          type: message.op === 'subscribe' ? 'subscribed' : 'unsubscribed',
          request_id: requestId,
          channels,
          ...(own ? { active_channels: [...session.channels], at: iso(now()) } : {}),
        });
        if (message.op !== 'subscribe') return;
        if (channels.includes(`market:${MARKET_ID}:ticker`)) frame(session, ticker());
        if (session.account !== null && privateOnes.length > 0) {
          for (const event of session.account.events) {
            if (event.sequence > session.lastSequence && privateOnes.includes(event.channel))
              frame(session, event.frame);
          }
        }
      } else {
        fail('INVALID_REQUEST', 'unknown op');
      }
    });
  });
  model.onEvent((account, event) => {
    for (const session of sessions) {
      if (session.account === account && session.channels.has(event.channel))
        frame(session, event.frame);
    }
  });

  const walker = setInterval(() => {
    if (!walking) return;
    const before = model.markTicks;
    model.walk();
    if (model.markTicks === before) return;
    const update = ticker();
    for (const session of sessions)
      if (session.channels.has(update.channel)) frame(session, update);
  }, WALK_MS);
  const heartbeat = setInterval(() => {
    for (const session of sessions) {
      frame(session, {
        type: 'heartbeat',
        occurred_at: iso(now()),
        ...(own ? {} : { sequence: session.account?.sequence ?? null }),
      });
    }
  }, HEARTBEAT_MS);

  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve(server.address() as AddressInfo));
  });
  const baseUrl = `http://127.0.0.1:${address.port}`;

  return {
    baseUrl,
    writeKeyFile(path, apiBaseUrl) {
      const account = model.createAccount();
      const pair = newKeyPair();
      const keyId = `key-min-${keys.size + 1}`;
      const scopes = ['account:read', 'orders:read', 'fills:read', 'orders:write'];
      keys.set(keyId, { keyId, accountId: account.account_id, publicKey: pair.publicKey, scopes });
      const file = {
        version: 1,
        key_id: keyId,
        account_id: account.account_id,
        api_base_url: apiBaseUrl,
        ws_url: `${apiBaseUrl.replace(/^http/, 'ws')}/v1/ws`,
        private_key: pair.seed.toString('base64'),
        public_key: pair.publicRaw.toString('base64'),
        scopes,
        created_at: iso(now()),
        expires_at: null,
      };
      writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
      return account.account_id;
    },
    orders: (accountId) =>
      (model.accounts.get(accountId)?.orders ?? []).map((order) => ({
        order_id: order.order_id,
        client_order_id: order.client_order_id,
        request_id: order.request_id,
        status: order.status,
      })),
    fills: (accountId) =>
      (model.accounts.get(accountId)?.fills ?? []).map((fill) => ({
        fill_id: fill.fill_id,
        order_id: fill.order_id,
      })),
    crossRestingOrders(accountId) {
      const account = model.accounts.get(accountId);
      if (account === undefined) return 0;
      const before = account.fills.length;
      const buys = account.orders.filter((order) => model.isActive(order) && order.side === 'buy');
      const best = Math.max(...buys.map((order) => order.priceTicks ?? 0));
      if (buys.length > 0) model.moveMarkTo(best);
      return account.fills.length - before;
    },
    onDeadlineFired: (accountId, listener) =>
      model.onDeadline((fired) => {
        if (fired === accountId) listener();
      }),
    quiesce() {
      walking = false;
    },
    async close() {
      clearInterval(walker);
      clearInterval(heartbeat);
      for (const account of model.accounts.values()) {
        if (account.deadlineTimer !== null) clearTimeout(account.deadlineTimer);
      }
      for (const session of sessions) session.socket.terminate();
      gateway.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
