/** Valid wire examples, one per resource, shaped as the interface describes them. */
import type { z } from 'zod';
import { type IssueLocation, type ServiceIssue, validateWire } from '../../src/protocol/index.ts';

export const TIME = '2025-03-01T12:00:00.000Z';

export function market(): Record<string, unknown> {
  return {
    market_id: 'BTC-USD',
    display_name: 'Bitcoin / USD',
    base_asset: 'BTC',
    quote_asset: 'USD',
    category: 'crypto',
    status: 'active',
    routes: ['svc-paper'],
    preferred_route_id: 'svc-paper',
    price_tick: '0.5',
    quantity_step: '0.001',
    minimum_quantity: '0.001',
    minimum_notional: '10',
    maximum_leverage: 20,
    margin_modes: ['isolated', 'cross'],
    order_types: ['market', 'limit'],
    mark_price: '65000.5',
    index_price: '65000',
    last_price: null,
    funding_rate: '0.0001',
    next_funding_time: '2025-03-01T16:00:00Z',
    volume_24h: null,
    open_interest: null,
    observed_at: TIME,
    data_status: 'live',
  };
}

export function route(): Record<string, unknown> {
  return {
    route_id: 'svc-paper',
    provider: 'svc',
    environment: 'practice',
    network: 'l1',
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
    observed_at: TIME,
  };
}

export function book(): Record<string, unknown> {
  return {
    market_id: 'BTC-USD',
    route_id: 'svc-paper',
    market_structure: 'order_book',
    sequence: 42,
    checksum: null,
    bids: [{ price: '64999.5', quantity: '1.2', order_count: 3 }],
    asks: [{ price: '65000.5', quantity: '0.4' }],
    oracle: null,
    observed_at: TIME,
  };
}

export function publicTrade(): Record<string, unknown> {
  return {
    trade_id: 't-1',
    market_id: 'BTC-USD',
    route_id: 'svc-paper',
    price: '65000',
    quantity: '0.01',
    side: 'buy',
    occurred_at: TIME,
  };
}

export function candle(): Record<string, unknown> {
  return {
    market_id: 'BTC-USD',
    route_id: 'svc-paper',
    interval: '1h',
    open_time: '2025-03-01T11:00:00Z',
    open: '64000',
    high: '65500',
    low: '63900.5',
    close: '65000',
    volume: '12.5',
  };
}

export function account(): Record<string, unknown> {
  return {
    trading_mode: 'paper',
    settlement_asset: 'pUSDC',
    account_id: 'acct-1',
    snapshot_version: 7,
    observed_at: TIME,
    total_equity: '10000',
    available: '9000',
    in_positions: '1000',
    unrealized_pnl: '-12.5',
    complete: true,
    data_status: 'live',
  };
}

export function venueAccount(): Record<string, unknown> {
  return {
    account_id: 'acct-1',
    route_id: 'svc-paper',
    settlement_asset: 'pUSDC',
    capital_location: 'native',
    account_value: '10000',
    available: '9000',
    in_positions: '1000',
    unrealized_pnl: '0',
    observed_at: null,
    source: 'l1_reader',
    data_status: 'live',
  };
}

export function position(): Record<string, unknown> {
  return {
    position_id: 'pos-00000001',
    market_id: 'BTC-USD',
    route_id: 'svc-paper',
    side: 'short',
    quantity: '0.5',
    entry_price: '65000',
    margin_mode: 'isolated',
    observed_at: TIME,
    data_status: 'live',
    mark_price: '64900',
    position_value: '32450',
    unrealized_pnl: '50',
    leverage: '5',
    liquidation_price: null,
  };
}

export function order(): Record<string, unknown> {
  return {
    trading_mode: 'paper',
    request_id: 'req-00000001',
    order_id: 'ord-1',
    client_order_id: 'client-1',
    market_id: 'BTC-USD',
    route_id: 'svc-paper',
    side: 'buy',
    type: 'market',
    quantity: '0.01',
    price: null,
    trigger_price: null,
    time_in_force: 'GTC',
    post_only: false,
    reduce_only: false,
    status: 'PENDING',
    execution_stage: 'QUEUED',
    received_at: TIME,
    updated_at: TIME,
    filled_quantity: '0',
    average_fill_price: null,
    last_event_sequence: null,
  };
}

export function fill(): Record<string, unknown> {
  return {
    fill_id: 'fill-1',
    market_id: 'BTC-USD',
    route_id: 'svc-paper',
    side: 'buy',
    quantity: '0.01',
    price: '65000',
    fee: '0.325',
    notional: '650',
    order_id: 'ord-1',
    is_maker: false,
    occurred_at: TIME,
  };
}

export function simulationResult(): Record<string, unknown> {
  return {
    market_id: 'BTC-USD',
    route_id: 'svc-paper',
    decision: 'READY',
    required_margin: '130',
    reference_price: '65000',
    maximum_quantity: '1.5',
    issues: [],
    evaluated_at: TIME,
    expires_at: '2025-03-01T12:00:05.000Z',
  };
}

export function mutationStatus(): Record<string, unknown> {
  return {
    request_id: 'req-00000001',
    command_type: 'order.open',
    state: 'COMPLETED',
    result: { order_id: 'ord-1', status: 'PENDING' },
    created_at: TIME,
    updated_at: TIME,
    completed_at: TIME,
  };
}

/** A valid market order body. */
export function marketOrder(): Record<string, unknown> {
  return {
    request_id: 'req-00000001',
    client_order_id: 'client-1',
    market_id: 'BTC-USD',
    side: 'buy',
    type: 'market',
    quantity: '0.01',
    leverage: 5,
    max_slippage_percent: '0.5',
  };
}

/** A valid limit order body. */
export function limitOrder(): Record<string, unknown> {
  return {
    request_id: 'req-00000002',
    client_order_id: 'client-2',
    market_id: 'BTC-USD',
    side: 'sell',
    type: 'limit',
    quantity: 1,
    leverage: 1,
    price: '65000.5',
  };
}

export function uuid(index: number): string {
  return `6f1c2a3b-4d5e-4f60-8a7b-${index.toString(16).padStart(12, '0')}`;
}

export function orderStatusEvent(sequence: number): Record<string, unknown> {
  return {
    version: 1,
    channel: 'orders',
    sequence,
    event_id: uuid(sequence),
    type: 'authoritative_status',
    occurred_at: TIME,
    data: {
      entity_type: 'execution_intent',
      entity_id: 'ord-1',
      from_state: 'SUBMITTED',
      to_state: 'OPEN',
    },
  };
}

/** A private event on `channel` of `type` carrying `data`, its envelope as the emulator sends. */
export function privateEvent(
  channel: string,
  type: string,
  sequence: number,
  data: Record<string, unknown>,
): Record<string, unknown> {
  return {
    version: 1,
    channel,
    sequence,
    event_id: uuid(sequence),
    type,
    occurred_at: TIME,
    data,
  };
}

/** One valid event of every known type but the order event, at sequences from `first`. */
export function payloadEvents(first = 1): Record<string, unknown>[] {
  return [
    privateEvent('fills', 'fill', first, fill()),
    privateEvent('positions', 'position', first + 1, position()),
    privateEvent('account', 'account', first + 2, account()),
    privateEvent('risk', 'cancel_all_after.triggered', first + 3, {
      deadline_at: TIME,
      triggered_at: TIME,
      cancelled_order_ids: ['ord-1'],
    }),
    privateEvent('risk', 'liquidation', first + 4, {
      position_id: 'pos-00000001',
      market_id: 'BTC-USD',
      price: '70000',
      quantity: '0.5',
    }),
  ];
}

/** `event` with a field of a real deployment's own in its envelope and in its data. */
export function withExtraFields(event: Record<string, unknown>): Record<string, unknown> {
  return {
    ...event,
    shard: 'eu-1',
    data: { ...(event.data as Record<string, unknown>), venue_note: { tier: 2, tags: ['a'] } },
  };
}

/** The issues a wire validation reports, or [] when the input is valid. */
export function issuesOf(
  schema: z.ZodType,
  input: unknown,
  location: IssueLocation = 'body',
): ServiceIssue[] {
  const result = validateWire(schema, input, location);
  return result.success ? [] : result.issues;
}

/** `type` and `loc` of each issue: what callers may branch on. */
export function shapesOf(
  schema: z.ZodType,
  input: unknown,
  location: IssueLocation = 'body',
): Array<[string, string]> {
  return issuesOf(schema, input, location).map((issue) => [issue.type, issue.loc.join('.')]);
}

export function repeat(count: number, character = 'a'): string {
  return character.repeat(count);
}
