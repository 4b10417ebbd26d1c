/**
 * Builds the `StrategyContext` of one strategy from the kernel's `StrategyEnvironment`.
 *
 * Every way into strategy code (stream notifications, outcomes, timers) runs as a task on
 * RxJS's `queueScheduler`. Intents the strategy emits are handed on by another queue task, so
 * they leave only after the strategy's handler has returned, and whatever the pipeline does
 * with them synchronously (a risk denial, say) reaches the strategy as a later task, never in
 * the middle of its handler (design rule 10).
 *
 * Snapshots (`position`, `openOrders`, `lastTicker`, `lastAccount`) are kept by subscriptions
 * made before the strategy's own, so they are up to date when the strategy handles an event.
 */
import type { Observable } from 'rxjs';
import {
  concat,
  defer,
  filter,
  from,
  queueScheduler,
  type SchedulerLike,
  Subject,
  type Subscription,
  share,
  timer,
} from 'rxjs';
import { type Clock, ClockScheduler, type TimerHandle } from '../../core/clock.ts';
import { type Decimal, parseDecimal, ZERO } from '../../core/decimal.ts';
import { observeOnQueue } from '../../core/streams.ts';
import { PaperbotError } from '../../core/errors.ts';
import type { Account, Candle, CandleInterval, Market, Position } from '../../protocol/index.ts';
import type { IntentOutcome, StampedIntent } from '../intents.ts';
import { candlesFromTrades } from '../streams/candles.ts';
import { marketInfoOf } from './market-info.ts';
import { OwnOrders } from './own-orders.ts';
import type {
  LogFields,
  Logger,
  MarketInfo,
  OwnOrderUpdate,
  PositionSnapshot,
  StrategyContext,
  StrategyEnvironment,
  Ticker,
} from './types.ts';

/** A logger that adds the strategy id to every line. */
export function strategyLogger(logger: Logger, strategyId: string): Logger {
  const withId = (fields?: LogFields): LogFields => ({ strategy: strategyId, ...fields });
  return {
    debug: (message, fields) => logger.debug(message, withId(fields)),
    info: (message, fields) => logger.info(message, withId(fields)),
    warn: (message, fields) => logger.warn(message, withId(fields)),
    error: (message, fields) => logger.error(message, withId(fields)),
  };
}

/**
 * The runtime's clock as the strategy sees it: the same time, but timer callbacks run as queue
 * tasks, and an exception in one stops the strategy instead of unwinding the caller's clock.
 */
class StrategyClock implements Clock {
  readonly scheduler: SchedulerLike;

  constructor(
    private readonly inner: Clock,
    private readonly onError: (source: 'timer', error: unknown) => void,
  ) {
    this.scheduler = new ClockScheduler(this);
  }

  now(): number {
    return this.inner.now();
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    return this.inner.setTimeout(() => this.run(callback), delayMs);
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    this.inner.clearTimeout(handle);
  }

  setInterval(callback: () => void, periodMs: number): TimerHandle {
    return this.inner.setInterval(() => this.run(callback), periodMs);
  }

  clearInterval(handle: TimerHandle | undefined): void {
    this.inner.clearInterval(handle);
  }

  private run(callback: () => void): void {
    queueScheduler.schedule(() => {
      try {
        callback();
      } catch (error) {
        this.onError('timer', error);
      }
    });
  }
}

interface HeldPosition {
  readonly marketId: string;
  readonly positionId: string;
  readonly quantity: Decimal;
  readonly entryPrice: Decimal;
}

function signedQuantity(position: Position): Decimal {
  const quantity = parseDecimal(position.quantity);
  return position.side === 'short' ? quantity.abs().neg() : quantity;
}

export interface StrategyContextOptions<Params> {
  readonly strategyId: string;
  readonly params: Params;
  readonly environment: StrategyEnvironment;
  readonly logger: Logger;
  /** The start of every client order id the host gives this strategy's intents. */
  readonly ownIdPrefix: string;
  /** Called when a timer callback of the strategy throws, or an environment stream fails. */
  readonly onError: (source: 'timer' | 'environment', error: unknown) => void;
}

/** The host's handle on a context: the strategy sees `context`, the host uses the rest. */
export interface StrategyContextRuntime<Params> {
  readonly context: StrategyContext<Params>;
  /** Hands over loaded history before the strategy starts (replaces what was there). */
  setCandleHistory(marketId: string, interval: CandleInterval, candles: readonly Candle[]): void;
  recordIntent(stamped: StampedIntent): void;
  deliverOutcome(outcome: IntentOutcome): void;
  dispose(): void;
}

export function createStrategyContext<Params>(
  options: StrategyContextOptions<Params>,
): StrategyContextRuntime<Params> {
  const { environment, strategyId } = options;
  const clock = new StrategyClock(environment.clock, options.onError);
  const ownOrders = new OwnOrders(options.ownIdPrefix);
  const positions = new Map<string, HeldPosition>();
  const tickers = new Map<string, Ticker>();
  const tickerWatches = new Set<string>();
  const candleStreams = new Map<string, Observable<Candle>>();
  const candleHistories = new Map<string, readonly Candle[]>();
  const candleKey = (marketId: string, interval: CandleInterval): string =>
    `${marketId}\n${interval}`;
  const marketInfos = new WeakMap<Market, MarketInfo>();
  const outcomes = new Subject<IntentOutcome>();
  const ownOrderUpdates = new Subject<OwnOrderUpdate>();
  const subscriptions: Subscription[] = [];
  let lastAccount: Account | null = null;

  const findMarket = (marketId: string): Market => {
    const market = environment.markets().find((candidate) => candidate.market_id === marketId);
    if (!market) {
      throw new PaperbotError(
        'UNKNOWN_MARKET',
        `strategy ${strategyId}: unknown market ${marketId}`,
        {
          details: { strategy: strategyId, marketId },
        },
      );
    }
    return market;
  };

  const marketInfo = (marketId: string): MarketInfo => {
    const market = findMarket(marketId);
    let info = marketInfos.get(market);
    if (!info) {
      info = marketInfoOf(market);
      marketInfos.set(market, info);
    }
    return info;
  };

  // A strategy reads its position on every quote; it changes only with a position update.
  const positionSnapshots = new Map<string, PositionSnapshot>();
  const position = (marketId: string): PositionSnapshot => {
    let snapshot = positionSnapshots.get(marketId);
    if (snapshot === undefined) {
      snapshot = positionOf(marketId);
      // Bounded: any id may be asked for, not only the markets'.
      if (positionSnapshots.size >= 1_024) positionSnapshots.clear();
      positionSnapshots.set(marketId, snapshot);
    }
    return snapshot;
  };

  const positionOf = (marketId: string): PositionSnapshot => {
    const held = [...positions.values()].filter((candidate) => candidate.marketId === marketId);
    let quantity = ZERO;
    let notional = ZERO;
    for (const part of held) {
      quantity = quantity.plus(part.quantity);
      notional = notional.plus(part.quantity.abs().times(part.entryPrice));
    }
    const first = held[0];
    // Positions of opposite sides on one market (hedged margin modes) have no single entry.
    const oneSide = held.every((part) => part.quantity.gt(ZERO) === first?.quantity.gt(ZERO));
    const entryPrice =
      first === undefined || !oneSide
        ? null
        : held.length === 1
          ? first.entryPrice
          : notional.div(quantity.abs());
    return Object.freeze({
      marketId,
      positionId: first?.positionId ?? null,
      quantity,
      entryPrice,
    });
  };

  const environmentFailed = (error: unknown): void => options.onError('environment', error);

  const watchTicker = (marketId: string): void => {
    if (tickerWatches.has(marketId)) return;
    tickerWatches.add(marketId);
    subscriptions.push(
      environment.ticker$(marketId).subscribe({
        next: (ticker) => tickers.set(marketId, ticker),
        error: environmentFailed,
      }),
    );
  };

  // Snapshot keepers subscribe before the strategy does, so they see every event first. If
  // one of these streams fails, the snapshots would silently go stale: stop the strategy.
  subscriptions.push(
    environment.positions$.subscribe({
      next: (update) => {
        positionSnapshots.clear();
        const quantity = signedQuantity(update);
        if (quantity.eq(ZERO)) {
          positions.delete(update.position_id);
        } else {
          positions.set(update.position_id, {
            marketId: update.market_id,
            positionId: update.position_id,
            quantity,
            entryPrice: parseDecimal(update.entry_price),
          });
        }
      },
      error: environmentFailed,
    }),
    environment.account$.subscribe({
      next: (account) => {
        lastAccount = account;
      },
      error: environmentFailed,
    }),
    environment.orders$.subscribe({
      next: (order) => {
        const update = ownOrders.applyOrder(order);
        if (update !== null) ownOrderUpdates.next(update);
      },
      error: environmentFailed,
    }),
  );

  const liveCandles$ = (marketId: string, interval: CandleInterval): Observable<Candle> => {
    const key = candleKey(marketId, interval);
    let stream = candleStreams.get(key);
    if (!stream) {
      stream = candlesFromTrades(environment.trades$(marketId), {
        interval,
        clock: environment.clock,
        graceMs: environment.candleGraceMs ?? 0,
        onLateTrade: (trade) =>
          options.logger.debug('trade arrived after its candle closed; left out', {
            marketId,
            interval,
            tradeId: trade.trade_id,
          }),
      }).pipe(share(), observeOnQueue());
      candleStreams.set(key, stream);
    }
    return stream;
  };

  const candleHistory = (marketId: string, interval: CandleInterval): readonly Candle[] => {
    findMarket(marketId);
    return candleHistories.get(candleKey(marketId, interval)) ?? [];
  };

  // History first, then the live candles that open after its last one (a live candle of the
  // same bucket was built from part of its trades only).
  const candles$ = (marketId: string, interval: CandleInterval): Observable<Candle> => {
    findMarket(marketId);
    const live$ = liveCandles$(marketId, interval);
    return defer(() => {
      const history = candleHistories.get(candleKey(marketId, interval)) ?? [];
      const last = history.at(-1);
      if (last === undefined) return live$;
      return concat(
        from(history).pipe(observeOnQueue()),
        live$.pipe(filter((candle) => candle.open_time > last.open_time)),
      );
    });
  };

  const context: StrategyContext<Params> = Object.freeze({
    strategyId,
    params: options.params,
    clock,
    scheduler: clock.scheduler,
    logger: options.logger,
    marketIds: () => environment.markets().map((market) => market.market_id),
    market: marketInfo,
    ticker$: (marketId: string) => {
      findMarket(marketId);
      watchTicker(marketId);
      return environment.ticker$(marketId).pipe(observeOnQueue());
    },
    book$: (marketId: string) => {
      findMarket(marketId);
      return environment.book$(marketId).pipe(observeOnQueue());
    },
    trades$: (marketId: string) => {
      findMarket(marketId);
      return environment.trades$(marketId).pipe(observeOnQueue());
    },
    candles$,
    candleHistory,
    orders$: environment.orders$.pipe(observeOnQueue()),
    ownOrders$: ownOrderUpdates.pipe(observeOnQueue()),
    fills$: environment.fills$.pipe(observeOnQueue()),
    positions$: environment.positions$.pipe(observeOnQueue()),
    account$: environment.account$.pipe(observeOnQueue()),
    outcomes$: outcomes.pipe(observeOnQueue()),
    position,
    openOrders: (marketId?: string) => ownOrders.open(marketId),
    emulatedOrders: (marketId?: string) =>
      (environment.emulatedOrders?.(strategyId) ?? []).filter(
        (exit) => marketId === undefined || exit.marketId === marketId,
      ),
    lastTicker: (marketId: string) => {
      findMarket(marketId);
      watchTicker(marketId);
      return tickers.get(marketId) ?? null;
    },
    lastAccount: () => lastAccount,
    timer: (delayMs: number, periodMs?: number) =>
      defer(() =>
        periodMs === undefined
          ? timer(delayMs, clock.scheduler)
          : timer(delayMs, periodMs, clock.scheduler),
      ),
  });

  return {
    context,
    setCandleHistory: (marketId, interval, candles) => {
      candleHistories.set(candleKey(marketId, interval), Object.freeze([...candles]));
    },
    recordIntent: (stamped) => ownOrders.recordIntent(stamped, (id) => position(id).quantity),
    deliverOutcome: (outcome) => {
      ownOrders.applyOutcome(outcome);
      outcomes.next(outcome);
    },
    dispose: () => {
      for (const subscription of subscriptions) subscription.unsubscribe();
      subscriptions.length = 0;
      outcomes.complete();
      ownOrderUpdates.complete();
    },
  };
}
