/**
 * The strategy API: what a plugin sees (`StrategyContext`) and what the kernel hands the host so
 * it can build one (`StrategyEnvironment`). A strategy gets streams, snapshots, market metadata,
 * a clock and a logger; it never gets a venue or a client, so the only way it can act is by
 * emitting intents.
 */
import type { Observable, SchedulerLike } from 'rxjs';
import type { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import type { Decimal } from '../../core/decimal.ts';
import type { Logger } from '../../core/logger.ts';
import type {
  Account,
  Book,
  Candle,
  CandleInterval,
  Fill,
  Market,
  Order,
  OrderStatus,
  Position,
  PublicTrade,
} from '../../protocol/index.ts';
import type { EmulatedExit } from '../exits/types.ts';
import type { Ticker } from '../streams/market-data.ts';
import type { IntentOutcome, OrderIntent, PlaceIntent, Side, StampedIntent } from '../intents.ts';

/** An emulated exit as its strategy sees it (see `runtime/exits`). */
export type EmulatedOrder = EmulatedExit;

/** The logging surface a strategy gets (`ctx.log.info('msg', { fields })`); the kernel backs it with pino. */
export type { Logger, LogFields } from '../../core/logger.ts';

export type { Ticker } from '../streams/market-data.ts';

/** The trading rules of a market, as decimals, read from the market list. */
export interface MarketInfo {
  readonly marketId: string;
  readonly displayName: string;
  readonly baseAsset: string;
  readonly quoteAsset: string;
  readonly status: string;
  readonly routeId: string;
  /** Null when the venue does not say; prices are then sent as computed. */
  readonly priceTick: Decimal | null;
  readonly quantityStep: Decimal | null;
  readonly minimumQuantity: Decimal | null;
  readonly minimumNotional: Decimal | null;
  readonly maximumLeverage: number | null;
  readonly marginModes: readonly string[];
  readonly orderTypes: readonly string[];
}

/** The strategy's view of its position on one market. */
export interface PositionSnapshot {
  readonly marketId: string;
  /** Null when flat. */
  readonly positionId: string | null;
  /** Signed: positive long, negative short, zero flat. */
  readonly quantity: Decimal;
  /** Null when flat (or when positions of opposite sides share the market). */
  readonly entryPrice: Decimal | null;
}

/**
 * Where one of the strategy's orders stands: `submitted` (emitted, no venue answer yet),
 * `accepted` (the venue took it, no order event yet), `unknown` (the outcome is being
 * resolved; never treated as rejected), or the venue's order status.
 */
export type OpenOrderStatus = 'submitted' | 'accepted' | 'unknown' | OrderStatus;

/** One of the strategy's own active orders, including those it emitted that are in flight. */
export interface OpenOrder {
  readonly clientOrderId: string;
  readonly requestId: string;
  readonly orderId: string | null;
  readonly marketId: string;
  readonly side: Side;
  readonly type: PlaceIntent['type'];
  /** Null for market orders. */
  readonly price: Decimal | null;
  readonly quantity: Decimal;
  readonly filledQuantity: Decimal;
  readonly remainingQuantity: Decimal;
  readonly postOnly: boolean;
  readonly reduceOnly: boolean;
  /** The tag of the intent that created the order; undefined for orders adopted after a restart. */
  readonly tag: string | undefined;
  readonly status: OpenOrderStatus;
  /** True once the strategy asked to cancel it (cancel, cancel all or amend) and no answer says no. */
  readonly cancelRequested: boolean;
  /** The stamped intent that created the order; null for orders adopted after a restart. */
  readonly intent: StampedIntent | null;
}

/** A venue update of one of the strategy's own orders, with the intent that created it. */
export interface OwnOrderUpdate {
  readonly order: Order;
  readonly clientOrderId: string;
  readonly tag: string | undefined;
  /** Null for orders adopted after a restart. */
  readonly intent: StampedIntent | null;
}

/**
 * Everything a strategy can see and use. All streams deliver on RxJS's queue scheduler, so a
 * strategy is never re-entered while it is handling an event, and the intents it emits leave
 * only after its handler returns (design rule 10).
 */
export interface StrategyContext<Params = unknown> {
  /** The id this instance runs under (from the config); part of every request id. */
  readonly strategyId: string;
  readonly params: Params;
  /** The runtime's clock: system time live, virtual time in replay and tests. */
  readonly clock: Clock;
  /** An RxJS scheduler on the clock, for time operators (`debounceTime(ms, ctx.scheduler)`). */
  readonly scheduler: SchedulerLike;
  readonly logger: Logger;

  /** Ids of every market the runtime knows. */
  marketIds(): readonly string[];
  /** Trading rules of a market; throws `UNKNOWN_MARKET` for a market the runtime does not know. */
  market(marketId: string): MarketInfo;

  ticker$(marketId: string): Observable<Ticker>;
  book$(marketId: string): Observable<Book>;
  trades$(marketId: string): Observable<PublicTrade>;
  /**
   * Closed candles built from the market's trades (see `runtime/streams/candles.ts`). When the
   * definition asked for history (`candleHistory`), each subscriber first gets those candles,
   * oldest first, then the live ones that close after them.
   */
  candles$(marketId: string, interval: CandleInterval): Observable<Candle>;
  /** The history loaded before the strategy started (empty when none was asked for or served). */
  candleHistory(marketId: string, interval: CandleInterval): readonly Candle[];

  /** Every order update of the account (not only this strategy's). */
  readonly orders$: Observable<Order>;
  /** Updates of this strategy's own orders only, with the intent and tag that created each. */
  readonly ownOrders$: Observable<OwnOrderUpdate>;
  readonly fills$: Observable<Fill>;
  readonly positions$: Observable<Position>;
  readonly account$: Observable<Account>;
  /** The outcome of each of this strategy's intents (accepted, denied, rejected, ...). */
  readonly outcomes$: Observable<IntentOutcome>;

  /** The position on a market right now (flat when there is none). */
  position(marketId: string): PositionSnapshot;
  /** This strategy's active orders (all markets when `marketId` is omitted), oldest first. */
  openOrders(marketId?: string): readonly OpenOrder[];
  /**
   * This strategy's emulated exits (stop, take-profit, trailing, bracket legs), live and
   * recently finished, oldest first, each with its state: `pending` (a bracket leg before its
   * entry fills), `waiting`, `triggered`, `released` or `cancelled`. Cancel or amend one by its
   * `id` as any order.
   */
  emulatedOrders(marketId?: string): readonly EmulatedOrder[];
  lastTicker(marketId: string): Ticker | null;
  lastAccount(): Account | null;
  /** `timer(delayMs, periodMs)` on the runtime's clock. */
  timer(delayMs: number, periodMs?: number): Observable<number>;
}

/**
 * What the kernel provides so the host can build contexts: the live venue, the emulator or a
 * replay, behind one shape. Market streams are hot. Account streams replay the current state
 * to each new subscriber before live updates:
 * - `ticker$(id)` replays the latest ticker when one is known;
 * - `orders$` replays every active order, `positions$` every open position, `account$` the
 *   latest account;
 * - a position that closes is emitted once more with quantity `0`.
 */
export interface StrategyEnvironment {
  readonly clock: Clock;
  readonly logger: Logger;
  /** The market list (`GET /v1/markets`) the runtime loaded; read when a context is built. */
  markets(): readonly Market[];
  ticker$(marketId: string): Observable<Ticker>;
  book$(marketId: string): Observable<Book>;
  trades$(marketId: string): Observable<PublicTrade>;
  readonly orders$: Observable<Order>;
  readonly fills$: Observable<Fill>;
  readonly positions$: Observable<Position>;
  readonly account$: Observable<Account>;
  /**
   * Grace before a candle closes on the clock alone (see `candlesFromTrades`); live feeds
   * deliver trades late by their transport latency. Default 0.
   */
  readonly candleGraceMs?: number;
  /**
   * Up to `count` closed candles of a market that ended by now, oldest first: the venue's
   * candle history live, the recording's in a replay. Absent when the venue has none.
   */
  candleHistory?(
    marketId: string,
    interval: CandleInterval,
    count: number,
  ): Promise<readonly Candle[]>;
  /** A strategy's emulated exits (the kernel's exit emulator); none when omitted. */
  readonly emulatedOrders?: (strategyId: string) => readonly EmulatedOrder[];
}

/** Candles of history a strategy wants before it starts (see `StrategyDefinition.candleHistory`). */
export interface CandleHistoryRequest {
  readonly marketId: string;
  readonly interval: CandleInterval;
  /** 1 to `MAX_CANDLE_HISTORY`. */
  readonly count: number;
}

/** The most candles of history one request may ask for (the interface's candles limit). */
export const MAX_CANDLE_HISTORY = 1000;

/** A plugin: a name, a params schema with defaults, and a function from context to intents. */
export interface StrategyDefinition<Params = unknown> {
  readonly name: string;
  readonly description: string;
  readonly params: z.ZodType<Params>;
  /** The candle history to load before `create` runs, from the params; none when absent. */
  candleHistory?(params: Params): readonly CandleHistoryRequest[];
  create(context: StrategyContext<Params>, params: Params): Observable<OrderIntent>;
}
