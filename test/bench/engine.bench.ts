/**
 * Matching engine throughput, in-process, on a VirtualClock. Every task runs batches of 1,000
 * orders: half are GTC limit orders of a maker account resting 1 to 50 ticks around the mid
 * price, half are IOC limit orders of a taker account crossing them (10 to 50 steps each, so a
 * taker order fills against one to a few resting orders and a maker order fills in parts).
 * tinybench's ops/s are batches (the mean of per-batch rates); the second table gives sustained
 * orders/s: 1,000 orders × batches run / time taken.
 *
 * - (a) "order book": the bare OrderBook on integer ticks and steps, no accounts or money.
 * - (b) "exchange, no listener": the full Exchange path per order (checks, margin reservation,
 *   PENDING → SUBMITTED → OPEN/FILLED/CANCELLED, fills, positions, accounts, the private events,
 *   one commit per unit of work to a MemoryStore with its default retention).
 * - (c) "exchange, every event read": (b) plus a private-event listener that receives every
 *   event as a wire object, as the server's WebSocket gateway does (it then serializes them;
 *   that cost is the server's, not counted here).
 *
 * - (d) "replay venue": what a backtest's simulated venue does per placement of the market maker,
 *   through `ExchangeExecutionVenue` and the service core (idempotency window included): prepare
 *   and send a simulation, a placement and its cancel, each after the order latency and answered
 *   after the response latency on a VirtualClock, the journal's read of the placement's and the
 *   cancel's bytes, and every private event delivered. CPU time per such intent.
 *
 * The requests of a batch are built before it runs (not measured, and dropped after it, as a
 * server drops parsed requests). After tinybench, a fixed run of batches reports CPU time per
 * order: user + system time of all threads (garbage collection included), which a busy machine
 * disturbs less than wall time.
 */
import { Bench } from 'tinybench';
import { VirtualClock } from '../../src/core/clock.ts';
import { DEFAULT_EMULATOR_CONFIG_INPUT, parseEmulatorConfig } from '../../src/emulator/config.ts';
import { Exchange } from '../../src/emulator/engine/exchange.ts';
import { BUY, OrderBook, RestingOrder, SELL } from '../../src/emulator/engine/order-book.ts';
import { Random } from '../../src/emulator/random.ts';
import { MemoryStore } from '../../src/emulator/store/memory-store.ts';
import type { OrderRequest, PrivateEvent } from '../../src/protocol/index.ts';
import { IdempotencyWindow } from '../../src/emulator/service/idempotency-window.ts';
import { ExchangeExecutionVenue } from '../../src/replay/venue/exchange-venue.ts';
import { LatencyModel } from '../../src/replay/venue/latency.ts';
import type { Order } from '../../src/protocol/index.ts';
import { printBench } from './report.ts';

const BATCH = 1_000;
/** Batches of the fixed CPU-time run after tinybench. */
const CPU_RUN_BATCHES = 60;

interface Scenario {
  /** Builds the next batch (outside the measurement). */
  prepare(): void;
  /** Runs the prepared batch. */
  run(): void;
}

function exchangeScenario(readEveryEvent: boolean): Scenario {
  const clock = new VirtualClock(Date.UTC(2025, 0, 6));
  const config = parseEmulatorConfig({
    ...DEFAULT_EMULATOR_CONFIG_INPUT,
    starting_balance: '1000000000000',
    latency: { submit_ms: 0 },
    simulation: { enabled: false },
  });
  const exchange = Exchange.open({ clock, config, store: new MemoryStore() });
  let delivered = 0;
  if (readEveryEvent) {
    exchange.onPrivateEvent((_accountId, event: PrivateEvent) => {
      if (event.sequence > 0) delivered++;
    });
  }
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
  let accounts: string[] = [];
  let orders: OrderRequest[] = [];
  return {
    prepare() {
      accounts = [];
      orders = [];
      for (let index = 0; index < BATCH / 2; index++) {
        const side = index % 2 === 0 ? 'buy' : 'sell';
        const offset = 1 + random.nextInt(50);
        const price = side === 'buy' ? mid - offset : mid + offset;
        accounts.push(maker);
        orders.push(request(side, price, 10 + random.nextInt(40), 'GTC'));
        const crossing = side === 'buy' ? 'sell' : 'buy';
        const limit = crossing === 'buy' ? mid + 60 : mid - 60;
        accounts.push(taker);
        orders.push(request(crossing, limit, 10 + random.nextInt(40), 'IOC'));
      }
    },
    run() {
      for (let index = 0; index < orders.length; index++) {
        exchange.placeOrder(accounts[index]!, orders[index]!);
      }
      // Submits and matches every order placed above (latency.submit_ms is 0).
      clock.advanceBy(0);
      if (readEveryEvent && delivered === 0) throw new Error('no private event was delivered');
    },
  };
}

function bookScenario(): Scenario {
  const book = new OrderBook<number>();
  const random = new Random('bench-book');
  const mid = 128_000;
  const noop = () => {};
  return {
    prepare() {},
    run() {
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
    },
  };
}

/** CPU time (all threads) per order over a fixed number of batches. */
function cpuMicrosecondsPerOrder(scenario: Scenario): number {
  let cpu = 0;
  for (let batch = 0; batch < CPU_RUN_BATCHES; batch++) {
    scenario.prepare();
    const start = process.cpuUsage();
    scenario.run();
    const used = process.cpuUsage(start);
    cpu += used.user + used.system;
  }
  return cpu / (CPU_RUN_BATCHES * BATCH);
}

const VENUE_LATENCY_MS = 20;
const VENUE_WARM_UP_INTENTS = 5_000;
const VENUE_MEASURED_INTENTS = 20_000;

/** (d): CPU time per intent (simulate, place, cancel) through the replay's execution venue. */
export async function venueMicrosecondsPerIntent(): Promise<number> {
  const clock = new VirtualClock(Date.UTC(2025, 0, 6));
  const config = parseEmulatorConfig({
    ...DEFAULT_EMULATOR_CONFIG_INPUT,
    simulation: { enabled: false },
  });
  const exchange = Exchange.open({
    clock,
    config,
    store: new MemoryStore({ retainedEvents: 1_000, retainedFills: 1_000 }),
  });
  const venue = new ExchangeExecutionVenue({
    exchange,
    accountId: exchange.createAccount({ startingBalance: '10000' }),
    clock,
    store: new IdempotencyWindow(),
    latency: new LatencyModel(
      {
        orderMs: VENUE_LATENCY_MS,
        responseMs: VENUE_LATENCY_MS,
        eventMs: VENUE_LATENCY_MS,
        readMs: 0,
        jitterMs: 0,
      },
      1,
    ),
  });
  let delivered = 0;
  venue.privateStream.items$.subscribe((item) => {
    if (item.kind === 'order') delivered++;
  });
  // Applied after one latency, answered (and its events delivered) after the next.
  const settle = <T>(answer: Promise<T>): Promise<T> => {
    clock.advanceBy(VENUE_LATENCY_MS);
    clock.advanceBy(VENUE_LATENCY_MS);
    return answer;
  };
  let counter = 0;
  const intent = async (): Promise<void> => {
    counter++;
    const buy = counter % 2 === 0;
    const body = {
      request_id: `bench:place:${counter}`,
      client_order_id: `bench:order:${counter}`,
      market_id: 'BTC-PERP',
      side: buy ? 'buy' : 'sell',
      type: 'limit',
      quantity: '0.001',
      price: String(buy ? 60_000 - (counter % 50) : 70_000 + (counter % 50)),
      leverage: 5,
      time_in_force: 'GTC',
      post_only: true,
      margin_mode: 'isolated',
    } as const;
    const simulation = venue.prepare({
      endpoint: 'simulateOrder',
      body: { ...body, request_id: `bench:simulate:${counter}` },
    });
    await settle(venue.send(simulation));
    const placement = venue.prepare({ endpoint: 'placeOrder', body });
    // The journal reads the bytes of what it records.
    if (placement.bodySha256.length === 0) throw new Error('no body hash');
    const order: Order = await settle(venue.send(placement));
    const cancel = venue.prepare({
      endpoint: 'cancelOrder',
      params: { order_id: order.order_id },
      body: { request_id: `bench:cancel:${counter}` },
    });
    if (cancel.bodySha256.length === 0) throw new Error('no body hash');
    const cancelled: Order = await settle(venue.send(cancel));
    if (cancelled.status !== 'CANCELLED') throw new Error(`cancel ended ${cancelled.status}`);
  };
  for (let index = 0; index < VENUE_WARM_UP_INTENTS; index++) await intent();
  const start = process.cpuUsage();
  for (let index = 0; index < VENUE_MEASURED_INTENTS; index++) await intent();
  const used = process.cpuUsage(start);
  if (delivered === 0) throw new Error('no private event was delivered');
  venue.close();
  return (used.user + used.system) / VENUE_MEASURED_INTENTS;
}

export default async function run(): Promise<void> {
  // One scenario at a time, each dropped before the next: an exchange's heap (its orders and
  // retained events) would otherwise slow the garbage collection of the next one.
  const scenarios: [string, () => Scenario][] = [
    ['(a) order book: rest + cross', bookScenario],
    ['(b) exchange, no listener', () => exchangeScenario(false)],
    ['(c) exchange, every event read', () => exchangeScenario(true)],
  ];
  const rows: Record<string, string>[] = [];
  for (const [name, make] of scenarios) {
    const scenario = make();
    const bench = new Bench({ time: 2_000, warmupTime: 500 });
    bench.add(`${name} (batch of ${BATCH} orders)`, () => scenario.run(), {
      beforeEach: () => scenario.prepare(),
    });
    await bench.run();
    printBench(bench);
    const result = bench.tasks[0]?.result;
    // Sustained: all orders over all time (the mean of per-batch rates would favour the batches
    // without a garbage collection).
    const perSecond =
      result?.state === 'completed' ? Math.round((BATCH * 1000) / result.latency.mean) : Number.NaN;
    const cpu = cpuMicrosecondsPerOrder(scenario);
    rows.push({
      task: name,
      'orders/s (wall)': perSecond.toLocaleString('en-US'),
      'CPU us/order': cpu.toFixed(2),
      'orders per CPU second': Math.round(1_000_000 / cpu).toLocaleString('en-US'),
    });
  }
  console.table(rows);
  const perIntent = await venueMicrosecondsPerIntent();
  console.table([
    {
      task: '(d) replay venue: simulate, place, cancel',
      'CPU us/intent': perIntent.toFixed(1),
      'intents per CPU second': Math.round(1_000_000 / perIntent).toLocaleString('en-US'),
    },
  ]);
}
