import {
  ignoreElements,
  map,
  merge,
  mergeMap,
  Observable,
  of,
  queueScheduler,
  Subject,
  tap,
  throwError,
} from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { VirtualClock } from '../../../src/core/clock.ts';
import type { Market } from '../../../src/protocol/index.ts';
import type { IntentOutcome, OrderIntent, StampedIntent } from '../../../src/runtime/intents.ts';
import {
  cancelOrder,
  closePosition,
  defineStrategy,
  limitOrder,
  marketOrder,
  type StrategyEnvironment,
  type StrategyFailure,
  StrategyHost,
  type Ticker,
} from '../../../src/runtime/strategy/index.ts';
import {
  createStrategyHarness,
  TEST_START_TIME,
  testMarket,
  testOrder,
  testPosition,
  testTicker,
} from '../../../src/runtime/testing/index.ts';

const MARKET = 'BTC-PERP';

/** Places one limit buy at the mark for every ticker. */
const bidder = defineStrategy({
  name: 'bidder',
  params: z.object({ quantity: z.string().default('1'), tag: z.string().default('bid') }),
  create: (ctx, params) =>
    ctx.ticker$(MARKET).pipe(
      map((ticker) =>
        limitOrder({
          marketId: MARKET,
          side: 'buy',
          quantity: params.quantity,
          price: ticker.mark_price ?? '1',
          tag: params.tag,
        }),
      ),
    ),
});

interface TestEnvironment {
  readonly environment: StrategyEnvironment;
  readonly clock: VirtualClock;
  readonly tickers: Subject<Ticker>;
}

function testEnvironment(markets: Market[] = [testMarket()]): TestEnvironment {
  const clock = new VirtualClock(TEST_START_TIME);
  const tickers = new Subject<Ticker>();
  const never = new Subject<never>();
  return {
    clock,
    tickers,
    environment: {
      clock,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      markets: () => markets,
      ticker$: () => tickers,
      book$: () => never,
      trades$: () => never,
      orders$: never,
      fills$: never,
      positions$: never,
      account$: never,
    },
  };
}

describe('stamping', () => {
  it('gives each intent deterministic ids from the strategy, the epoch and its sequence', () => {
    const run = () => {
      const harness = createStrategyHarness({
        strategy: bidder,
        strategyId: 'mm-1',
        epoch: 'j7',
        startSequence: 42,
      });
      harness.mark(MARKET, '100');
      harness.advanceBy(1_500).mark(MARKET, '101');
      return harness.intents;
    };
    const first = run();
    expect(
      first.map((intent) => [intent.sequence, intent.requestId, intent.clientOrderId]),
    ).toEqual([
      [42, 'mm-1:j7:42', 'mm-1:j7:42'],
      [43, 'mm-1:j7:43', 'mm-1:j7:43'],
    ]);
    expect(first.map((intent) => intent.emittedAt)).toEqual([
      TEST_START_TIME,
      TEST_START_TIME + 1_500,
    ]);
    expect(first[1]?.intent).toEqual({
      kind: 'place',
      marketId: MARKET,
      side: 'buy',
      type: 'limit',
      quantity: '1',
      price: '101',
      tag: 'bid',
    });
    expect(run()).toEqual(first);
  });

  it('continues the sequence across a restart and gives cancels no client order id', () => {
    const script = defineStrategy({
      name: 'script',
      params: z.object({}),
      create: () =>
        of<OrderIntent[]>(
          marketOrder({ marketId: MARKET, side: 'sell', quantity: '2' }),
          cancelOrder('other:e1:3'),
          { kind: 'cancel_all' },
          closePosition(MARKET, { quantityPercent: '50' }),
          { kind: 'amend', clientOrderId: 'x:e1:1', price: '5' },
        ),
    });
    const harness = createStrategyHarness({ strategy: script, startSequence: 10 });
    expect(
      harness.intents.map((intent) => [intent.intent.kind, intent.sequence, intent.clientOrderId]),
    ).toEqual([
      ['place', 10, 'test:e1:10'],
      ['cancel', 11, null],
      ['cancel_all', 12, null],
      ['close_position', 13, 'test:e1:13'],
      ['amend', 14, 'test:e1:14'],
    ]);
    expect(harness.host.nextSequence('test')).toBe(15);
  });

  it('freezes each stamped intent and keeps it apart from the object the strategy emitted', () => {
    const emitted: { kind: 'place'; [key: string]: unknown }[] = [];
    const mutable = defineStrategy({
      name: 'mutable',
      params: z.object({}),
      create: (ctx) =>
        ctx.ticker$(MARKET).pipe(
          map(() => {
            const intent = { ...marketOrder({ marketId: MARKET, side: 'buy', quantity: '1' }) };
            emitted.push(intent);
            return intent;
          }),
        ),
    });
    const harness = createStrategyHarness({ strategy: mutable });
    harness.mark(MARKET, '100');
    const [stamped] = harness.intents;
    expect(Object.isFrozen(stamped)).toBe(true);
    expect(Object.isFrozen(stamped?.intent)).toBe(true);
    expect(() => {
      (stamped as { sequence: number }).sequence = 99;
    }).toThrow(TypeError);
    // The strategy may reuse its own object; what left the host does not change.
    emitted[0]!.quantity = '999';
    expect(stamped?.intent).toMatchObject({ quantity: '1' });
  });
});

describe('no re-entrancy', () => {
  it('hands intents on after the handler returns, and outcomes after that', () => {
    const log: string[] = [];
    const { environment, tickers } = testEnvironment();
    const twoAtOnce = defineStrategy({
      name: 'two-at-once',
      params: z.object({}),
      create: (ctx) =>
        merge(
          new Observable<OrderIntent>((subscriber) =>
            ctx.ticker$(MARKET).subscribe(() => {
              log.push('handler begins');
              subscriber.next(marketOrder({ marketId: MARKET, side: 'buy', quantity: '1' }));
              log.push(`handler sees ${ctx.openOrders(MARKET).length} open`);
              subscriber.next(marketOrder({ marketId: MARKET, side: 'buy', quantity: '2' }));
              log.push('handler ends');
            }),
          ),
          ctx.outcomes$.pipe(
            tap((outcome) => log.push(`outcome ${outcome.intent.sequence} ${outcome.status}`)),
            ignoreElements(),
          ),
        ),
    });
    const host = new StrategyHost({ environment, epoch: 'e1' });
    host.intents$.subscribe((intent) => {
      log.push(`sent ${intent.sequence}`);
      host.deliverOutcome({ status: 'denied', intent, denials: [] });
    });
    host.add({ strategyId: 'a', definition: twoAtOnce });
    host.start();
    tickers.next(testTicker({ market_id: MARKET, mark_price: '1' }));
    expect(log).toEqual([
      'handler begins',
      'handler sees 1 open',
      'handler ends',
      'sent 1',
      'sent 2',
      'outcome 1 denied',
      'outcome 2 denied',
    ]);
  });

  it('also queues what a strategy emits while subscribing and from its timers', () => {
    const log: string[] = [];
    const { environment, clock } = testEnvironment();
    const eager = defineStrategy({
      name: 'eager',
      params: z.object({}),
      create: (ctx) =>
        new Observable<OrderIntent>((subscriber) => {
          log.push('subscribe begins');
          subscriber.next(marketOrder({ marketId: MARKET, side: 'buy', quantity: '1' }));
          log.push('subscribe ends');
          const handle = ctx.clock.setTimeout(() => {
            log.push('timer begins');
            subscriber.next(marketOrder({ marketId: MARKET, side: 'sell', quantity: '1' }));
            log.push('timer ends');
          }, 1_000);
          return () => ctx.clock.clearTimeout(handle);
        }),
    });
    const host = new StrategyHost({ environment, epoch: 'e1' });
    host.intents$.subscribe((intent) => log.push(`sent ${intent.sequence}`));
    host.add({ strategyId: 'a', definition: eager });
    host.start();
    clock.advanceBy(1_000);
    expect(log).toEqual([
      'subscribe begins',
      'subscribe ends',
      'sent 1',
      'timer begins',
      'timer ends',
      'sent 2',
    ]);
  });
});

describe('outcomes', () => {
  it('reach only the strategy that emitted the intent', () => {
    const { environment, tickers } = testEnvironment();
    const seen: Record<string, IntentOutcome[]> = { alpha: [], beta: [] };
    const recorder = (id: string) =>
      defineStrategy({
        name: 'recorder',
        params: z.object({}),
        create: (ctx) =>
          merge(
            ctx
              .ticker$(MARKET)
              .pipe(map(() => marketOrder({ marketId: MARKET, side: 'buy', quantity: '1' }))),
            ctx.outcomes$.pipe(
              tap((outcome) => seen[id]?.push(outcome)),
              ignoreElements(),
            ),
          ),
      });
    const host = new StrategyHost({ environment, epoch: 'e1' });
    const sent: StampedIntent[] = [];
    host.intents$.subscribe((intent) => sent.push(intent));
    host.add({ strategyId: 'alpha', definition: recorder('alpha') });
    host.add({ strategyId: 'beta', definition: recorder('beta') });
    host.start();
    tickers.next(testTicker({ market_id: MARKET, mark_price: '1' }));
    expect(sent.map((intent) => intent.requestId)).toEqual(['alpha:e1:1', 'beta:e1:1']);
    const betaIntent = sent[1]!;
    expect(host.deliverOutcome({ status: 'accepted', intent: betaIntent, orderId: 'o-1' })).toBe(
      true,
    );
    expect(seen.alpha).toEqual([]);
    expect(seen.beta?.map((outcome) => outcome.status)).toEqual(['accepted']);
    const stranger = { ...betaIntent, strategyId: 'gamma' };
    expect(host.deliverOutcome({ status: 'accepted', intent: stranger, orderId: 'o-2' })).toBe(
      false,
    );
  });

  it('update the open orders the strategy sees: deny removes, accept keeps with the order id', () => {
    const harness = createStrategyHarness({ strategy: bidder });
    harness.mark(MARKET, '100').mark(MARKET, '99');
    const [first, second] = harness.intents;
    expect(harness.openOrders(MARKET).map((order) => order.status)).toEqual([
      'submitted',
      'submitted',
    ]);
    harness.deny(first!, [{ rule: 'max_orders', limit: '1', observed: '2', message: 'too many' }]);
    harness.accept(second!, 'venue-7');
    expect(harness.openOrders(MARKET)).toMatchObject([
      { clientOrderId: 'test:e1:2', orderId: 'venue-7', status: 'accepted', tag: 'bid' },
    ]);
    harness.orderStatus(second!, 'OPEN');
    expect(harness.openOrders(MARKET)[0]?.status).toBe('OPEN');
    harness.fillIntent(second!, { quantity: '0.4' });
    expect(harness.openOrders(MARKET)[0]?.remainingQuantity.toFixed()).toBe('0.6');
    expect(harness.position(MARKET).quantity.toFixed()).toBe('0.4');
    harness.fillIntent(second!);
    expect(harness.openOrders(MARKET)).toEqual([]);
    expect(harness.position(MARKET)).toMatchObject({ positionId: `position-${MARKET}` });
    expect(harness.position(MARKET).quantity.toFixed()).toBe('1');
    expect(harness.position(MARKET).entryPrice?.toFixed()).toBe('99');
  });

  it('keep an order whose outcome is unknown until it is resolved', () => {
    const harness = createStrategyHarness({ strategy: bidder });
    harness.mark(MARKET, '100');
    const [intent] = harness.intents;
    harness.unknown(intent!);
    expect(harness.openOrders(MARKET).map((order) => order.status)).toEqual(['unknown']);
    harness.resolve(intent!, 'rejected');
    expect(harness.openOrders(MARKET)).toEqual([]);
  });
});

describe('own orders', () => {
  const canceller = defineStrategy({
    name: 'canceller',
    params: z.object({}),
    create: (ctx) =>
      ctx.ticker$(MARKET).pipe(
        mergeMap((ticker) => {
          const open = ctx.openOrders(MARKET).filter((order) => !order.cancelRequested);
          return [
            ...open.map((order) => cancelOrder(order.clientOrderId)),
            limitOrder({
              marketId: MARKET,
              side: 'sell',
              quantity: '1',
              price: ticker.mark_price ?? '1',
              tag: `ask-${ticker.mark_price}`,
            }),
          ];
        }),
      ),
  });

  it('mark cancel requests, clear them when the cancel is refused, and drop cancelled orders', () => {
    const harness = createStrategyHarness({ strategy: canceller });
    harness.mark(MARKET, '100');
    const [place] = harness.take();
    harness.accept(place!).orderStatus(place!, 'OPEN');
    harness.mark(MARKET, '101');
    const [cancel, replacement] = harness.take();
    expect(cancel?.intent).toEqual({ kind: 'cancel', clientOrderId: place?.clientOrderId });
    expect(harness.openOrders(MARKET).map((order) => [order.tag, order.cancelRequested])).toEqual([
      ['ask-100', true],
      ['ask-101', false],
    ]);
    harness.reject(cancel!, 'ORDER_NOT_FOUND');
    expect(harness.openOrders(MARKET)[0]?.cancelRequested).toBe(false);
    harness.orderStatus(place!, 'CANCELLED');
    expect(harness.openOrders(MARKET).map((order) => order.clientOrderId)).toEqual([
      replacement?.clientOrderId,
    ]);
  });

  it('are reported on ownOrders$ with their tags; other orders of the account are not', () => {
    const updates: string[] = [];
    const watcher = defineStrategy({
      name: 'watcher',
      params: z.object({}),
      create: (ctx) =>
        merge(
          ctx.ticker$(MARKET).pipe(
            map(() =>
              limitOrder({
                marketId: MARKET,
                side: 'buy',
                quantity: '1',
                price: '5',
                tag: 'mine',
              }),
            ),
          ),
          ctx.ownOrders$.pipe(
            tap((update) => updates.push(`${update.tag} ${update.order.status}`)),
            ignoreElements(),
          ),
        ),
    });
    const harness = createStrategyHarness({ strategy: watcher });
    harness.mark(MARKET, '5');
    harness.orderStatus(harness.intents[0]!, 'OPEN');
    harness.order({ order_id: 'foreign', market_id: MARKET, client_order_id: 'manual-1' });
    harness.orderStatus(harness.intents[0]!, 'FILLED', '1');
    expect(updates).toEqual(['mine OPEN', 'mine FILLED']);
  });

  it('adopts active orders from before a restart by their id prefix', () => {
    const harness = createStrategyHarness({
      strategy: bidder,
      startSequence: 8,
      orders: [
        testOrder({
          order_id: 'o-7',
          market_id: MARKET,
          client_order_id: 'test:e1:7',
          price: '95',
          quantity: '2',
          filled_quantity: '0.5',
          status: 'PARTIALLY_FILLED',
        }),
        testOrder({ order_id: 'o-x', market_id: MARKET, client_order_id: 'other:e1:7' }),
      ],
    });
    expect(harness.openOrders()).toMatchObject([
      { clientOrderId: 'test:e1:7', orderId: 'o-7', status: 'PARTIALLY_FILLED', intent: null },
    ]);
    expect(harness.openOrders()[0]?.remainingQuantity.toFixed()).toBe('1.5');
  });
});

describe('positions', () => {
  it('are signed, replayed at start, and flat once closed', () => {
    const harness = createStrategyHarness({
      strategy: bidder,
      positions: [
        testPosition({ market_id: MARKET, side: 'short', quantity: '3', entry_price: '50' }),
      ],
    });
    expect(harness.position(MARKET).quantity.toFixed()).toBe('-3');
    expect(harness.position(MARKET).entryPrice?.toFixed()).toBe('50');
    harness.positionUpdate({ market_id: MARKET, side: 'short', quantity: '0', entry_price: '0' });
    expect(harness.position(MARKET)).toMatchObject({ positionId: null, entryPrice: null });
    expect(harness.position(MARKET).quantity.toFixed()).toBe('0');
  });
});

describe('failure isolation', () => {
  const fragile = defineStrategy({
    name: 'fragile',
    params: z.object({ failAt: z.string() }),
    create: (ctx, params) =>
      ctx.ticker$(MARKET).pipe(
        map((ticker) => {
          if (ticker.mark_price === params.failAt) throw new Error('strategy bug');
          return marketOrder({ marketId: MARKET, side: 'buy', quantity: '1' });
        }),
      ),
  });

  function twoStrategies() {
    const { environment, tickers, clock } = testEnvironment();
    const host = new StrategyHost({ environment, epoch: 'e1' });
    const sent: string[] = [];
    const failures: StrategyFailure[] = [];
    host.intents$.subscribe((intent) => sent.push(intent.requestId));
    host.errors$.subscribe((failure) => failures.push(failure));
    return { host, sent, failures, tickers, clock };
  }

  it('stops only the strategy that threw, which then emits nothing', () => {
    const { host, sent, failures, tickers } = twoStrategies();
    host.add({ strategyId: 'weak', definition: fragile, params: { failAt: '2' } });
    host.add({ strategyId: 'strong', definition: fragile, params: { failAt: 'never' } });
    host.start();
    for (const mark of ['1', '2', '3'])
      tickers.next(testTicker({ market_id: MARKET, mark_price: mark }));
    expect(sent).toEqual(['weak:e1:1', 'strong:e1:1', 'strong:e1:2', 'strong:e1:3']);
    expect(host.status('weak')).toBe('failed');
    expect(host.status('strong')).toBe('running');
    expect(failures).toMatchObject([{ strategyId: 'weak', phase: 'run', message: 'strategy bug' }]);
    expect(
      host.deliverOutcome({
        status: 'denied',
        intent: { strategyId: 'weak' } as StampedIntent,
        denials: [],
      }),
    ).toBe(false);
  });

  it('stops a strategy whose create throws or returns something else', () => {
    const { host, failures } = twoStrategies();
    host.add({
      strategyId: 'throws',
      definition: defineStrategy({
        name: 'throws',
        params: z.object({}),
        create: () => {
          throw new Error('no markets');
        },
      }),
    });
    host.add({
      strategyId: 'unknown-market',
      definition: defineStrategy({
        name: 'unknown-market',
        params: z.object({}),
        create: (ctx) => ctx.ticker$('NOPE-PERP').pipe(map(() => cancelOrder('x'))),
      }),
    });
    host.start();
    expect(failures.map((failure) => [failure.strategyId, failure.phase])).toEqual([
      ['throws', 'create'],
      ['unknown-market', 'create'],
    ]);
    expect((failures[1]?.error as { code: string }).code).toBe('UNKNOWN_MARKET');
  });

  it('stops a strategy whose timer callback throws, without disturbing the clock', () => {
    const { host, failures, clock } = twoStrategies();
    host.add({
      strategyId: 'timer',
      definition: defineStrategy({
        name: 'timer',
        params: z.object({}),
        create: (ctx) =>
          new Observable<OrderIntent>(() => {
            ctx.clock.setTimeout(() => {
              throw new Error('tick failed');
            }, 10);
          }),
      }),
    });
    host.start();
    expect(() => clock.advanceBy(10)).not.toThrow();
    expect(failures).toMatchObject([
      { strategyId: 'timer', phase: 'timer', message: 'tick failed' },
    ]);
  });

  it.each([
    [
      'a limit order without a price',
      { kind: 'place', marketId: MARKET, side: 'buy', type: 'limit', quantity: '1' },
    ],
    [
      'an exponent quantity',
      { kind: 'place', marketId: MARKET, side: 'buy', type: 'market', quantity: '1e3' },
    ],
    [
      'a zero quantity',
      { kind: 'place', marketId: MARKET, side: 'buy', type: 'market', quantity: '0' },
    ],
    ['an unknown field', { kind: 'cancel', clientOrderId: 'a', reason: 'x' }],
    ['an unknown kind', { kind: 'flatten' }],
    [
      'a post-only market order',
      {
        kind: 'place',
        marketId: MARKET,
        side: 'buy',
        type: 'market',
        quantity: '1',
        postOnly: true,
      },
    ],
    [
      'a close of 150 percent',
      { kind: 'close_position', marketId: MARKET, quantityPercent: '150' },
    ],
    [
      'a limit order with a slippage bound',
      {
        kind: 'place',
        marketId: MARKET,
        side: 'buy',
        type: 'limit',
        quantity: '1',
        price: '1',
        maxSlippagePercent: '1',
      },
    ],
  ])('stops a strategy that emits %s, and sends nothing from it', (_label, value) => {
    const { host, sent, failures } = twoStrategies();
    host.add({
      strategyId: 'bad',
      definition: defineStrategy({
        name: 'bad',
        params: z.object({}),
        create: () =>
          of(marketOrder({ marketId: MARKET, side: 'buy', quantity: '1' }), value as OrderIntent),
      }),
    });
    host.start();
    expect(failures).toMatchObject([{ strategyId: 'bad', phase: 'intent' }]);
    expect((failures[0]?.error as { code: string }).code).toBe('STRATEGY_INVALID_INTENT');
    // The valid intent emitted just before, in the same task, never left the host.
    expect(sent).toEqual([]);
  });
});

describe('environment failures', () => {
  it('stop the strategy when an account stream fails, even while its context is built', () => {
    const { environment, tickers } = testEnvironment();
    const brokenOrders = new Subject<never>();
    const host = new StrategyHost({
      environment: {
        ...environment,
        orders$: brokenOrders,
        account$: throwError(() => new Error('account feed lost')),
      },
      epoch: 'e1',
    });
    const failures: StrategyFailure[] = [];
    host.errors$.subscribe((failure) => failures.push(failure));
    host.add({ strategyId: 'early', definition: bidder });
    expect(host.status('early')).toBe('failed');
    expect(failures).toMatchObject([
      { strategyId: 'early', phase: 'environment', message: 'account feed lost' },
    ]);

    const healthy = new StrategyHost({
      environment: { ...environment, orders$: brokenOrders },
      epoch: 'e1',
    });
    const sent: string[] = [];
    healthy.intents$.subscribe((intent) => sent.push(intent.requestId));
    healthy.add({ strategyId: 'late', definition: bidder });
    healthy.start();
    brokenOrders.error(new Error('orders feed lost'));
    tickers.next(testTicker({ market_id: MARKET, mark_price: '1' }));
    expect(healthy.status('late')).toBe('failed');
    expect(sent).toEqual([]);
  });
});

describe('stopping', () => {
  it('drops intents a stopped strategy emitted that had not left the host', () => {
    const { environment, tickers } = testEnvironment();
    const host = new StrategyHost({ environment, epoch: 'e1' });
    const sent: string[] = [];
    host.intents$.subscribe((intent) => {
      sent.push(intent.requestId);
      // The kernel halts the strategy on its first intent; the second was already queued.
      host.stop('a');
    });
    host.add({
      strategyId: 'a',
      definition: defineStrategy({
        name: 'pair',
        params: z.object({}),
        create: (ctx) =>
          ctx
            .ticker$(MARKET)
            .pipe(
              mergeMap(() => [
                marketOrder({ marketId: MARKET, side: 'buy', quantity: '1' }),
                marketOrder({ marketId: MARKET, side: 'buy', quantity: '2' }),
              ]),
            ),
      }),
    });
    host.start();
    tickers.next(testTicker({ market_id: MARKET, mark_price: '1' }));
    expect(sent).toEqual(['a:e1:1__']);
  });
});

describe('adding strategies', () => {
  it('lists every params problem with its path', () => {
    const host = new StrategyHost({ environment: testEnvironment().environment, epoch: 'e1' });
    const strict = defineStrategy({
      name: 'strict',
      params: z.strictObject({
        markets: z.array(z.string()),
        spread: z.number().positive(),
      }),
      create: () => of(),
    });
    try {
      host.add({
        strategyId: 's',
        definition: strict,
        params: { markets: ['A', 3], spread: -1, extra: true },
      });
      expect.unreachable();
    } catch (error) {
      const failure = error as {
        code: string;
        message: string;
        details: { issues: { path: unknown[] }[] };
      };
      expect(failure.code).toBe('STRATEGY_PARAMS_INVALID');
      expect(failure.details.issues.map((issue) => issue.path)).toEqual([
        ['markets', 1],
        ['spread'],
        ['extra'],
      ]);
      expect(failure.message).toContain('markets[1]:');
      expect(failure.message).toContain('spread:');
      expect(failure.message).toContain('extra');
    }
  });

  it('refuses bad and duplicate strategy ids', () => {
    const host = new StrategyHost({ environment: testEnvironment().environment, epoch: 'e1' });
    expect(() => host.add({ strategyId: 'a:b', definition: bidder })).toThrow(/strategy id/);
    host.add({ strategyId: 'a', definition: bidder });
    expect(() => host.add({ strategyId: 'a', definition: bidder })).toThrow(/already used/);
  });

  it('hands streams on as queue tasks, in order, and nothing queued once stopped', () => {
    const seen: string[] = [];
    const { environment, tickers } = testEnvironment();
    const watcher = defineStrategy({
      name: 'watcher',
      params: z.object({}),
      create: (ctx) =>
        ctx.ticker$(MARKET).pipe(
          tap((ticker) => seen.push(`ticker ${ticker.mark_price}`)),
          ignoreElements(),
        ),
    });
    const host = new StrategyHost({ environment, epoch: 'e1' });
    host.add({ strategyId: 'w', definition: watcher });
    host.start();
    queueScheduler.schedule(() => {
      tickers.next(testTicker({ market_id: MARKET, mark_price: '1' }));
      tickers.next(testTicker({ market_id: MARKET, mark_price: '2' }));
      seen.push('task ends');
    });
    expect(seen).toEqual(['task ends', 'ticker 1', 'ticker 2']);
    seen.length = 0;
    // Queued behind the task that stops the strategy: handed on to nobody.
    queueScheduler.schedule(() => {
      tickers.next(testTicker({ market_id: MARKET, mark_price: '3' }));
      host.stop('w');
    });
    tickers.next(testTicker({ market_id: MARKET, mark_price: '4' }));
    expect(seen).toEqual([]);
  });

  it('stops a strategy on request: no more intents, no more outcomes', () => {
    const harness = createStrategyHarness({ strategy: bidder });
    harness.mark(MARKET, '1');
    harness.stop();
    harness.mark(MARKET, '2');
    expect(harness.intents).toHaveLength(1);
    expect(harness.status()).toBe('stopped');
    expect(
      harness.host.deliverOutcome({
        status: 'accepted',
        intent: harness.intents[0]!,
        orderId: 'o',
      }),
    ).toBe(false);
  });
});
