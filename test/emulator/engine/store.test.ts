import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import type { Exchange } from '../../../src/emulator/engine/exchange.ts';
import { MemoryStore } from '../../../src/emulator/store/memory-store.ts';
import { SqliteStore } from '../../../src/emulator/store/sqlite-store.ts';
import type { OrderRecord, RecordSource, Store } from '../../../src/emulator/store/store.ts';
import type { PrivateEvent } from '../../../src/protocol/index.ts';
import { openHarness, request, START, testConfig } from './fixtures.ts';

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

  it('keeps only the newest events and fills of each account in a MemoryStore', () => {
    const store = new MemoryStore({ retainedEvents: 6, retainedFills: 2 });
    const harness = openHarness({ store });
    const { exchange } = harness;
    const maker = exchange.createAccount({ startingBalance: '1000000' });
    const taker = exchange.createAccount({ startingBalance: '1000000' });
    for (let index = 0; index < 4; index++) {
      exchange.placeOrder(maker, request({ side: 'sell', price: '64000', quantity: '0.01' }));
      harness.settle();
      exchange.placeOrder(
        taker,
        request({ price: '64000', quantity: '0.01', time_in_force: 'IOC' }),
      );
      harness.settle();
    }
    const delivered = harness.eventsOf(taker);
    const last = exchange.lastSequence(taker);
    expect(delivered).toHaveLength(last);
    // the six newest events, also when asked for older ones (the reader sees the gap)
    const page = exchange.listEvents(taker, 0, 100);
    expect(page.data.map((event) => event.sequence)).toEqual(
      [5, 4, 3, 2, 1, 0].map((back) => last - back),
    );
    expect(page.data).toEqual(delivered.slice(-6));
    expect(exchange.listEvents(taker, last - 2, 100).data).toEqual(delivered.slice(-2));
    // the two newest fills
    const fills = exchange.listFills(taker, { limit: 10 });
    const fillEvents = delivered.filter((event) => event.type === 'fill');
    expect(fillEvents).toHaveLength(4);
    expect(fills.data).toEqual(
      fillEvents
        .slice(-2)
        .reverse()
        .map((event) => event.data),
    );
    expect(fills.page.has_more).toBe(false);
    expect(() => new MemoryStore({ retainedEvents: 0 })).toThrow(RangeError);
  });

  it('restores orders the MemoryStore was given in any order, newest object per ordinal', () => {
    const store = new MemoryStore();
    const source = (ordinal: number, status: OrderRecord['status']): RecordSource<OrderRecord> => ({
      key: `order-${ordinal}`,
      ordinal,
      storeMark: null,
      record: () => ({ ordinal, status }) as OrderRecord,
    });
    const commit = (orders: RecordSource<OrderRecord>[]) =>
      store.commit({
        accounts: [],
        orders,
        positions: [],
        closedPositions: [],
        fills: [],
        events: [],
        releasedOrders: [],
        nextIdentifier: 100,
      });
    const ordinals = [50, 3, 70, 10, 60, ...Array.from({ length: 30 }, (_, index) => 80 + index)];
    for (const ordinal of ordinals) commit([source(ordinal, 'OPEN')]);
    // an early order saved again (far from the end), one near the end, and a new early one
    commit([source(10, 'FILLED'), source(105, 'CANCELLED'), source(1, 'PENDING')]);
    const restored = store.load().orders;
    expect(restored.map((record) => record.ordinal)).toEqual(
      [...ordinals, 1].sort((a, b) => a - b),
    );
    expect(restored.find((record) => record.ordinal === 10)?.status).toBe('FILLED');
    expect(restored.find((record) => record.ordinal === 105)?.status).toBe('CANCELLED');
    expect(restored.filter((record) => record.status !== 'OPEN')).toHaveLength(3);
  });
});

describe('lazily built events', () => {
  /** Trades, flips, a cross position, a liquidation and a cancel-all-after, with a listener. */
  function busyScenario(store: Store) {
    const clock = new VirtualClock(START);
    const harness = openHarness({ store, clock, config: testConfig() });
    const { exchange } = harness;
    const maker = exchange.createAccount({ startingBalance: '100000000' });
    const trader = exchange.createAccount({ startingBalance: '20000' });
    const cross = exchange.createAccount({ startingBalance: '200' });
    const trade = (
      account: string,
      side: 'buy' | 'sell',
      price: string,
      quantity: string,
      mode: 'isolated' | 'cross' = 'isolated',
      leverage = 10,
    ) => {
      exchange.placeOrder(
        maker,
        request({ side: side === 'buy' ? 'sell' : 'buy', price, quantity, margin_mode: mode }),
      );
      harness.settle();
      exchange.placeOrder(
        account,
        request({ side, price, quantity, margin_mode: mode, leverage, time_in_force: 'IOC' }),
      );
      harness.settle();
    };
    trade(trader, 'buy', '64000', '0.1', 'isolated', 50);
    trade(trader, 'buy', '64500', '0.05', 'isolated', 50);
    trade(trader, 'sell', '65000', '0.2', 'isolated', 50); // flips short
    trade(trader, 'buy', '64800', '0.05', 'isolated', 50);
    trade(cross, 'buy', '64000', '0.02', 'cross');
    exchange.setCancelAllAfter(trader, 'dead-man', 5);
    exchange.placeOrder(trader, request({ price: '60000', quantity: '0.01' }));
    harness.settle();
    clock.advanceBy(5_000);
    exchange.setReferencePrices('BTC-PERP', 2 * 54000, 2 * 54000); // liquidates the cross account
    exchange.setReferencePrices('BTC-PERP', 2 * 70000, 2 * 70000); // moves the short's PnL
    return { harness, accounts: [maker, trader, cross] };
  }

  it('reads back exactly the events and fills delivered when they happened', () => {
    const { harness, accounts } = busyScenario(new MemoryStore());
    const { exchange } = harness;
    const types = new Set(harness.events.map((entry) => entry.event.type));
    expect([...types].sort()).toEqual([
      'account',
      'authoritative_status',
      'cancel_all_after.triggered',
      'fill',
      'liquidation',
      'position',
    ]);
    for (const account of accounts) {
      const delivered = harness.eventsOf(account);
      const read: PrivateEvent[] = [];
      let after = 0;
      for (;;) {
        const page = exchange.listEvents(account, after, 7);
        read.push(...page.data);
        if (!page.has_more) break;
        after = page.next_after_sequence;
      }
      expect(read).toEqual(delivered);
      const fills = exchange.listFills(account, { limit: 200 }).data;
      expect(fills).toEqual(
        delivered
          .filter((event) => event.type === 'fill')
          .map((event) => event.data)
          .reverse(),
      );
    }
  });

  it('stores the same events in a SqliteStore as it delivers', () => {
    const directory = mkdtempSync(join(tmpdir(), 'paperbot-events-'));
    directories.push(directory);
    const store = new SqliteStore(join(directory, 'emulator.sqlite'));
    const { harness, accounts } = busyScenario(store);
    for (const account of accounts) {
      expect(harness.exchange.listEvents(account, 0, 200).data).toEqual(harness.eventsOf(account));
    }
    harness.exchange.stop();
    store.close();
  });
});
