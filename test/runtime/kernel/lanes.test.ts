/**
 * Operators' lanes in the kernel: the dead-man heartbeat never waits behind order flow, and
 * order flow never waits behind the heartbeat. A fake venue holds every command until the test
 * releases it by hand (or answers after a fixed round trip on the virtual clock); anything the
 * fake was not built for fails the test.
 */
import { type Observable, Subject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isoTimestamp, VirtualClock } from '../../../src/core/clock.ts';
import { PaperbotError } from '../../../src/core/errors.ts';
import type {
  Account,
  Market,
  MutationStatus,
  Order,
  Position,
  ResponseOf,
} from '../../../src/protocol/index.ts';
import type { IntentOutcome } from '../../../src/runtime/intents.ts';
import { Kernel } from '../../../src/runtime/kernel/index.ts';
import { type MarketDataVenue, TickerArrivals } from '../../../src/runtime/streams/market-data.ts';
import { parseRiskConfig } from '../../../src/runtime/risk/index.ts';
import { defineStrategy, type Ticker } from '../../../src/runtime/strategy/index.ts';
import { testMarket, testTicker } from '../../../src/runtime/testing/fixtures.ts';
import {
  type CommandEndpoint,
  type ExecutionVenue,
  type PreparedCommand,
  type PrivateStreamFeed,
  type PrivateStreamItem,
  type ResyncSignal,
  type RiskEvent,
  type VenueCommandOf,
} from '../../../src/runtime/venue.ts';
import { prepareCommand, restoreCommand } from '../../../src/signing/index.ts';
import {
  account,
  openJournal,
  order,
  simulation,
  START,
  tempJournalPath,
} from '../execution/fixtures.ts';
import { bodyOf } from '../execution/strict-venue.ts';
import { RecordingLogger } from './recording-logger.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

interface HeldSend {
  readonly prepared: PreparedCommand;
  readonly sentAt: number;
  release(): void;
}

/**
 * A venue that answers commands only when told: `hold` keeps each send until `release()`, or
 * `roundTripMs` answers it that long after it was sent. Reads answer at once from what was
 * placed. Any other call fails the test (`failures`).
 */
class HandVenue implements ExecutionVenue {
  readonly privateStream: PrivateStreamFeed = {
    items$: new Subject<PrivateStreamItem>(),
    readFillsBack: () => Promise.reject(new Error('the hand venue reads no fills back')),
  };
  readonly riskEvents$ = new Subject<RiskEvent>();
  readonly resync$ = new Subject<ResyncSignal>();
  readonly held: HeldSend[] = [];
  readonly sends: { endpoint: CommandEndpoint; sentAt: number; answeredAt: number | null }[] = [];
  readonly failures: string[] = [];
  /** Per endpoint: answer after this long on the clock; absent: hold for `release()`. */
  roundTripMs: Partial<Record<CommandEndpoint, number>> = {};
  openOrderReads = 0;
  private readonly placed = new Map<string, Order>();

  constructor(private readonly clock: VirtualClock) {}

  prepare<E extends CommandEndpoint>(command: VenueCommandOf<E>): PreparedCommand<E> {
    return prepareCommand(command);
  }

  restore<E extends CommandEndpoint>(
    endpoint: E,
    path: string,
    bodyBytes: Uint8Array,
  ): PreparedCommand<E> {
    return restoreCommand(endpoint, path, bodyBytes);
  }

  send<E extends CommandEndpoint>(prepared: PreparedCommand<E>): Promise<ResponseOf<E>> {
    const record = {
      endpoint: prepared.endpoint as CommandEndpoint,
      sentAt: this.clock.now(),
      answeredAt: null as number | null,
    };
    this.sends.push(record);
    return new Promise((resolve, reject) => {
      const release = () => {
        const index = this.held.indexOf(entry);
        if (index >= 0) this.held.splice(index, 1);
        record.answeredAt = this.clock.now();
        try {
          resolve(this.answer(prepared) as ResponseOf<E>);
        } catch (error) {
          reject(error);
        }
      };
      const entry: HeldSend = { prepared, sentAt: record.sentAt, release };
      const roundTrip = this.roundTripMs[prepared.endpoint];
      if (roundTrip === undefined) this.held.push(entry);
      else this.clock.setTimeout(release, roundTrip);
    });
  }

  heldFor(endpoint: CommandEndpoint): HeldSend[] {
    return this.held.filter((entry) => entry.prepared.endpoint === endpoint);
  }

  inFlight(endpoint: CommandEndpoint): number {
    return this.sends.filter((send) => send.endpoint === endpoint && send.answeredAt === null)
      .length;
  }

  private answer(prepared: PreparedCommand): unknown {
    const body = bodyOf(prepared);
    switch (prepared.endpoint) {
      case 'setCancelAllAfter':
        return {
          request_id: prepared.requestId,
          deadline_at:
            body.timeout_seconds === 0
              ? null
              : isoTimestamp(this.clock.now() + Number(body.timeout_seconds) * 1000),
        };
      case 'simulateOrder':
        return simulation();
      case 'placeOrder': {
        const placed = order({
          order_id: `o-${this.placed.size + 1}`,
          request_id: String(body.request_id),
          client_order_id: String(body.client_order_id),
          price: String(body.price),
          quantity: String(body.quantity),
          status: 'OPEN',
        });
        this.placed.set(placed.order_id, placed);
        return placed;
      }
      case 'cancelAllOrders': {
        const results: Order[] = [];
        for (const [orderId, placed] of this.placed) {
          if (placed.status !== 'OPEN') continue;
          const cancelled = { ...placed, status: 'CANCELLED' as const };
          this.placed.set(orderId, cancelled);
          results.push(cancelled);
        }
        return { request_id: prepared.requestId, results };
      }
      default:
        return this.fail(`unexpected send ${prepared.endpoint}`);
    }
  }

  private fail(message: string): never {
    this.failures.push(message);
    throw new PaperbotError('FAKE_UNEXPECTED_CALL', message);
  }

  getRequest(requestId: string): Promise<MutationStatus> {
    return Promise.reject(this.failureOf(`unexpected getRequest ${requestId}`));
  }

  getOrder(orderId: string): Promise<Order> {
    const found = this.placed.get(orderId);
    return found === undefined
      ? Promise.reject(this.failureOf(`unexpected getOrder ${orderId}`))
      : Promise.resolve(found);
  }

  getOrderByClientId(clientOrderId: string): Promise<Order> {
    return Promise.reject(this.failureOf(`unexpected getOrderByClientId ${clientOrderId}`));
  }

  listOpenOrders(): Promise<Order[]> {
    this.openOrderReads += 1;
    return Promise.resolve([...this.placed.values()].filter((placed) => placed.status === 'OPEN'));
  }

  listPositions(): Promise<Position[]> {
    return Promise.resolve([]);
  }

  getAccount(): Promise<Account> {
    return Promise.resolve(account());
  }

  private failureOf(message: string): PaperbotError {
    this.failures.push(message);
    return new PaperbotError('FAKE_UNEXPECTED_CALL', message);
  }
}

class TickerFeed implements MarketDataVenue {
  readonly tickers = new Subject<Ticker>();
  private readonly list: readonly Market[] = [testMarket()];

  private readonly arrivals = new TickerArrivals((marketId) => this.ticker$(marketId));

  tickerArrivals$(marketId: string): Observable<string> {
    return this.arrivals.arrivals$(marketId);
  }

  latestTicker(marketId: string): Ticker | undefined {
    return this.arrivals.latestTicker(marketId);
  }

  markets(): readonly Market[] {
    return this.list;
  }

  ticker$(marketId: string) {
    if (marketId !== 'BTC-PERP') throw new Error(`unexpected market ${marketId}`);
    return this.tickers.asObservable();
  }

  book$(marketId: string): never {
    throw new Error(`unexpected book$ ${marketId}`);
  }

  trades$(marketId: string): never {
    throw new Error(`unexpected trades$ ${marketId}`);
  }

  push(clock: VirtualClock): void {
    this.tickers.next(testTicker({ market_id: 'BTC-PERP', mark_price: '50000' }, clock.now()));
  }
}

/** Places one limit buy per ticker. */
const buyer = defineStrategy({
  name: 'buyer',
  description: 'one limit buy per ticker',
  params: z.strictObject({}),
  create: (context) => {
    const intents = new Subject<{
      kind: 'place';
      marketId: string;
      side: 'buy';
      type: 'limit';
      quantity: string;
      price: string;
    }>();
    context.ticker$('BTC-PERP').subscribe(() =>
      intents.next({
        kind: 'place',
        marketId: 'BTC-PERP',
        side: 'buy',
        type: 'limit',
        quantity: '0.010',
        price: '49000',
      }),
    );
    return intents;
  },
});

interface World {
  readonly clock: VirtualClock;
  readonly venue: HandVenue;
  readonly feed: TickerFeed;
  readonly kernel: Kernel;
  readonly outcomes: IntentOutcome[];
}

async function flush(): Promise<void> {
  for (let round = 0; round < 10; round++) await new Promise((resolve) => setImmediate(resolve));
}

async function startWorld(deadman: { timeoutSeconds: number; latencyMarginMs?: number }) {
  const clock = new VirtualClock(START);
  const temporary = tempJournalPath();
  cleanups.push(temporary.cleanup);
  const journal = openJournal(temporary.path, clock, 'normal');
  cleanups.push(() => journal.isOpen && journal.close());
  const venue = new HandVenue(clock);
  const feed = new TickerFeed();
  const kernel = Kernel.create({
    clock,
    venue,
    marketData: feed,
    journal,
    strategies: [{ id: 'alpha', definition: buyer as never, params: {} }],
    risk: parseRiskConfig({
      kill_switch: { file: null, signal: null },
      max_open_orders: null,
      max_open_orders_per_market: null,
      max_orders_per_second: null,
      max_orders_per_minute: null,
    }),
    // Only the flow under test: no periodic reads in these runs.
    tracker: { refreshIntervalMs: 86_400_000 },
    reconciler: { intervalMs: 86_400_000 },
    deadman,
    logger: new RecordingLogger(),
  });
  cleanups.push(() => kernel.dispose());
  const outcomes: IntentOutcome[] = [];
  kernel.outcomes$.subscribe((outcome) => outcomes.push(outcome));
  // The first arming is answered at once.
  venue.roundTripMs = { setCancelAllAfter: 0 };
  const started = kernel.start();
  for (let step = 0; step < 10; step++) {
    await flush();
    clock.advanceBy(0);
  }
  await started;
  await flush();
  expect(kernel.status().mayTrade).toBe(true);
  venue.roundTripMs = {};
  return { clock, venue, feed, kernel, outcomes } satisfies World;
}

/** Moves the clock to `targetMs`, timer by timer, letting promises settle between them. */
async function runUntil(clock: VirtualClock, targetMs: number): Promise<void> {
  for (let step = 0; step < 100_000; step++) {
    await flush();
    const next = clock.nextDueAt();
    if (next === null || next > targetMs) break;
    clock.advanceTo(next);
  }
  clock.advanceTo(targetMs);
  await flush();
}

const accepted = (world: World) =>
  world.outcomes.filter((outcome) => outcome.status === 'accepted');

describe('operators’ lanes', () => {
  it('a refresh in flight does not hold back a placement, nor a placement a refresh', async () => {
    const world = await startWorld({ timeoutSeconds: 60 });
    const { clock, venue, feed, kernel } = world;

    // The refresh at 15 s goes out and is held.
    await runUntil(clock, START + 15_000);
    expect(venue.heldFor('setCancelAllAfter')).toHaveLength(1);
    // A placement goes out, and is answered, while that refresh is still unanswered.
    feed.push(clock);
    await flush();
    expect(venue.heldFor('simulateOrder')).toHaveLength(1);
    venue.heldFor('simulateOrder')[0]?.release();
    await flush();
    expect(venue.heldFor('placeOrder')).toHaveLength(1);
    venue.heldFor('placeOrder')[0]?.release();
    await flush();
    expect(accepted(world)).toHaveLength(1);
    expect(venue.heldFor('setCancelAllAfter')).toHaveLength(1);
    venue.heldFor('setCancelAllAfter')[0]?.release();
    await flush();
    expect(kernel.status().deadman?.deadlineAt).toBe(START + 15_000 + 60_000);

    // Now a placement is held, and the refresh at 30 s goes out and is confirmed beside it.
    feed.push(clock);
    await flush();
    venue.heldFor('simulateOrder')[0]?.release();
    await flush();
    expect(venue.heldFor('placeOrder')).toHaveLength(1);
    await runUntil(clock, START + 30_000);
    expect(venue.heldFor('setCancelAllAfter')).toHaveLength(1);
    venue.heldFor('setCancelAllAfter')[0]?.release();
    await flush();
    expect(kernel.status().deadman?.deadlineAt).toBe(START + 30_000 + 60_000);
    expect(venue.heldFor('placeOrder')).toHaveLength(1);
    venue.heldFor('placeOrder')[0]?.release();
    await flush();
    expect(accepted(world)).toHaveLength(2);
    expect(venue.failures).toEqual([]);
  });

  it('shutdown cancels at once beside a placement in flight, and confirms only after it landed', async () => {
    const world = await startWorld({ timeoutSeconds: 60 });
    const { clock, venue, feed, kernel } = world;
    feed.push(clock);
    await flush();
    venue.heldFor('simulateOrder')[0]?.release();
    await flush();
    expect(venue.heldFor('placeOrder')).toHaveLength(1);
    const reads = venue.openOrderReads;

    const stopping = kernel.stop('test');
    await flush();
    // The cancel-all did not queue behind the placement on the wire.
    expect(venue.heldFor('cancelAllOrders')).toHaveLength(1);
    expect(venue.heldFor('placeOrder')).toHaveLength(1);
    venue.roundTripMs = { cancelAllOrders: 0, setCancelAllAfter: 0 };
    venue.heldFor('cancelAllOrders')[0]?.release();
    await flush();
    // No read is trusted while the placement may still land.
    expect(venue.openOrderReads).toBe(reads);
    venue.heldFor('placeOrder')[0]?.release();
    await runUntil(clock, clock.now() + 10_000);
    const report = await stopping;
    // It landed after the first cancel-all: a second one removed it, and a read confirmed.
    expect(report).toMatchObject({
      cancelled: true,
      confirmed: true,
      disarmed: true,
      remainingOrderIds: [],
    });
    expect(venue.sends.filter((send) => send.endpoint === 'cancelAllOrders')).toHaveLength(2);
    expect(venue.openOrderReads).toBe(reads + 2);
    expect(venue.failures).toEqual([]);
  });

  /** Ten virtual minutes, one ticker a second, placements answered in 200 ms each way. */
  async function tenMinutes(heartbeatRoundTripMs: number) {
    const world = await startWorld({ timeoutSeconds: 10, latencyMarginMs: 3_000 });
    const { clock, venue, feed, kernel } = world;
    venue.roundTripMs = {
      setCancelAllAfter: heartbeatRoundTripMs,
      simulateOrder: 200,
      placeOrder: 200,
    };
    const phases = new Set<string>();
    let permitLost = 0;
    let mostHeartbeatsInFlight = 0;
    const ticker = clock.setInterval(() => feed.push(clock), 1_000);
    const watch = clock.setInterval(() => {
      const status = kernel.status();
      phases.add(status.deadman?.phase ?? 'none');
      if (!status.mayTrade) permitLost += 1;
      mostHeartbeatsInFlight = Math.max(
        mostHeartbeatsInFlight,
        venue.inFlight('setCancelAllAfter'),
      );
    }, 250);
    const end = START + 10 * 60_000;
    await runUntil(clock, end);
    clock.clearInterval(ticker);
    clock.clearInterval(watch);
    const perMinute = Array.from({ length: 10 }, () => 0);
    for (const send of venue.sends) {
      if (send.endpoint !== 'placeOrder' || send.answeredAt === null) continue;
      const minute = Math.floor((send.sentAt - START) / 60_000);
      if (minute < 10) perMinute[minute] = (perMinute[minute] ?? 0) + 1;
    }
    const heartbeatIds = venue.sends.filter((send) => send.endpoint === 'setCancelAllAfter');
    expect(venue.failures).toEqual([]);
    return { world, phases, permitLost, mostHeartbeatsInFlight, perMinute, heartbeatIds };
  }

  it('with 3 s heartbeat round trips and a 10 s timeout the deadline never lapses and placements keep their rate', async () => {
    const slow = await tenMinutes(3_000);
    const fast = await tenMinutes(10);
    // The deadline never came near: the permit stayed open and nothing fired.
    expect(slow.permitLost).toBe(0);
    expect([...slow.phases]).toEqual(['armed']);
    // Pipelined: the next refresh went out while the previous one was unanswered.
    expect(slow.mostHeartbeatsInFlight).toBe(2);
    expect(fast.mostHeartbeatsInFlight).toBe(1);
    // A refresh every 2.5 s, whatever the round trip.
    expect(slow.heartbeatIds.length).toBeGreaterThanOrEqual(240);
    // One placement a second, every minute, slow heartbeat or fast (the first ticker comes at
    // 1 s, so the first minute holds 59).
    expect(slow.perMinute).toEqual([59, 60, 60, 60, 60, 60, 60, 60, 60, 60]);
    expect(fast.perMinute).toEqual(slow.perMinute);
    expect(accepted(slow.world).length).toBe(accepted(fast.world).length);
  }, 60_000);
});
