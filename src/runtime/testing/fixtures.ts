/**
 * Builders of wire objects for strategy tests: each returns a complete, schema-valid object
 * from a few fields, so a test states only what it is about.
 */
import { isoTimestamp } from '../../core/clock.ts';
import type {
  Account,
  Book,
  BookLevel,
  Candle,
  CandleInterval,
  Fill,
  Market,
  Order,
  Position,
  PublicTrade,
  Ticker,
} from '../strategy/index.ts';

/** 2024-01-01T00:00:00Z, a Monday, so every candle interval starts a bucket there. */
export const TEST_START_TIME = 1_704_067_200_000;

export const TEST_ROUTE_ID = 'svc-paper';

/** A wire object as a test gives it: the fields `K` the test is about, every other one optional. */
export type TestFields<T, K extends keyof T> = Partial<T> & Pick<T, K>;
export type TickerFields = TestFields<Ticker, 'market_id'>;
export type TradeFields = TestFields<PublicTrade, 'market_id' | 'price' | 'trade_id'>;
export type CandleFields = TestFields<Candle, 'market_id' | 'close'>;
export type OrderFields = TestFields<Order, 'order_id' | 'market_id'>;
export type FillFields = TestFields<Fill, 'fill_id' | 'market_id' | 'price' | 'quantity'>;
export type PositionFields = TestFields<
  Position,
  'market_id' | 'side' | 'quantity' | 'entry_price'
>;

/** A perpetual with a 0.5 tick, a 0.001 step, minimum quantity 0.001 and notional 10. */
export function testMarket(overrides: Partial<Market> = {}): Market {
  const marketId = overrides.market_id ?? 'BTC-PERP';
  return {
    market_id: marketId,
    display_name: marketId,
    base_asset: marketId.split('-')[0] ?? marketId,
    quote_asset: 'pUSDC',
    category: 'perpetual',
    status: 'active',
    routes: [TEST_ROUTE_ID],
    preferred_route_id: TEST_ROUTE_ID,
    price_tick: '0.5',
    quantity_step: '0.001',
    minimum_quantity: '0.001',
    minimum_notional: '10',
    maximum_leverage: 20,
    margin_modes: ['cross', 'isolated'],
    order_types: ['market', 'limit'],
    mark_price: null,
    index_price: null,
    last_price: null,
    funding_rate: null,
    next_funding_time: null,
    volume_24h: null,
    open_interest: null,
    observed_at: isoTimestamp(TEST_START_TIME),
    data_status: 'live',
    ...overrides,
  };
}

export function testTicker(fields: TickerFields, now: number = TEST_START_TIME): Ticker {
  const mark = fields.mark_price ?? null;
  return {
    mark_price: mark,
    index_price: mark,
    last_price: mark,
    data_status: 'live',
    occurred_at: isoTimestamp(now),
    ...fields,
  };
}

export function testTrade(fields: TradeFields, now: number = TEST_START_TIME): PublicTrade {
  return {
    route_id: TEST_ROUTE_ID,
    quantity: '1',
    side: 'buy',
    occurred_at: isoTimestamp(now),
    ...fields,
  };
}

/** A candle of `interval` opening at `openTime` whose open, high, low and close are `close`. */
export function testCandle(
  fields: CandleFields,
  interval: CandleInterval,
  openTime: number,
): Candle {
  return {
    route_id: TEST_ROUTE_ID,
    interval,
    open_time: isoTimestamp(openTime),
    open: fields.close,
    high: fields.close,
    low: fields.close,
    volume: '1',
    ...fields,
  };
}

export type LevelInput = BookLevel | readonly [price: string, quantity: string];

function level(input: LevelInput): BookLevel {
  return 'price' in input ? input : { price: input[0], quantity: input[1], order_count: 1 };
}

export interface BookFields {
  readonly market_id: string;
  readonly bids?: readonly LevelInput[];
  readonly asks?: readonly LevelInput[];
}

export function testBook(fields: BookFields, now: number = TEST_START_TIME): Book {
  return {
    market_id: fields.market_id,
    route_id: TEST_ROUTE_ID,
    market_structure: 'order_book',
    sequence: null,
    checksum: null,
    bids: (fields.bids ?? []).map(level),
    asks: (fields.asks ?? []).map(level),
    oracle: null,
    observed_at: isoTimestamp(now),
  };
}

export function testOrder(fields: OrderFields, now: number = TEST_START_TIME): Order {
  return {
    trading_mode: 'paper',
    execution_account_id: null,
    request_id: null,
    client_order_id: null,
    route_id: TEST_ROUTE_ID,
    side: 'buy',
    type: 'limit',
    quantity: '1',
    price: null,
    trigger_price: null,
    time_in_force: 'GTC',
    post_only: false,
    reduce_only: false,
    status: 'OPEN',
    execution_stage: 'WORKING',
    received_at: isoTimestamp(now),
    updated_at: isoTimestamp(now),
    filled_quantity: '0',
    average_fill_price: null,
    last_event_sequence: null,
    provenance: null,
    error: null,
    ...fields,
  };
}

export function testFill(fields: FillFields, now: number = TEST_START_TIME): Fill {
  return {
    route_id: TEST_ROUTE_ID,
    side: 'buy',
    fee: '0',
    notional: '0',
    order_id: null,
    is_maker: true,
    occurred_at: isoTimestamp(now),
    ...fields,
  };
}

export function testPosition(fields: PositionFields, now: number = TEST_START_TIME): Position {
  return {
    position_id: `position-${fields.market_id}`,
    route_id: TEST_ROUTE_ID,
    margin_mode: 'isolated',
    observed_at: isoTimestamp(now),
    data_status: 'live',
    mark_price: null,
    position_value: null,
    unrealized_pnl: null,
    leverage: null,
    liquidation_price: null,
    ...fields,
  };
}

export function testAccount(fields: Partial<Account> = {}, now: number = TEST_START_TIME): Account {
  return {
    trading_mode: 'paper',
    settlement_asset: 'pUSDC',
    account_id: 'account-test',
    snapshot_version: 1,
    observed_at: isoTimestamp(now),
    total_equity: '10000',
    available: '10000',
    in_positions: '0',
    unrealized_pnl: '0',
    complete: true,
    data_status: 'live',
    ...fields,
  };
}
