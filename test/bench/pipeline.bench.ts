/**
 * The kernel's pipeline speed.
 *
 * (a) Tick to place: from a ticker frame received by the stream client to the placement
 *     handed to the REST client, the gate, the journal writes and the simulation round trip
 *     included, against the emulator in this process over loopback. The emulator's market
 *     steps every 10 ms; the strategy places a resting post-only bid on every 4th ticker. Run
 *     with the journal's `full` durability (each commit synced, as live) and `normal`.
 * (b) In-process cost per event of streams -> strategy -> gate, no venue I/O: tickers pushed
 *     through a Subject into the strategy host, and the intents they cause evaluated by the
 *     gate against the kernel's risk snapshot. Measured three ways: tickers a strategy only
 *     reads; one intent per ticker through host and gate (allowed, then answered at once in
 *     place of an executor); and the real kernel with trading halted, so each intent is
 *     stamped, its sequence journaled, denied and answered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, get as httpGet, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EMPTY, filter, map, mergeMap, type Observable, Subject } from 'rxjs';
import pino from 'pino';
import { Bench } from 'tinybench';
import { createBotDashboard, DashboardSection } from '../../src/cli/dashboard/index.ts';
import { NotificationsSection } from '../../src/cli/notifications/config.ts';
import { Notifier } from '../../src/cli/notifications/notifier.ts';
import { z } from 'zod';
import { RestClient, StreamClient } from '../../src/client/index.ts';
import { systemClock, VirtualClock } from '../../src/core/clock.ts';
import { defaultEmulatorConfig } from '../../src/emulator/config.ts';
import { startEmulator } from '../../src/emulator/start.ts';
import type { Account, Fill, Order, Position } from '../../src/protocol/index.ts';
import type { ExecutionLogger } from '../../src/runtime/execution/logger.ts';
import type { OrderIntent } from '../../src/runtime/intents.ts';
import { Journal } from '../../src/runtime/journal/journal.ts';
import { Kernel, RiskSnapshotBuilder, silentKernelLogger } from '../../src/runtime/kernel/index.ts';
import { createLiveVenue } from '../../src/runtime/live/index.ts';
import type { MarketDataVenue } from '../../src/runtime/streams/market-data.ts';
import { parseRiskConfig, RiskGate } from '../../src/runtime/risk/index.ts';
import {
  defineStrategy,
  StrategyHost,
  type StrategyDefinition,
  type StrategyEnvironment,
  type Ticker,
} from '../../src/runtime/strategy/index.ts';
import { testMarket, testTicker } from '../../src/runtime/testing/fixtures.ts';
import type { ExecutionVenue } from '../../src/runtime/venue.ts';
import { account } from '../runtime/execution/fixtures.ts';
import { printLatency } from './report.ts';

const quiet: ExecutionLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const PLACE_EVERY = 4;
const SAMPLES = 300;
const WARMUP_SAMPLES = 20;

const openRisk = parseRiskConfig({
  kill_switch: { file: null, signal: null },
  max_orders_per_second: null,
  max_orders_per_minute: null,
  max_open_orders: null,
  max_open_orders_per_market: null,
});

/** A venue that notes when each placement is handed over (performance.now). */
function timedVenue(inner: ExecutionVenue, sentAt: Map<string, number>): ExecutionVenue {
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'send') {
        const send: ExecutionVenue['send'] = (prepared, signal) => {
          if (prepared.endpoint === 'placeOrder') sentAt.set(prepared.requestId, performance.now());
          return target.send(prepared, signal);
        };
        return send;
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function bidder(): StrategyDefinition<unknown> {
  return defineStrategy({
    name: 'bidder',
    description: 'a resting bid on every Nth ticker, tagged with the ticker time',
    params: z.strictObject({}),
    create: (context) => {
      let count = 0;
      return context.ticker$('BTC-PERP').pipe(
        mergeMap((ticker): OrderIntent[] => {
          count += 1;
          if (count % PLACE_EVERY !== 0 || ticker.mark_price === null) return [];
          const bid = Math.floor(Number(ticker.mark_price) * 0.98);
          return [
            {
              kind: 'place',
              marketId: 'BTC-PERP',
              side: 'buy',
              type: 'limit',
              quantity: '0.001',
              price: String(bid),
              postOnly: true,
              tag: ticker.occurred_at,
            },
          ];
        }),
      );
    },
  }) as StrategyDefinition<unknown>;
}

async function listening(server: Server): Promise<number> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return (server.address() as AddressInfo).port;
}

/**
 * The operator's views as the bot attaches them: the dashboard (with a page reading its event
 * stream) and a webhook notifier posting to a receiver on loopback. Resolves to their teardown.
 */
async function attachOperatorViews(
  kernel: Kernel,
  stream: StreamClient,
  live: Awaited<ReturnType<typeof createLiveVenue>>,
): Promise<() => void> {
  const logger = pino({ level: 'silent' });
  const dashboard = createBotDashboard({
    clock: systemClock,
    logger,
    section: DashboardSection.parse({ update_ms: 200 }),
    host: '127.0.0.1',
    killFile: null,
    strategies: [{ id: 'bidder', name: 'bidder', params: {} }],
    status: () => ({
      ...kernel.status(),
      bot: {
        pid: process.pid,
        startedAt: null,
        journal: 'bench',
        venue: { baseUrl: '', embedded: true, accountId: '' },
      },
      pnl: { session: null, unrealized: null },
    }),
    kernel: () => kernel,
  });
  dashboard.attach(kernel, stream, live);
  const server = createServer((request, response) => {
    void dashboard.server.handle(request, response);
  });
  const page = httpGet(`http://127.0.0.1:${await listening(server)}/dashboard/events`, (answer) =>
    answer.resume(),
  );
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.end('ok'));
  });
  const url = `http://127.0.0.1:${await listening(receiver)}/hook`;
  const notifier = new Notifier({
    section: NotificationsSection.parse({ webhooks: [{ url }], batch_ms: 200 }),
    clock: systemClock,
    logger,
  });
  notifier.attach(kernel, stream.state$);
  return () => {
    page.destroy();
    notifier.close();
    dashboard.close();
    server.close();
    receiver.close();
  };
}

async function tickToPlace(durability: 'full' | 'normal', operatorViews = false): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'paperbot-bench-'));
  const defaults = defaultEmulatorConfig();
  const emulator = await startEmulator({
    seed: 3,
    config: {
      ...defaults,
      starting_balance: '100000000',
      simulation: { ...defaults.simulation, step_ms: 10 },
    },
    rateLimit: { quota: 100_000_000, windowMs: 60_000 },
  });
  const credential = emulator.createKey();
  const rest = new RestClient({ credential });
  const stream = new StreamClient({ rest });
  const tickAt = new Map<string, number>();
  // Subscribed first, so this is the first observer each frame reaches.
  const ticks = stream.ticker$('BTC-PERP').subscribe((frame) => {
    tickAt.set(frame.occurred_at, performance.now());
  });
  const live = createLiveVenue({
    rest,
    stream,
    clock: systemClock,
    logger: quiet,
    marketIds: ['BTC-PERP'],
  });
  await live.start();
  const journal = Journal.open(join(folder, 'journal.sqlite'), {
    now: () => systemClock.now(),
    durability,
  });
  const sentAt = new Map<string, number>();
  const kernel = Kernel.create({
    clock: systemClock,
    venue: timedVenue(live.venue, sentAt),
    marketData: live.marketData,
    journal,
    strategies: [{ id: 'bidder', definition: bidder(), params: {} }],
    risk: openRisk,
    routeReady$: live.routeReady$,
    logger: silentKernelLogger,
  });
  const samples: number[] = [];
  const kernelSamples: number[] = [];
  let failures = 0;
  const done = new Promise<void>((resolve) => {
    kernel.intentLatency$.subscribe((latency) => {
      if (latency.tickToPlaceMs !== null) kernelSamples.push(latency.tickToPlaceMs);
    });
    kernel.outcomes$.subscribe((outcome) => {
      if (outcome.status !== 'accepted') {
        if (outcome.status !== 'filled') failures += 1;
        return;
      }
      const intent = outcome.intent.intent;
      const tick = intent.kind === 'place' && intent.tag ? tickAt.get(intent.tag) : undefined;
      const sent = sentAt.get(outcome.intent.requestId);
      if (tick !== undefined && sent !== undefined) samples.push(sent - tick);
      if (samples.length >= SAMPLES + WARMUP_SAMPLES) resolve();
    });
  });
  const detach = operatorViews ? await attachOperatorViews(kernel, stream, live) : () => {};
  await kernel.start();
  await done;
  await kernel.stop('bench over');
  detach();
  ticks.unsubscribe();
  await live.stop();
  await stream.close();
  await rest.close();
  journal.close();
  await emulator.close();
  rmSync(folder, { recursive: true, force: true });
  const views = operatorViews ? ', dashboard and webhooks attached' : '';
  printLatency(`tick to place, journal ${durability}${views}`, samples.slice(WARMUP_SAMPLES), {
    'kernel p50 (ms, clock)': String(
      [...kernelSamples].sort((a, b) => a - b)[Math.floor(kernelSamples.length / 2)] ?? '',
    ),
    'not accepted': String(failures),
  });
}

// (b): in-process, no venue I/O

const BATCH = 1_000;

class SubjectMarketData implements MarketDataVenue {
  readonly ticker = new Subject<Ticker>();
  private readonly list = [testMarket({ market_id: 'BTC-PERP' })];

  markets() {
    return this.list;
  }

  ticker$(): Observable<Ticker> {
    return this.ticker;
  }

  book$(): Observable<never> {
    return EMPTY;
  }

  trades$(): Observable<never> {
    return EMPTY;
  }
}

function environmentOf(clock: VirtualClock, marketData: SubjectMarketData): StrategyEnvironment {
  return {
    clock,
    logger: quiet,
    markets: () => marketData.markets(),
    ticker$: () => marketData.ticker$(),
    book$: () => EMPTY,
    trades$: () => EMPTY,
    orders$: new Subject<Order>(),
    fills$: new Subject<Fill>(),
    positions$: new Subject<Position>(),
    account$: new Subject<Account>(),
  };
}

function readerOnly(): StrategyDefinition<unknown> {
  return defineStrategy({
    name: 'reader',
    description: 'reads tickers, emits nothing',
    params: z.strictObject({}),
    create: (context) =>
      context.ticker$('BTC-PERP').pipe(
        filter((ticker) => ticker.mark_price === 'never'),
        map(() => ({ kind: 'cancel_all' }) as OrderIntent),
      ),
  }) as StrategyDefinition<unknown>;
}

function eachTick(): StrategyDefinition<unknown> {
  return defineStrategy({
    name: 'each-tick',
    description: 'one resting bid per ticker',
    params: z.strictObject({}),
    create: (context) =>
      context.ticker$('BTC-PERP').pipe(
        map((ticker): OrderIntent => ({
          kind: 'place',
          marketId: 'BTC-PERP',
          side: 'buy',
          type: 'limit',
          quantity: '0.010',
          price: String(Math.floor(Number(ticker.mark_price) * 0.99)),
        })),
      ),
  }) as StrategyDefinition<unknown>;
}

const marks = Array.from({ length: BATCH }, (_, index) => String(60_000 + (index % 50)));

function hostAndGate(definition: StrategyDefinition<unknown>) {
  const clock = new VirtualClock(Date.UTC(2026, 0, 5));
  const marketData = new SubjectMarketData();
  const host = new StrategyHost({ environment: environmentOf(clock, marketData), epoch: 'bench' });
  const gate = new RiskGate({
    config: parseRiskConfig({ kill_switch: { file: null, signal: null } }),
    clock,
  });
  const snapshots = new RiskSnapshotBuilder({
    markets: () => marketData.markets(),
    positions: () => [],
    openOrders: () => [],
  });
  snapshots.setPermitted(true);
  let allowed = 0;
  let denied = 0;
  marketData.ticker.subscribe((ticker) => snapshots.onTicker(ticker));
  host.intents$.subscribe((stamped) => {
    const decision = gate.evaluate(stamped, snapshots.snapshot());
    if (decision.allowed) {
      allowed += 1;
      // No executor here: answer at once, so the strategy's own-order book does not grow.
      host.deliverOutcome({ status: 'rejected', intent: stamped, code: 'BENCH', message: 'kept' });
    } else {
      denied += 1;
      host.deliverOutcome({ status: 'denied', intent: stamped, denials: decision.denials });
    }
  });
  host.add({ strategyId: 's', definition });
  host.start();
  return {
    push(): void {
      for (const mark of marks) {
        // 600 ms apart: 100 orders a minute stay under the default rate limits (5/s, 120/min).
        clock.advanceBy(600);
        marketData.ticker.next(
          testTicker({ market_id: 'BTC-PERP', mark_price: mark }, clock.now()),
        );
      }
    },
    counts: () => ({ allowed, denied }),
  };
}

async function haltedKernel() {
  const folder = mkdtempSync(join(tmpdir(), 'paperbot-bench-'));
  const clock = new VirtualClock(Date.UTC(2026, 0, 5));
  const marketData = new SubjectMarketData();
  const journal = Journal.open(join(folder, 'journal.sqlite'), {
    now: () => clock.now(),
    durability: 'normal',
  });
  const never = new Subject<never>();
  const venue = {
    orderEvents$: never,
    fills$: never,
    riskEvents$: never,
    resync$: never,
    listOpenOrders: async () => [],
    listPositions: async () => [],
    getAccount: async () => account(),
  } as unknown as ExecutionVenue;
  const kernel = Kernel.create({
    clock,
    venue,
    marketData,
    journal,
    strategies: [{ id: 's', definition: eachTick(), params: {} }],
    risk: parseRiskConfig({ kill_switch: { file: null, signal: null } }),
    deadman: false,
    logger: silentKernelLogger,
  });
  let denied = 0;
  kernel.outcomes$.subscribe(() => {
    denied += 1;
  });
  await kernel.start();
  kernel.halt('bench: every intent is denied, nothing reaches the executor');
  return {
    push(): void {
      for (const mark of marks) {
        clock.advanceBy(600);
        marketData.ticker.next(
          testTicker({ market_id: 'BTC-PERP', mark_price: mark }, clock.now()),
        );
      }
    },
    denied: () => denied,
    close: () => {
      kernel.dispose();
      journal.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function inProcess(): Promise<void> {
  const reader = hostAndGate(readerOnly());
  const gated = hostAndGate(eachTick());
  const kernel = await haltedKernel();
  const bench = new Bench({ name: 'pipeline in process', time: 2_000, warmupTime: 300 });
  bench
    .add(`${BATCH} tickers -> strategy (no intent)`, () => reader.push())
    .add(`${BATCH} tickers -> strategy -> intent -> gate (allowed) -> outcome`, () => gated.push())
    .add(`${BATCH} tickers -> kernel (halted: journaled sequence, denied, answered)`, () =>
      kernel.push(),
    );
  await bench.run();
  const rows = bench.tasks.map((task) => {
    const result = task.result;
    if (!result || result.state !== 'completed') return { task: task.name, 'events/s': 'failed' };
    const perEventNs = (result.latency.mean * 1e6) / BATCH;
    return {
      task: task.name,
      'events/s': Math.round(1e9 / perEventNs).toLocaleString('en-US'),
      'ns/event': perEventNs.toFixed(0),
      'p99 batch (ms)': result.latency.p99.toFixed(3),
    };
  });
  console.table(rows);
  const counts = gated.counts();
  if (counts.denied > 0 || counts.allowed === 0) {
    console.log(`note: gate allowed ${counts.allowed}, denied ${counts.denied}`);
  }
  if (kernel.denied() === 0) console.log('note: the halted kernel denied nothing');
  kernel.close();
}

export default async function (): Promise<void> {
  await tickToPlace('full');
  await tickToPlace('normal');
  await tickToPlace('normal', true);
  await inProcess();
}
