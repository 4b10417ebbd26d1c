import { EMPTY, ignoreElements, map, merge, mergeMap, tap } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Account,
  Book,
  Fill,
  Market,
  Order,
  Position,
  PublicTrade,
  TickerData,
} from '../../../src/protocol/index.ts';
import {
  defineStrategy,
  limitOrder,
  marketOrder,
  type OrderIntent,
} from '../../../src/runtime/strategy/index.ts';
import {
  createStrategyHarness,
  schedulerClock,
  stampedIntents$,
  strategyIntents$,
  TEST_START_TIME,
  testAccount,
  testBook,
  testFill,
  testMarket,
  testOrder,
  testPosition,
  testTicker,
  testTrade,
} from '../../../src/runtime/testing/index.ts';

const MARKET = 'BTC-PERP';

/** Buys at the mark on each ticker; sells the close of each 1m candle. */
const echo = defineStrategy({
  name: 'echo',
  params: z.object({ candles: z.boolean().default(false) }),
  create: (ctx, params) =>
    params.candles
      ? ctx
          .candles$(MARKET, '1m')
          .pipe(
            map((candle) =>
              limitOrder({ marketId: MARKET, side: 'sell', quantity: '1', price: candle.close }),
            ),
          )
      : ctx.ticker$(MARKET).pipe(
          map((ticker) =>
            limitOrder({
              marketId: MARKET,
              side: 'buy',
              quantity: '1',
              price: ticker.mark_price ?? '1',
            }),
          ),
        ),
});

describe('fixtures', () => {
  it('build objects the protocol schemas accept', () => {
    expect(Market.parse(testMarket())).toEqual(testMarket());
    const { occurred_at: _occurredAt, ...tickerData } = testTicker({
      market_id: MARKET,
      mark_price: '1',
    });
    expect(TickerData.parse(tickerData)).toEqual(tickerData);
    expect(
      PublicTrade.parse(testTrade({ market_id: MARKET, price: '1', trade_id: 't' })),
    ).toBeTruthy();
    expect(
      Book.parse(testBook({ market_id: MARKET, bids: [['1', '2']], asks: [['3', '4']] })),
    ).toBeTruthy();
    expect(Order.parse(testOrder({ order_id: 'o', market_id: MARKET }))).toBeTruthy();
    expect(
      Fill.parse(testFill({ fill_id: 'f', market_id: MARKET, price: '1', quantity: '1' })),
    ).toBeTruthy();
    expect(
      Position.parse(
        testPosition({ market_id: MARKET, side: 'long', quantity: '1', entry_price: '1' }),
      ),
    ).toBeTruthy();
    expect(Account.parse(testAccount())).toEqual(testAccount());
  });
});

describe('StrategyHarness', () => {
  it('feeds events at virtual times and collects the intents, taken in batches', () => {
    const harness = createStrategyHarness({ strategy: echo });
    expect(harness.now()).toBe(TEST_START_TIME);
    harness.at(TEST_START_TIME + 5_000).mark(MARKET, '10');
    harness.at(TEST_START_TIME + 9_000).mark(MARKET, '11');
    expect(
      harness
        .take()
        .map((intent) => [intent.emittedAt, intent.intent.kind === 'place' && intent.intent.price]),
    ).toEqual([
      [TEST_START_TIME + 5_000, '10'],
      [TEST_START_TIME + 9_000, '11'],
    ]);
    expect(harness.take()).toEqual([]);
    harness.mark(MARKET, '12');
    expect(harness.take()).toHaveLength(1);
    expect(harness.intents).toHaveLength(3);
    expect(harness.intent('test:e1:2').sequence).toBe(2);
  });

  it('builds candles from fed trades on virtual time', () => {
    const harness = createStrategyHarness({ strategy: echo, params: { candles: true } });
    harness.at(TEST_START_TIME + 1_000).trade({ market_id: MARKET, price: '5' });
    harness.at(TEST_START_TIME + 2_000).trade({ market_id: MARKET, price: '6' });
    harness.advanceTo(TEST_START_TIME + 59_999);
    expect(harness.take()).toEqual([]);
    harness.advanceBy(1);
    expect(harness.take().map((intent) => intent.intent)).toMatchObject([
      { side: 'sell', price: '6' },
    ]);
  });

  it('answers like a venue with respond: accept', () => {
    const harness = createStrategyHarness({ strategy: echo, respond: 'accept' });
    harness.mark(MARKET, '10');
    expect(harness.outcomes.map((outcome) => outcome.status)).toEqual(['accepted']);
    expect(harness.openOrders(MARKET)).toMatchObject([{ status: 'OPEN', orderId: 'order-1' }]);
  });

  it('answers with a responder function', () => {
    const harness = createStrategyHarness({
      strategy: echo,
      respond: (intent) => ({
        status: 'denied',
        intent,
        denials: [{ rule: 'max_price', limit: '10', observed: '11', message: 'price too high' }],
      }),
    });
    harness.mark(MARKET, '11');
    expect(harness.outcomes).toMatchObject([
      { status: 'denied', denials: [{ rule: 'max_price' }] },
    ]);
    expect(harness.openOrders()).toEqual([]);
  });

  it('records log lines with their virtual time and the strategy id', () => {
    const talker = defineStrategy({
      name: 'talker',
      params: z.object({}),
      create: (ctx) =>
        ctx.timer(250).pipe(
          tap(() => ctx.logger.info('woke up', { reason: 'timer' })),
          ignoreElements(),
        ),
    });
    const harness = createStrategyHarness({ strategy: talker });
    harness.advanceBy(250);
    expect(harness.logs.filter((line) => line.message === 'woke up')).toEqual([
      {
        level: 'info',
        message: 'woke up',
        fields: { strategy: 'test', reason: 'timer' },
        at: TEST_START_TIME + 250,
      },
    ]);
  });

  it('can start later, after the test has set up state', () => {
    const harness = createStrategyHarness({ strategy: echo, autoStart: false });
    harness.mark(MARKET, '7');
    expect(harness.status()).toBe('added');
    harness.start();
    // The environment replays the latest ticker, so the strategy sees it on subscribe.
    expect(harness.take().map((intent) => intent.intent)).toMatchObject([{ price: '7' }]);
  });
});

describe('marbles', () => {
  const scheduler = () =>
    new TestScheduler((actual, expected) => {
      expect(actual).toEqual(expected);
    });

  it('compares the intents of a strategy with a marble diagram', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ hot, expectObservable }) => {
      const tickers = hot('-a--b', {
        a: testTicker({ market_id: MARKET, mark_price: '100' }),
        b: testTicker({ market_id: MARKET, mark_price: '101' }),
      });
      expectObservable(
        strategyIntents$({
          strategy: echo,
          scheduler: testScheduler,
          tickers: { [MARKET]: tickers },
        }),
      ).toBe('-x--y', {
        x: limitOrder({ marketId: MARKET, side: 'buy', quantity: '1', price: '100' }),
        y: limitOrder({ marketId: MARKET, side: 'buy', quantity: '1', price: '101' }),
      });
    });
  });

  it('runs candles and timers on marble time', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ hot, expectObservable }) => {
      const trade = (price: string, at: number) =>
        testTrade({ market_id: MARKET, price, trade_id: `t-${at}` }, at);
      const trades = hot('10ms a 9ms b', { a: trade('5', 10), b: trade('7', 20) });
      // Candles close at the minute: the clock passes the bucket end at frame 60000.
      expectObservable(
        strategyIntents$({
          strategy: echo,
          params: { candles: true },
          scheduler: testScheduler,
          trades: { [MARKET]: trades },
        }),
        '^ 70s !',
      ).toBe('60s x', {
        x: limitOrder({ marketId: MARKET, side: 'sell', quantity: '1', price: '7' }),
      });
    });
  });

  it('stamps intents and turns a strategy failure into an error notification', () => {
    const testScheduler = scheduler();
    const fragile = defineStrategy({
      name: 'fragile',
      params: z.object({}),
      create: (ctx) =>
        ctx.ticker$(MARKET).pipe(
          mergeMap((ticker): OrderIntent[] => {
            if (ticker.mark_price === null) throw new Error('no mark');
            return [marketOrder({ marketId: MARKET, side: 'buy', quantity: '1' })];
          }),
        ),
    });
    testScheduler.run(({ hot, expectObservable }) => {
      const tickers = hot('-a-b', {
        a: testTicker({ market_id: MARKET, mark_price: '1' }),
        b: testTicker({ market_id: MARKET, mark_price: null }),
      });
      expectObservable(
        stampedIntents$({
          strategy: fragile,
          scheduler: testScheduler,
          tickers: { [MARKET]: tickers },
          strategyId: 'm',
          epoch: 'x',
        }).pipe(map((intent) => intent.requestId)),
      ).toBe('-a-#', { a: 'm:x:1___' }, new Error('no mark'));
    });
  });

  it('delivers outcomes from a responder to the strategy', () => {
    const testScheduler = scheduler();
    const counter = defineStrategy({
      name: 'counter',
      params: z.object({}),
      create: (ctx) =>
        merge(
          ctx
            .ticker$(MARKET)
            .pipe(map(() => marketOrder({ marketId: MARKET, side: 'buy', quantity: '1' }))),
          ctx.outcomes$.pipe(
            mergeMap((outcome) =>
              outcome.status === 'denied'
                ? [marketOrder({ marketId: MARKET, side: 'buy', quantity: '0.5' })]
                : EMPTY,
            ),
          ),
        ),
    });
    testScheduler.run(({ hot, expectObservable }) => {
      const tickers = hot('--a', { a: testTicker({ market_id: MARKET, mark_price: '1' }) });
      expectObservable(
        strategyIntents$({
          strategy: counter,
          scheduler: testScheduler,
          tickers: { [MARKET]: tickers },
          respond: (intent) =>
            intent.sequence === 1 ? { status: 'denied', intent, denials: [] } : null,
        }).pipe(map((intent) => (intent.kind === 'place' ? intent.quantity : ''))),
      ).toBe('--(ab)', { a: '1', b: '0.5' });
    });
  });

  it('schedulerClock fires timeouts and intervals at scheduler time and clears them', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ flush }) => {
      const clock = schedulerClock(testScheduler);
      const fired: string[] = [];
      clock.setTimeout(() => fired.push(`timeout@${clock.now()}`), 5);
      const cleared = clock.setTimeout(() => fired.push('never'), 6);
      clock.clearTimeout(cleared);
      const interval = clock.setInterval(() => {
        fired.push(`interval@${clock.now()}`);
        if (clock.now() >= 9) clock.clearInterval(interval);
      }, 3);
      flush();
      expect(fired).toEqual(['interval@3', 'timeout@5', 'interval@6', 'interval@9']);
    });
  });
});
