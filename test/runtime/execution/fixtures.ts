/**
 * Builders for execution tests: complete, schema-valid wire objects from a few fields, stamped
 * intents, venue errors, and a temporary journal file per test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isoTimestamp, type VirtualClock } from '../../../src/core/clock.ts';
import { PaperbotError } from '../../../src/core/errors.ts';
import {
  type Account,
  errorStatus,
  type Fill,
  isErrorCode,
  type MutationStatus,
  type Order,
  type OrderStatusEvent,
  type Position,
  type SimulationResult,
} from '../../../src/protocol/index.ts';
import {
  intentRequestId,
  type OrderIntent,
  type StampedIntent,
} from '../../../src/runtime/intents.ts';
import { Journal } from '../../../src/runtime/journal/journal.ts';
import { prepareCommand } from '../../../src/signing/index.ts';

export const START = 1_704_067_200_000;
export const EPOCH = 'testepoch01';
export const STRATEGY = 'alpha';

export function stamp(intent: OrderIntent, sequence: number, emittedAt = START): StampedIntent {
  const requestId = intentRequestId(STRATEGY, EPOCH, sequence);
  const createsOrder =
    intent.kind === 'place' || intent.kind === 'amend' || intent.kind === 'close_position';
  return Object.freeze({
    strategyId: STRATEGY,
    sequence,
    requestId,
    clientOrderId: createsOrder ? requestId : null,
    intent: Object.freeze(intent),
    emittedAt,
  });
}

export const limitBuy = (quantity = '0.010', price = '42000'): OrderIntent => ({
  kind: 'place',
  marketId: 'BTC-PERP',
  side: 'buy',
  type: 'limit',
  quantity,
  price,
});

export function order(fields: Partial<Order> & { readonly order_id: string }): Order {
  return {
    trading_mode: 'paper',
    execution_account_id: 'acct-1',
    request_id: null,
    client_order_id: null,
    market_id: 'BTC-PERP',
    route_id: 'svc-paper',
    side: 'buy',
    type: 'limit',
    quantity: '0.01',
    price: '42000',
    trigger_price: null,
    time_in_force: 'GTC',
    post_only: false,
    reduce_only: false,
    status: 'PENDING',
    execution_stage: 'QUEUED',
    received_at: isoTimestamp(START),
    updated_at: isoTimestamp(START),
    filled_quantity: '0',
    average_fill_price: null,
    last_event_sequence: null,
    provenance: null,
    error: null,
    ...fields,
  };
}

export function fill(fields: Partial<Fill> & { readonly fill_id: string }): Fill {
  return {
    market_id: 'BTC-PERP',
    route_id: 'svc-paper',
    side: 'buy',
    quantity: '0.01',
    price: '42000',
    fee: '0.21',
    notional: '420',
    order_id: null,
    is_maker: true,
    occurred_at: isoTimestamp(START),
    ...fields,
  };
}

export function position(fields: Partial<Position> = {}): Position {
  return {
    position_id: 'position-btc-1',
    market_id: 'BTC-PERP',
    route_id: 'svc-paper',
    side: 'long',
    quantity: '0.02',
    entry_price: '42000',
    margin_mode: 'isolated',
    observed_at: isoTimestamp(START),
    data_status: 'live',
    mark_price: '42000',
    position_value: '840',
    unrealized_pnl: '0',
    leverage: '2',
    liquidation_price: null,
    ...fields,
  };
}

export function account(fields: Partial<Account> = {}): Account {
  return {
    trading_mode: 'paper',
    settlement_asset: 'pUSDC',
    account_id: 'acct-1',
    snapshot_version: 1,
    observed_at: isoTimestamp(START),
    total_equity: '10000',
    available: '9000',
    in_positions: '1000',
    unrealized_pnl: '0',
    complete: true,
    data_status: 'live',
    ...fields,
  };
}

export function simulation(
  decision = 'READY',
  issues: Record<string, unknown>[] = [],
): SimulationResult {
  return {
    market_id: 'BTC-PERP',
    route_id: 'svc-paper',
    decision,
    required_margin: '210',
    reference_price: '42000',
    maximum_quantity: null,
    issues,
    evaluated_at: isoTimestamp(START),
    expires_at: isoTimestamp(START + 5_000),
  };
}

export function mutationStatus(
  requestId: string,
  state: 'PENDING' | 'COMPLETED',
  result: Record<string, unknown> | null = null,
): MutationStatus {
  return {
    request_id: requestId,
    command_type: 'order.open',
    state,
    result,
    created_at: isoTimestamp(START),
    updated_at: isoTimestamp(START),
    completed_at: state === 'COMPLETED' ? isoTimestamp(START) : null,
  };
}

let eventCounter = 0;

export function orderEvent(
  orderId: string,
  from: Order['status'] | null,
  to: Order['status'],
  sequence: number,
): OrderStatusEvent {
  eventCounter += 1;
  return {
    version: 1,
    channel: 'orders',
    type: 'authoritative_status',
    sequence,
    event_id: `00000000-0000-4000-8000-${eventCounter.toString().padStart(12, '0')}`,
    occurred_at: isoTimestamp(START),
    data: {
      entity_type: 'order',
      entity_id: orderId,
      from_state: from,
      to_state: to,
    },
  };
}

/** A service error as a venue reports it (code, HTTP status, server request id). */
export function serviceError(code: string, httpStatus?: number): PaperbotError {
  const status = httpStatus ?? (isErrorCode(code) ? errorStatus[code] : 500);
  return new PaperbotError(code, `${code} (test)`, {
    details: { httpStatus: status, serverRequestId: 'srv-test' },
  });
}

export function transportError(
  code: 'REQUEST_TIMEOUT' | 'TRANSPORT_FAILURE' | 'MALFORMED_RESPONSE',
) {
  return new PaperbotError(code, `${code} (test)`);
}

/** A temporary directory holding a journal file, removed by `cleanup`. */
export function tempJournalPath(): {
  readonly path: string;
  readonly cleanup: () => void;
} {
  const directory = mkdtempSync(join(tmpdir(), 'paperbot-journal-'));
  return {
    path: join(directory, 'journal.sqlite'),
    cleanup: () => rmSync(directory, { recursive: true, force: true }),
  };
}

export function openJournal(
  path: string,
  clock: VirtualClock,
  durability: 'full' | 'normal' = 'full',
): Journal {
  return Journal.open(path, {
    now: () => clock.now(),
    epoch: EPOCH,
    durability,
  });
}

export const decode = (bytes: Uint8Array): unknown => JSON.parse(new TextDecoder().decode(bytes));

/** A prepared limit buy of 0.01 BTC-PERP at 42000 whose ids are both `requestId`. */
export function placeCommand(requestId: string) {
  return prepareCommand({
    endpoint: 'placeOrder',
    body: {
      request_id: requestId,
      client_order_id: requestId,
      market_id: 'BTC-PERP',
      side: 'buy',
      type: 'limit',
      quantity: '0.01',
      price: '42000',
      leverage: 1,
    },
  });
}
