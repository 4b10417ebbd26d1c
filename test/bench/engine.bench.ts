/**
 * Matching engine throughput, in-process, on a VirtualClock with the MemoryStore.
 *
 * - "exchange: rest + cross": the full Exchange path per order (checks, margin reservation,
 *   PENDING → SUBMITTED → OPEN/FILLED events, fills, positions, account events, the unit-of-work
 *   commit to the MemoryStore). Each batch is 1,000 orders: half are limit orders of a maker
 *   account that rest around the mid price, half are IOC limit orders of a taker account that
 *   cross them. Reported ops/s are batches; orders/s = 1,000 × batches/s (printed below).
 * - "order book: rest + cross": the bare OrderBook on integer ticks and steps, the same mix.
 */
import { Bench } from 'tinybench';
import { VirtualClock } from '../../src/core/clock.ts';
import { DEFAULT_EMULATOR_CONFIG_INPUT, parseEmulatorConfig } from '../../src/emulator/config.ts';
import { Exchange } from '../../src/emulator/engine/exchange.ts';
import { BUY, OrderBook, RestingOrder, SELL } from '../../src/emulator/engine/order-book.ts';
import { Random } from '../../src/emulator/random.ts';
import { MemoryStore } from '../../src/emulator/store/memory-store.ts';
import type { OrderRequest } from '../../src/protocol/index.ts';
import { printBench } from './report.ts';

const BATCH = 1_000;

function exchangeScenario(): () => void {
  const clock = new VirtualClock(Date.UTC(2025, 0, 6));
  const config = parseEmulatorConfig({
    ...DEFAULT_EMULATOR_CONFIG_INPUT,
    starting_balance: '1000000000000',
    latency: { submit_ms: 0 },
    simulation: { enabled: false },
  });
  const exchange = Exchange.open({ clock, config, store: new MemoryStore() });
  const maker = exchange.createAccount();
  const taker = exchange.createAccount();
  const random = new Random('bench');
  const mid = 128_000; // ticks of 0.5 on BTC-PERP: 64,000
  let counter = 0;
  const request = (side: 'buy' | 'sell', priceTicks: number, steps: number, tif: 'GTC' | 'IOC') => {
    counter++;
    const order: OrderRequest = {
      request_id: `bench-${counter}`,
      client_order_id: `c${counter}`,
      market_id: 'BTC-PERP',
      side,
      type: 'limit',
      quantity: (steps / 1000).toString(),
      price: (priceTicks / 2).toString(),
      leverage: 10,
      time_in_force: tif,
      post_only: false,
      reduce_only: false,
      margin_mode: 'isolated',
    };
    return order;
  };
  // Prebuilt requests keep request construction out of the measurement.
  const makeBatch = () => {
    const batch: { account: string; order: OrderRequest }[] = [];
    for (let index = 0; index < BATCH / 2; index++) {
      const side = index % 2 === 0 ? 'buy' : 'sell';
      const offset = 1 + random.nextInt(50);
      const price = side === 'buy' ? mid - offset : mid + offset;
      batch.push({ account: maker, order: request(side, price, 10 + random.nextInt(40), 'GTC') });
      const crossing = side === 'buy' ? 'sell' : 'buy';
      const limit = crossing === 'buy' ? mid + 60 : mid - 60;
      batch.push({
        account: taker,
        order: request(crossing, limit, 10 + random.nextInt(40), 'IOC'),
      });
    }
    return batch;
  };
  const batches = Array.from({ length: 400 }, makeBatch);
  let next = 0;
  return () => {
    const batch = batches[next++ % batches.length]!;
    for (const item of batch) exchange.placeOrder(item.account, item.order);
    clock.advanceBy(0);
  };
}

function bookScenario(): () => void {
  const book = new OrderBook<number>();
  const random = new Random('bench-book');
  const mid = 128_000;
  const noop = () => {};
  return () => {
    for (let index = 0; index < BATCH / 2; index++) {
      const side = index % 2 === 0 ? BUY : SELL;
      const offset = 1 + random.nextInt(50);
      const price = side === BUY ? mid - offset : mid + offset;
      const steps = 10 + random.nextInt(40);
      const left = book.match(side, price, steps, noop);
      if (left > 0) book.add(new RestingOrder(side, price, left, index));
      const crossing = side === BUY ? SELL : BUY;
      book.match(crossing, crossing === BUY ? mid + 60 : mid - 60, 10 + random.nextInt(40), noop);
    }
  };
}

export default async function run(): Promise<void> {
  const bench = new Bench({ time: 2_000, warmupTime: 500 });
  bench.add('exchange: rest + cross (batch of 1000 orders)', exchangeScenario());
  bench.add('order book: rest + cross (batch of 1000 orders)', bookScenario());
  await bench.run();
  printBench(bench);
  for (const task of bench.tasks) {
    const result = task.result;
    if (result?.state === 'completed') {
      const perSecond = Math.round(result.throughput.mean * BATCH).toLocaleString('en-US');
      process.stdout.write(`${task.name}: ${perSecond} orders/s\n`);
    }
  }
}
