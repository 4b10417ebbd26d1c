/**
 * A mutation's effect and its idempotency record are stored together: if the record cannot be
 * written, the engine's commit is not kept either, so a restarted service never holds an order
 * whose request id it forgot (a retry of that id would place it again).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { Exchange } from '../../../src/emulator/engine/exchange.ts';
import { IdempotencyLedger } from '../../../src/emulator/service/idempotency.ts';
import { SqliteStore } from '../../../src/emulator/store/sqlite-store.ts';
import type { Order } from '../../../src/protocol/index.ts';
import { request, testConfig } from '../engine/fixtures.ts';

const START = Date.UTC(2025, 0, 6);

/** A store whose disk refuses the idempotency write, as a crash at that moment would. */
class RecordRefusingStore extends SqliteStore {
  override saveIdempotency(): void {
    throw new Error('disk full');
  }
}

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'paperbot-atomic-'));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

function open(store: SqliteStore) {
  const clock = new VirtualClock(START);
  const exchange = Exchange.open({ clock, config: testConfig(), store });
  const ledger = new IdempotencyLedger(store, {
    orderStatus: (accountId, orderId) => exchange.getOrder(accountId, orderId).status,
  });
  return {
    exchange,
    ledger,
    close: () => {
      exchange.stop();
      store.close();
    },
  };
}

/** Places an order and records its outcome, as the server does for POST /v1/orders. */
function placeAndRecord(
  venue: ReturnType<typeof open>,
  accountId: string,
  clientOrderId: string,
): void {
  const order = request({ client_order_id: clientOrderId, request_id: `req-${clientOrderId}` });
  venue.ledger.atomically(() => {
    const placed: Order = venue.exchange.placeOrder(accountId, order);
    venue.ledger.record({
      version: 1,
      account_id: accountId,
      request_id: order.request_id,
      endpoint: 'placeOrder',
      command_type: 'order.open',
      fingerprint: 'fingerprint',
      status: 202,
      body: placed,
      created_at: START,
      completed_at: null,
    });
  });
}

describe('a mutation and its idempotency record', () => {
  it('are kept together', () => {
    const path = join(folder, 'emulator.sqlite');
    const first = open(new SqliteStore(path));
    const accountId = first.exchange.createAccount();
    placeAndRecord(first, accountId, 'kept-1');
    first.close();

    const reopened = open(new SqliteStore(path));
    expect(reopened.exchange.getOrderByClientId(accountId, 'kept-1').client_order_id).toBe(
      'kept-1',
    );
    expect(reopened.ledger.find(accountId, 'req-kept-1')?.status).toBe(202);
    reopened.close();
  });

  it('are both lost when the record cannot be written', () => {
    const path = join(folder, 'emulator.sqlite');
    const first = open(new SqliteStore(path));
    const accountId = first.exchange.createAccount();
    first.close();

    const failing = open(new RecordRefusingStore(path));
    expect(() => placeAndRecord(failing, accountId, 'lost-1')).toThrow('disk full');
    failing.close();

    const reopened = open(new SqliteStore(path));
    expect(() => reopened.exchange.getOrderByClientId(accountId, 'lost-1')).toThrow();
    expect(reopened.ledger.find(accountId, 'req-lost-1')).toBeUndefined();
    reopened.close();
  });
});
