import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  Account,
  BatchOrderResponse,
  Book,
  BookLevel,
  CancelAllAfterResponse,
  CancelAllResponse,
  Candle,
  CommandError,
  FailedOrderCommand,
  Fill,
  FillPage,
  HealthResponse,
  isFailedOrderCommand,
  Market,
  MutationStatus,
  Order,
  OrderCommandResult,
  OrderPage,
  Position,
  PositionPage,
  PublicTrade,
  ReadyResponse,
  Route,
  RouteCapabilities,
  RouteReadiness,
  SimulationIssue,
  SimulationResult,
  StatusResponse,
  TimeResponse,
  VenueAccount,
} from '../../src/protocol/index.ts';
import {
  account,
  book,
  candle,
  fill,
  market,
  mutationStatus,
  order,
  position,
  publicTrade,
  route,
  shapesOf,
  simulationResult,
  TIME,
  venueAccount,
} from './fixtures.ts';

const resources: Array<[string, z.ZodType, () => Record<string, unknown>, string, string]> = [
  ['Market', Market, market, 'price_tick', 'observed_at'],
  ['Route', Route, route, 'settlement_asset', 'observed_at'],
  ['Book', Book, book, 'market_id', 'observed_at'],
  ['PublicTrade', PublicTrade, publicTrade, 'price', 'occurred_at'],
  ['Candle', Candle, candle, 'volume', 'open_time'],
  ['Account', Account, account, 'available', 'observed_at'],
  ['VenueAccount', VenueAccount, venueAccount, 'account_value', 'account_id'],
  ['Position', Position, position, 'entry_price', 'observed_at'],
  ['Order', Order, order, 'filled_quantity', 'received_at'],
  ['Fill', Fill, fill, 'fee', 'occurred_at'],
  ['SimulationResult', SimulationResult, simulationResult, 'required_margin', 'expires_at'],
  ['MutationStatus', MutationStatus, mutationStatus, 'request_id', 'created_at'],
];

describe.each(resources)('%s', (_name, schema, example, decimalField, dateField) => {
  it('accepts the interface example', () => {
    expect(shapesOf(schema, example())).toEqual([]);
  });

  it('refuses an unknown field', () => {
    expect(shapesOf(schema, { ...example(), surprise: 1 })).toEqual([
      ['extra_forbidden', 'body.surprise'],
    ]);
  });

  it('refuses numbers where the interface sends strings', () => {
    expect(shapesOf(schema, { ...example(), [decimalField]: 1 })).toEqual([
      ['string_type', `body.${decimalField}`],
    ]);
    expect(shapesOf(schema, { ...example(), [dateField]: 1_740_830_400_000 })).toEqual([
      ['string_type', `body.${dateField}`],
    ]);
  });
});

function requiredFields(example: Record<string, unknown>, schema: z.ZodType): string[] {
  return Object.keys(example).filter(
    (key) =>
      !schema.safeParse(Object.fromEntries(Object.entries(example).filter(([k]) => k !== key)))
        .success,
  );
}

describe('required and nullable fields as the interface states', () => {
  it('Market: the required fields, and null where allowed', () => {
    expect(requiredFields(market(), Market).sort()).toEqual(
      [
        'market_id',
        'display_name',
        'base_asset',
        'quote_asset',
        'category',
        'status',
        'routes',
        'preferred_route_id',
        'observed_at',
        'data_status',
      ].sort(),
    );
    const minimal = Market.parse({
      market_id: 'BTC-USD',
      display_name: 'x',
      base_asset: 'BTC',
      quote_asset: 'USD',
      category: 'c',
      status: 's',
      routes: [],
      preferred_route_id: 'svc-paper',
      observed_at: TIME,
      data_status: 'stale',
    });
    expect(minimal.mark_price).toBeNull();
    expect(minimal.maximum_leverage).toBeNull();
    expect(shapesOf(Market, { ...market(), market_id: null })).toEqual([
      ['string_type', 'body.market_id'],
    ]);
    expect(shapesOf(Market, { ...market(), data_status: 'degraded' })).toEqual([
      ['enum', 'body.data_status'],
    ]);
    expect(shapesOf(Market, { ...market(), maximum_leverage: 2.5 })).toEqual([
      ['int_from_float', 'body.maximum_leverage'],
    ]);
    expect(shapesOf(Market, { ...market(), mark_price: '1e3' })).toEqual([
      ['string_pattern_mismatch', 'body.mark_price'],
    ]);
  });

  it('Route and RouteCapabilities: every field required', () => {
    expect(requiredFields(route(), Route)).toEqual(Object.keys(route()));
    const capabilities = route().capabilities as Record<string, unknown>;
    expect(requiredFields(capabilities, RouteCapabilities)).toEqual(Object.keys(capabilities));
    expect(shapesOf(Route, { ...route(), health: 'down' })).toEqual([['enum', 'body.health']]);
    expect(shapesOf(Route, { ...route(), market_structure: 'amm' })).toEqual([
      ['enum', 'body.market_structure'],
    ]);
  });

  it('Book: order_count defaults to 0; oracle values are strings or booleans', () => {
    expect(BookLevel.parse({ price: '1', quantity: '2' })).toEqual({
      price: '1',
      quantity: '2',
      order_count: 0,
    });
    const parsed = Book.parse({ ...book(), oracle: { source: 'pyth', fresh: true } });
    expect(parsed.asks[0]?.order_count).toBe(0);
    expect(shapesOf(Book, { ...book(), oracle: { price: 1 } })).toEqual([
      ['union_error', 'body.oracle.price'],
    ]);
    expect(requiredFields(book(), Book).sort()).toEqual(
      ['market_id', 'route_id', 'market_structure', 'bids', 'asks', 'observed_at'].sort(),
    );
  });

  it('Account: trading_mode and settlement_asset default to live and USDC', () => {
    const value = account();
    delete value.trading_mode;
    delete value.settlement_asset;
    const parsed = Account.parse(value);
    expect(parsed.trading_mode).toBe('live');
    expect(parsed.settlement_asset).toBe('USDC');
    expect(shapesOf(Account, { ...account(), data_status: 'stale' })).toEqual([
      ['enum', 'body.data_status'],
    ]);
  });

  it('VenueAccount: every field required, observed_at nullable', () => {
    expect(requiredFields(venueAccount(), VenueAccount)).toEqual(Object.keys(venueAccount()));
  });

  it('Position: every field required, the nullable ones must be present', () => {
    expect(requiredFields(position(), Position)).toEqual(Object.keys(position()));
    expect(shapesOf(Position, { ...position(), mark_price: null })).toEqual([]);
    expect(shapesOf(Position, { ...position(), quantity: null })).toEqual([
      ['string_type', 'body.quantity'],
    ]);
  });

  it('Order: required fields, optional nullable extras, trading_mode default live', () => {
    const required = requiredFields(order(), Order);
    expect(required).toEqual(Object.keys(order()).filter((key) => key !== 'trading_mode'));
    const parsed = Order.parse({ ...order(), trading_mode: undefined });
    expect(parsed.trading_mode).toBe('live');
    expect(parsed.execution_account_id).toBeNull();
    expect(parsed.provenance).toBeNull();
    expect(parsed.error).toBeNull();
    expect(
      shapesOf(Order, {
        ...order(),
        provenance: { strategy: 'x' },
        error: null,
        execution_account_id: 'a',
      }),
    ).toEqual([]);
    expect(shapesOf(Order, { ...order(), status: 'open' })).toEqual([['enum', 'body.status']]);
    expect(shapesOf(Order, { ...order(), trading_mode: 'demo' })).toEqual([
      ['enum', 'body.trading_mode'],
    ]);
    expect(shapesOf(Order, { ...order(), last_event_sequence: 3 })).toEqual([]);
  });

  it('SimulationResult: all required except maximum_quantity', () => {
    expect(requiredFields(simulationResult(), SimulationResult)).toEqual(
      Object.keys(simulationResult()).filter((key) => key !== 'maximum_quantity'),
    );
    const issue = { code: 'INSUFFICIENT_READY_CAPITAL', message: 'not enough', field: null };
    expect(SimulationIssue.parse(issue)).toEqual(issue);
    expect(
      shapesOf(SimulationResult, { ...simulationResult(), decision: 'REJECTED', issues: [issue] }),
    ).toEqual([]);
  });

  it('MutationStatus: state is PENDING or COMPLETED; result and completed_at optional', () => {
    const value = mutationStatus();
    delete value.result;
    delete value.completed_at;
    expect(MutationStatus.parse({ ...value, state: 'PENDING' })).toMatchObject({
      result: null,
      completed_at: null,
    });
    expect(shapesOf(MutationStatus, { ...mutationStatus(), state: 'FAILED' })).toEqual([
      ['enum', 'body.state'],
    ]);
  });
});

describe('page wrappers', () => {
  it('OrderPage, PositionPage and FillPage need data and page', () => {
    expect(
      shapesOf(OrderPage, { data: [order()], page: { next_cursor: 'c', has_more: true } }),
    ).toEqual([]);
    expect(shapesOf(PositionPage, { data: [position()], page: {} })).toEqual([]);
    expect(shapesOf(FillPage, { data: [fill()] })).toEqual([['missing', 'body.page']]);
    expect(shapesOf(FillPage, { data: [{ ...fill(), extra: 1 }], page: {} })).toEqual([
      ['extra_forbidden', 'body.data.0.extra'],
    ]);
  });
});

describe('command results', () => {
  const failure = {
    error: { code: 'UNSUPPORTED_ORDER', message: 'no', details: { field: 'type' } },
    request_id: 'req-00000001',
    client_order_id: 'c-1',
  };

  it('CommandError: retryable defaults to false, details optional', () => {
    expect(CommandError.parse({ code: 'X', message: 'y' })).toEqual({
      code: 'X',
      message: 'y',
      retryable: false,
    });
    expect(shapesOf(CommandError, { code: 'X' })).toEqual([['missing', 'body.message']]);
  });

  it('FailedOrderCommand: error required, ids optional and nullable', () => {
    expect(FailedOrderCommand.parse(failure)).toEqual({
      error: { ...failure.error, retryable: false },
      request_id: 'req-00000001',
      client_order_id: 'c-1',
      order_id: null,
    });
    expect(shapesOf(FailedOrderCommand, { request_id: null })).toEqual([['missing', 'body.error']]);
  });

  it('a result item is an Order or a FailedOrderCommand, told apart', () => {
    const results = [order(), failure].map((item) => OrderCommandResult.parse(item));
    expect(results.map(isFailedOrderCommand)).toEqual([false, true]);
    expect(OrderCommandResult.safeParse({ ...order(), error: failure.error }).success).toBe(true);
    expect(shapesOf(OrderCommandResult, { order_id: 'x' })).toEqual([['union_error', 'body']]);
  });

  it('BatchOrderResponse and CancelAllResponse', () => {
    expect(
      shapesOf(BatchOrderResponse, {
        request_id: 'req-00000007',
        atomicity: 'non_atomic',
        results: [order(), failure],
      }),
    ).toEqual([]);
    expect(
      shapesOf(BatchOrderResponse, {
        request_id: 'req-00000007',
        atomicity: 'atomic',
        results: [],
      }),
    ).toEqual([['enum', 'body.atomicity']]);
    expect(shapesOf(CancelAllResponse, { request_id: 'req-00000005', results: [failure] })).toEqual(
      [],
    );
    expect(shapesOf(CancelAllResponse, { request_id: 'req-00000005' })).toEqual([
      ['missing', 'body.results'],
    ]);
  });

  it('CancelAllAfterResponse: deadline_at date-time or null, both required', () => {
    expect(shapesOf(CancelAllAfterResponse, { request_id: 'r', deadline_at: null })).toEqual([]);
    expect(shapesOf(CancelAllAfterResponse, { request_id: 'r', deadline_at: TIME })).toEqual([]);
    expect(shapesOf(CancelAllAfterResponse, { request_id: 'r' })).toEqual([
      ['missing', 'body.deadline_at'],
    ]);
  });
});

describe('small bodies (contract section 5)', () => {
  it('time, status, health and ready', () => {
    expect(shapesOf(TimeResponse, { server_time: TIME, epoch_ms: 1_740_830_400_000 })).toEqual([]);
    expect(shapesOf(TimeResponse, { server_time: TIME, epoch_ms: 1.5 })).toEqual([
      ['int_from_float', 'body.epoch_ms'],
    ]);
    const status = {
      status: 'ok',
      environment: 'practice',
      api_version: '1.0.0',
      server_time: TIME,
    };
    expect(shapesOf(StatusResponse, status)).toEqual([]);
    expect(shapesOf(StatusResponse, { ...status, status: 'maintenance' })).toEqual([]);
    expect(shapesOf(StatusResponse, { ...status, status: 'down' })).toEqual([
      ['enum', 'body.status'],
    ]);
    expect(shapesOf(StatusResponse, { ...status, environment: 'live' })).toEqual([
      ['literal_error', 'body.environment'],
    ]);
    expect(shapesOf(HealthResponse, { status: 'ok' })).toEqual([]);
    expect(shapesOf(HealthResponse, { status: 'ok', uptime: 1 })).toEqual([
      ['extra_forbidden', 'body.uptime'],
    ]);
    expect(shapesOf(ReadyResponse, { ready: true })).toEqual([]);
    expect(shapesOf(ReadyResponse, { ready: false })).toEqual([['literal_error', 'body.ready']]);
  });

  it('routes readiness items', () => {
    const item = {
      route_id: 'svc-paper',
      ready: false,
      health: 'degraded',
      order_submission_enabled: true,
      reasons: ['health is degraded'],
      observed_at: TIME,
    };
    expect(shapesOf(RouteReadiness, item)).toEqual([]);
    expect(requiredFields(item, RouteReadiness)).toEqual(Object.keys(item));
  });
});
