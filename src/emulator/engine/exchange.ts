/**
 * The Exchange facade of the local Practice service: what the server, the replay venue and the
 * market simulation call. It builds the parts over one shared `EngineContext` and hands each
 * call to the part that owns it:
 *
 * - `commands.ts`: accounts and order commands; `placement.ts`: the checks of an order request;
 *   `cancel-all-after.ts`: the dead-man switch.
 * - `matching.ts`: submission and matching on the books, synthetic liquidity;
 *   `order-lifecycle.ts`: status changes and what a terminal order releases.
 * - `accounting.ts`: fees, reservations, positions and account figures; `liquidation.ts`.
 * - `reads.ts`: lists with cursors and wire objects.
 * - `persistence.ts`: the commit at the end of a unit of work, and restoring from the Store.
 *
 * Synchronous and deterministic: every change happens inside a unit of work (a command, a clock
 * timer, a market step) whose changes are written to the Store in one commit and whose private
 * events then go to listeners in sequence order. Orders progress on the injected clock (PENDING,
 * then after `latency.submit_ms` SUBMITTED and matched).
 *
 * Requests arrive parsed (the server validates them with the protocol schemas); the engine only
 * applies the rules that need market or account state. Prices and quantities are integer ticks
 * and steps inside, money a bigint of 10^-18 pUSDC; decimal strings are made at the edges.
 */
import type {
  Account,
  AmendOrderRequest,
  BatchOrderResponse,
  Book,
  CancelAllResponse,
  Candle,
  CandleInterval,
  ClosePositionRequest,
  EventsPage,
  FillPage,
  Market,
  Order,
  OrderPage,
  OrderRequest,
  Position,
  PositionPage,
  PublicTrade,
  Route,
  RouteHealth,
  RouteReadiness,
  SimulationResult,
  TickerData,
  VenueAccount,
} from '../../protocol/index.ts';
import { MarketSimulation } from '../market/simulation.ts';
import { Random } from '../random.ts';
import { Accounting } from './accounting.ts';
import { CancelAllAfter } from './cancel-all-after.ts';
import { Commands, type CreateAccountOptions } from './commands.ts';
import {
  EngineContext,
  type ExchangeOptions,
  type PrivateEventListener,
  type TickerListener,
} from './context.ts';
import type { DriverMarket, QuoteLevel, VenueDriver } from './driver.ts';
import { FundingSettlement } from './funding.ts';
import { Liquidation } from './liquidation.ts';
import { MatchingEngine } from './matching.ts';
import type { BookSide } from './order-book.ts';
import { OrderLifecycle } from './order-lifecycle.ts';
import { type KeyRiskLimits, OrderPlacement } from './placement.ts';
import { Persistence } from './persistence.ts';
import type { HeldOrder } from './state.ts';
import { type FillListQuery, type OrderListQuery, type PositionListQuery, Reads } from './reads.ts';
import { SeededPast } from './seeded-past.ts';

export type { CreateAccountOptions } from './commands.ts';
export { SIMULATION_VALIDITY_MS } from './commands.ts';
export type { ExchangeOptions, PrivateEventListener, TickerListener } from './context.ts';
export type { KeyRiskLimits } from './placement.ts';
export type { HeldOrder } from './state.ts';
export type { FillListQuery, OrderListQuery, PositionListQuery } from './reads.ts';
export { ROUTE_CAPABILITIES } from './reads.ts';

export interface ExchangeControls {
  /** Freezes the market's prices and quotes; its data_status turns `stale`. All when omitted. */
  pauseFeed(marketId?: string): void;
  resumeFeed(marketId?: string): void;
  /** Anything but `ready` refuses new orders with ROUTE_NOT_READY. */
  setRouteHealth(health: RouteHealth): void;
  /** Makes an armed cancel-all-after deadline pass now (every armed account when omitted). */
  fireCancelAllAfter(accountId?: string): void;
}

export class Exchange implements VenueDriver {
  readonly controls: ExchangeControls;
  private readonly context: EngineContext;
  private readonly simulation: MarketSimulation | null;
  private readonly commands: Commands;
  private readonly cancelAllAfter: CancelAllAfter;
  private readonly funding: FundingSettlement;
  private readonly matching: MatchingEngine;
  private readonly liquidation: Liquidation;
  private readonly reads: Reads;
  private readonly persistence: Persistence;
  /** History before the exchange opened, made when read (`seeded-past.ts`). */
  private readonly past: SeededPast;
  private running = false;

  private constructor(options: ExchangeOptions) {
    const context = new EngineContext(options);
    this.context = context;
    const lifecycle = new OrderLifecycle(context);
    const accounting = new Accounting(context);
    const placement = new OrderPlacement(context, accounting);
    this.matching = new MatchingEngine(context, lifecycle, accounting, placement);
    this.liquidation = new Liquidation(context, accounting, lifecycle);
    this.funding = new FundingSettlement(context, accounting);
    this.cancelAllAfter = new CancelAllAfter(context, lifecycle);
    this.reads = new Reads(context, accounting);
    this.past = new SeededPast({
      seed: String(options.config.seed),
      openedAt: context.clock.now(),
      minutes: options.config.history.length_minutes,
      stepMs: options.config.simulation.step_ms,
    });
    this.commands = new Commands(context, lifecycle, placement, this.matching, this.reads);
    const persistence = new Persistence(
      context,
      accounting,
      this.reads,
      this.matching,
      this.cancelAllAfter,
    );
    this.persistence = persistence;
    context.flush = () => persistence.flush();
    this.simulation = options.config.simulation.enabled
      ? new MarketSimulation(
          this,
          options.config,
          context.clock,
          new Random(String(options.config.seed)),
        )
      : null;
    this.controls = {
      pauseFeed: (marketId) => this.setFeedPaused(marketId, true),
      resumeFeed: (marketId) => this.setFeedPaused(marketId, false),
      setRouteHealth: (health) => {
        context.routeHealth = health;
      },
      fireCancelAllAfter: (accountId) => this.cancelAllAfter.fire(accountId),
    };
  }

  /** Builds an exchange and restores the state kept in `options.store`. */
  static open(options: ExchangeOptions): Exchange {
    const exchange = new Exchange(options);
    exchange.persistence.restore();
    exchange.simulation?.initialize();
    return exchange;
  }

  /** Starts the market simulation (and re-arms what a previous `stop()` cleared). */
  start(): void {
    if (this.running) return;
    this.running = true;
    // After a stop(), timers of pending orders and armed deadlines are set again.
    for (const account of this.context.accounts.values()) {
      if (account.cancelAllAfterDeadline !== null && account.cancelAllAfterTimer === null) {
        this.cancelAllAfter.arm(account);
      }
      for (const order of account.activeOrders) {
        if (order.status === 'PENDING' && order.submitTimer === null)
          this.matching.scheduleSubmission(order);
      }
    }
    this.simulation?.start();
  }

  /** Clears every timer the exchange set (simulation, order submissions, deadlines). */
  stop(): void {
    this.running = false;
    this.simulation?.stop();
    const clock = this.context.clock;
    for (const account of this.context.accounts.values()) {
      clock.clearTimeout(account.cancelAllAfterTimer ?? undefined);
      account.cancelAllAfterTimer = null;
      for (const order of account.activeOrders) {
        clock.clearTimeout(order.submitTimer ?? undefined);
        order.submitTimer = null;
      }
    }
  }

  // ---------------------------------------------------------------- public data

  listRoutes(): Route[] {
    return this.reads.listRoutes();
  }

  listMarkets(): Market[] {
    return this.reads.listMarkets();
  }

  getMarket(marketId: string): Market {
    return this.reads.getMarket(marketId);
  }

  getBook(marketId: string, depth: number): Book {
    return this.reads.getBook(marketId, depth);
  }

  /** Newest first. */
  listTrades(marketId: string, limit: number): PublicTrade[] {
    return this.reads.listTrades(marketId, limit);
  }

  /** Oldest first; only intervals that saw a trade. */
  listCandles(marketId: string, interval: CandleInterval, limit: number): Candle[] {
    return this.reads.listCandles(marketId, interval, limit);
  }

  /** Newest first: the live trades, then the seeded past's (what the trades endpoint serves). */
  listTradesWithPast(marketId: string, limit: number): PublicTrade[] {
    return this.reads.listTradesWithPast(marketId, limit, this.past);
  }

  /** Oldest first: the seeded past's candles, then the live ones (the candles endpoint's). */
  listCandlesWithPast(marketId: string, interval: CandleInterval, limit: number): Candle[] {
    return this.reads.listCandlesWithPast(marketId, interval, limit, this.past);
  }

  tickerOf(marketId: string): TickerData {
    return this.reads.tickerOf(marketId);
  }

  // ---------------------------------------------------------------- accounts

  createAccount(options: CreateAccountOptions = {}): string {
    return this.commands.createAccount(options);
  }

  /**
   * Retires `accountId` (its orders are cancelled, its positions dropped, its keys stop working)
   * and returns a new account with the same starting balance and an empty history.
   */
  resetAccount(accountId: string): string {
    return this.commands.resetAccount(accountId);
  }

  hasAccount(accountId: string): boolean {
    return this.context.accounts.get(accountId)?.active === true;
  }

  // ---------------------------------------------------------------- private reads

  getAccount(accountId: string): Account {
    return this.reads.getAccount(accountId);
  }

  listVenueAccounts(accountId: string): VenueAccount[] {
    return this.reads.listVenueAccounts(accountId);
  }

  listPositions(accountId: string, query: PositionListQuery): PositionPage {
    return this.reads.listPositions(accountId, query);
  }

  getPositionById(accountId: string, positionId: string): Position {
    return this.reads.getPositionById(accountId, positionId);
  }

  /** Newest first. */
  listOrders(accountId: string, query: OrderListQuery): OrderPage {
    return this.reads.listOrders(accountId, query);
  }

  getOrder(accountId: string, orderId: string): Order {
    return this.reads.getOrder(accountId, orderId);
  }

  /** The account's `total_equity` as `getAccount` writes it (equity samples of a replay). */
  totalEquity(accountId: string): string {
    return this.reads.totalEquity(accountId);
  }

  /**
   * One of the account's orders as the engine holds it in memory (its active orders and those
   * that ended most recently), undefined when it is not held: what a replay venue reads of an
   * order without building its wire object. The figures are live: read them right away.
   */
  heldOrder(accountId: string, orderId: string): HeldOrder | undefined {
    return this.reads.heldOrder(accountId, orderId);
  }

  /** The latest order carrying that client id (an amendment's new order keeps it). */
  getOrderByClientId(accountId: string, clientOrderId: string): Order {
    return this.reads.getOrderByClientId(accountId, clientOrderId);
  }

  /** Newest first. */
  listFills(accountId: string, query: FillListQuery): FillPage {
    return this.reads.listFills(accountId, query);
  }

  listEvents(accountId: string, afterSequence: number, limit: number): EventsPage {
    return this.reads.listEvents(accountId, afterSequence, limit);
  }

  lastSequence(accountId: string): number {
    return this.reads.lastSequence(accountId);
  }

  routesReadiness(accountId: string): RouteReadiness[] {
    return this.reads.routesReadiness(accountId);
  }

  // ---------------------------------------------------------------- commands

  simulateOrder(
    accountId: string,
    request: OrderRequest,
    limits?: KeyRiskLimits,
  ): SimulationResult {
    return this.commands.simulateOrder(accountId, request, limits);
  }

  /** Accepts an order (PENDING, stage QUEUED); it is submitted and matched on the clock. */
  placeOrder(accountId: string, request: OrderRequest, limits?: KeyRiskLimits): Order {
    return this.commands.placeOrder(accountId, request, limits);
  }

  /**
   * Practice amendment: the order is cancelled (terminal at once), then a new order with a new
   * order_id is placed for the amended total quantity minus what the old order filled.
   */
  amendOrder(
    accountId: string,
    orderId: string,
    request: AmendOrderRequest,
    limits?: KeyRiskLimits,
  ): Order {
    return this.commands.amendOrder(accountId, orderId, request, limits);
  }

  /** Cancels an active order at once; a terminal order is returned unchanged. */
  cancelOrder(accountId: string, orderId: string, _requestId: string): Order {
    return this.commands.cancelOrder(accountId, orderId);
  }

  cancelAll(accountId: string, requestId: string, marketId?: string | null): CancelAllResponse {
    return this.commands.cancelAll(accountId, requestId, marketId);
  }

  /** Each item is placed on its own; a failure does not undo the others. */
  placeBatch(
    accountId: string,
    requestId: string,
    orders: readonly OrderRequest[],
    limits?: KeyRiskLimits,
  ): BatchOrderResponse {
    return this.commands.placeBatch(accountId, requestId, orders, limits);
  }

  /** A reduce-only market order for `quantity_percent` of the position (rounded down to a step). */
  closePosition(
    accountId: string,
    positionId: string,
    request: ClosePositionRequest,
    limits?: KeyRiskLimits,
  ): Order {
    return this.commands.closePosition(accountId, positionId, request, limits);
  }

  /**
   * Arms (timeout > 0, again to refresh) or disarms (0) the account's dead-man switch. When the
   * deadline passes, every active order is cancelled and a `cancel_all_after.triggered` event
   * follows the order events.
   */
  setCancelAllAfter(
    accountId: string,
    requestId: string,
    timeoutSeconds: number,
  ): { request_id: string; deadline_at: string | null } {
    return this.cancelAllAfter.set(accountId, requestId, timeoutSeconds);
  }

  // ---------------------------------------------------------------- listeners

  onPrivateEvent(listener: PrivateEventListener): () => void {
    return subscribe(this.context.privateListeners, listener);
  }

  /**
   * Calls `hook` with the market of each user order about to be matched (its submission), before
   * the book is read: a replay venue brings a recorded book it has held back into the engine
   * there. Null removes it.
   */
  beforeMatching(hook: ((marketId: string) => void) | null): void {
    this.context.beforeMatching = hook;
  }

  /**
   * `hook(marketId)` true: a user order of that market is accepted (PENDING) but not matched
   * until the driver calls `submitHeld` (a replay without a book matches takers at the next
   * recorded trade). Null removes it.
   */
  holdSubmissions(hook: ((marketId: string) => boolean) | null): void {
    this.context.holdSubmission = hook;
  }

  /** Matches the held orders of a market on one side, oldest first; the number submitted. */
  submitHeld(marketId: string, side: BookSide): number {
    const market = this.context.marketOf(marketId);
    return this.context.run(() => this.matching.submitHeld(market, side));
  }

  /** Orders of a market held and still pending. */
  heldSubmissionCount(marketId: string): number {
    return this.matching.heldCount(this.context.marketOf(marketId));
  }

  onTicker(listener: TickerListener): () => void {
    return subscribe(this.context.tickerListeners, listener);
  }

  // ---------------------------------------------------------------- VenueDriver

  driverMarkets(): readonly DriverMarket[] {
    return this.context.markets.map((market) => ({
      marketId: market.id,
      config: market.config,
      tick: market.tick,
      step: market.step,
    }));
  }

  batch(work: () => void): void {
    this.context.run(work);
  }

  setReferencePrices(marketId: string, indexTicks: number, markTicks: number): void {
    const context = this.context;
    const market = context.marketOf(marketId);
    if (indexTicks < 1 || markTicks < 1) throw new RangeError('prices must be at least one tick');
    context.run(() => {
      market.indexTicks = indexTicks;
      market.markTicks = markTicks;
      market.observedAt = context.clock.now();
      context.markTicker(market);
      this.liquidation.check(market);
    });
  }

  /**
   * Publishes a market's funding. A funding time published before and now passed is settled
   * first, at the rate published for it and the current mark (`funding.ts`).
   */
  setFunding(marketId: string, rate: string, nextFundingTime: number): void {
    const context = this.context;
    const market = context.marketOf(marketId);
    context.run(() => {
      if (this.funding.settle(market)) this.liquidation.check(market);
      // No ticker update: the ticker shows no funding (the Market resource does).
      market.fundingRate = rate;
      market.nextFundingTime = nextFundingTime;
      market.fundingPublished = true;
    });
  }

  replaceQuotes(
    marketId: string,
    quoterId: string,
    bids: readonly QuoteLevel[],
    asks: readonly QuoteLevel[],
  ): void {
    this.matching.replaceQuotes(this.context.marketOf(marketId), quoterId, bids, asks);
  }

  submitSyntheticOrder(
    marketId: string,
    side: BookSide,
    steps: number,
    limitTicks: number,
  ): number {
    const market = this.context.marketOf(marketId);
    return this.context.run(
      () => steps - this.matching.matchSynthetic(market, side, steps, limitTicks),
    );
  }

  bestBid(marketId: string): number | null {
    return this.context.marketOf(marketId).book.bestBid();
  }

  bestAsk(marketId: string): number | null {
    return this.context.marketOf(marketId).book.bestAsk();
  }

  markTicks(marketId: string): number {
    return this.context.marketOf(marketId).markTicks;
  }

  isFeedPaused(marketId: string): boolean {
    return this.context.marketOf(marketId).feedPaused;
  }

  private setFeedPaused(marketId: string | undefined, paused: boolean): void {
    const context = this.context;
    const targets = marketId === undefined ? context.markets : [context.marketOf(marketId)];
    context.run(() => {
      for (const market of targets) {
        market.feedPaused = paused;
        market.dataStatus = paused ? 'stale' : 'live';
        if (!paused) market.observedAt = context.clock.now();
        context.markTicker(market);
      }
    });
  }
}

/** Adds `listener` to `listeners`; the function returned removes it. */
function subscribe<Listener>(listeners: Listener[], listener: Listener): () => void {
  listeners.push(listener);
  return () => {
    const index = listeners.indexOf(listener);
    if (index >= 0) listeners.splice(index, 1);
  };
}
