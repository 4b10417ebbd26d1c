/**
 * The Exchange facade: markets, accounts, order commands, matching and accounting of the local
 * Practice service. Synchronous and deterministic: every change happens inside a unit of work (a
 * command, a clock timer, a market step) whose changes are written to the Store in one commit and
 * whose private events then go to listeners in sequence order. Orders progress on the injected
 * clock (PENDING, then after `latency.submit_ms` SUBMITTED and matched).
 *
 * Requests arrive parsed (the server validates them with the protocol schemas); the engine only
 * applies the rules that need market or account state. Prices and quantities are integer ticks
 * and steps inside, money a bigint of 10^-18 pUSDC; decimal strings are made at the edges.
 */
import type { Clock } from '../../core/clock.ts';
import {
  type Account,
  type AmendOrderRequest,
  type BatchOrderResponse,
  type Book,
  type CancelAllResponse,
  type Candle,
  type CandleInterval,
  type ClosePositionRequest,
  type ErrorCode,
  type EventsPage,
  type FailedOrderCommand,
  type FillPage,
  type Market,
  type Order,
  type OrderPage,
  type OrderRequest,
  type OrderStatus,
  type Position,
  type PositionPage,
  type PrivateEvent,
  type PublicTrade,
  practiceUnsupportedError,
  practiceUnsupportedField,
  type Route,
  type RouteHealth,
  type RouteReadiness,
  type ServiceIssue,
  type SimulationIssue,
  type SimulationResult,
  type TickerData,
  toDecimalString,
  type VenueAccount,
} from '../../protocol/index.ts';
import type { EmulatorConfig } from '../config.ts';
import { MarketSimulation } from '../market/simulation.ts';
import { Random } from '../random.ts';
import type { ChangeSet, OrderArchive, OrderRecord, Store } from '../store/store.ts';
import type { DriverMarket, QuoteLevel, VenueDriver } from './driver.ts';
import { ExchangeError, invalidRequest } from './errors.ts';
import { EngineIdentifiers } from './identifiers.ts';
import type { Instant } from './instant.ts';
import {
  AccountEventEntry,
  EventCodec,
  FillEntry,
  type PendingEvent,
  PositionCapture,
  PositionEventEntry,
  RiskEventEntry,
  StatusEventEntry,
} from './events.ts';
import { divideRounded, MONEY_ONE, MONEY_SCALE, maxBigint, parseScaled } from './fixed.ts';
import {
  type AccountFigures,
  accountFiguresOfTotals,
  availableOfTotals,
  initialMargin,
  isBelowMaintenance,
  maintenanceMargin,
  proportionalPart,
  unrealizedPnl,
} from './margin.ts';
import { type BookSide, BUY, RestingOrder, SELL } from './order-book.ts';
import {
  AccountState,
  type BookOwner,
  MarketRuntime,
  OrderState,
  PositionState,
  ROUTE_ID,
  SETTLEMENT_ASSET,
  type SyntheticOwner,
} from './state.ts';
import {
  accountToWire,
  formatMoney,
  KIND_ACCOUNT,
  KIND_ORDER,
  KIND_POSITION,
  KIND_TRADE,
  orderRecordToWire,
  orderToWire,
  positionToWire,
  sideText,
  WireFormat,
} from './wire.ts';

export interface ExchangeOptions {
  readonly clock: Clock;
  readonly config: EmulatorConfig;
  readonly store: Store;
}

/** Limits a key may carry (RISK_LIMIT_EXCEEDED when an order breaks one). */
export interface KeyRiskLimits {
  readonly maxOrderNotional?: string | null;
  readonly maxOpenOrders?: number | null;
}

export interface OrderListQuery {
  readonly limit: number;
  readonly cursor?: string | undefined;
  readonly market_id?: string | undefined;
  readonly route_id?: string | undefined;
  readonly status?: OrderStatus | undefined;
}

export interface FillListQuery {
  readonly limit: number;
  readonly cursor?: string | undefined;
  readonly market_id?: string | undefined;
  readonly route_id?: string | undefined;
}

export interface PositionListQuery {
  readonly limit: number;
  readonly cursor?: string | undefined;
}

export type PrivateEventListener = (accountId: string, event: PrivateEvent) => void;
export type TickerListener = (marketId: string, data: TickerData, occurredAt: string) => void;

export interface ExchangeControls {
  /** Freezes the market's prices and quotes; its data_status turns `stale`. All when omitted. */
  pauseFeed(marketId?: string): void;
  resumeFeed(marketId?: string): void;
  /** Anything but `ready` refuses new orders with ROUTE_NOT_READY. */
  setRouteHealth(health: RouteHealth): void;
  /** Makes an armed cancel-all-after deadline pass now (every armed account when omitted). */
  fireCancelAllAfter(accountId?: string): void;
}

export interface CreateAccountOptions {
  readonly startingBalance?: string;
}

export const ROUTE_CAPABILITIES = {
  order_types: ['market', 'limit'],
  time_in_force: ['GTC', 'IOC'],
  post_only: true,
  reduce_only: true,
  attached_exits: false,
  amendment: 'cancel_replace',
  batch_atomicity: 'non_atomic',
  cancel_all_after: 'supported',
} as const;

/** How long a simulation result stays valid (`expires_at`). */
export const SIMULATION_VALIDITY_MS = 5_000;

const ONE_HUNDRED_PERCENT = 100n * MONEY_ONE;

type RiskEventType = Extract<PrivateEvent, { channel: 'risk' }>['type'];

interface Problem {
  readonly code: ErrorCode;
  readonly message: string;
  readonly field: string | null;
  readonly issue?: ServiceIssue;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Filled in place by `prepare` (one per exchange: read before the next call). */
interface PreparedOrder {
  market: MarketRuntime;
  side: BookSide;
  type: 'market' | 'limit';
  steps: number;
  priceTicks: number | null;
  timeInForce: 'GTC' | 'IOC';
  postOnly: boolean;
  reduceOnly: boolean;
  positionId: string | null;
  leverage: number;
  marginMode: 'cross' | 'isolated';
  maxSlippagePercent: bigint | null;
  /** The price shown as `reference_price`: the limit price, or the best opposite price. */
  referenceTicks: number;
  /** The price margin is reserved at: the limit price, or a market order's slippage bound. */
  marginTicks: number;
  requiredMargin: bigint;
  maximumSteps: number;
}

/** The outcome of `prepare`, reused likewise (its `problems` too). */
interface Preparation {
  readonly problems: Problem[];
  prepared: PreparedOrder | null;
}

interface ClosedPositionSnapshot {
  readonly account: AccountState;
  readonly market: MarketRuntime;
  readonly capture: PositionCapture;
}

function textOf(value: number | string): string {
  return typeof value === 'number' ? toDecimalString(value) : value;
}

function issue(field: string, type: string, msg: string): ServiceIssue {
  return { type, loc: ['body', field], msg };
}

function addInvalid(problems: Problem[], field: string, type: string, message: string): void {
  problems.push({ code: 'INVALID_REQUEST', message, field, issue: issue(field, type, message) });
}

function isActive(status: OrderStatus): boolean {
  return (
    status === 'PENDING' ||
    status === 'SUBMITTED' ||
    status === 'OPEN' ||
    status === 'PARTIALLY_FILLED'
  );
}

/** Empties a reused array; popping the few items of a unit of work is cheaper than `length = 0`. */
function empty(items: unknown[]): void {
  if (items.length > 64) items.length = 0;
  else while (items.length > 0) items.pop();
}

function encodeCursor(ordinal: number): string {
  return `c${ordinal.toString(36)}`;
}

function decodeCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const match = /^c([0-9a-z]{1,11})$/.exec(cursor);
  const value = match ? Number.parseInt(match[1]!, 36) : Number.NaN;
  if (!Number.isSafeInteger(value)) {
    throw invalidRequest([
      { type: 'value_error', loc: ['query', 'cursor'], msg: 'Unknown or malformed cursor' },
    ]);
  }
  return value;
}

export class Exchange implements VenueDriver {
  readonly controls: ExchangeControls;
  private readonly clock: Clock;
  private readonly config: EmulatorConfig;
  private readonly store: Store;
  /** Terminal orders kept in memory per account (the store's `retainedOrders`). */
  private readonly retainedOrders: number;
  private readonly archive: OrderArchive | null;
  private readonly markets: MarketRuntime[] = [];
  private readonly marketsById = new Map<string, MarketRuntime>();
  private readonly accounts = new Map<string, AccountState>();
  private readonly simulation: MarketSimulation | null;
  private readonly privateListeners: PrivateEventListener[] = [];
  private readonly tickerListeners: TickerListener[] = [];
  private readonly quoters = new Map<string, SyntheticOwner>();
  private routeHealth: RouteHealth = 'ready';
  private nextIdentifier = 1;
  private nextBookPriority = 1;
  private nextAccountOrdinal = 1;
  private running = false;

  // The current unit of work.
  private depth = 0;
  // Each entity is listed once (its `dirty` flag), in the order it first changed. These arrays
  // are emptied after each commit and used again (the store copies what it keeps).
  private readonly dirtyAccounts: AccountState[] = [];
  private readonly dirtyOrders: OrderState[] = [];
  private readonly dirtyPositions: PositionState[] = [];
  private readonly closedPositionIds: string[] = [];
  private readonly releasedOrders: OrderState[] = [];
  private closedSnapshots: ClosedPositionSnapshot[] = [];
  // Delivered after the commit, where a listener may start another unit of work: each flush
  // takes these and leaves fresh ones (the spares, once delivery is over).
  private pendingFills: FillEntry[] = [];
  private pendingEvents: PendingEvent[] = [];
  /** Markets whose ticker changed (each once: `tickerDue`), in order. */
  private tickerMarkets: MarketRuntime[] = [];
  private spareFills: FillEntry[] | null = null;
  private spareEvents: PendingEvent[] | null = null;
  private spareTickers: MarketRuntime[] | null = null;
  /** Accounts whose snapshots are due (their `touchedMarkets` say which), in order. */
  private touchedAccounts: AccountState[] = [];

  // The incoming order of the match in progress.
  private currentTaker: OrderState | null = null;
  private syntheticMarket: MarketRuntime | null = null;
  private syntheticSide: BookSide = BUY;

  private readonly identifiers: EngineIdentifiers;
  private readonly format: WireFormat;
  private readonly codec: EventCodec;
  // `prepare` runs for every order and its result is read at once: one of each is reused.
  private readonly preparation: Preparation = { problems: [], prepared: null };
  private preparedOrder: PreparedOrder | null = null;
  private readonly changes: { -readonly [Key in keyof ChangeSet]: ChangeSet[Key] } = {
    accounts: [],
    orders: [],
    positions: [],
    closedPositions: [],
    fills: [],
    events: [],
    releasedOrders: [],
    nextIdentifier: 0,
  };

  private constructor(options: ExchangeOptions) {
    this.clock = options.clock;
    this.config = options.config;
    this.store = options.store;
    this.retainedOrders = options.store.retainedOrders;
    this.archive = options.store.orderArchive;
    const seed = String(options.config.seed);
    this.identifiers = new EngineIdentifiers(seed);
    this.format = new WireFormat(this.identifiers);
    const now = this.clock.now();
    options.config.markets.forEach((marketConfig, ordinal) => {
      const market = new MarketRuntime(
        marketConfig,
        ordinal,
        options.config.fees,
        options.config.retention.trades,
        options.config.retention.candles,
        now,
      );
      this.markets.push(market);
      this.marketsById.set(market.id, market);
    });
    this.codec = new EventCodec(this.format, this.markets);
    this.simulation = options.config.simulation.enabled
      ? new MarketSimulation(this, options.config, this.clock, new Random(seed))
      : null;
    this.controls = {
      pauseFeed: (marketId) => this.setFeedPaused(marketId, true),
      resumeFeed: (marketId) => this.setFeedPaused(marketId, false),
      setRouteHealth: (health) => {
        this.routeHealth = health;
      },
      fireCancelAllAfter: (accountId) => {
        const targets =
          accountId === undefined ? [...this.accounts.values()] : [this.accountOf(accountId)];
        this.run(() => {
          for (const account of targets) {
            if (account.cancelAllAfterDeadline !== null) this.triggerCancelAllAfter(account);
          }
        });
      },
    };
  }

  /** Builds an exchange and restores the state kept in `options.store`. */
  static open(options: ExchangeOptions): Exchange {
    const exchange = new Exchange(options);
    exchange.restore();
    exchange.simulation?.initialize();
    return exchange;
  }

  /** Starts the market simulation (and re-arms what a previous `stop()` cleared). */
  start(): void {
    if (this.running) return;
    this.running = true;
    // After a stop(), timers of pending orders and armed deadlines are set again.
    for (const account of this.accounts.values()) {
      if (account.cancelAllAfterDeadline !== null && account.cancelAllAfterTimer === null) {
        this.armCancelAllAfter(account);
      }
      for (const order of account.activeOrders) {
        if (order.status === 'PENDING' && order.submitTimer === null)
          this.scheduleSubmission(order);
      }
    }
    this.simulation?.start();
  }

  /** Clears every timer the exchange set (simulation, order submissions, deadlines). */
  stop(): void {
    this.running = false;
    this.simulation?.stop();
    for (const account of this.accounts.values()) {
      this.clock.clearTimeout(account.cancelAllAfterTimer ?? undefined);
      account.cancelAllAfterTimer = null;
      for (const order of account.activeOrders) {
        this.clock.clearTimeout(order.submitTimer ?? undefined);
        order.submitTimer = null;
      }
    }
  }

  // ---------------------------------------------------------------- public data

  listRoutes(): Route[] {
    return [this.routeWire()];
  }

  listMarkets(): Market[] {
    return this.markets.map((market) => this.marketWire(market));
  }

  getMarket(marketId: string): Market {
    return this.marketWire(this.marketOf(marketId));
  }

  getBook(marketId: string, depth: number): Book {
    const market = this.marketOf(marketId);
    const level = (view: { priceTicks: number; steps: number; orderCount: number }) => ({
      price: market.tick.format(view.priceTicks),
      quantity: market.step.format(view.steps),
      order_count: view.orderCount,
    });
    return {
      market_id: market.id,
      route_id: ROUTE_ID,
      market_structure: 'order_book',
      sequence: null,
      checksum: null,
      bids: market.book.depth(BUY, depth).map(level),
      asks: market.book.depth(SELL, depth).map(level),
      oracle: null,
      observed_at: this.timestamp(this.clock.now()),
    };
  }

  /** Newest first. */
  listTrades(marketId: string, limit: number): PublicTrade[] {
    const market = this.marketOf(marketId);
    const trades: PublicTrade[] = [];
    for (let index = market.trades.length - 1; index >= 0 && trades.length < limit; index--) {
      const trade = market.trades[index]!;
      trades.push({
        trade_id: this.format.uuid(KIND_TRADE, trade.ordinal),
        market_id: market.id,
        route_id: ROUTE_ID,
        price: market.tick.format(trade.priceTicks),
        quantity: market.step.format(trade.steps),
        side: trade.side,
        occurred_at: this.timestamp(trade.at),
      });
    }
    return trades;
  }

  /** Oldest first; only intervals that saw a trade. */
  listCandles(marketId: string, interval: CandleInterval, limit: number): Candle[] {
    const market = this.marketOf(marketId);
    return market.candles.latest(interval, limit).map((bar) => ({
      market_id: market.id,
      route_id: ROUTE_ID,
      interval,
      open_time: this.timestamp(bar.openTime),
      open: market.tick.format(bar.open),
      high: market.tick.format(bar.high),
      low: market.tick.format(bar.low),
      close: market.tick.format(bar.close),
      volume: market.step.format(bar.volumeSteps),
    }));
  }

  tickerOf(marketId: string): TickerData {
    return this.tickerWire(this.marketOf(marketId));
  }

  // ---------------------------------------------------------------- accounts

  createAccount(options: CreateAccountOptions = {}): string {
    const balanceText = options.startingBalance ?? this.config.starting_balance;
    const balance = parseScaled(balanceText, MONEY_SCALE);
    if (balance === null || balance < 0n) {
      throw invalidRequest([
        issue('starting_balance', 'decimal_parsing', 'must be a non-negative decimal string'),
      ]);
    }
    return this.run(() => {
      const ordinal = this.nextIdentifier++;
      const account = new AccountState(
        this.format.uuid(KIND_ACCOUNT, ordinal),
        this.nextAccountOrdinal++,
        balance,
        balance,
        this.clock.now(),
        this.retainedOrders,
      );
      this.accounts.set(account.id, account);
      this.markAccount(account);
      return account.id;
    });
  }

  /**
   * Retires `accountId` (its orders are cancelled, its positions dropped, its keys stop working)
   * and returns a new account with the same starting balance and an empty history.
   */
  resetAccount(accountId: string): string {
    const account = this.accountOf(accountId);
    return this.run(() => {
      for (const order of [...account.activeOrders]) {
        this.cancelActive(order, { code: 'ACCOUNT_RESET', message: 'the account was reset' });
      }
      for (const position of [...account.positions.values()]) {
        position.market.positions.delete(position);
        account.positions.delete(position.market);
        account.positionsById.delete(position.id);
        position.closed = true;
        this.closedPositionIds.push(position.id);
      }
      this.clock.clearTimeout(account.cancelAllAfterTimer ?? undefined);
      account.cancelAllAfterTimer = null;
      account.cancelAllAfterDeadline = null;
      account.active = false;
      this.markAccount(account);
      return this.createAccount({ startingBalance: formatMoney(account.startingBalance) });
    });
  }

  hasAccount(accountId: string): boolean {
    return this.accounts.get(accountId)?.active === true;
  }

  // ---------------------------------------------------------------- private reads

  getAccount(accountId: string): Account {
    return this.accountWire(this.accountOf(accountId));
  }

  listVenueAccounts(accountId: string): VenueAccount[] {
    const account = this.accountOf(accountId);
    const wire = this.accountWire(account);
    return [
      {
        account_id: account.id,
        route_id: ROUTE_ID,
        settlement_asset: SETTLEMENT_ASSET,
        capital_location: this.config.route.capital_location,
        account_value: wire.total_equity,
        available: wire.available,
        in_positions: wire.in_positions,
        unrealized_pnl: wire.unrealized_pnl,
        observed_at: wire.observed_at,
        source: 'emulator-ledger',
        data_status: wire.data_status,
      },
    ];
  }

  listPositions(accountId: string, query: PositionListQuery): PositionPage {
    const account = this.accountOf(accountId);
    const after = decodeCursor(query.cursor) ?? 0;
    const positions = [...account.positions.values()]
      .filter((position) => position.ordinal > after)
      .sort((a, b) => a.ordinal - b.ordinal);
    const page = positions.slice(0, query.limit);
    const hasMore = positions.length > page.length;
    const last = page[page.length - 1];
    return {
      data: page.map((position) => this.positionWire(position)),
      page: {
        next_cursor: hasMore && last !== undefined ? encodeCursor(last.ordinal) : null,
        has_more: hasMore,
      },
    };
  }

  getPositionById(accountId: string, positionId: string): Position {
    const position = this.accountOf(accountId).positionsById.get(positionId);
    if (position === undefined) throw this.positionNotFound(positionId);
    return this.positionWire(position);
  }

  /** Newest first. */
  listOrders(accountId: string, query: OrderListQuery): OrderPage {
    const account = this.accountOf(accountId);
    const before = decodeCursor(query.cursor) ?? Number.MAX_SAFE_INTEGER;
    const data: Order[] = [];
    let hasMore = false;
    let lastOrdinal = 0;
    if (query.route_id === undefined || query.route_id === ROUTE_ID) {
      // Up to the newest released order memory misses some; the archive has them all there.
      const archive = this.archive;
      const floor = archive === null ? 0 : account.orders.releasedUpTo;
      const orders = account.orders.list;
      for (let index = orders.length - 1; index >= 0; index--) {
        const order = orders[index]!;
        if (order.ordinal <= floor) break;
        if (order.released || order.ordinal >= before) continue;
        if (query.market_id !== undefined && order.market.id !== query.market_id) continue;
        if (query.status !== undefined && order.status !== query.status) continue;
        if (data.length === query.limit) {
          hasMore = true;
          break;
        }
        data.push(this.orderWire(order));
        lastOrdinal = order.ordinal;
      }
      if (archive !== null && floor > 0 && !hasMore) {
        const records = archive.listOrders(account.id, {
          limit: query.limit - data.length + 1,
          beforeOrdinal: Math.min(before, floor + 1),
          ...(query.market_id === undefined ? {} : { marketId: query.market_id }),
          ...(query.status === undefined ? {} : { status: query.status }),
        });
        for (const record of records) {
          const wire = this.recordWire(record);
          if (wire === null) continue;
          if (data.length === query.limit) {
            hasMore = true;
            break;
          }
          data.push(wire);
          lastOrdinal = record.ordinal;
        }
      }
    }
    return {
      data,
      page: { next_cursor: hasMore ? encodeCursor(lastOrdinal) : null, has_more: hasMore },
    };
  }

  getOrder(accountId: string, orderId: string): Order {
    const order = this.orderOf(this.accountOf(accountId), orderId);
    return order instanceof OrderState ? this.orderWire(order) : order;
  }

  /** The latest order carrying that client id (an amendment's new order keeps it). */
  getOrderByClientId(accountId: string, clientOrderId: string): Order {
    const account = this.accountOf(accountId);
    const order = account.orders.byClientId.get(clientOrderId);
    if (order !== undefined) return this.orderWire(order);
    const record = this.releasedOrderByClientId(account, clientOrderId);
    const wire = record === undefined ? null : this.recordWire(record);
    if (wire === null) {
      throw new ExchangeError('ORDER_NOT_FOUND', `no order with client id ${clientOrderId}`, {
        client_order_id: clientOrderId,
      });
    }
    return wire;
  }

  /** Newest first. */
  listFills(accountId: string, query: FillListQuery): FillPage {
    const account = this.accountOf(accountId);
    if (query.route_id !== undefined && query.route_id !== ROUTE_ID) {
      return { data: [], page: { next_cursor: null, has_more: false } };
    }
    const before = decodeCursor(query.cursor);
    const records = this.store.listFills(account.id, {
      limit: query.limit + 1,
      ...(before === undefined ? {} : { beforeOrdinal: before }),
      ...(query.market_id === undefined ? {} : { marketId: query.market_id }),
    });
    const page = records.slice(0, query.limit);
    const hasMore = records.length > page.length;
    const last = page[page.length - 1];
    return {
      data: page.map((record) => record.fill),
      page: {
        next_cursor: hasMore && last !== undefined ? encodeCursor(last.ordinal) : null,
        has_more: hasMore,
      },
    };
  }

  listEvents(accountId: string, afterSequence: number, limit: number): EventsPage {
    const account = this.accountOf(accountId, true);
    const events = this.store.listEvents(account.id, afterSequence, limit + 1);
    const data = events.slice(0, limit);
    const last = data[data.length - 1];
    return {
      data,
      has_more: events.length > data.length,
      next_after_sequence: last === undefined ? afterSequence : last.sequence,
    };
  }

  lastSequence(accountId: string): number {
    return this.accountOf(accountId, true).sequence;
  }

  routesReadiness(accountId: string): RouteReadiness[] {
    this.accountOf(accountId);
    const enabled = this.routeHealth !== 'disabled';
    const reasons: string[] = [];
    if (this.routeHealth !== 'ready') reasons.push(`route health is ${this.routeHealth}`);
    return [
      {
        route_id: ROUTE_ID,
        ready: this.routeHealth === 'ready',
        health: this.routeHealth,
        order_submission_enabled: enabled,
        reasons,
        observed_at: this.timestamp(this.clock.now()),
      },
    ];
  }

  // ---------------------------------------------------------------- commands

  simulateOrder(
    accountId: string,
    request: OrderRequest,
    limits?: KeyRiskLimits,
  ): SimulationResult {
    const account = this.accountOf(accountId);
    const marketId = request.market_id;
    if (!this.marketsById.has(marketId)) throw this.unknownMarket(marketId);
    const { problems, prepared } = this.prepare(account, request, limits, true, false);
    const now = this.clock.now();
    const market = this.marketOf(marketId);
    const issues: SimulationIssue[] = problems.map((problem) => ({
      code: problem.code,
      message: problem.message,
      field: problem.field,
    }));
    return {
      market_id: market.id,
      route_id: ROUTE_ID,
      decision: issues.length === 0 ? 'READY' : 'REJECTED',
      required_margin: formatMoney(prepared?.requiredMargin ?? 0n),
      reference_price: market.tick.format(prepared?.referenceTicks ?? market.markTicks),
      maximum_quantity: prepared === null ? null : market.step.format(prepared.maximumSteps),
      issues,
      evaluated_at: this.timestamp(now),
      expires_at: this.timestamp(now + SIMULATION_VALIDITY_MS),
    };
  }

  /** Accepts an order (PENDING, stage QUEUED); it is submitted and matched on the clock. */
  placeOrder(accountId: string, request: OrderRequest, limits?: KeyRiskLimits): Order {
    const account = this.accountOf(accountId);
    this.depth++;
    try {
      return this.orderWire(this.place(account, request, limits, false));
    } finally {
      this.endWork();
    }
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
    const account = this.accountOf(accountId);
    const unsupported = practiceUnsupportedField(request);
    if (unsupported !== null) throw this.unsupported(unsupported);
    const order = this.orderOf(account, orderId);
    if (!(order instanceof OrderState) || !isActive(order.status)) {
      throw invalidRequest([
        {
          type: 'value_error',
          loc: ['path', 'order_id'],
          msg: `order is ${order.status} and can no longer be amended`,
        },
      ]);
    }
    const market = order.market;
    const totalText =
      request.quantity === undefined || request.quantity === null
        ? market.step.format(order.quantitySteps)
        : textOf(request.quantity);
    const totalSteps = market.step.unitsOf(totalText);
    if (totalSteps === null) {
      throw invalidRequest([
        issue('quantity', 'multiple_of', `quantity must be a multiple of ${market.step.text}`),
      ]);
    }
    if (order.type === 'market' && request.price !== undefined && request.price !== null) {
      throw invalidRequest([issue('price', 'value_error', 'a market order has no price')]);
    }
    return this.run(() => {
      this.cancelActive(order, null);
      // The old order is terminal now, so its filled quantity is final.
      const remainingSteps = totalSteps - order.filledSteps;
      if (remainingSteps <= 0) {
        throw invalidRequest([
          issue(
            'quantity',
            'greater_than',
            `the order already filled ${market.step.format(order.filledSteps)}; the amended quantity must exceed it`,
          ),
        ]);
      }
      const priceText =
        order.type === 'market'
          ? null
          : request.price === undefined || request.price === null
            ? market.tick.format(order.priceTicks!)
            : textOf(request.price);
      const replacement: OrderRequest = {
        request_id: request.request_id,
        client_order_id: order.clientOrderId,
        market_id: market.id,
        side: sideText(order.side),
        type: order.type,
        quantity: market.step.format(remainingSteps),
        leverage: order.leverage,
        price: priceText,
        time_in_force: order.timeInForce,
        post_only: order.postOnly,
        reduce_only: order.reduceOnly,
        position_id: order.positionId,
        margin_mode: order.marginMode,
        max_slippage_percent:
          order.maxSlippagePercent === null ? null : formatMoney(order.maxSlippagePercent),
      };
      return this.orderWire(this.place(account, replacement, limits, true));
    });
  }

  /** Cancels an active order at once; a terminal order is returned unchanged. */
  cancelOrder(accountId: string, orderId: string, _requestId: string): Order {
    const account = this.accountOf(accountId);
    const order = this.orderOf(account, orderId);
    // A released order is terminal: returned as it is.
    if (!(order instanceof OrderState)) return order;
    return this.run(() => {
      if (isActive(order.status)) this.cancelActive(order, null);
      return this.orderWire(order);
    });
  }

  cancelAll(accountId: string, requestId: string, marketId?: string | null): CancelAllResponse {
    const account = this.accountOf(accountId);
    const market = marketId === undefined || marketId === null ? null : this.marketOf(marketId);
    return this.run(() => {
      const results: Order[] = [];
      for (const order of [...account.activeOrders]) {
        if (market !== null && order.market !== market) continue;
        this.cancelActive(order, null);
        results.push(this.orderWire(order));
      }
      return { request_id: requestId, results };
    });
  }

  /** Each item is placed on its own; a failure does not undo the others. */
  placeBatch(
    accountId: string,
    requestId: string,
    orders: readonly OrderRequest[],
    limits?: KeyRiskLimits,
  ): BatchOrderResponse {
    const account = this.accountOf(accountId);
    return this.run(() => {
      const results: (Order | FailedOrderCommand)[] = orders.map((request) => {
        try {
          return this.orderWire(this.place(account, request, limits, false));
        } catch (error) {
          if (!(error instanceof ExchangeError)) throw error;
          return {
            error: error.toCommandError(),
            request_id: request.request_id,
            client_order_id: request.client_order_id,
            order_id: null,
          };
        }
      });
      return { request_id: requestId, atomicity: 'non_atomic', results };
    });
  }

  /** A reduce-only market order for `quantity_percent` of the position (rounded down to a step). */
  closePosition(
    accountId: string,
    positionId: string,
    request: ClosePositionRequest,
    limits?: KeyRiskLimits,
  ): Order {
    const account = this.accountOf(accountId);
    const position = account.positionsById.get(positionId);
    if (position === undefined) throw this.positionNotFound(positionId);
    const market = position.market;
    const percent = parseScaled(textOf(request.quantity_percent), MONEY_SCALE);
    if (percent === null || percent <= 0n || percent > ONE_HUNDRED_PERCENT) {
      throw invalidRequest([
        issue('quantity_percent', 'value_error', 'must be above 0 and at most 100'),
      ]);
    }
    const steps = Number(
      divideRounded(BigInt(position.steps) * percent, ONE_HUNDRED_PERCENT, 'down'),
    );
    if (steps <= 0) {
      throw invalidRequest([
        issue(
          'quantity_percent',
          'value_error',
          `closes less than one quantity step (${market.step.text}) of the position`,
        ),
      ]);
    }
    const order: OrderRequest = {
      request_id: request.request_id,
      client_order_id: request.client_order_id,
      market_id: market.id,
      side: position.direction === 1 ? 'sell' : 'buy',
      type: 'market',
      quantity: market.step.format(steps),
      leverage: 1,
      time_in_force: 'IOC',
      post_only: false,
      reduce_only: true,
      position_id: position.id,
      margin_mode: position.marginMode,
      max_slippage_percent: textOf(request.max_slippage_percent),
    };
    return this.run(() => this.orderWire(this.place(account, order, limits, false)));
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
    const account = this.accountOf(accountId);
    if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 0 || timeoutSeconds > 86_400) {
      throw invalidRequest([
        issue('timeout_seconds', 'value_error', 'must be an integer from 0 to 86400'),
      ]);
    }
    return this.run(() => {
      this.clock.clearTimeout(account.cancelAllAfterTimer ?? undefined);
      account.cancelAllAfterTimer = null;
      this.markAccount(account);
      if (timeoutSeconds === 0) {
        account.cancelAllAfterDeadline = null;
        return { request_id: requestId, deadline_at: null };
      }
      const deadline = this.clock.now() + timeoutSeconds * 1000;
      account.cancelAllAfterDeadline = deadline;
      this.armCancelAllAfter(account);
      return { request_id: requestId, deadline_at: this.timestamp(deadline) };
    });
  }

  // ---------------------------------------------------------------- listeners

  onPrivateEvent(listener: PrivateEventListener): () => void {
    this.privateListeners.push(listener);
    return () => {
      const index = this.privateListeners.indexOf(listener);
      if (index >= 0) this.privateListeners.splice(index, 1);
    };
  }

  onTicker(listener: TickerListener): () => void {
    this.tickerListeners.push(listener);
    return () => {
      const index = this.tickerListeners.indexOf(listener);
      if (index >= 0) this.tickerListeners.splice(index, 1);
    };
  }

  // ---------------------------------------------------------------- VenueDriver

  driverMarkets(): readonly DriverMarket[] {
    return this.markets.map((market) => ({
      marketId: market.id,
      config: market.config,
      tick: market.tick,
      step: market.step,
    }));
  }

  batch(work: () => void): void {
    this.run(work);
  }

  setReferencePrices(marketId: string, indexTicks: number, markTicks: number): void {
    const market = this.marketOf(marketId);
    if (indexTicks < 1 || markTicks < 1) throw new RangeError('prices must be at least one tick');
    this.run(() => {
      market.indexTicks = indexTicks;
      market.markTicks = markTicks;
      market.observedAt = this.clock.now();
      this.markTicker(market);
      this.checkLiquidations(market);
    });
  }

  setFunding(marketId: string, rate: string, nextFundingTime: number): void {
    const market = this.marketOf(marketId);
    market.fundingRate = rate;
    market.nextFundingTime = nextFundingTime;
  }

  replaceQuotes(
    marketId: string,
    quoterId: string,
    bids: readonly QuoteLevel[],
    asks: readonly QuoteLevel[],
  ): void {
    const market = this.marketOf(marketId);
    let owner = this.quoters.get(quoterId);
    if (owner === undefined) {
      owner = { synthetic: true, quoterId };
      this.quoters.set(quoterId, owner);
    }
    const quoter = owner;
    this.run(() => {
      for (const resting of market.quotes.get(quoterId) ?? []) market.book.remove(resting);
      const fresh: RestingOrder<BookOwner>[] = [];
      const post = (side: BookSide, level: QuoteLevel) => {
        const left = this.matchSynthetic(market, side, level.steps, level.priceTicks);
        if (left > 0) {
          const resting = new RestingOrder<BookOwner>(side, level.priceTicks, left, quoter);
          market.book.add(resting);
          fresh.push(resting);
        }
      };
      for (const level of bids) post(BUY, level);
      for (const level of asks) post(SELL, level);
      market.quotes.set(quoterId, fresh);
    });
  }

  submitSyntheticOrder(
    marketId: string,
    side: BookSide,
    steps: number,
    limitTicks: number,
  ): number {
    const market = this.marketOf(marketId);
    return this.run(() => steps - this.matchSynthetic(market, side, steps, limitTicks));
  }

  bestBid(marketId: string): number | null {
    return this.marketOf(marketId).book.bestBid();
  }

  bestAsk(marketId: string): number | null {
    return this.marketOf(marketId).book.bestAsk();
  }

  markTicks(marketId: string): number {
    return this.marketOf(marketId).markTicks;
  }

  isFeedPaused(marketId: string): boolean {
    return this.marketOf(marketId).feedPaused;
  }

  // ================================================================ internals

  private run<T>(work: () => T): T {
    this.depth++;
    try {
      return work();
    } finally {
      this.endWork();
    }
  }

  /** Ends a unit of work begun with `this.depth++` (the hot paths do so without a closure). */
  private endWork(): void {
    this.depth--;
    if (this.depth === 0) this.flush();
  }

  private markAccount(account: AccountState): void {
    if (account.dirty) return;
    account.dirty = true;
    this.dirtyAccounts.push(account);
  }

  private markOrder(order: OrderState): void {
    if (order.dirty) return;
    order.dirty = true;
    this.dirtyOrders.push(order);
  }

  private markPosition(position: PositionState): void {
    if (position.dirty) return;
    position.dirty = true;
    this.dirtyPositions.push(position);
  }

  private markTicker(market: MarketRuntime): void {
    if (market.tickerDue) return;
    market.tickerDue = true;
    this.tickerMarkets.push(market);
  }

  private flush(): void {
    this.depth++;
    try {
      this.publishTouched();
    } finally {
      this.depth--;
    }
    const events = this.pendingEvents;
    const fills = this.pendingFills;
    const tickers = this.tickerMarkets;
    this.pendingEvents = this.spareEvents ?? [];
    this.pendingFills = this.spareFills ?? [];
    this.tickerMarkets = this.spareTickers ?? [];
    this.spareEvents = null;
    this.spareFills = null;
    this.spareTickers = null;
    for (const market of tickers) market.tickerDue = false;
    // With listeners, each event is built once (pinned) for the store and every listener.
    const delivering = this.privateListeners.length > 0 && events.length > 0;
    if (delivering) {
      for (const entry of events) entry.pin();
    }
    const accounts = this.dirtyAccounts;
    const orders = this.dirtyOrders;
    const positions = this.dirtyPositions;
    if (
      accounts.length > 0 ||
      orders.length > 0 ||
      positions.length > 0 ||
      this.closedPositionIds.length > 0 ||
      this.releasedOrders.length > 0 ||
      fills.length > 0 ||
      events.length > 0
    ) {
      for (const account of accounts) account.dirty = false;
      for (const order of orders) order.dirty = false;
      let closedCount = 0;
      for (const position of positions) {
        position.dirty = false;
        if (position.closed) closedCount++;
      }
      // One object for every commit: the store reads it during `commit` only.
      const changes = this.changes;
      changes.accounts = accounts;
      changes.orders = orders;
      changes.positions =
        closedCount > 0 ? positions.filter((position) => !position.closed) : positions;
      changes.closedPositions = this.closedPositionIds;
      changes.fills = fills;
      changes.events = events;
      changes.releasedOrders = this.releasedOrders;
      changes.nextIdentifier = this.nextIdentifier;
      try {
        this.store.commit(changes);
      } finally {
        empty(accounts);
        empty(orders);
        empty(positions);
        empty(this.closedPositionIds);
        empty(this.releasedOrders);
      }
    }
    let failure: unknown = null;
    if (delivering) {
      for (const entry of events) {
        const event = entry.pin();
        for (const listener of this.privateListeners) {
          try {
            listener(entry.account_id, event);
          } catch (error) {
            failure ??= error;
          }
        }
      }
      // The store may keep the records: drop the built objects so it keeps the compact form
      // (every fill is also an event).
      for (const entry of events) entry.unpin();
    }
    if (tickers.length > 0 && this.tickerListeners.length > 0) {
      const occurredAt = this.timestamp(this.clock.now());
      for (const market of tickers) {
        const data = this.tickerWire(market);
        for (const listener of this.tickerListeners) {
          try {
            listener(market.id, data, occurredAt);
          } catch (error) {
            failure ??= error;
          }
        }
      }
    }
    empty(events);
    empty(fills);
    empty(tickers);
    this.spareEvents = events;
    this.spareFills = fills;
    this.spareTickers = tickers;
    // A failing listener must not stop the others, nor leave the unit half-published.
    if (failure !== null) throw failure;
  }

  private restore(): void {
    const state = this.store.load();
    this.nextIdentifier = Math.max(this.nextIdentifier, state.nextIdentifier);
    for (const record of state.accounts) {
      const wallet = parseScaled(record.wallet, MONEY_SCALE) ?? 0n;
      const starting = parseScaled(record.starting_balance, MONEY_SCALE) ?? 0n;
      const account = new AccountState(
        record.account_id,
        record.ordinal,
        wallet,
        starting,
        record.created_at,
        this.retainedOrders,
      );
      account.sequence = record.sequence;
      account.snapshotVersion = record.snapshot_version;
      account.active = record.active;
      account.cancelAllAfterDeadline = record.cancel_all_after_deadline;
      this.accounts.set(account.id, account);
      this.nextAccountOrdinal = Math.max(this.nextAccountOrdinal, record.ordinal + 1);
    }
    for (const record of state.positions) {
      const account = this.accounts.get(record.account_id);
      const market = this.marketsById.get(record.market_id);
      if (account === undefined || market === undefined) continue;
      const position = new PositionState(
        record.position_id,
        record.ordinal,
        account,
        market,
        record.side === 'long' ? 1 : -1,
        market.step.unitsOf(record.quantity) ?? 0,
        parseScaled(record.cost_basis, MONEY_SCALE) ?? 0n,
        parseScaled(record.margin, MONEY_SCALE) ?? 0n,
        record.margin_mode,
        record.opened_at,
        record.updated_at,
      );
      account.positions.set(market, position);
      account.positionsById.set(position.id, position);
      if (account.active) market.positions.add(position);
    }
    const resting: OrderState[] = [];
    for (const record of state.orders) {
      const account = this.accounts.get(record.account_id);
      const market = this.marketsById.get(record.market_id);
      if (account === undefined || market === undefined) continue;
      const order = new OrderState(
        record.ordinal,
        record.order_id,
        account,
        market,
        record.request_id,
        record.client_order_id,
        record.side === 'buy' ? BUY : SELL,
        record.type,
        market.step.unitsOf(record.quantity) ?? 0,
        record.price === null ? null : market.tick.unitsOf(record.price),
        record.time_in_force,
        record.post_only,
        record.reduce_only,
        record.position_id,
        record.leverage,
        record.margin_mode,
        record.max_slippage_percent === null
          ? null
          : parseScaled(record.max_slippage_percent, MONEY_SCALE),
        this.format.instant(record.received_at),
      );
      order.status = record.status;
      order.updatedAt = this.format.instant(record.updated_at);
      order.filledSteps = market.step.unitsOf(record.filled_quantity) ?? 0;
      order.filledNotional = parseScaled(record.filled_notional, MONEY_SCALE) ?? 0n;
      order.reserved = parseScaled(record.reserved_margin, MONEY_SCALE) ?? 0n;
      order.lastEventSequence = record.last_event_sequence;
      order.bookPriority = record.book_priority;
      order.error = record.error;
      // A store written with another seed holds ids that are not the UUIDs of their ordinals.
      account.orders.add(
        order,
        this.identifiers.counterOf(KIND_ORDER, order.id) === order.ordinal &&
          this.format.uuid(KIND_ORDER, order.ordinal) === order.id,
      );
      if (isActive(order.status)) {
        account.trackActive(order, 1);
        account.reserved += order.reserved;
        if (record.book_priority !== null) resting.push(order);
      } else {
        this.terminated(order);
      }
    }
    resting.sort((a, b) => (a.bookPriority ?? 0) - (b.bookPriority ?? 0));
    for (const order of resting) {
      order.resting = new RestingOrder<BookOwner>(
        order.side,
        order.priceTicks!,
        order.remainingSteps,
        order,
      );
      order.market.book.add(order.resting);
      this.nextBookPriority = Math.max(this.nextBookPriority, (order.bookPriority ?? 0) + 1);
    }
    for (const account of this.accounts.values()) {
      for (const order of account.activeOrders) {
        // Submission is transient within one unit of work; a stored PENDING or SUBMITTED order
        // had not been matched yet, so it is submitted again.
        if (order.status === 'PENDING' || order.status === 'SUBMITTED') {
          order.status = 'PENDING';
          this.scheduleSubmission(order);
        }
      }
      if (account.cancelAllAfterDeadline !== null) this.armCancelAllAfter(account);
    }
  }

  private timestamp(epochMs: number): string {
    return this.format.timestamp(epochMs);
  }

  private instantNow(): Instant {
    return this.format.instant(this.clock.now());
  }

  private accountOf(accountId: string, allowInactive = false): AccountState {
    const account = this.accounts.get(accountId);
    if (account === undefined || (!account.active && !allowInactive)) {
      throw new ExchangeError('KEY_REVOKED', 'the account is not active', {
        account_id: accountId,
      });
    }
    return account;
  }

  private marketOf(marketId: string): MarketRuntime {
    const market = this.marketsById.get(marketId);
    if (market === undefined) throw this.unknownMarket(marketId);
    return market;
  }

  /** The order in memory, or the wire object of one the archive keeps (always terminal). */
  private orderOf(account: AccountState, orderId: string): OrderState | Order {
    const order = account.orders.find(orderId, this.identifiers.counterOf(KIND_ORDER, orderId));
    if (order !== undefined) return order;
    const record =
      this.archive !== null && account.orders.releasedUpTo > 0
        ? this.archive.findOrder(account.id, orderId)
        : undefined;
    const wire = record === undefined ? null : this.recordWire(record);
    if (wire === null) {
      throw new ExchangeError('ORDER_NOT_FOUND', `order ${orderId} not found`, {
        order_id: orderId,
      });
    }
    return wire;
  }

  /** The newest released order with that client id, when the archive keeps released orders. */
  private releasedOrderByClientId(
    account: AccountState,
    clientOrderId: string,
  ): OrderRecord | undefined {
    if (this.archive === null || account.orders.releasedUpTo === 0) return undefined;
    return this.archive.findOrderByClientId(account.id, clientOrderId);
  }

  /** Notes that `order` became terminal; the order it makes the account release goes to the store. */
  private terminated(order: OrderState): void {
    const released = order.account.orders.terminated(order);
    if (released !== null) this.releasedOrders.push(released);
  }

  private unknownMarket(marketId: string): ExchangeError {
    return new ExchangeError('UNKNOWN_MARKET', `market ${marketId} does not exist`, {
      market_id: marketId,
    });
  }

  private positionNotFound(positionId: string): ExchangeError {
    return new ExchangeError('POSITION_NOT_FOUND', `position ${positionId} not found`, {
      position_id: positionId,
    });
  }

  private unsupported(field: Parameters<typeof practiceUnsupportedError>[0]): ExchangeError {
    const error = practiceUnsupportedError(field);
    return new ExchangeError(error.code, error.message, error.details, error.retryable);
  }

  // ---------------------------------------------------------------- placement

  /** Every check of an order request against markets and the account, in a fixed order. */
  private prepare(
    account: AccountState,
    request: OrderRequest,
    limits: KeyRiskLimits | undefined,
    simulation: boolean,
    replacing: boolean,
  ): Preparation {
    const preparation = this.preparation;
    const problems = preparation.problems;
    empty(problems);
    preparation.prepared = null;
    const unsupported = practiceUnsupportedField(request);
    if (unsupported !== null) {
      const error = practiceUnsupportedError(unsupported);
      problems.push({
        code: 'UNSUPPORTED_ORDER',
        message: error.message,
        field: unsupported,
        details: error.details,
      });
      if (!simulation) return preparation;
    }
    const market = this.marketsById.get(request.market_id);
    if (market === undefined) {
      problems.push({
        code: 'UNKNOWN_MARKET',
        message: `market ${request.market_id} does not exist`,
        field: 'market_id',
        details: { market_id: request.market_id },
      });
      return preparation;
    }
    if (this.routeHealth !== 'ready') {
      problems.push({
        code: 'ROUTE_NOT_READY',
        message: `route ${ROUTE_ID} is ${this.routeHealth}`,
        field: null,
        details: { route_id: ROUTE_ID, health: this.routeHealth },
      });
    }
    if (request.type !== 'market' && request.type !== 'limit') {
      return preparation;
    }
    const type = request.type;
    const side: BookSide = request.side === 'buy' ? BUY : SELL;
    const direction = side === BUY ? 1 : -1;
    const reduceOnly = request.reduce_only === true;
    const postOnly = request.post_only === true;
    const timeInForce = request.time_in_force === 'IOC' ? 'IOC' : 'GTC';
    const marginMode = request.margin_mode === 'cross' ? 'cross' : 'isolated';
    if (
      !replacing &&
      (account.orders.byClientId.has(request.client_order_id) ||
        this.releasedOrderByClientId(account, request.client_order_id) !== undefined)
    ) {
      addInvalid(
        problems,
        'client_order_id',
        'value_error',
        `client_order_id ${request.client_order_id} was already used by this account`,
      );
    }
    const leverage = request.leverage;
    const maximumLeverage = market.config.maximum_leverage;
    if (!Number.isInteger(leverage) || leverage < 1 || leverage > maximumLeverage) {
      addInvalid(
        problems,
        'leverage',
        'less_than_equal',
        `leverage must be an integer from 1 to the market maximum ${maximumLeverage}`,
      );
    }
    const steps = market.step.unitsOf(textOf(request.quantity));
    if (steps === null || steps <= 0) {
      addInvalid(
        problems,
        'quantity',
        'multiple_of',
        `quantity must be a positive multiple of quantity_step ${market.step.text}`,
      );
    }
    let priceTicks: number | null = null;
    if (type === 'limit') {
      const price = request.price;
      if (price === undefined || price === null) {
        addInvalid(problems, 'price', 'missing', 'price is required for limit orders');
      } else {
        priceTicks = market.tick.unitsOf(textOf(price));
        if (priceTicks === null || priceTicks <= 0) {
          addInvalid(
            problems,
            'price',
            'multiple_of',
            `price must be a positive multiple of price_tick ${market.tick.text}`,
          );
          priceTicks = null;
        }
      }
    }
    let slippage: bigint | null = null;
    if (type === 'market') {
      const text = request.max_slippage_percent;
      slippage =
        text === undefined || text === null ? null : parseScaled(textOf(text), MONEY_SCALE);
      if (slippage === null || slippage <= 0n || slippage > 2n * MONEY_ONE) {
        addInvalid(
          problems,
          'max_slippage_percent',
          'value_error',
          'market orders need max_slippage_percent above 0 and at most 2',
        );
        slippage = null;
      }
    }
    if (!market.marginModes.has(marginMode)) {
      problems.push({
        code: 'UNSUPPORTED_ORDER',
        message: `market ${market.id} supports margin modes ${[...market.marginModes].join(', ')}`,
        field: 'margin_mode',
        details: { field: 'margin_mode' },
      });
    }
    const position = account.positions.get(market);
    if (request.position_id !== undefined && request.position_id !== null) {
      const target = account.positionsById.get(request.position_id);
      if (target === undefined || target.market !== market) {
        problems.push({
          code: 'POSITION_NOT_FOUND',
          message: `position ${request.position_id} not found in market ${market.id}`,
          field: 'position_id',
          details: { position_id: request.position_id },
        });
      }
    }
    if (!reduceOnly) {
      let inUse: string | null = null;
      if (position !== undefined && position.marginMode !== marginMode) inUse = position.marginMode;
      if (inUse === null) {
        const counts = account.openingOrders[market.ordinal];
        const other = marginMode === 'cross' ? 'isolated' : 'cross';
        if (counts !== undefined && counts[other] > 0) inUse = other;
      }
      if (inUse !== null) {
        problems.push({
          code: 'MARGIN_MODE_IN_USE',
          message: `market ${market.id} is already traded with margin mode ${inUse} on this account`,
          field: 'margin_mode',
          details: { market_id: market.id, margin_mode: inUse },
        });
      }
    }
    if (steps === null || steps <= 0 || (type === 'limit' && priceTicks === null)) {
      return preparation;
    }
    if (type === 'market' && slippage === null) return preparation;
    const opposite = side === BUY ? market.book.bestAsk() : market.book.bestBid();
    const referenceTicks = type === 'limit' ? priceTicks! : (opposite ?? market.markTicks);
    const marginTicks =
      type === 'limit' ? priceTicks! : this.slippageBound(side, slippage!, referenceTicks);
    const notional = market.notional(referenceTicks, steps);
    if (!reduceOnly) {
      if (market.minimumQuantitySteps !== null && steps < market.minimumQuantitySteps) {
        addInvalid(
          problems,
          'quantity',
          'greater_than_equal',
          `quantity is below the market's minimum_quantity ${market.config.minimum_quantity}`,
        );
      }
      if (market.minimumNotional !== null && notional < market.minimumNotional) {
        addInvalid(
          problems,
          'quantity',
          'greater_than_equal',
          `order notional ${formatMoney(notional)} is below the market's minimum_notional ${market.config.minimum_notional}`,
        );
      }
    }
    const reducible =
      position !== undefined && position.direction !== direction ? position.steps : 0;
    if (reduceOnly && reducible === 0) {
      const message = 'reduce_only order has no opposite position to reduce';
      if (simulation) {
        problems.push({ code: 'UNSUPPORTED_ORDER', message, field: 'reduce_only' });
      }
    }
    if (simulation && postOnly && priceTicks !== null && market.book.wouldCross(side, priceTicks)) {
      problems.push({
        code: 'UNSUPPORTED_ORDER',
        message: 'post_only order would take liquidity and would be rejected',
        field: 'post_only',
      });
    }
    const openingSteps = reduceOnly ? 0 : Math.max(0, steps - reducible);
    const requiredMargin = this.marginFor(market, marginTicks, openingSteps, leverage);
    if (limits?.maxOpenOrders !== undefined && limits.maxOpenOrders !== null) {
      if (account.activeOrders.size >= limits.maxOpenOrders) {
        problems.push({
          code: 'RISK_LIMIT_EXCEEDED',
          message: `the key allows at most ${limits.maxOpenOrders} open orders`,
          field: null,
          details: { limit: 'max_open_orders', value: limits.maxOpenOrders },
        });
      }
    }
    if (limits?.maxOrderNotional !== undefined && limits.maxOrderNotional !== null) {
      const maximum = parseScaled(limits.maxOrderNotional, MONEY_SCALE);
      if (maximum !== null && notional > maximum) {
        problems.push({
          code: 'RISK_LIMIT_EXCEEDED',
          message: `order notional ${formatMoney(notional)} exceeds the key's limit ${limits.maxOrderNotional}`,
          field: 'quantity',
          details: { limit: 'max_order_notional', value: limits.maxOrderNotional },
        });
      }
    }
    const available = this.available(account);
    if (requiredMargin > available) {
      problems.push({
        code: 'INSUFFICIENT_READY_CAPITAL',
        message: `required margin ${formatMoney(requiredMargin)} exceeds available ${formatMoney(available)}`,
        field: 'quantity',
        details: {
          required_margin: formatMoney(requiredMargin),
          available: formatMoney(available),
        },
      });
    }
    // How much the account could afford is shown by a simulation only.
    let affordable = 0;
    if (simulation && !reduceOnly) {
      const perStep = this.marginFor(market, marginTicks, 1, leverage);
      affordable = perStep === 0n ? 0 : Number(available / perStep);
    }
    const positionId = request.position_id ?? null;
    const maximumSteps = reducible + affordable;
    let prepared = this.preparedOrder;
    if (prepared === null) {
      prepared = {
        market,
        side,
        type,
        steps,
        priceTicks,
        timeInForce,
        postOnly,
        reduceOnly,
        positionId,
        leverage,
        marginMode,
        maxSlippagePercent: slippage,
        referenceTicks,
        marginTicks,
        requiredMargin,
        maximumSteps,
      };
      this.preparedOrder = prepared;
    } else {
      prepared.market = market;
      prepared.side = side;
      prepared.type = type;
      prepared.steps = steps;
      prepared.priceTicks = priceTicks;
      prepared.timeInForce = timeInForce;
      prepared.postOnly = postOnly;
      prepared.reduceOnly = reduceOnly;
      prepared.positionId = positionId;
      prepared.leverage = leverage;
      prepared.marginMode = marginMode;
      prepared.maxSlippagePercent = slippage;
      prepared.referenceTicks = referenceTicks;
      prepared.marginTicks = marginTicks;
      prepared.requiredMargin = requiredMargin;
      prepared.maximumSteps = maximumSteps;
    }
    preparation.prepared = prepared;
    return preparation;
  }

  /** Initial margin of the opening part plus the taker fee on it. */
  private marginFor(
    market: MarketRuntime,
    priceTicks: number,
    steps: number,
    leverage: number,
  ): bigint {
    if (steps <= 0) return 0n;
    const units = market.units(priceTicks, steps);
    const notional = units * market.notionalFactor;
    return market.initialMarginOf(priceTicks, steps, leverage) + market.fee(units, notional, false);
  }

  /** The worst price a market order may reach: reference ± max_slippage_percent, on the grid. */
  private slippageBound(side: BookSide, slippagePercent: bigint, referenceTicks: number): number {
    const reference = BigInt(referenceTicks);
    if (side === BUY) {
      return Number(
        divideRounded(
          reference * (ONE_HUNDRED_PERCENT + slippagePercent),
          ONE_HUNDRED_PERCENT,
          'down',
        ),
      );
    }
    return Math.max(
      1,
      Number(
        divideRounded(
          reference * (ONE_HUNDRED_PERCENT - slippagePercent),
          ONE_HUNDRED_PERCENT,
          'up',
        ),
      ),
    );
  }

  private place(
    account: AccountState,
    request: OrderRequest,
    limits: KeyRiskLimits | undefined,
    replacing: boolean,
  ): OrderState {
    const { problems, prepared } = this.prepare(account, request, limits, false, replacing);
    const first = problems[0];
    if (first !== undefined || prepared === null) {
      if (first === undefined)
        throw invalidRequest([issue('type', 'value_error', 'invalid order')]);
      if (first.code === 'INVALID_REQUEST') {
        throw invalidRequest(
          problems.flatMap((problem) =>
            problem.code === 'INVALID_REQUEST' && problem.issue ? [problem.issue] : [],
          ),
        );
      }
      throw new ExchangeError(first.code, first.message, first.details ?? {});
    }
    const ordinal = this.nextIdentifier++;
    const now = this.instantNow();
    const order = new OrderState(
      ordinal,
      this.format.uuid(KIND_ORDER, ordinal),
      account,
      prepared.market,
      request.request_id,
      request.client_order_id,
      prepared.side,
      prepared.type,
      prepared.steps,
      prepared.priceTicks,
      prepared.timeInForce,
      prepared.postOnly,
      prepared.reduceOnly,
      prepared.positionId,
      prepared.leverage,
      prepared.marginMode,
      prepared.maxSlippagePercent,
      now,
    );
    // Ids are UUIDs of the ordinal; `counterOf` tells the ordinal back below 2^32.
    account.orders.add(order, ordinal < 2 ** 32);
    account.trackActive(order, 1);
    order.reserved = prepared.requiredMargin;
    account.reserved += prepared.requiredMargin;
    this.statusEvent(order, null, 'PENDING');
    this.scheduleSubmission(order);
    return order;
  }

  private scheduleSubmission(order: OrderState): void {
    order.submitTimer = this.clock.setTimeout(() => {
      order.submitTimer = null;
      this.depth++;
      try {
        this.submit(order);
      } finally {
        this.endWork();
      }
    }, this.config.latency.submit_ms);
  }

  private submit(order: OrderState): void {
    if (order.status !== 'PENDING') return;
    this.transition(order, 'SUBMITTED');
    const market = order.market;
    const account = order.account;
    let cap = order.remainingSteps;
    if (order.reduceOnly) {
      const position = account.positions.get(market);
      const direction = order.side === BUY ? 1 : -1;
      if (position === undefined || position.direction === direction) {
        order.error = {
          code: 'REDUCE_ONLY_NOTHING_TO_REDUCE',
          message: 'reduce_only order has no opposite position to reduce',
        };
        this.transition(order, 'REJECTED');
        return;
      }
      cap = Math.min(cap, position.steps);
    }
    let limit: number;
    if (order.type === 'market') {
      const opposite = order.side === BUY ? market.book.bestAsk() : market.book.bestBid();
      limit = this.slippageBound(
        order.side,
        order.maxSlippagePercent!,
        opposite ?? market.markTicks,
      );
    } else {
      limit = order.priceTicks!;
    }
    if (order.postOnly && market.book.wouldCross(order.side, limit)) {
      order.error = {
        code: 'POST_ONLY_WOULD_TAKE',
        message: 'post_only order would have taken liquidity',
      };
      this.transition(order, 'REJECTED');
      return;
    }
    this.currentTaker = order;
    try {
      market.book.match(order.side, limit, cap, this.onTakerFill);
    } finally {
      this.currentTaker = null;
    }
    this.publishTouched();
    if (order.remainingSteps === 0) {
      this.transition(order, 'FILLED');
    } else if (order.type === 'market' || order.timeInForce === 'IOC') {
      this.transition(order, 'CANCELLED');
    } else if (order.reduceOnly && !this.reduceOnlyMayRest(order)) {
      order.error = {
        code: 'REDUCE_ONLY_EXCEEDS_POSITION',
        message: 'the rest of the reduce_only order would increase exposure',
      };
      this.transition(order, 'CANCELLED');
    } else {
      this.rest(order);
      this.transition(order, order.filledSteps > 0 ? 'PARTIALLY_FILLED' : 'OPEN');
    }
  }

  private rest(order: OrderState): void {
    order.bookPriority = this.nextBookPriority++;
    order.resting = new RestingOrder<BookOwner>(
      order.side,
      order.priceTicks!,
      order.remainingSteps,
      order,
    );
    order.market.book.add(order.resting);
  }

  private reduceOnlyMayRest(order: OrderState): boolean {
    const position = order.account.positions.get(order.market);
    const direction = order.side === BUY ? 1 : -1;
    return (
      position !== undefined &&
      position.direction !== direction &&
      order.remainingSteps <= position.steps
    );
  }

  private readonly onTakerFill = (
    maker: RestingOrder<BookOwner>,
    steps: number,
    priceTicks: number,
  ): void => {
    const taker = this.currentTaker!;
    this.applyFill(taker, steps, priceTicks, false);
    this.makerFilled(maker, steps, priceTicks);
    this.recordTrade(taker.market, priceTicks, steps, taker.side);
  };

  private readonly onSyntheticFill = (
    maker: RestingOrder<BookOwner>,
    steps: number,
    priceTicks: number,
  ): void => {
    this.makerFilled(maker, steps, priceTicks);
    this.recordTrade(this.syntheticMarket!, priceTicks, steps, this.syntheticSide);
  };

  private matchSynthetic(
    market: MarketRuntime,
    side: BookSide,
    steps: number,
    limitTicks: number,
  ): number {
    const previousMarket = this.syntheticMarket;
    const previousSide = this.syntheticSide;
    this.syntheticMarket = market;
    this.syntheticSide = side;
    try {
      return market.book.match(side, limitTicks, steps, this.onSyntheticFill);
    } finally {
      this.syntheticMarket = previousMarket;
      this.syntheticSide = previousSide;
    }
  }

  private makerFilled(maker: RestingOrder<BookOwner>, steps: number, priceTicks: number): void {
    const owner = maker.owner;
    if (owner.synthetic) return;
    this.applyFill(owner, steps, priceTicks, true);
    if (maker.remaining === 0) {
      owner.resting = null;
      this.transition(owner, 'FILLED');
    } else if (owner.status === 'OPEN') {
      this.transition(owner, 'PARTIALLY_FILLED');
    }
  }

  private recordTrade(
    market: MarketRuntime,
    priceTicks: number,
    steps: number,
    side: BookSide,
  ): void {
    const ordinal = this.nextIdentifier++;
    market.recordTrade({
      ordinal,
      priceTicks,
      steps,
      side: side === BUY ? 'buy' : 'sell',
      at: this.clock.now(),
    });
    this.markTicker(market);
  }

  /** Books one execution of a user order: fee, reservation, position, fill record and event. */
  private applyFill(order: OrderState, steps: number, priceTicks: number, isMaker: boolean): void {
    const market = order.market;
    const account = order.account;
    const units = market.units(priceTicks, steps);
    const notional = units * market.notionalFactor;
    const fee = market.fee(units, notional, isMaker);
    account.wallet -= fee;
    const release = proportionalPart(order.reserved, steps, order.remainingSteps);
    order.reserved -= release;
    account.reserved -= release;
    order.filledSteps += steps;
    order.filledNotional += notional;
    order.updatedAt = this.instantNow();
    this.markOrder(order);
    this.changePosition(
      account,
      market,
      order.side === BUY ? 1 : -1,
      steps,
      priceTicks,
      notional,
      order.leverage,
      order.marginMode,
    );
    const fill = new FillEntry(
      this.codec,
      this.nextIdentifier++,
      account.id,
      market,
      order.side === BUY ? 'buy' : 'sell',
      steps,
      priceTicks,
      order.id,
      isMaker,
      this.instantNow(),
    );
    this.pendingFills.push(fill);
    order.lastEventSequence = this.emitFill(account, fill);
    this.enforceReduceOnly(account, market, order);
  }

  /** Applies a trade of `steps` in `direction` to the account's position in `market`. */
  private changePosition(
    account: AccountState,
    market: MarketRuntime,
    direction: 1 | -1,
    steps: number,
    priceTicks: number,
    notional: bigint,
    leverage: number,
    marginMode: 'cross' | 'isolated',
  ): void {
    const now = this.clock.now();
    this.touch(account, market);
    const position = account.positions.get(market);
    if (position === undefined) {
      this.openPosition(account, market, direction, steps, notional, leverage, marginMode);
      return;
    }
    position.updatedAt = now;
    if (position.direction === direction) {
      position.steps += steps;
      position.costBasis += notional;
      position.margin += market.initialMarginOf(priceTicks, steps, leverage);
      this.markPosition(position);
      return;
    }
    const reduced = Math.min(steps, position.steps);
    const reducedNotional = reduced === steps ? notional : market.notional(priceTicks, reduced);
    const costRemoved = proportionalPart(position.costBasis, reduced, position.steps);
    const marginRemoved = proportionalPart(position.margin, reduced, position.steps);
    account.wallet += unrealizedPnl(position.direction, costRemoved, reducedNotional);
    if (reduced === position.steps) {
      this.closePositionState(position);
    } else {
      position.steps -= reduced;
      position.costBasis -= costRemoved;
      position.margin -= marginRemoved;
      this.markPosition(position);
    }
    if (steps > reduced) {
      this.openPosition(
        account,
        market,
        direction,
        steps - reduced,
        notional - reducedNotional,
        leverage,
        marginMode,
      );
    }
  }

  private openPosition(
    account: AccountState,
    market: MarketRuntime,
    direction: 1 | -1,
    steps: number,
    notional: bigint,
    leverage: number,
    marginMode: 'cross' | 'isolated',
  ): void {
    const ordinal = this.nextIdentifier++;
    const now = this.clock.now();
    const position = new PositionState(
      this.format.uuid(KIND_POSITION, ordinal),
      ordinal,
      account,
      market,
      direction,
      steps,
      notional,
      initialMargin(notional, leverage),
      marginMode,
      now,
      now,
    );
    account.positions.set(market, position);
    account.positionsById.set(position.id, position);
    market.positions.add(position);
    this.markPosition(position);
  }

  /** Removes a position whose quantity reached zero; its last state is sent once more. */
  private closePositionState(position: PositionState): void {
    // The closed snapshot shows neither value, PnL nor a liquidation price: no collateral needed.
    this.closedSnapshots.push({
      account: position.account,
      market: position.market,
      capture: this.capturePosition(position, position.margin),
    });
    const account = position.account;
    account.positions.delete(position.market);
    account.positionsById.delete(position.id);
    position.market.positions.delete(position);
    position.steps = 0;
    position.closed = true;
    this.closedPositionIds.push(position.id);
  }

  /** Cancels resting reduce-only orders that the account's position no longer covers. */
  private enforceReduceOnly(
    account: AccountState,
    market: MarketRuntime,
    except: OrderState,
  ): void {
    if (account.activeReduceOnly === 0) return;
    let candidates: OrderState[] | null = null;
    for (const order of account.activeOrders) {
      if (
        order.reduceOnly &&
        order.market === market &&
        order.resting !== null &&
        order !== except
      ) {
        if (!this.reduceOnlyMayRest(order)) {
          candidates ??= [];
          candidates.push(order);
        }
      }
    }
    if (candidates === null) return;
    for (const order of candidates) {
      this.cancelActive(order, {
        code: 'REDUCE_ONLY_EXCEEDS_POSITION',
        message: 'the position no longer covers this reduce_only order',
      });
    }
  }

  private touch(account: AccountState, market: MarketRuntime): void {
    const markets = account.touchedMarkets;
    if (markets.length === 0) this.touchedAccounts.push(account);
    if (!markets.includes(market)) markets.push(market);
  }

  /** One position event per touched position (closed ones with quantity 0), then the account. */
  private publishTouched(): void {
    if (this.touchedAccounts.length === 0) return;
    const closed = this.closedSnapshots;
    this.closedSnapshots = [];
    const accounts = this.touchedAccounts;
    this.touchedAccounts = [];
    for (const account of accounts) {
      for (const market of account.touchedMarkets) {
        for (const snapshot of closed) {
          if (snapshot.account === account && snapshot.market === market) {
            this.emitPosition(account, snapshot.capture, true);
          }
        }
        const position = account.positions.get(market);
        if (position !== undefined) this.emitOpenPosition(account, position);
      }
      empty(account.touchedMarkets);
      account.snapshotVersion += 1;
      const now = this.instantNow();
      // As `figures(account)`, without the object in between.
      let margin = 0n;
      let pnl = 0n;
      let crossPnl = 0n;
      for (const position of account.positions.list) {
        const positionPnl = this.positionPnl(position);
        margin += position.margin;
        pnl += positionPnl;
        if (position.marginMode !== 'isolated') crossPnl += positionPnl;
      }
      this.pushEvent(
        account,
        new AccountEventEntry(
          this.codec,
          account.id,
          ++account.sequence,
          this.nextIdentifier++,
          now,
          account.snapshotVersion,
          now,
          account.wallet + pnl,
          availableOfTotals(account.wallet, account.reserved, margin, crossPnl),
          margin,
          pnl,
        ),
      );
    }
  }

  private statusEvent(order: OrderState, from: OrderStatus | null, to: OrderStatus): void {
    const now = this.instantNow();
    const account = order.account;
    order.status = to;
    order.updatedAt = now;
    order.lastEventSequence = this.pushEvent(
      account,
      new StatusEventEntry(
        this.codec,
        account.id,
        ++account.sequence,
        this.nextIdentifier++,
        now,
        order.id,
        from,
        to,
      ),
    );
    this.markOrder(order);
  }

  /** Moves an order to `to`, with its event; terminal states release what the order held. */
  private transition(order: OrderState, to: OrderStatus): void {
    this.statusEvent(order, order.status, to);
    if (to === 'FILLED' || to === 'CANCELLED' || to === 'REJECTED') {
      const account = order.account;
      account.trackActive(order, -1);
      account.reserved -= order.reserved;
      order.reserved = 0n;
      if (order.resting !== null) {
        order.market.book.remove(order.resting);
        order.resting = null;
      }
      if (order.submitTimer !== null) {
        this.clock.clearTimeout(order.submitTimer);
        order.submitTimer = null;
      }
      this.terminated(order);
    }
  }

  private cancelActive(order: OrderState, reason: { code: string; message: string } | null): void {
    if (!isActive(order.status)) return;
    if (reason !== null) order.error = reason;
    this.transition(order, 'CANCELLED');
  }

  /** Queues an event of `account` (whose sequence it took) for the end of the unit of work. */
  private pushEvent(account: AccountState, entry: PendingEvent): number {
    this.pendingEvents.push(entry);
    this.markAccount(account);
    return entry.sequence;
  }

  private emitFill(account: AccountState, fill: FillEntry): number {
    return this.pushEvent(
      account,
      // The event carries the fill's own time: on a system clock a later read may be 1 ms on.
      fill.announce(++account.sequence, this.nextIdentifier++),
    );
  }

  private emitPosition(account: AccountState, capture: PositionCapture, closed: boolean): void {
    this.pushEvent(
      account,
      new PositionEventEntry(
        this.codec,
        account.id,
        ++account.sequence,
        this.nextIdentifier++,
        this.instantNow(),
        capture.positionId,
        capture.market,
        capture.direction,
        capture.steps,
        capture.costBasis,
        capture.margin,
        capture.marginMode,
        capture.markTicks,
        capture.dataStatus,
        capture.collateral,
        capture.observedAt,
        closed,
      ),
    );
  }

  /** A `position` event of an open position with its figures now (as `capturePosition`). */
  private emitOpenPosition(account: AccountState, position: PositionState): void {
    const market = position.market;
    const now = this.instantNow();
    this.pushEvent(
      account,
      new PositionEventEntry(
        this.codec,
        account.id,
        ++account.sequence,
        this.nextIdentifier++,
        now,
        position.id,
        market,
        position.direction,
        position.steps,
        position.costBasis,
        position.margin,
        position.marginMode,
        market.markTicks,
        market.dataStatus,
        this.positionCollateral(position),
        now,
        false,
      ),
    );
  }

  private emitRisk(
    account: AccountState,
    type: RiskEventType,
    data: Extract<PrivateEvent, { channel: 'risk' }>['data'],
  ): void {
    this.pushEvent(
      account,
      new RiskEventEntry(
        this.codec,
        account.id,
        ++account.sequence,
        this.nextIdentifier++,
        this.instantNow(),
        type,
        data,
      ),
    );
  }

  // ---------------------------------------------------------------- cancel-all-after

  private armCancelAllAfter(account: AccountState): void {
    const deadline = account.cancelAllAfterDeadline;
    if (deadline === null) return;
    this.clock.clearTimeout(account.cancelAllAfterTimer ?? undefined);
    account.cancelAllAfterTimer = this.clock.setTimeout(
      () => {
        account.cancelAllAfterTimer = null;
        this.run(() => this.triggerCancelAllAfter(account));
      },
      Math.max(0, deadline - this.clock.now()),
    );
  }

  private triggerCancelAllAfter(account: AccountState): void {
    const deadline = account.cancelAllAfterDeadline;
    if (deadline === null) return;
    this.clock.clearTimeout(account.cancelAllAfterTimer ?? undefined);
    account.cancelAllAfterTimer = null;
    account.cancelAllAfterDeadline = null;
    this.markAccount(account);
    const cancelled: string[] = [];
    for (const order of [...account.activeOrders]) {
      this.cancelActive(order, {
        code: 'CANCEL_ALL_AFTER',
        message: 'cancelled by the cancel-all-after deadline',
      });
      cancelled.push(order.id);
    }
    const now = this.clock.now();
    this.emitRisk(account, 'cancel_all_after.triggered', {
      deadline_at: this.timestamp(deadline),
      triggered_at: this.timestamp(now),
      cancelled_order_ids: cancelled,
    });
  }

  // ---------------------------------------------------------------- risk

  private positionFigures(position: PositionState): {
    value: bigint;
    pnl: bigint;
    maintenance: bigint;
  } {
    const market = position.market;
    const value = market.notional(market.markTicks, position.steps);
    return {
      value,
      pnl: unrealizedPnl(position.direction, position.costBasis, value),
      maintenance: maintenanceMargin(value, market.maintenanceRate),
    };
  }

  /** Unrealized PnL of a position at its market's mark price. */
  private positionPnl(position: PositionState): bigint {
    const market = position.market;
    const value = market.notional(market.markTicks, position.steps);
    return unrealizedPnl(position.direction, position.costBasis, value);
  }

  private figures(account: AccountState): AccountFigures {
    let margin = 0n;
    let pnl = 0n;
    let crossPnl = 0n;
    for (const position of account.positions.list) {
      const positionPnl = this.positionPnl(position);
      margin += position.margin;
      pnl += positionPnl;
      if (position.marginMode !== 'isolated') crossPnl += positionPnl;
    }
    return accountFiguresOfTotals(account.wallet, account.reserved, margin, pnl, crossPnl);
  }

  /** The account's `available` (only cross positions' PnL enters it). */
  private available(account: AccountState): bigint {
    let margin = 0n;
    let crossPnl = 0n;
    for (const position of account.positions.list) {
      margin += position.margin;
      if (position.marginMode !== 'isolated') crossPnl += this.positionPnl(position);
    }
    return availableOfTotals(account.wallet, account.reserved, margin, crossPnl);
  }

  /** Cross collateral: the wallet less isolated margins, plus PnL less maintenance of cross positions. */
  private crossState(account: AccountState): {
    collateral: bigint;
    pnl: bigint;
    maintenance: bigint;
  } {
    let collateral = account.wallet;
    let pnl = 0n;
    let maintenance = 0n;
    for (const position of account.positions.list) {
      if (position.marginMode === 'isolated') {
        collateral -= position.margin;
      } else {
        const figures = this.positionFigures(position);
        pnl += figures.pnl;
        maintenance += figures.maintenance;
      }
    }
    return { collateral, pnl, maintenance };
  }

  private checkLiquidations(market: MarketRuntime): void {
    if (market.positions.size === 0) return;
    const crossAccounts = new Set<AccountState>();
    for (const position of [...market.positions]) {
      if (!position.account.active) continue;
      if (position.marginMode === 'isolated') {
        const figures = this.positionFigures(position);
        if (isBelowMaintenance(position.margin, figures.pnl, figures.maintenance)) {
          this.liquidate([position]);
        }
      } else {
        crossAccounts.add(position.account);
      }
    }
    for (const account of crossAccounts) {
      const cross = this.crossState(account);
      if (isBelowMaintenance(cross.collateral, cross.pnl, cross.maintenance)) {
        this.liquidate(
          [...account.positions.values()].filter((position) => position.marginMode === 'cross'),
        );
      }
    }
  }

  /**
   * Closes positions at their mark price against the emulator's insurance fund (not through the
   * book). An isolated position loses at most its margin; a cross liquidation at most the cross
   * collateral. The account's active orders in those markets are cancelled first.
   */
  private liquidate(positions: readonly PositionState[]): void {
    const first = positions[0];
    if (first === undefined) return;
    const account = first.account;
    const markets = new Set(positions.map((position) => position.market));
    for (const order of [...account.activeOrders]) {
      if (markets.has(order.market)) {
        this.cancelActive(order, {
          code: 'LIQUIDATION',
          message: 'cancelled because the position was liquidated',
        });
      }
    }
    let isolatedMargin = 0n;
    for (const position of account.positions.values()) {
      if (position.marginMode === 'isolated' && !positions.includes(position)) {
        isolatedMargin += position.margin;
      }
    }
    const now = this.clock.now();
    for (const position of positions) {
      const market = position.market;
      const figures = this.positionFigures(position);
      const realized =
        position.marginMode === 'isolated' ? maxBigint(figures.pnl, -position.margin) : figures.pnl;
      const price = market.tick.format(market.markTicks);
      const quantity = market.step.format(position.steps);
      this.emitRisk(account, 'liquidation', {
        position_id: position.id,
        market_id: market.id,
        price,
        quantity,
      });
      const fill = new FillEntry(
        this.codec,
        this.nextIdentifier++,
        account.id,
        market,
        position.direction === 1 ? 'sell' : 'buy',
        position.steps,
        market.markTicks,
        null,
        false,
        this.format.instant(now),
      );
      this.pendingFills.push(fill);
      this.emitFill(account, fill);
      account.wallet += realized;
      this.touch(account, market);
      this.closePositionState(position);
    }
    // Losses beyond the collateral are absorbed by the insurance fund.
    if (first.marginMode === 'cross' && account.wallet < isolatedMargin) {
      account.wallet = isolatedMargin;
    }
    if (account.wallet < 0n) account.wallet = 0n;
    this.markAccount(account);
    this.publishTouched();
  }

  // ---------------------------------------------------------------- wire objects

  private orderWire(order: OrderState): Order {
    return orderToWire(order, this.format);
  }

  /** Null for an order of a market no longer configured (`restore` skips those too). */
  private recordWire(record: OrderRecord): Order | null {
    const market = this.marketsById.get(record.market_id);
    return market === undefined ? null : orderRecordToWire(record, market, this.format);
  }

  private accountWire(account: AccountState): Account {
    return accountToWire(
      account.id,
      account.snapshotVersion,
      this.instantNow(),
      this.figures(account),
      this.format,
    );
  }

  private positionWire(position: PositionState): Position {
    return positionToWire(this.capturePosition(position, null), this.format);
  }

  /**
   * The position's figures now. `collateral` null: computed (its margin when isolated, the cross
   * collateral net of the other cross positions when cross).
   */
  private capturePosition(position: PositionState, collateral: bigint | null): PositionCapture {
    const market = position.market;
    const backing = collateral ?? this.positionCollateral(position);
    return new PositionCapture(
      position.id,
      market,
      position.direction,
      position.steps,
      position.costBasis,
      position.margin,
      position.marginMode,
      market.markTicks,
      market.dataStatus,
      backing,
      this.instantNow(),
    );
  }

  /** What backs the position: its margin (isolated), or the cross collateral net of the others. */
  private positionCollateral(position: PositionState): bigint {
    if (position.marginMode !== 'cross') return position.margin;
    const figures = this.positionFigures(position);
    const cross = this.crossState(position.account);
    return cross.collateral + (cross.pnl - figures.pnl) - (cross.maintenance - figures.maintenance);
  }

  private routeWire(): Route {
    return {
      route_id: ROUTE_ID,
      provider: this.config.route.provider,
      environment: this.config.route.environment,
      network: this.config.route.network,
      market_structure: 'order_book',
      settlement_asset: SETTLEMENT_ASSET,
      capital_location: this.config.route.capital_location,
      capabilities: {
        ...ROUTE_CAPABILITIES,
        order_types: [...ROUTE_CAPABILITIES.order_types],
        time_in_force: [...ROUTE_CAPABILITIES.time_in_force],
      },
      order_submission_enabled: this.routeHealth !== 'disabled',
      health: this.routeHealth,
      observed_at: this.timestamp(this.clock.now()),
    };
  }

  private marketWire(market: MarketRuntime): Market {
    const config = market.config;
    const traded = market.tradeCount > 0;
    let openInterest = 0;
    for (const position of market.positions) openInterest += position.steps;
    return {
      market_id: market.id,
      display_name: config.display_name,
      base_asset: config.base_asset,
      quote_asset: config.quote_asset,
      category: config.category,
      status: config.status,
      routes: [ROUTE_ID],
      preferred_route_id: ROUTE_ID,
      price_tick: market.tick.text,
      quantity_step: market.step.text,
      minimum_quantity: config.minimum_quantity,
      minimum_notional: config.minimum_notional,
      maximum_leverage: config.maximum_leverage,
      margin_modes: [...config.margin_modes],
      order_types: ['market', 'limit'],
      mark_price: market.tick.format(market.markTicks),
      index_price: market.tick.format(market.indexTicks),
      last_price: market.lastTradeTicks === null ? null : market.tick.format(market.lastTradeTicks),
      funding_rate: market.fundingRate,
      next_funding_time: this.timestamp(market.nextFundingTime),
      volume_24h: traded ? market.step.format(market.volume.totalAt(this.clock.now())) : null,
      open_interest: traded ? market.step.format(openInterest) : null,
      observed_at: this.timestamp(market.observedAt),
      data_status: market.dataStatus,
    };
  }

  private tickerWire(market: MarketRuntime): TickerData {
    return {
      market_id: market.id,
      mark_price: market.tick.format(market.markTicks),
      index_price: market.tick.format(market.indexTicks),
      last_price: market.lastTradeTicks === null ? null : market.tick.format(market.lastTradeTicks),
      data_status: market.dataStatus,
    };
  }

  private setFeedPaused(marketId: string | undefined, paused: boolean): void {
    const targets = marketId === undefined ? this.markets : [this.marketOf(marketId)];
    this.run(() => {
      for (const market of targets) {
        market.feedPaused = paused;
        market.dataStatus = paused ? 'stale' : 'live';
        if (!paused) market.observedAt = this.clock.now();
        this.markTicker(market);
      }
    });
  }
}
