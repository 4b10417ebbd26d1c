/**
 * The kernel's wiring against strict fakes (every venue call expected, anything else fails):
 * the start-up order, the gate's snapshot (latest ticker marks, placements in flight), the
 * queue between strategy and gate, the trading permit, unresolved intents, shutdown, and the
 * loss tracking kept across restarts.
 */
import { mergeMap, type Observable, ReplaySubject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isoTimestamp, VirtualClock } from '../../../src/core/clock.ts';
import type { Book, Market, PublicTrade } from '../../../src/protocol/index.ts';
import type { IntentOutcome, OrderIntent } from '../../../src/runtime/intents.ts';
import type { Journal } from '../../../src/runtime/journal/journal.ts';
import {
  Kernel,
  type KernelOptions,
  LOSS_TRACKING_META_KEY,
} from '../../../src/runtime/kernel/index.ts';
import { TickerArrivals, type MarketDataVenue } from '../../../src/runtime/streams/market-data.ts';
import { parseRiskConfig, type RiskConfigInput } from '../../../src/runtime/risk/index.ts';
import {
  defineStrategy,
  type StrategyContext,
  type StrategyDefinition,
  type Ticker,
} from '../../../src/runtime/strategy/index.ts';
import { testMarket, testTicker } from '../../../src/runtime/testing/fixtures.ts';
import {
  account,
  EPOCH,
  openJournal,
  order,
  simulation,
  START,
  tempJournalPath,
  transportError,
} from '../execution/fixtures.ts';
import { bodyOf, StrictVenue } from '../execution/strict-venue.ts';
import { RecordedMarketData } from '../../../src/replay/venue/market-data.ts';
import { RecordingLogger } from './recording-logger.ts';

/** Market data from Subjects; books and trades are not expected here. */
class FakeMarketData implements MarketDataVenue {
  private readonly tickers = new Map<string, ReplaySubject<Ticker>>();
  readonly unexpected: string[] = [];

  private readonly arrivals = new TickerArrivals((marketId) => this.ticker$(marketId));

  tickerArrivals$(marketId: string): Observable<string> {
    return this.arrivals.arrivals$(marketId);
  }

  latestTicker(marketId: string): Ticker | undefined {
    return this.arrivals.latestTicker(marketId);
  }

  constructor(private readonly list: readonly Market[]) {}

  markets(): readonly Market[] {
    return this.list;
  }

  ticker$(marketId: string): Observable<Ticker> {
    return this.subject(marketId).asObservable();
  }

  book$(marketId: string): Observable<Book> {
    this.unexpected.push(`book$ ${marketId}`);
    throw new Error(`unexpected book$ ${marketId}`);
  }

  trades$(marketId: string): Observable<PublicTrade> {
    this.unexpected.push(`trades$ ${marketId}`);
    throw new Error(`unexpected trades$ ${marketId}`);
  }

  push(ticker: Ticker): void {
    this.subject(ticker.market_id).next(ticker);
  }

  private subject(marketId: string): ReplaySubject<Ticker> {
    if (!this.list.some((market) => market.market_id === marketId)) {
      this.unexpected.push(`ticker$ ${marketId}`);
      throw new Error(`unexpected market ${marketId}`);
    }
    let subject = this.tickers.get(marketId);
    if (subject === undefined) {
      subject = new ReplaySubject<Ticker>(1);
      this.tickers.set(marketId, subject);
    }
    return subject;
  }
}

/** A strategy that answers each ticker with what `react` returns, and records what it sees. */
class Scripted {
  react: (ticker: Ticker) => OrderIntent[] = () => [];
  readonly outcomes: IntentOutcome[] = [];
  /** Outcomes that arrived while the strategy was inside its ticker handler (must stay 0). */
  reentered = 0;
  context: StrategyContext<unknown> | null = null;
  private inHandler = false;

  definition(): StrategyDefinition<unknown> {
    return defineStrategy({
      name: 'scripted',
      description: 'test strategy',
      params: z.strictObject({ size: z.string().default('0.010') }),
      create: (context) => {
        this.context = context as StrategyContext<unknown>;
        context.outcomes$.subscribe((outcome) => {
          if (this.inHandler) this.reentered += 1;
          this.outcomes.push(outcome);
        });
        // Intents leave synchronously inside the ticker handler.
        return context.ticker$('BTC-PERP').pipe(
          mergeMap((ticker) => {
            this.inHandler = true;
            try {
              return this.react(ticker);
            } finally {
              this.inHandler = false;
            }
          }),
        );
      },
    }) as StrategyDefinition<unknown>;
  }
}

const limitBuy = (price: string, quantity = '0.010'): OrderIntent => ({
  kind: 'place',
  marketId: 'BTC-PERP',
  side: 'buy',
  type: 'limit',
  quantity,
  price,
});

interface Setup {
  readonly clock: VirtualClock;
  readonly venue: StrictVenue;
  readonly marketData: FakeMarketData;
  readonly journal: Journal;
  readonly strategy: Scripted;
  readonly kernel: Kernel;
  readonly logger: RecordingLogger;
  readonly path: string;
}

const cleanups: (() => void)[] = [];

afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function setup(
  options: {
    risk?: RiskConfigInput;
    kernel?: Partial<KernelOptions>;
    path?: string;
  } = {},
): Setup {
  const clock = new VirtualClock(START);
  let path = options.path;
  if (path === undefined) {
    const temporary = tempJournalPath();
    cleanups.push(temporary.cleanup);
    path = temporary.path;
  }
  const journal = openJournal(path, clock, 'normal');
  cleanups.push(() => journal.isOpen && journal.close());
  const venue = new StrictVenue();
  const marketData = new FakeMarketData([testMarket()]);
  const strategy = new Scripted();
  const logger = new RecordingLogger();
  const kernel = Kernel.create({
    clock,
    venue,
    marketData,
    journal,
    strategies: [{ id: 'alpha', definition: strategy.definition(), params: {} }],
    risk: parseRiskConfig({ kill_switch: { file: null, signal: null }, ...options.risk }),
    logger,
    ...options.kernel,
  });
  cleanups.push(() => kernel.dispose());
  return { clock, venue, marketData, journal, strategy, kernel, logger, path };
}

function expectReconciliation(s: Setup, equity = '10000'): void {
  s.venue
    .expect('listOpenOrders', { value: [] })
    .expect('listPositions', { value: [] })
    .expect('getAccount', { value: account({ total_equity: equity }) });
}

function expectHeartbeat(s: Setup, timeoutSeconds: number): void {
  s.venue.expectSend(
    'setCancelAllAfter',
    {
      answer: (call) => ({
        request_id: call.method === 'send' ? call.prepared.requestId : '',
        deadline_at:
          timeoutSeconds === 0 ? null : isoTimestamp(s.clock.now() + timeoutSeconds * 1000),
      }),
    },
    (_prepared, body) => expect(body.timeout_seconds).toBe(timeoutSeconds),
  );
}

function expectPlacement(s: Setup, orderId: string): void {
  s.venue.expectSend('simulateOrder', { value: simulation() });
  s.venue.expectSend('placeOrder', {
    answer: (call) => {
      const body = call.method === 'send' ? bodyOf(call.prepared) : {};
      return order({
        order_id: orderId,
        request_id: String(body.request_id),
        client_order_id: String(body.client_order_id),
        price: String(body.price),
        quantity: String(body.quantity),
      });
    },
  });
}

async function flush(): Promise<void> {
  for (let round = 0; round < 10; round++) await new Promise((resolve) => setImmediate(resolve));
}

async function startKernel(s: Setup): Promise<void> {
  expectReconciliation(s);
  expectHeartbeat(s, 60);
  await s.kernel.start();
  await flush();
}

describe('Kernel.create', () => {
  it('reports every bad strategy id and params at once, before anything runs', () => {
    const clock = new VirtualClock(START);
    const temporary = tempJournalPath();
    cleanups.push(temporary.cleanup);
    const journal = openJournal(temporary.path, clock, 'normal');
    cleanups.push(() => journal.close());
    const definition = new Scripted().definition();
    const venue = new StrictVenue();
    let failure: unknown;
    try {
      Kernel.create({
        clock,
        venue,
        marketData: new FakeMarketData([testMarket()]),
        journal,
        strategies: [
          { id: 'bad id!', definition, params: {} },
          { id: 'twin', definition, params: {} },
          { id: 'twin', definition, params: { size: 5 } },
        ],
        risk: parseRiskConfig({ kill_switch: { file: null, signal: null } }),
        logger: new RecordingLogger(),
      });
    } catch (error) {
      failure = error;
    }
    expect(failure).toMatchObject({ code: 'INVALID_CONFIG' });
    const issues = (failure as { details: { issues: { path: string }[] } }).details.issues;
    expect(issues.map((issue) => issue.path)).toEqual([
      'strategies.0.id',
      'strategies.2.id',
      'strategies.2.params',
    ]);
    venue.verify();
  });
});

describe('the kernel with fake venues', () => {
  it('reconciles, arms the dead-man, then starts strategies with the journal sequence', async () => {
    const s = setup();
    s.journal.noteSequence('alpha', 41);
    expect(s.kernel.status().strategies).toEqual([
      { id: 'alpha', status: 'added', nextSequence: 42 },
    ]);
    await startKernel(s);
    const methods = s.venue.calls.map((call) =>
      call.method === 'send' ? `send ${call.prepared.endpoint}` : call.method,
    );
    expect(methods).toEqual([
      'listOpenOrders',
      'listPositions',
      'getAccount',
      'send setCancelAllAfter',
    ]);
    expect(s.kernel.status()).toMatchObject({
      mayTrade: true,
      reconciled: true,
      tradingState: 'ACTIVE',
      strategies: [{ id: 'alpha', status: 'running', nextSequence: 42 }],
      account: { total_equity: '10000' },
    });
    s.venue.verify();
  });

  it('evaluates against the latest ticker mark and answers denials after the handler returns', async () => {
    const s = setup();
    await startKernel(s);
    s.strategy.react = () => [limitBuy('40000')];
    s.marketData.push(testTicker({ market_id: 'BTC-PERP', mark_price: '50000' }, START));
    await flush();
    expect(s.strategy.outcomes).toMatchObject([
      {
        status: 'denied',
        intent: { requestId: `alpha:${EPOCH}:1` },
        denials: [{ rule: 'price_band_percent', limit: '5' }],
      },
    ]);
    expect(s.strategy.reentered).toBe(0);

    expectPlacement(s, 'order-1');
    s.marketData.push(testTicker({ market_id: 'BTC-PERP', mark_price: '40100' }, START));
    await flush();
    expect(s.strategy.outcomes[1]).toMatchObject({
      status: 'accepted',
      orderId: 'order-1',
      intent: { requestId: `alpha:${EPOCH}:2` },
    });
    expect(s.strategy.reentered).toBe(0);
    expect(s.journal.requireIntent(`alpha:${EPOCH}:2`).state).toBe('accepted');
    s.venue.verify();
  });

  it('reads the latest ticker when an intent needs it, where the market data tells arrivals alone', async () => {
    const recorded = new RecordedMarketData([testMarket()]);
    let built = 0;
    const latestTicker = recorded.latestTicker.bind(recorded);
    recorded.latestTicker = (marketId) => {
      built += 1;
      return latestTicker(marketId);
    };
    const s = setup({ kernel: { marketData: recorded } });
    await startKernel(s);
    const { occurred_at: _, ...far } = testTicker(
      { market_id: 'BTC-PERP', mark_price: '50000' },
      START,
    );
    const near = { ...far, mark_price: '40100' };
    // Tickers no intent follows are never read.
    recorded.ticker('BTC-PERP', near, START);
    recorded.ticker('BTC-PERP', far, START);
    await flush();
    expect(built).toBe(0);
    s.strategy.react = () => [limitBuy('40000')];
    // The strategy acts on the ticker after the kernel heard of it: the mark it is held to is
    // this ticker's.
    recorded.ticker('BTC-PERP', far, START);
    await flush();
    expect(s.strategy.outcomes).toMatchObject([
      { status: 'denied', denials: [{ rule: 'price_band_percent', limit: '5' }] },
    ]);
    expect(built).toBe(1);
    expectPlacement(s, 'order-1');
    recorded.ticker('BTC-PERP', near, START);
    await flush();
    expect(s.strategy.outcomes[1]).toMatchObject({ status: 'accepted', orderId: 'order-1' });
    expect(built).toBe(2);
    s.venue.verify();
  });

  it('counts placements in flight against the open-order limits', async () => {
    const s = setup({ risk: { max_open_orders_per_market: 1 } });
    await startKernel(s);
    // Both are emitted in one handler: the second is evaluated before the venue answers the first.
    s.strategy.react = () => [limitBuy('49900'), limitBuy('49800')];
    expectPlacement(s, 'order-1');
    s.marketData.push(testTicker({ market_id: 'BTC-PERP', mark_price: '50000' }, START));
    await flush();
    const byStatus = s.strategy.outcomes.map((outcome) => outcome.status).sort();
    expect(byStatus).toEqual(['accepted', 'denied']);
    expect(s.strategy.outcomes.find((outcome) => outcome.status === 'denied')).toMatchObject({
      intent: { requestId: `alpha:${EPOCH}:2` },
      denials: [{ rule: 'max_open_orders_per_market', limit: '1', observed: '2' }],
    });
    expect(s.venue.sends('placeOrder')).toHaveLength(1);
    s.venue.verify();
  });

  it('closes the permit on a resync until the venue is reconciled again', async () => {
    const s = setup();
    await startKernel(s);
    s.venue.expect('listOpenOrders', { hang: true });
    s.venue.expect('listPositions', { hang: true });
    s.venue.expect('getAccount', { hang: true });
    s.venue.resyncSource.next({ reason: 'test gap', at: START });
    await flush();
    expect(s.kernel.status()).toMatchObject({ mayTrade: false, reconciled: false });
    s.strategy.react = () => [limitBuy('49900')];
    s.marketData.push(testTicker({ market_id: 'BTC-PERP', mark_price: '50000' }, START));
    await flush();
    expect(s.strategy.outcomes).toMatchObject([
      { status: 'denied', denials: [{ rule: 'route_ready' }] },
    ]);
    expect(s.venue.sends('simulateOrder')).toEqual([]);
    s.venue.verify();
  });

  it('reduces trading when an unknown intent cannot be resolved', async () => {
    const s = setup({ kernel: { execution: { resolutionAttempts: 1 } } });
    await startKernel(s);
    s.strategy.react = () => [limitBuy('49900')];
    s.venue.expectSend('simulateOrder', { value: simulation() });
    s.venue.expectSend('placeOrder', { error: transportError('REQUEST_TIMEOUT') });
    s.marketData.push(testTicker({ market_id: 'BTC-PERP', mark_price: '50000' }, START));
    await flush();
    expect(s.strategy.outcomes).toMatchObject([{ status: 'unknown' }]);
    expect(s.kernel.status()).toMatchObject({ unknownIntents: 1, tradingState: 'ACTIVE' });

    s.venue.expect('getRequest', { error: transportError('REQUEST_TIMEOUT') });
    s.clock.advanceBy(500);
    await flush();
    expect(s.kernel.status()).toMatchObject({
      unknownIntents: 1,
      unresolvedIntents: 1,
      tradingState: 'REDUCING',
    });
    // Still unknown, never taken for rejected.
    expect(s.journal.requireIntent(`alpha:${EPOCH}:1`).state).toBe('unknown');
    s.venue.verify();
  });

  it('reports tick-to-place latency on the clock', async () => {
    const s = setup();
    await startKernel(s);
    const latencies: unknown[] = [];
    s.kernel.intentLatency$.subscribe((latency) => latencies.push(latency));
    s.strategy.react = () => [limitBuy('49900')];
    s.venue.expectSend('simulateOrder', {
      answer: () => new Promise((resolve) => s.clock.setTimeout(() => resolve(simulation()), 7)),
    });
    s.venue.expectSend('placeOrder', {
      answer: (call) =>
        new Promise((resolve) =>
          s.clock.setTimeout(() => {
            const body = call.method === 'send' ? bodyOf(call.prepared) : {};
            resolve(
              order({
                order_id: 'order-1',
                request_id: String(body.request_id),
                client_order_id: String(body.client_order_id),
              }),
            );
          }, 3),
        ),
    });
    s.marketData.push(testTicker({ market_id: 'BTC-PERP', mark_price: '50000' }, START));
    await flush();
    s.clock.advanceBy(7);
    await flush();
    s.clock.advanceBy(3);
    await flush();
    expect(latencies).toEqual([{ requestId: `alpha:${EPOCH}:1`, tickToPlaceMs: 7, placeMs: 3 }]);
    s.venue.verify();
  });

  it('stops cleanly: cancel all, confirm none is open, then disarm', async () => {
    const s = setup();
    await startKernel(s);
    s.venue.expectSend('cancelAllOrders', { value: { results: [] } });
    s.venue.expect('listOpenOrders', { value: [] });
    expectHeartbeat(s, 0);
    const report = await s.kernel.stop('test');
    expect(report).toMatchObject({
      cancelled: true,
      confirmed: true,
      disarmed: true,
      remainingOrderIds: [],
      error: null,
    });
    expect(s.strategy.context).not.toBeNull();
    expect(s.kernel.status().strategies[0]?.status).toBe('stopped');
    s.venue.verify();
    // A second stop is the same stop; the status stays readable, the journal closed too.
    expect(await s.kernel.stop('again')).toBe(report);
    s.journal.close();
    expect(s.kernel.status()).toMatchObject({ mayTrade: false, tradingState: 'ACTIVE' });
  });

  it('without a dead-man switch: trades once reconciled, and still cancels all on stop', async () => {
    const s = setup({ kernel: { deadman: false } });
    expectReconciliation(s);
    await s.kernel.start();
    await flush();
    expect(s.kernel.status()).toMatchObject({ mayTrade: true, deadman: null });
    s.venue.expectSend('cancelAllOrders', { value: { results: [] } });
    s.venue.expect('listOpenOrders', { value: [] });
    expect(await s.kernel.stop('test')).toMatchObject({
      cancelled: true,
      confirmed: true,
      error: null,
    });
    expect(s.kernel.status().mayTrade).toBe(false);
    s.venue.verify();
  });

  it('keeps the loss tracking in the journal across a restart', async () => {
    const first = setup();
    await startKernel(first);
    const stored = first.journal.readMeta(LOSS_TRACKING_META_KEY);
    expect(JSON.parse(stored ?? 'null')).toMatchObject({
      dayStartEquity: '10000',
      peakEquity: '10000',
    });
    expect(() => first.journal.writeMeta('epoch', 'other')).toThrow(
      expect.objectContaining({ code: 'JOURNAL_META_RESERVED' }),
    );
    first.kernel.dispose();
    first.journal.close();
    first.venue.verify();

    const second = setup({ path: first.path });
    expect(second.kernel.gate.lossTrackingRecord()).toMatchObject({
      dayStartEquity: '10000',
      peakEquity: '10000',
    });
    second.venue.verify();
  });
});
