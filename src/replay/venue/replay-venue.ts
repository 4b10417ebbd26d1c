/**
 * The replay venue: recorded market data in, a simulated account out. It is a `MarketDataVenue`
 * (the recorded ticker, book and trade records, each delivered when the replay's clock reaches
 * its `t`) and, through `execution`, an `ExecutionVenue` whose matching and accounting are the
 * emulator's `Exchange` with its simulation off. The fill model (docs/backtesting.md, "The fill
 * model"):
 *
 * - Marks: each recorded ticker sets the engine's index and mark price (margin, unrealized PnL,
 *   liquidation), as the synthetic market does in the emulator.
 * - Taking: the latest recorded book is the resting liquidity the account's orders trade
 *   against, posted in the engine under two synthetic quoters (one per side) and replaced at
 *   each snapshot. Levels that would cross one of the account's resting orders are left out: a
 *   snapshot never fills a resting order, only recorded trades do.
 * - Resting: queue position (`queue.ts`). A recorded trade that reaches the account's resting
 *   orders becomes one synthetic order in the engine, limited so that it fills exactly those
 *   orders (the recorded liquidity on that side is lifted for the moment it runs).
 * - Costs: fee rates per market, slippage as extra taker fee, latency on the clock
 *   (`exchange-venue.ts`).
 * - Gaps (`gaps.ts`): a `book` or `trade` gap withdraws the market's recorded book until its
 *   next snapshot (takers find nothing to fill on) and restarts its resting orders' queues.
 *
 * Work the engine does not need is skipped: while the account has no order and no position in a
 * market, its marks and books are only remembered, and brought into the engine when a command
 * for that market arrives. While it has, each snapshot is clipped when it comes and posted when
 * something reads the engine's book (`holdBook`); most are replaced before that. Nothing here
 * reads the wall clock or draws random numbers.
 */
import type { Observable } from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import {
  BUY,
  type BookSide,
  type EmulatorConfig,
  Exchange,
  IdempotencyWindow,
  MemoryStore,
  type QuoteLevel,
  SELL,
} from '../../emulator/index.ts';
import type {
  Account,
  Book,
  Candle,
  CandleInterval,
  Market,
  Order,
  OrderStatus,
  PrivateEvent,
  PublicTrade,
} from '../../protocol/index.ts';
import { parseTimestamp, TERMINAL_ORDER_STATUSES } from '../../protocol/index.ts';
import type { MarketDataVenue } from '../../runtime/streams/market-data.ts';
import type { Ticker } from '../../runtime/strategy/types.ts';
import { closedCandleHistory } from '../../runtime/streams/candles.ts';
import { type CandleHistory, historyCandles } from '../format/candle-history.ts';
import {
  type BookRecord,
  type GapRecord,
  type RecordedEvent,
  type RecordedTickerData,
  type TradeRecord,
  wireTickerData,
} from '../format/records.ts';
import {
  RECORDED_ASKS,
  RECORDED_BIDS,
  type FillModelName,
  fillModelOf,
  type ReplayVenueConfig,
  replayEngineConfig,
} from './config.ts';
import { TakerPricing } from './taker.ts';
import { type ClippedLevels, crossedWhenClipped, ReplayMarket } from './replay-market.ts';
import { ExchangeExecutionVenue } from './exchange-venue.ts';
import { GapLog, type ReplayGap, SUSPENDING_STREAMS } from './gaps.ts';
import { LatencyModel, latencySettings } from './latency.ts';
import { displayedAt, type MarketQueues } from './queue.ts';
import { RecordedMarketData } from './market-data.ts';

export interface ReplayVenueOptions {
  readonly clock: Clock;
  /** The recorded markets (the manifest's `markets`), in the order the runtime should list them. */
  readonly markets: readonly Market[];
  /** The recorded book depth (manifest `settings.book_depth`): a side with fewer levels is whole. */
  readonly bookDepth: number;
  readonly config: ReplayVenueConfig;
  /** Seeds the engine's identifiers and the latency jitter. */
  readonly seed: string | number;
  /** A ready engine config (tests); built from `markets` and `config` otherwise. */
  readonly engineConfig?: EmulatorConfig;
  /** The recording's candle history (`candles.json`), served to strategies' warm-up. */
  readonly candleHistory?: CandleHistory | null;
  /**
   * The markets whose recording has book snapshots (the manifests' counts): `fill_model: auto`
   * takes the taker model for the others. Null (unknown): the book model everywhere.
   */
  readonly bookedMarkets?: ReadonlySet<string> | null;
  /**
   * Markets imported from candles, with their interval: the taker model fills there at each
   * candle's open (its first trade) only.
   */
  readonly candleIntervals?: ReadonlyMap<string, number>;
  /**
   * A test seam: the account's private events of these sequences never reach the runtime, as
   * a live stream may lose them (the runtime sees the gap and reads the fills back).
   */
  readonly dropPrivateSequences?: readonly number[];
}

/** Orders that ended without a fill because nothing was there to trade against. */
export interface UntradedOrders {
  readonly count: number;
  /** Market ids, sorted. */
  readonly markets: readonly string[];
}

// Module-local: under tsx an imported constant is read through a getter at each use.
const TERMINAL = TERMINAL_ORDER_STATUSES;

/** Engine events and fills the replay's store keeps per account (nothing reads them back). */
export const REPLAY_RETAINED_RECORDS = 1_000;

interface OrderInfo {
  readonly market: ReplayMarket;
  readonly side: BookSide;
  readonly priceTicks: number | null;
}

export class ReplayVenue implements MarketDataVenue {
  readonly exchange: Exchange;
  readonly execution: ExchangeExecutionVenue;
  readonly accountId: string;
  readonly engineConfig: EmulatorConfig;
  /**
   * Steps the account's fills took while a taker batch runs (`takeAtTrade`), else null. The
   * venue keeps no list of fills: the runtime takes them from the private stream.
   */
  private batchSteps: number | null = null;
  /** The recording's gaps and what they affected (`gaps.ts`). */
  readonly gapLog = new GapLog();

  private readonly data: RecordedMarketData;
  private readonly bookDepth: number;
  private readonly history: CandleHistory | null;
  private readonly clock: Clock;
  private readonly byId = new Map<string, ReplayMarket>();
  private readonly taker: TakerPricing;
  private readonly orders = new Map<string, OrderInfo>();
  /**
   * The runtime's ids of each order that filled, read when it filled: a store that keeps only
   * recent terminal orders may have released the order by the end of the run.
   */
  private readonly filledOrderIds = new Map<
    string,
    { readonly clientOrderId: string | null; readonly requestId: string | null }
  >();
  /** Moves with every engine event of the account and every mark given to the engine. */
  private version = 0;
  private equityVersion = -1;
  private lastEquity: string | null = null;

  constructor(options: ReplayVenueOptions) {
    this.bookDepth = options.bookDepth;
    this.history = options.candleHistory ?? null;
    this.clock = options.clock;
    this.engineConfig =
      options.engineConfig ?? replayEngineConfig(options.markets, options.config, options.seed);
    // Nothing in a replay reads the engine's event log or fill pages back (events reach the
    // runtime as they happen, and the report keeps its own fills): a few are kept, not the
    // emulator's 100,000 per kind. Orders keep the emulator's retention: the runtime may read
    // any of them back.
    const store = new MemoryStore({
      retainedEvents: REPLAY_RETAINED_RECORDS,
      retainedFills: REPLAY_RETAINED_RECORDS,
    });
    this.exchange = Exchange.open({ clock: options.clock, config: this.engineConfig, store });
    const engineMarkets = new Set(this.engineConfig.markets.map((market) => market.market_id));
    this.data = new RecordedMarketData(
      options.markets.filter((market) => engineMarkets.has(market.market_id)),
    );
    const booked = options.bookedMarkets ?? null;
    for (const market of this.exchange.driverMarkets()) {
      const model = fillModelOf(options.config.fill_model, market.marketId, booked);
      this.byId.set(
        market.marketId,
        new ReplayMarket(
          market.marketId,
          market.tick,
          market.step,
          options.config.queue_position,
          model,
          options.bookDepth,
        ),
      );
    }
    this.taker = new TakerPricing(options.config.fill_model.taker);
    for (const [marketId, interval] of options.candleIntervals ?? []) {
      const market = this.byId.get(marketId);
      if (market !== undefined) market.candleIntervalMs = interval;
    }
    if ([...this.byId.values()].some((market) => market.model === 'taker')) {
      // Takers of those markets wait, accepted, for the next recorded trade (`takeAtTrade`).
      this.exchange.holdSubmissions((marketId) => this.byId.get(marketId)?.model === 'taker');
    }
    this.accountId = this.exchange.createAccount({
      startingBalance: options.config.starting_balance,
    });
    this.execution = new ExchangeExecutionVenue({
      exchange: this.exchange,
      accountId: this.accountId,
      clock: options.clock,
      // Nothing outlives a replay: the ledger keeps a window of records, unserialized.
      store: new IdempotencyWindow(),
      latency: new LatencyModel(latencySettings(options.config.latency), options.seed),
      dropPrivateSequences: options.dropPrivateSequences ?? [],
      hooks: {
        beforeCommand: (marketId) => this.beforeCommand(marketId),
        marketOfOrder: (orderId) => this.orders.get(orderId)?.market.marketId,
        onEngineEvent: (event) => this.onEngineEvent(event),
      },
    });
    this.exchange.beforeMatching((marketId) => {
      const market = this.byId.get(marketId);
      if (market !== undefined) this.postHeldLevels(market);
    });
  }

  // ------------------------------------------------------------------ MarketDataVenue

  markets(): readonly Market[] {
    return this.data.markets();
  }

  ticker$(marketId: string): Observable<Ticker> {
    return this.data.ticker$(marketId);
  }

  tickerArrivals$(marketId: string): Observable<string> {
    return this.data.tickerArrivals$(marketId);
  }

  latestTicker(marketId: string): Ticker | undefined {
    return this.data.latestTicker(marketId);
  }

  book$(marketId: string): Observable<Book> {
    return this.data.book$(marketId);
  }

  trades$(marketId: string): Observable<PublicTrade> {
    return this.data.trades$(marketId);
  }

  /** The recording's candles that closed before the replay reached now (its start, at warm-up). */
  async candleHistory(
    marketId: string,
    interval: CandleInterval,
    count: number,
  ): Promise<readonly Candle[]> {
    const candles = historyCandles(this.history, marketId, interval);
    return closedCandleHistory(candles, interval, this.clock.now(), count);
  }

  // ------------------------------------------------------------------ replay

  /** Delivers one record at the clock's current time (the caller advanced it to `record.t`). */
  ingest(record: RecordedEvent): void {
    switch (record.k) {
      case 'ticker': {
        const market = this.byId.get(record.m);
        if (market !== undefined) this.onTicker(market, record.d, record.t);
        return;
      }
      case 'book': {
        const market = this.byId.get(record.m);
        if (market !== undefined) this.onBook(market, record);
        return;
      }
      case 'trade': {
        const market = this.byId.get(record.m);
        if (market !== undefined) this.onTrade(market, record);
        return;
      }
      case 'gap':
        this.onGap(record);
        return;
      default:
        // Private records are the recorded session's own account: a backtest trades its own
        // account on the public data.
        return;
    }
  }

  /** The fill model of each market, by market id. */
  fillModels(): Readonly<Record<string, FillModelName>> {
    const models: Record<string, FillModelName> = {};
    for (const market of this.byId.values()) models[market.marketId] = market.model;
    return models;
  }

  /**
   * Orders that found nothing to trade against: market orders that ended with no fill, and
   * orders still waiting for a trade when the recording ended (taker model).
   */
  untradedOrders(): UntradedOrders {
    let count = 0;
    const markets: string[] = [];
    for (const market of this.byId.values()) {
      const waiting =
        market.model === 'taker' ? this.exchange.heldSubmissionCount(market.marketId) : 0;
      if (market.untraded + waiting === 0) continue;
      count += market.untraded + waiting;
      markets.push(market.marketId);
    }
    return { count, markets: markets.sort() };
  }

  /** The recording's gaps, in order, with what each affected. */
  gaps(): readonly ReplayGap[] {
    return this.gapLog.list();
  }

  /** The runtime's ids of an order that filled (divergence reports), as read when it filled. */
  filledOrderIdsOf(
    orderId: string,
  ): { readonly clientOrderId: string | null; readonly requestId: string | null } | undefined {
    return this.filledOrderIds.get(orderId);
  }

  /** The account now (reports). */
  account(): Account {
    return this.exchange.getAccount(this.accountId);
  }

  /**
   * The account's total equity now. Equity moves only with the account's own events and with
   * marks of markets it holds, so between those the last answer is reused.
   */
  equity(): string {
    if (this.equityVersion !== this.version || this.lastEquity === null) {
      this.lastEquity = this.exchange.totalEquity(this.accountId);
      this.equityVersion = this.version;
    }
    return this.lastEquity;
  }

  /** The activity counter a replay loop watches (see `ExchangeExecutionVenue.activity`). */
  get activity(): number {
    return this.execution.activity;
  }

  /** The account's resting orders of a market with their queue positions (tests, reports). */
  queueOf(marketId: string): MarketQueues {
    return this.marketOf(marketId).queues;
  }

  close(): void {
    this.execution.close();
    this.data.complete();
  }

  // ------------------------------------------------------------------ records

  private onTicker(market: ReplayMarket, data: RecordedTickerData, t: number): void {
    // Strategies see the ticker as the interface shows it; the funding is the venue's.
    this.data.ticker(market.marketId, wireTickerData(data), t);
    if (market.engaged) this.applyMark(market, data);
    else market.pendingTicker = data;
  }

  private applyMark(market: ReplayMarket, data: RecordedTickerData): void {
    market.pendingTicker = null;
    const markTicks = data.mark_price === null ? null : market.priceTicks(data.mark_price);
    if (markTicks !== null && markTicks >= 1) {
      const indexTicks =
        data.index_price === null ? markTicks : (market.priceTicks(data.index_price) ?? markTicks);
      this.exchange.setReferencePrices(market.marketId, Math.max(1, indexTicks), markTicks);
      this.version++;
    }
    this.applyFunding(market, data);
  }

  /**
   * A recorded ticker's funding (`RecordedTickerData`) is published to the engine after the
   * mark. `funding_time`, as the recorder writes it: the rate read shortly before that time is
   * published for it, and once the ticker is at or after the time a second publication settles
   * it, at that rate and this ticker's mark, where the emulator settled it live (the first
   * publication settles nothing new: the time before was settled at its own ticker).
   * `next_funding_time` (older recordings, whose tickers carried the market's current funding):
   * published as recorded; a time that passed is settled first at the rate recorded for it.
   */
  private applyFunding(market: ReplayMarket, data: RecordedTickerData): void {
    const rate = data.funding_rate;
    const time = data.funding_time ?? data.next_funding_time;
    if (rate === undefined || rate === null || time === undefined || time === null) return;
    const timeMs = parseTimestamp(time);
    if (timeMs === null) return;
    this.exchange.setFunding(market.marketId, rate, timeMs);
    if (data.funding_time !== undefined && this.clock.now() >= timeMs) {
      this.exchange.setFunding(market.marketId, rate, timeMs);
    }
    this.version++;
  }

  /**
   * A gap: a `book` or `trade` gap suspends its market (every market when it names none) until
   * the market's next snapshot; others are listed only (`gaps.ts`).
   */
  private onGap(record: GapRecord): void {
    if (!SUSPENDING_STREAMS.has(record.d.stream)) {
      this.gapLog.listed(record);
      return;
    }
    const markets =
      record.m === undefined
        ? [...this.byId.values()]
        : [this.byId.get(record.m)].filter((market) => market !== undefined);
    if (markets.length === 0) {
      this.gapLog.listed(record);
      return;
    }
    for (const market of markets) this.suspend(market, record);
  }

  /** The book is unknown and queues restart: nothing recorded is left to trade with. */
  private suspend(market: ReplayMarket, record: GapRecord): void {
    this.gapLog.suspend(market.marketId, record, market.queues.restart());
    market.bookRecord = null;
    market.parsedLatest = null;
    market.held = false;
    market.bookInEngine = true;
    this.exchange.batch(() => {
      this.exchange.replaceQuotes(market.marketId, RECORDED_BIDS, [], []);
      this.exchange.replaceQuotes(market.marketId, RECORDED_ASKS, [], []);
    });
  }

  // Records, not their `d`: a snapshot or trade that nothing reads is never built.
  private onBook(market: ReplayMarket, record: BookRecord): void {
    this.gapLog.resume(market.marketId, record.t);
    market.bookRecord = record;
    market.parsedLatest = null;
    this.data.bookRecord(market.marketId, record);
    if (market.queues.size > 0) {
      const parsed = market.parsedBook()!;
      market.queues.onSnapshot(parsed.bids, parsed.asks);
    }
    if (market.engaged) {
      this.holdBook(market);
    } else {
      market.bookInEngine = false;
      market.held = false;
    }
  }

  private onTrade(market: ReplayMarket, record: TradeRecord): void {
    this.data.tradeRecord(market.marketId, record);
    if (market.model === 'taker') {
      this.tradeWithQueues(market, record);
      this.takeAtTrade(market, record);
      return;
    }
    this.tradeWithQueues(market, record);
  }

  /**
   * The taker model: the market's held orders are matched against liquidity made from this
   * trade, at its price plus (buys) or minus (sells) the half-spread and slippage, up to the
   * volume share of its quantity for all of them together. Buys first, then sells, each oldest
   * first; what the liquidity does not cover of a market order is cancelled, a limit that does
   * not reach the price rests (queue model). The liquidity is withdrawn after.
   */
  private takeAtTrade(market: ReplayMarket, record: TradeRecord): void {
    const marketId = market.marketId;
    if (market.candleIntervalMs !== null) {
      // Candles: a candle's open is its first trade, on the grid of the first candle.
      market.firstTradeT ??= record.t;
      if ((record.t - market.firstTradeT) % market.candleIntervalMs !== 0) return;
    }
    if (this.exchange.heldSubmissionCount(marketId) === 0) return;
    const tradeTicks = market.priceTicks(record.d.price);
    const tradeSteps = market.steps(record.d.quantity);
    if (tradeTicks === null || tradeTicks < 1 || tradeSteps === null) return;
    this.bringUpToDate(market);
    let left = this.taker.capSteps(tradeSteps);
    for (const side of [BUY, SELL] as const) {
      const priceTicks = this.taker.priceTicks(side, tradeTicks);
      // Liquidity that would cross the account's own resting orders is not offered.
      const own = side === BUY ? market.queues.bestBid() : market.queues.bestAsk();
      const crossesOwn = own !== null && (side === BUY ? own >= priceTicks : own <= priceTicks);
      const level: QuoteLevel[] = left > 0 && !crossesOwn ? [{ priceTicks, steps: left }] : [];
      const quoter = side === BUY ? RECORDED_ASKS : RECORDED_BIDS;
      this.batchSteps = 0;
      this.exchange.batch(() => {
        if (side === BUY) this.exchange.replaceQuotes(marketId, quoter, [], level);
        else this.exchange.replaceQuotes(marketId, quoter, level, []);
        this.exchange.submitHeld(marketId, side);
        this.exchange.replaceQuotes(marketId, quoter, [], []);
      });
      left -= this.batchSteps;
      this.batchSteps = null;
    }
  }

  /** Today's queue model: a recorded trade that reaches the account's resting orders. */
  private tradeWithQueues(market: ReplayMarket, record: TradeRecord): void {
    if (market.queues.size === 0) return;
    const trade = record.d;
    const aggressor = trade.side === 'buy' ? BUY : trade.side === 'sell' ? SELL : null;
    if (aggressor === null) return;
    const priceTicks = market.priceTicks(trade.price);
    const steps = market.steps(trade.quantity);
    if (priceTicks === null || steps === null || steps <= 0) return;
    const allocation = market.queues.allocate(aggressor, priceTicks, steps);
    if (allocation === null) return;
    this.postHeldLevels(market);
    const sameSideQuoter = aggressor === SELL ? RECORDED_BIDS : RECORDED_ASKS;
    this.exchange.batch(() => {
      // The recorded liquidity on the account's side would be matched first; it steps aside
      // while the trade's share reaches the account's orders, then comes back.
      this.exchange.replaceQuotes(market.marketId, sameSideQuoter, [], []);
      this.exchange.submitSyntheticOrder(
        market.marketId,
        aggressor,
        allocation.steps,
        allocation.limitTicks,
      );
      if (market.bookInEngine && market.bookRecord !== null) {
        const levels = market.clippedLevels(market.queues.bestBid(), market.queues.bestAsk());
        if (aggressor === SELL) {
          this.exchange.replaceQuotes(market.marketId, RECORDED_BIDS, levels.bids, []);
        } else {
          this.exchange.replaceQuotes(market.marketId, RECORDED_ASKS, [], levels.asks);
        }
      }
    });
  }

  // ------------------------------------------------------------------ engine

  private beforeCommand(marketId: string | null): void {
    if (marketId === null) return;
    const market = this.byId.get(marketId);
    if (market === undefined) return;
    this.bringUpToDate(market);
  }

  /** Gives the engine the remembered mark and book of a market about to be traded. */
  private bringUpToDate(market: ReplayMarket): void {
    if (market.pendingTicker !== null) this.applyMark(market, market.pendingTicker);
    this.postHeldLevels(market);
    if (!market.bookInEngine) this.postBook(market);
  }

  private postBook(market: ReplayMarket): void {
    market.bookInEngine = true;
    market.held = false;
    if (market.bookRecord === null) return;
    this.postLevels(market, market.clippedLevels(market.queues.bestBid(), market.queues.bestAsk()));
  }

  /**
   * A snapshot of a market the account trades: clipped against the account's resting orders of
   * now, and held back until something reads the engine's book. Posting it later leaves the
   * engine as posting it now would have: only a submission adds resting orders, and one posts
   * the held levels first, so they cross none of the account's orders then either, and each
   * level's orders keep their order. The clipping bounds are kept, so the levels are built
   * only when posted (most held snapshots are replaced first). A snapshot whose bids reach its
   * asks trades as it is posted (public trades and identifiers), so it is posted at once.
   */
  private holdBook(market: ReplayMarket): void {
    market.bookInEngine = true;
    market.held = false;
    if (market.bookRecord === null) return;
    const ownBid = market.queues.bestBid();
    const ownAsk = market.queues.bestAsk();
    if (crossedWhenClipped(market.parsedBook()!, ownBid, ownAsk)) {
      this.postLevels(market, market.clippedLevels(ownBid, ownAsk));
      return;
    }
    market.held = true;
    market.heldOwnBid = ownBid;
    market.heldOwnAsk = ownAsk;
  }

  private postHeldLevels(market: ReplayMarket): void {
    if (!market.held) return;
    market.held = false;
    this.postLevels(market, market.clippedLevels(market.heldOwnBid, market.heldOwnAsk));
  }

  private postLevels(market: ReplayMarket, levels: ClippedLevels): void {
    this.exchange.batch(() => {
      // Both sides off before either comes back, so a new side never trades with an old one.
      this.exchange.replaceQuotes(market.marketId, RECORDED_BIDS, [], []);
      this.exchange.replaceQuotes(market.marketId, RECORDED_ASKS, [], levels.asks);
      this.exchange.replaceQuotes(market.marketId, RECORDED_BIDS, levels.bids, []);
    });
  }

  private onEngineEvent(event: PrivateEvent): void {
    this.version++;
    switch (event.type) {
      case 'authoritative_status':
        this.onOrderStatus(event.data.entity_id, event.data.from_state, event.data.to_state);
        return;
      case 'fill': {
        if (this.batchSteps !== null) {
          this.batchSteps += this.byId.get(event.data.market_id)?.steps(event.data.quantity) ?? 0;
        }
        const orderId = event.data.order_id;
        if (orderId !== null) {
          this.rememberFilledOrder(orderId);
          this.refreshQueued(orderId);
        }
        return;
      }
      case 'position': {
        const market = this.byId.get(event.data.market_id);
        if (market !== undefined) market.hasPosition = event.data.quantity !== '0';
        return;
      }
      default:
        return;
    }
  }

  private onOrderStatus(orderId: string, from: OrderStatus | null, to: OrderStatus): void {
    let info = this.orders.get(orderId);
    if (info === undefined) {
      if (from !== null) return;
      info = this.orderInfo(orderId);
      if (info === undefined) return;
      this.orders.set(orderId, info);
      info.market.activeOrders++;
      this.gapLog.orderPlaced(orderId, info.market.marketId, this.clock.now());
    }
    const market = info.market;
    if (TERMINAL.has(to)) {
      this.gapLog.orderEnded(orderId, this.clock.now(), this.filledOrderIds.has(orderId));
      if (to === 'CANCELLED' && info.priceTicks === null && !this.filledOrderIds.has(orderId)) {
        if (this.foundNothing(orderId)) market.untraded++;
      }
      market.queues.remove(orderId);
      market.activeOrders--;
      this.orders.delete(orderId);
      return;
    }
    if ((to === 'OPEN' || to === 'PARTIALLY_FILLED') && !market.queues.has(orderId)) {
      if (info.priceTicks === null) return;
      const remaining = this.remainingSteps(market, orderId);
      if (remaining <= 0) return;
      const parsed = market.parsedBook();
      const side = parsed === null ? null : info.side === BUY ? parsed.bids : parsed.asks;
      market.queues.add(
        orderId,
        info.side,
        info.priceTicks,
        remaining,
        displayedAt(side, info.side, info.priceTicks),
      );
    }
  }

  /**
   * Whether a market order that ended unfilled found nothing to trade against: not one stopped
   * by self-trade prevention (it found the account's own order) or by another refusal.
   */
  private foundNothing(orderId: string): boolean {
    return this.exchange.getOrder(this.accountId, orderId).error === null;
  }

  /** A new order's market, side and price, as the engine holds it (its wire object if not). */
  private orderInfo(orderId: string): OrderInfo | undefined {
    const held = this.exchange.heldOrder(this.accountId, orderId);
    if (held !== undefined) {
      const market = this.byId.get(held.marketId);
      return market === undefined
        ? undefined
        : { market, side: held.side, priceTicks: held.priceTicks };
    }
    const order = this.exchange.getOrder(this.accountId, orderId);
    const market = this.byId.get(order.market_id);
    if (market === undefined) return undefined;
    return {
      market,
      side: order.side === 'buy' ? BUY : SELL,
      priceTicks: order.price === null ? null : market.priceTicks(order.price),
    };
  }

  private rememberFilledOrder(orderId: string): void {
    if (this.filledOrderIds.has(orderId)) return;
    const held = this.exchange.heldOrder(this.accountId, orderId);
    if (held !== undefined) {
      this.filledOrderIds.set(orderId, {
        clientOrderId: held.clientOrderId,
        requestId: held.requestId,
      });
      return;
    }
    let order: Order;
    try {
      order = this.exchange.getOrder(this.accountId, orderId);
    } catch {
      // Not an order the account can read: the runner asks the engine at the end, as before.
      return;
    }
    this.filledOrderIds.set(orderId, {
      clientOrderId: order.client_order_id,
      requestId: order.request_id,
    });
  }

  /** After a fill, the queued order's remaining quantity as the engine has it. */
  private refreshQueued(orderId: string): void {
    const info = this.orders.get(orderId);
    if (info === undefined || !info.market.queues.has(orderId)) return;
    info.market.queues.setRemaining(orderId, this.remainingSteps(info.market, orderId));
  }

  private remainingSteps(market: ReplayMarket, orderId: string): number {
    const held = this.exchange.heldOrder(this.accountId, orderId);
    if (held !== undefined) return held.quantitySteps - held.filledSteps;
    const order = this.exchange.getOrder(this.accountId, orderId);
    const quantity = order.quantity === null ? 0 : (market.steps(order.quantity) ?? 0);
    return quantity - (market.steps(order.filled_quantity) ?? 0);
  }

  private marketOf(marketId: string): ReplayMarket {
    const market = this.byId.get(marketId);
    if (market === undefined) {
      throw new PaperbotError('UNKNOWN_MARKET', `the replay has no market ${marketId}`, {
        details: { market_id: marketId },
      });
    }
    return market;
  }
}
