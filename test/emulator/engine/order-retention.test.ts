import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Exchange } from '../../../src/emulator/engine/exchange.ts';
import { MemoryStore } from '../../../src/emulator/store/memory-store.ts';
import { SqliteStore } from '../../../src/emulator/store/sqlite-store.ts';
import type { Store } from '../../../src/emulator/store/store.ts';
import type { Order, OrderStatus } from '../../../src/protocol/index.ts';
import type { marketOrder as market } from './fixtures.ts';
import {
  request as order,
  openHarness,
  provideLiquidity,
  request,
  testConfig,
} from './fixtures.ts';

const directories: string[] = [];

afterEach(() => {
  for (const directory of directories.splice(0))
    rmSync(directory, { recursive: true, force: true });
});

function sqlitePath(): string {
  const directory = mkdtempSync(join(tmpdir(), 'paperbot-retention-'));
  directories.push(directory);
  return join(directory, 'emulator.sqlite');
}

/** Counts reads of released orders from the archive. */
class CountingSqliteStore extends SqliteStore {
  archiveReads = 0;

  override findOrder(accountId: string, orderId: string) {
    this.archiveReads++;
    return super.findOrder(accountId, orderId);
  }
}

/**
 * One account's orders in every end state, oldest first: an order that stays OPEN throughout,
 * a filled limit order, a filled market order, an amended order and its cancelled replacement
 * (same client id), a post-only rejection, a partial fill then cancel, and cancelled orders.
 */
function scenario(store: Store) {
  const harness = openHarness({ store });
  const { exchange } = harness;
  provideLiquidity(harness, [
    { side: 'sell', price: '64000', quantity: '0.3' },
    { side: 'sell', price: '64010', quantity: '0.3' },
  ]);
  const account = exchange.createAccount({ startingBalance: '1000000' });
  // The same ids in every run of the scenario (the fixture's counter runs on).
  let count = 0;
  const request = (fields: Parameters<typeof order>[0]) => {
    count++;
    return order({ request_id: `r-${count}`, client_order_id: `c-${count}`, ...fields });
  };
  const marketOrder = (fields: Parameters<typeof market>[0]) =>
    request({ type: 'market', max_slippage_percent: '1', price: undefined, ...fields });
  const orders: Order[] = [];
  const keep = (order: Order) => {
    orders.push(order);
    harness.settle();
    return order;
  };
  keep(exchange.placeOrder(account, request({ price: '60000', quantity: '0.01' })));
  keep(
    exchange.placeOrder(
      account,
      request({ price: '64000', quantity: '0.1', time_in_force: 'IOC' }),
    ),
  );
  keep(exchange.placeOrder(account, marketOrder({ quantity: '0.05' })));
  const amended = keep(
    exchange.placeOrder(
      account,
      request({ price: '59000', quantity: '0.02', client_order_id: 'amend-me' }),
    ),
  );
  const replacement = keep(
    exchange.amendOrder(account, amended.order_id, { request_id: 'amend-1', quantity: '0.03' }),
  );
  exchange.cancelOrder(account, replacement.order_id, 'cancel-replacement');
  keep(
    exchange.placeOrder(
      account,
      request({ price: '64010', quantity: '0.01', post_only: true, client_order_id: 'post-only' }),
    ),
  );
  keep(
    exchange.placeOrder(
      account,
      request({ price: '64010', quantity: '0.5', time_in_force: 'IOC' }),
    ),
  );
  for (let index = 0; index < 4; index++) {
    const order = keep(
      exchange.placeOrder(account, request({ price: `${58000 + index}`, quantity: '0.01' })),
    );
    exchange.cancelOrder(account, order.order_id, `cancel-${index}`);
  }
  return { harness, exchange, account, orders };
}

function attempt<T>(read: () => T): T | string {
  try {
    return read();
  } catch (error) {
    return (error as { code?: string }).code ?? 'unknown';
  }
}

/** Every order read the interface offers, for every order of the scenario. */
function readAll(exchange: Exchange, account: string, orders: readonly Order[]) {
  const pages = (query: { market_id?: string; status?: OrderStatus }, limit: number) => {
    const all: Order[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = exchange.listOrders(account, { limit, cursor, ...query });
      all.push(page.data);
      if (page.page.next_cursor === null) return all;
      cursor = page.page.next_cursor;
    }
  };
  return {
    byId: orders.map((order) => attempt(() => exchange.getOrder(account, order.order_id))),
    byClientId: orders.map((order) =>
      attempt(() => exchange.getOrderByClientId(account, order.client_order_id ?? '')),
    ),
    pagesOfTwo: pages({}, 2),
    pagesOfHundred: pages({}, 100),
    cancelled: pages({ status: 'CANCELLED' }, 3),
    filled: pages({ status: 'FILLED', market_id: 'BTC-PERP' }, 1),
    otherMarket: pages({ market_id: 'ETH-PERP' }, 5),
  };
}

describe('orders kept in memory', () => {
  it('keeps the active orders and the newest terminal ones; a MemoryStore forgets the rest', () => {
    const store = new MemoryStore({ retainedOrders: 3 });
    const { harness, exchange, account, orders } = scenario(store);
    const [resting, ...ended] = orders;
    expect(exchange.getOrder(account, resting!.order_id).status).toBe('OPEN');
    // the three that ended last are kept, older ones are gone
    const kept = ended.slice(-3);
    for (const order of kept) {
      expect(exchange.getOrder(account, order.order_id).status).toBe('CANCELLED');
    }
    // what a replay reads of an order held in memory: the wire order's figures, in units
    expect(exchange.heldOrder(account, resting!.order_id)).toMatchObject({
      marketId: resting!.market_id,
      side: resting!.side === 'buy' ? 0 : 1,
      priceTicks: Number(resting!.price) * 2,
      quantitySteps: Number(resting!.quantity) * 1000,
      filledSteps: 0,
      clientOrderId: resting!.client_order_id,
      requestId: resting!.request_id,
    });
    expect(exchange.heldOrder(account, kept[0]!.order_id)?.clientOrderId).toBe(
      kept[0]!.client_order_id,
    );
    for (const order of ended.slice(0, -3)) {
      expect(exchange.heldOrder(account, order.order_id)).toBeUndefined();
      expect(attempt(() => exchange.getOrder(account, order.order_id))).toBe('ORDER_NOT_FOUND');
      expect(attempt(() => exchange.cancelOrder(account, order.order_id, 'late'))).toBe(
        'ORDER_NOT_FOUND',
      );
    }
    expect(attempt(() => exchange.getOrderByClientId(account, 'post-only'))).toBe(
      'ORDER_NOT_FOUND',
    );
    expect(
      exchange.listOrders(account, { limit: 100 }).data.map((order) => order.order_id),
    ).toEqual(
      [...kept]
        .reverse()
        .concat(resting!)
        .map((order) => order.order_id),
    );
    // a forgotten order's client_order_id may be used again, a kept one's may not
    expect(
      attempt(() =>
        exchange.placeOrder(account, request({ client_order_id: kept[0]!.client_order_id ?? '' })),
      ),
    ).toBe('INVALID_REQUEST');
    const reused = exchange.placeOrder(
      account,
      request({ price: '50000', quantity: '0.01', client_order_id: 'post-only' }),
    );
    expect(exchange.getOrderByClientId(account, 'post-only').order_id).toBe(reused.order_id);
    harness.settle();

    // memory stays bounded however many orders end; a new exchange on the store sees the same
    for (let index = 0; index < 200; index++) {
      const order = exchange.placeOrder(account, request({ price: '50000', quantity: '0.01' }));
      exchange.cancelOrder(account, order.order_id, `bulk-${index}`);
    }
    const accountOrders = store.load().orders.filter((order) => order.account_id === account);
    expect(accountOrders.filter((order) => order.status === 'CANCELLED')).toHaveLength(3);
    expect(accountOrders).toHaveLength(5); // + the OPEN order and the reused client id's
    const listed = exchange.listOrders(account, { limit: 100 });
    exchange.stop();
    const reopened = openHarness({ store, clock: harness.clock });
    expect(reopened.exchange.listOrders(account, { limit: 100 })).toEqual(listed);
  });

  it('reads released orders from a SqliteStore exactly as if they were still in memory', () => {
    const reference = scenario(new MemoryStore());
    const expected = readAll(reference.exchange, reference.account, reference.orders);
    expect(expected.byId.every((order) => typeof order !== 'string')).toBe(true);

    const store = new CountingSqliteStore(sqlitePath(), { retainedOrders: 2 });
    const { exchange, account, orders } = scenario(store);
    expect(readAll(exchange, account, orders)).toEqual(expected);
    // they were released: read from the database
    expect(store.archiveReads).toBeGreaterThanOrEqual(orders.length - 3);

    const released = orders[1]!;
    expect(exchange.cancelOrder(account, released.order_id, 'late')).toEqual(
      reference.exchange.cancelOrder(reference.account, released.order_id, 'late'),
    );
    expect(() =>
      exchange.amendOrder(account, released.order_id, { request_id: 'late-amend', quantity: '1' }),
    ).toThrow(/FILLED and can no longer be amended/);
    // client_order_id stays unique for the life of the account
    expect(
      attempt(() => exchange.placeOrder(account, request({ client_order_id: 'post-only' }))),
    ).toBe('INVALID_REQUEST');
    expect(
      attempt(() => exchange.placeOrder(account, request({ client_order_id: 'amend-me' }))),
    ).toBe('INVALID_REQUEST');
    exchange.stop();
    store.close();
  });

  it('restores from a SqliteStore with the released orders still readable', () => {
    const path = sqlitePath();
    const first = new SqliteStore(path, { retainedOrders: 2 });
    const { harness, exchange, account, orders } = scenario(first);
    const before = readAll(exchange, account, orders);
    exchange.stop();
    first.close();
    const second = new SqliteStore(path, { retainedOrders: 2 });
    const restored = openHarness({ store: second, clock: harness.clock });
    expect(readAll(restored.exchange, account, orders)).toEqual(before);
    restored.exchange.stop();
    second.close();
  });
});

describe('orders found by id', () => {
  it('finds orders restored from a store written with another seed', () => {
    const store = new MemoryStore();
    const first = openHarness({ store, config: testConfig({ seed: 1 }) });
    const account = first.exchange.createAccount();
    const old = first.exchange.placeOrder(account, request({ price: '60000', quantity: '0.01' }));
    first.settle();
    first.exchange.stop();
    const second = openHarness({ store, clock: first.clock, config: testConfig({ seed: 2 }) });
    const { exchange } = second;
    const fresh = exchange.placeOrder(account, request({ price: '60001', quantity: '0.01' }));
    second.settle();
    // the old id is not the UUID of its ordinal under the new seed, but it is still found
    expect(exchange.getOrder(account, old.order_id)).toMatchObject({ status: 'OPEN' });
    expect(exchange.getOrder(account, fresh.order_id)).toMatchObject({ status: 'OPEN' });
    expect(exchange.cancelOrder(account, old.order_id, 'cancel-old').status).toBe('CANCELLED');
    expect(attempt(() => exchange.getOrder(account, `${old.order_id.slice(0, 35)}0`))).toBe(
      'ORDER_NOT_FOUND',
    );
  });
});

describe('events kept by the MemoryStore', () => {
  it('reads back events whose money does not fit its packed columns', () => {
    const harness = openHarness();
    const { exchange } = harness;
    // 10^25 pUSDC is 10^43 units of 10^-18: more than the 128 bits a packed amount holds
    const rich = exchange.createAccount({ startingBalance: `1${'0'.repeat(25)}` });
    const maker = provideLiquidity(harness, [{ side: 'sell', price: '64000', quantity: '0.5' }]);
    exchange.placeOrder(rich, request({ price: '64000', quantity: '0.2', time_in_force: 'IOC' }));
    harness.settle();
    for (const account of [rich, maker]) {
      const delivered = harness.eventsOf(account);
      expect(delivered.some((event) => event.type === 'account')).toBe(true);
      expect(exchange.listEvents(account, 0, 100).data).toEqual(delivered);
    }
    const totalEquity = harness
      .eventsOf(rich)
      .flatMap((event) => (event.type === 'account' ? [event.data.total_equity] : []));
    expect(totalEquity[0]!.length).toBeGreaterThan(26);
  });
});
