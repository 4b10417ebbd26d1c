/**
 * RxJS marble testing for strategies: run a strategy inside `TestScheduler.run`, its inputs
 * given as hot or cold marble observables, and compare the intents it emits with
 * `expectObservable`. The strategy runs in the real host on a clock driven by the test
 * scheduler, so candles, timers and `ctx.timer` follow marble time (one frame = 1 ms).
 */
import {
  defer,
  NEVER,
  Observable,
  type SchedulerAction,
  type SchedulerLike,
  type Subscription,
  map,
  shareReplay,
} from 'rxjs';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { StrategyHost } from '../strategy/host.ts';
import { silentLogger } from '../../core/logger.ts';
import type {
  Account,
  Book,
  Fill,
  IntentOutcome,
  Logger,
  Market,
  Order,
  OrderIntent,
  Position,
  PublicTrade,
  StampedIntent,
  StrategyDefinition,
  StrategyEnvironment,
  Ticker,
} from '../strategy/index.ts';
import { testMarket } from './fixtures.ts';

/** A `Clock` whose time and timers are a scheduler's (a `TestScheduler` in marble tests). */
export function schedulerClock(scheduler: SchedulerLike): Clock {
  const timers = new Map<number, Subscription>();
  let nextTimerId = 1;
  const add = (callback: () => void, delayMs: number, periodMs: number | null): TimerHandle => {
    const timerId = nextTimerId++;
    const subscription = scheduler.schedule(
      function (this: SchedulerAction<unknown>) {
        if (periodMs === null) timers.delete(timerId);
        else this.schedule(undefined, periodMs);
        callback();
      },
      Math.max(0, delayMs),
    );
    timers.set(timerId, subscription);
    return { timerId };
  };
  const clear = (handle: TimerHandle | undefined): void => {
    if (!handle) return;
    timers.get(handle.timerId)?.unsubscribe();
    timers.delete(handle.timerId);
  };
  return {
    now: () => scheduler.now(),
    setTimeout: (callback, delayMs) => add(callback, delayMs, null),
    clearTimeout: clear,
    setInterval: (callback, periodMs) =>
      add(callback, Math.max(1, periodMs), Math.max(1, periodMs)),
    clearInterval: clear,
    scheduler,
  };
}

export interface MarbleStrategyOptions<Params> {
  readonly strategy: StrategyDefinition<Params>;
  readonly params?: unknown;
  /** The `TestScheduler` of the test (or any scheduler). */
  readonly scheduler: SchedulerLike;
  /** Default: one `testMarket()` (BTC-PERP). */
  readonly markets?: readonly Market[];
  /** Per market id; a market left out never ticks. */
  readonly tickers?: Readonly<Record<string, Observable<Ticker>>>;
  readonly books?: Readonly<Record<string, Observable<Book>>>;
  readonly trades?: Readonly<Record<string, Observable<PublicTrade>>>;
  readonly orders?: Observable<Order>;
  readonly fills?: Observable<Fill>;
  readonly positions?: Observable<Position>;
  readonly account?: Observable<Account>;
  /** Answers each intent as it leaves the host (the gate and executor's part). */
  readonly respond?: (
    intent: StampedIntent,
  ) => IntentOutcome | readonly IntentOutcome[] | null | undefined;
  readonly strategyId?: string;
  readonly epoch?: string;
  readonly startSequence?: number;
  readonly logger?: Logger;
}

/**
 * A cold observable of the stamped intents of a strategy: each subscription builds a host on
 * the scheduler's clock, starts the strategy and stops it on unsubscribe. A strategy failure
 * becomes an error notification (marble `#`).
 */
export function stampedIntents$<Params>(
  options: MarbleStrategyOptions<Params>,
): Observable<StampedIntent> {
  return defer(() => {
    const perMarket = <T>(streams: Readonly<Record<string, Observable<T>>> | undefined) => {
      const cache = new Map<string, Observable<T>>();
      return (marketId: string): Observable<T> => {
        let stream = cache.get(marketId);
        if (!stream) {
          stream = streams?.[marketId] ?? NEVER;
          cache.set(marketId, stream);
        }
        return stream;
      };
    };
    const tickerOf = perMarket(options.tickers);
    const tickers = new Map<string, Observable<Ticker>>();
    const markets = [...(options.markets ?? [testMarket()])];
    const environment: StrategyEnvironment = {
      clock: schedulerClock(options.scheduler),
      logger: options.logger ?? silentLogger,
      markets: () => markets,
      // The environment contract: a new subscriber gets the latest ticker.
      ticker$: (marketId) => {
        let stream = tickers.get(marketId);
        if (!stream) {
          stream = tickerOf(marketId).pipe(shareReplay({ bufferSize: 1, refCount: false }));
          tickers.set(marketId, stream);
        }
        return stream;
      },
      book$: perMarket(options.books),
      trades$: perMarket(options.trades),
      orders$: options.orders ?? NEVER,
      fills$: options.fills ?? NEVER,
      positions$: options.positions ?? NEVER,
      account$: options.account ?? NEVER,
    };
    const host = new StrategyHost({ environment, epoch: options.epoch ?? 'e1' });
    return hostIntents(host, options.strategyId ?? 'test', options);
  });
}

function hostIntents<Params>(
  host: StrategyHost,
  strategyId: string,
  options: MarbleStrategyOptions<Params>,
): Observable<StampedIntent> {
  return new Observable<StampedIntent>((subscriber) => {
    const intents = host.intents$.subscribe((intent) => {
      subscriber.next(intent);
      const answer = options.respond?.(intent);
      if (answer === null || answer === undefined) return;
      const outcomes = Array.isArray(answer) ? answer : [answer as IntentOutcome];
      for (const outcome of outcomes) host.deliverOutcome(outcome);
    });
    const failures = host.errors$.subscribe((failure) => subscriber.error(failure.error));
    host.add({
      strategyId,
      definition: options.strategy,
      params: options.params,
      startSequence: options.startSequence,
    });
    host.start(strategyId);
    return () => {
      intents.unsubscribe();
      failures.unsubscribe();
      host.stop();
    };
  });
}

/** The intents alone (without stamps), the easiest values to write in a marble diagram. */
export function strategyIntents$<Params>(
  options: MarbleStrategyOptions<Params>,
): Observable<OrderIntent> {
  return stampedIntents$(options).pipe(map((stamped) => stamped.intent));
}
