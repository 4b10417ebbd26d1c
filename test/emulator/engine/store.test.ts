import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import type { Exchange } from '../../../src/emulator/engine/exchange.ts';
import { MemoryStore } from '../../../src/emulator/store/memory-store.ts';
import { SqliteStore } from '../../../src/emulator/store/sqlite-store.ts';
import type { Store } from '../../../src/emulator/store/store.ts';
import { openHarness, request, START } from './fixtures.ts';

const directories: string[] = [];

afterEach(() => {
  for (const directory of directories.splice(0))
    rmSync(directory, { recursive: true, force: true });
});

function snapshot(exchange: Exchange, accounts: string[]) {
  return accounts.map((account) => ({
    account: exchange.getAccount(account),
    positions: exchange.listPositions(account, { limit: 200 }),
    orders: exchange.listOrders(account, { limit: 200 }),
    fills: exchange.listFills(account, { limit: 200 }),
    events: exchange.listEvents(account, 0, 200),
    sequence: exchange.lastSequence(account),
    book: exchange.getBook('BTC-PERP', 20),
  }));
}

/** Builds some history, restarts on `reopen()`, and checks that everything came back. */
function restartScenario(open: () => Store, reopen: (previous: Store) => Store) {
  const clock = new VirtualClock(START);
  const store = open();
  const first = openHarness({ store, clock });
  const exchange = first.exchange;
  const maker = exchange.createAccount({ startingBalance: '1000000' });
  const trader = exchange.createAccount();
  const early = exchange.placeOrder(maker, request({ price: '63990', quantity: '0.2' }));
  clock.advanceBy(1);
  const late = exchange.placeOrder(maker, request({ price: '63990', quantity: '0.2' }));
  exchange.placeOrder(maker, request({ side: 'sell', price: '64000', quantity: '0.5' }));
  first.settle();
  exchange.placeOrder(trader, request({ price: '64000', quantity: '0.1' }));
  first.settle();
  exchange.setCancelAllAfter(trader, 'dead-man-1', 600);
  const pending = exchange.placeOrder(trader, request({ price: '60000', quantity: '0.01' }));
  store.saveKey('key-1', { key_id: 'key-1', account_id: trader, scopes: ['orders:write'] });
  store.saveIdempotency(trader, 'request-x', { state: 'COMPLETED', body_hash: 'abc' });
  const before = snapshot(exchange, [maker, trader]);
  exchange.stop();
  store.close();

  const reopened = reopen(store);
  const second = openHarness({ store: reopened, clock });
  const restored = second.exchange;
  expect(snapshot(restored, [maker, trader])).toEqual(before);
  expect(reopened.loadKeys()).toEqual([
    { key_id: 'key-1', account_id: trader, scopes: ['orders:write'] },
  ]);
  expect(reopened.loadIdempotency(trader, 'request-x')).toEqual({
    state: 'COMPLETED',
    body_hash: 'abc',
  });
  // the PENDING order is submitted after the restart
  second.settle();
  expect(restored.getOrder(trader, pending.order_id).status).toBe('OPEN');
  // resting orders kept their time priority
  const seller = restored.createAccount({ startingBalance: '1000000' });
  restored.placeOrder(seller, request({ side: 'sell', price: '63990', quantity: '0.3' }));
  second.settle();
  expect(restored.getOrder(maker, early.order_id)).toMatchObject({ status: 'FILLED' });
  expect(restored.getOrder(maker, late.order_id)).toMatchObject({
    status: 'PARTIALLY_FILLED',
    filled_quantity: '0.1',
  });
  // sequences go on from where they were
  const newEvents = second.eventsOf(trader);
  expect(newEvents[0]!.sequence).toBe(before[1]!.sequence + 1);
  // the cancel-all-after deadline survived too
  clock.advanceBy(600_000);
  expect(restored.getOrder(trader, pending.order_id).status).toBe('CANCELLED');
  restored.stop();
  reopened.close();
}

describe('persistence', () => {
  it('restores everything from a SqliteStore file after a restart', () => {
    const directory = mkdtempSync(join(tmpdir(), 'paperbot-store-'));
    directories.push(directory);
    const path = join(directory, 'emulator.sqlite');
    restartScenario(
      () => new SqliteStore(path),
      () => new SqliteStore(path),
    );
  });

  it('restores everything from a MemoryStore handed to a new exchange', () => {
    restartScenario(
      () => new MemoryStore(),
      (previous) => {
        (previous as MemoryStore).reopen();
        return previous;
      },
    );
  });

  it('pages events and fills from the store', () => {
    const harness = openHarness();
    const { exchange } = harness;
    const account = exchange.createAccount();
    for (let index = 0; index < 7; index++) {
      exchange.placeOrder(account, request({ price: `${60000 + index}`, quantity: '0.01' }));
    }
    const first = exchange.listEvents(account, 0, 5);
    expect(first.data.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(first).toMatchObject({ has_more: true, next_after_sequence: 5 });
    const rest = exchange.listEvents(account, first.next_after_sequence, 5);
    expect(rest.data.map((event) => event.sequence)).toEqual([6, 7]);
    expect(rest).toMatchObject({ has_more: false, next_after_sequence: 7 });
    expect(exchange.listEvents(account, 7, 5)).toEqual({
      data: [],
      has_more: false,
      next_after_sequence: 7,
    });
  });
});
