/**
 * The ledger stamps a request's completion when the order events say so: a placement when its
 * order leaves PENDING, a cancel when its order is terminal, each with the instant of the event
 * that completed it, also when two requests wait on one order.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../src/emulator/index.ts';
import { IdempotencyLedger } from '../../../src/emulator/service/idempotency.ts';
import type { OrderStatus, PrivateEvent } from '../../../src/protocol/index.ts';

const T0 = Date.UTC(2025, 0, 1);

function statusEvent(sequence: number, orderId: string, to: OrderStatus, at: number): PrivateEvent {
  return {
    version: 1,
    channel: 'orders',
    sequence,
    event_id: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    type: 'authoritative_status',
    occurred_at: new Date(at).toISOString(),
    data: {
      entity_type: 'execution_intent',
      entity_id: orderId,
      from_state: 'PENDING',
      to_state: to,
    },
  } as PrivateEvent;
}

function record(
  requestId: string,
  commandType: 'order.open' | 'order.cancel',
  status: OrderStatus,
) {
  return {
    version: 1 as const,
    account_id: 'a-1',
    request_id: requestId,
    endpoint: commandType === 'order.open' ? 'placeOrder' : 'cancelOrder',
    command_type: commandType,
    fingerprint: 'f'.repeat(64),
    status: 202,
    body: { order_id: 'o-1', status },
    created_at: T0,
    completed_at: null,
  };
}

describe('the idempotency ledger', () => {
  it('completes each request waiting on one order when its own criterion is met', () => {
    const store = new MemoryStore();
    const statuses = new Map<string, OrderStatus>([['o-1', 'PENDING']]);
    const ledger = new IdempotencyLedger(store, {
      orderStatus: (_account, orderId) => statuses.get(orderId) ?? null,
    });
    ledger.record(record('place-1', 'order.open', 'PENDING'));
    ledger.record(record('cancel-1', 'order.cancel', 'PENDING'));
    expect(ledger.find('a-1', 'place-1')?.completed_at).toBeNull();

    // Another account's event and another order's event change nothing.
    ledger.observe('a-2', statusEvent(1, 'o-1', 'OPEN', T0 + 5));
    ledger.observe('a-1', statusEvent(2, 'o-2', 'OPEN', T0 + 5));
    expect(ledger.find('a-1', 'place-1')?.completed_at).toBeNull();

    statuses.set('o-1', 'OPEN');
    ledger.observe('a-1', statusEvent(3, 'o-1', 'OPEN', T0 + 10));
    expect(ledger.find('a-1', 'place-1')?.completed_at).toBe(T0 + 10);
    expect(ledger.find('a-1', 'cancel-1')?.completed_at).toBeNull();
    expect(ledger.status('a-1', 'cancel-1', T0 + 11).state).toBe('PENDING');

    statuses.set('o-1', 'CANCELLED');
    ledger.observe('a-1', statusEvent(4, 'o-1', 'CANCELLED', T0 + 20));
    expect(ledger.find('a-1', 'cancel-1')?.completed_at).toBe(T0 + 20);
    expect(ledger.find('a-1', 'place-1')?.completed_at).toBe(T0 + 10);
    expect(ledger.status('a-1', 'cancel-1', T0 + 30)).toMatchObject({
      state: 'COMPLETED',
      completed_at: new Date(T0 + 20).toISOString(),
    });

    // A request recorded later on the same order starts watching anew.
    statuses.set('o-1', 'PENDING');
    ledger.record(record('place-2', 'order.open', 'PENDING'));
    statuses.set('o-1', 'OPEN');
    ledger.observe('a-1', statusEvent(5, 'o-1', 'OPEN', T0 + 40));
    expect(ledger.find('a-1', 'place-2')?.completed_at).toBe(T0 + 40);
  });

  it('stamps an outcome complete at once when its order is already past its criterion', () => {
    const store = new MemoryStore();
    const ledger = new IdempotencyLedger(store, { orderStatus: () => 'CANCELLED' });
    ledger.record(record('cancel-2', 'order.cancel', 'CANCELLED'));
    expect(ledger.find('a-1', 'cancel-2')?.completed_at).toBe(T0);
  });
});
