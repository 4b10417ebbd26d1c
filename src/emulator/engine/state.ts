/**
 * The exchange's working state: markets, accounts, orders and positions, as mutable objects
 * with integer ticks and steps and bigint money. Only the engine's parts (over `EngineContext`)
 * change them; wire objects are built from them on demand (wire.ts) and records for the store
 * likewise. A market's arithmetic (fees, margin, liquidation price) is `market-pricing.ts`.
 */
import type { TimerHandle } from '../../core/clock.ts';
import type { MarketDataStatus, OrderStatus } from '../../protocol/index.ts';
import type { MarketConfig } from '../config.ts';
import { firstAtOrAfter } from '../store/ordinals.ts';
import type { AccountRecord, OrderRecord, PositionRecord, RecordSource } from '../store/store.ts';
import { CandleBook, RollingVolume } from './candles.ts';
import type { Instant } from './instant.ts';
import { formatMoney } from './fixed.ts';
import { type MarketFees, MarketPricing, scaled } from './market-pricing.ts';
import { type BookSide, BUY, OrderBook, type RestingOrder, SELL } from './order-book.ts';

export const ROUTE_ID = 'svc-paper';
export const SETTLEMENT_ASSET = 'pUSDC';

/** A resting order of a synthetic participant (market maker or taker): no account, no events. */
export interface SyntheticOwner {
  readonly synthetic: true;
  readonly quoterId: string;
}

export type BookOwner = OrderState | SyntheticOwner;

export interface TradeEntry {
  /** The trade id is the UUID of this ordinal, made when the trade is read. */
  readonly ordinal: number;
  readonly priceTicks: number;
  readonly steps: number;
  readonly side: 'buy' | 'sell';
  readonly at: number;
}

/** A market's mutable state (book, prices, trades, candles, positions) over its pricing. */
export class MarketRuntime extends MarketPricing {
  readonly id: string;
  readonly minimumQuantitySteps: number | null;
  readonly minimumNotional: bigint | null;
  readonly marginModes: ReadonlySet<string>;
  readonly book = new OrderBook<BookOwner>();
  indexTicks: number;
  markTicks: number;
  lastTradeTicks: number | null = null;
  fundingRate = '0';
  nextFundingTime: number;
  /** False until a driver first publishes funding: only a published funding time is settled. */
  fundingPublished = false;
  /** The latest funding time settled (its positions paid or charged). */
  settledFundingTime = Number.NEGATIVE_INFINITY;
  feedPaused = false;
  /** Listed for a ticker update at the end of the current unit of work. */
  tickerDue = false;
  dataStatus: MarketDataStatus = 'live';
  observedAt: number;
  readonly trades: TradeEntry[] = [];
  readonly candles: CandleBook;
  readonly volume = new RollingVolume(86_400_000);
  tradeCount = 0;
  /** Open positions of user accounts in this market. */
  readonly positions = new Set<PositionState>();
  /** Resting synthetic orders per quoter. */
  readonly quotes = new Map<string, RestingOrder<BookOwner>[]>();

  constructor(
    readonly config: MarketConfig,
    readonly ordinal: number,
    fees: MarketFees,
    readonly tradeCapacity: number,
    candleCapacity: number,
    now: number,
  ) {
    super(config, fees);
    this.id = config.market_id;
    this.minimumQuantitySteps =
      config.minimum_quantity === null
        ? null
        : this.step.roundedUnitsOf(config.minimum_quantity, 'up');
    this.minimumNotional =
      config.minimum_notional === null ? null : scaled(config.minimum_notional);
    this.marginModes = new Set(config.margin_modes);
    const initial = this.tick.roundedUnitsOf(config.simulation.initial_price, 'half-even') ?? 1;
    this.indexTicks = Math.max(1, initial);
    this.markTicks = this.indexTicks;
    this.nextFundingTime = now;
    this.observedAt = now;
    this.candles = new CandleBook(candleCapacity);
  }

  recordTrade(entry: TradeEntry): void {
    this.trades.push(entry);
    if (this.trades.length > this.tradeCapacity * 2) {
      this.trades.splice(0, this.trades.length - this.tradeCapacity);
    }
    this.tradeCount += 1;
    this.lastTradeTicks = entry.priceTicks;
    this.candles.record(entry.at, entry.priceTicks, entry.steps);
    this.volume.record(entry.at, entry.steps);
  }
}

export class PositionState implements RecordSource<PositionRecord> {
  /** Listed in the current unit of work's changes. */
  dirty = false;
  storeMark: unknown = null;
  /** Quantity reached zero, or the account was reset: no longer saved. */
  closed = false;

  constructor(
    readonly id: string,
    readonly ordinal: number,
    readonly account: AccountState,
    readonly market: MarketRuntime,
    public direction: 1 | -1,
    public steps: number,
    /** Σ price × quantity of what is open. */
    public costBasis: bigint,
    /** Initial margin held by the position. */
    public margin: bigint,
    readonly marginMode: 'cross' | 'isolated',
    readonly openedAt: number,
    public updatedAt: number,
    /** Funding received (negative: paid) since the position opened, 10^-18 pUSDC. */
    public fundingTotal = 0n,
  ) {}

  get key(): string {
    return this.id;
  }

  record(): PositionRecord {
    return {
      position_id: this.id,
      account_id: this.account.id,
      market_id: this.market.id,
      ordinal: this.ordinal,
      side: this.direction === 1 ? 'long' : 'short',
      quantity: this.market.step.format(this.steps),
      cost_basis: formatMoney(this.costBasis),
      margin: formatMoney(this.margin),
      margin_mode: this.marginMode,
      opened_at: this.openedAt,
      updated_at: this.updatedAt,
      ...(this.fundingTotal === 0n ? {} : { funding_total: formatMoney(this.fundingTotal) }),
    };
  }
}

const SELL_FLAG = 1;
const MARKET_FLAG = 2;
const IOC_FLAG = 4;
const POST_ONLY_FLAG = 8;
const REDUCE_ONLY_FLAG = 16;
const CROSS_FLAG = 32;

/**
 * Thousands of orders stay in memory (see `AccountOrders`), so the object is kept small: the
 * fixed choices of the request share one small integer (`flags`).
 */
/** What a replay venue reads of an order the engine holds (`Exchange.heldOrder`). */
export interface HeldOrder {
  readonly marketId: string;
  readonly side: BookSide;
  readonly priceTicks: number | null;
  readonly quantitySteps: number;
  readonly filledSteps: number;
  readonly clientOrderId: string;
  readonly requestId: string | null;
}

export class OrderState implements RecordSource<OrderRecord>, HeldOrder {
  /** Listed in the current unit of work's changes. */
  dirty = false;
  storeMark: unknown = null;
  status: OrderStatus = 'PENDING';
  filledSteps = 0;
  filledNotional = 0n;
  reserved = 0n;
  lastEventSequence: number | null = null;
  resting: RestingOrder<BookOwner> | null = null;
  bookPriority: number | null = null;
  submitTimer: TimerHandle | null = null;
  /** Links of the account's active orders (see `ActiveOrders`). */
  activePrevious: OrderState | null = null;
  activeNext: OrderState | null = null;
  /** No longer kept in memory (see `AccountOrders.terminated`). */
  released = false;
  error: { code: string; message: string } | null = null;
  updatedAt: Instant;
  private readonly flags: number;

  constructor(
    readonly ordinal: number,
    readonly id: string,
    readonly account: AccountState,
    readonly market: MarketRuntime,
    readonly requestId: string | null,
    readonly clientOrderId: string,
    side: BookSide,
    type: 'market' | 'limit',
    readonly quantitySteps: number,
    readonly priceTicks: number | null,
    timeInForce: 'GTC' | 'IOC',
    postOnly: boolean,
    reduceOnly: boolean,
    readonly positionId: string | null,
    readonly leverage: number,
    marginMode: 'cross' | 'isolated',
    /** Scaled by 10^18, e.g. 0.5 % is 5 × 10^17. */
    readonly maxSlippagePercent: bigint | null,
    readonly receivedAt: Instant,
  ) {
    this.updatedAt = receivedAt;
    this.flags =
      (side === BUY ? 0 : SELL_FLAG) |
      (type === 'market' ? MARKET_FLAG : 0) |
      (timeInForce === 'IOC' ? IOC_FLAG : 0) |
      (postOnly ? POST_ONLY_FLAG : 0) |
      (reduceOnly ? REDUCE_ONLY_FLAG : 0) |
      (marginMode === 'cross' ? CROSS_FLAG : 0);
  }

  get marketId(): string {
    return this.market.id;
  }

  /** Not a synthetic quote (see `BookOwner`). */
  get synthetic(): false {
    return false;
  }

  get side(): BookSide {
    return (this.flags & SELL_FLAG) === 0 ? BUY : SELL;
  }

  get type(): 'market' | 'limit' {
    return (this.flags & MARKET_FLAG) === 0 ? 'limit' : 'market';
  }

  get timeInForce(): 'GTC' | 'IOC' {
    return (this.flags & IOC_FLAG) === 0 ? 'GTC' : 'IOC';
  }

  get postOnly(): boolean {
    return (this.flags & POST_ONLY_FLAG) !== 0;
  }

  get reduceOnly(): boolean {
    return (this.flags & REDUCE_ONLY_FLAG) !== 0;
  }

  get marginMode(): 'cross' | 'isolated' {
    return (this.flags & CROSS_FLAG) === 0 ? 'isolated' : 'cross';
  }

  get remainingSteps(): number {
    return this.quantitySteps - this.filledSteps;
  }

  get key(): string {
    return this.id;
  }

  record(): OrderRecord {
    const market = this.market;
    return {
      ordinal: this.ordinal,
      order_id: this.id,
      account_id: this.account.id,
      request_id: this.requestId,
      client_order_id: this.clientOrderId,
      market_id: market.id,
      side: this.side === BUY ? 'buy' : 'sell',
      type: this.type,
      quantity: market.step.format(this.quantitySteps),
      price: this.priceTicks === null ? null : market.tick.format(this.priceTicks),
      time_in_force: this.timeInForce,
      post_only: this.postOnly,
      reduce_only: this.reduceOnly,
      position_id: this.positionId,
      leverage: this.leverage,
      margin_mode: this.marginMode,
      max_slippage_percent:
        this.maxSlippagePercent === null ? null : formatMoney(this.maxSlippagePercent),
      status: this.status,
      received_at: this.receivedAt.ms,
      updated_at: this.updatedAt.ms,
      filled_quantity: market.step.format(this.filledSteps),
      filled_notional: formatMoney(this.filledNotional),
      reserved_margin: formatMoney(this.reserved),
      last_event_sequence: this.lastEventSequence,
      book_priority: this.resting !== null ? this.bookPriority : null,
      error: this.error,
    };
  }
}

/**
 * The orders of an account the exchange keeps in memory: every active one, and the `capacity`
 * that became terminal most recently. Older terminal orders are released: dropped from the
 * indexes here, and read from the store's archive when it keeps every order. Without a bound a
 * busy account's orders grow the heap, and the hash maps, for the life of the process.
 *
 * An order id is the UUID of the order's ordinal, and the exchange can tell the ordinal from
 * the id (`EngineIdentifiers.counterOf`): orders are found by id with a binary search of the
 * list, so only ids that are not (orders restored from a store written with another seed) need
 * a hash map; keeping every id in one cost about 6 % of the CPU time of an order.
 */
export class AccountOrders {
  /** By ordinal (ascending), released ones included until `release` drops them in bulk. */
  private orders: OrderState[] = [];
  private releasedInList = 0;
  /** Orders whose id is not the UUID of their ordinal. */
  private readonly otherIds = new Map<string, OrderState>();
  /** The newest order of each client order id (an amendment's new order keeps it). */
  readonly byClientId = new Map<string, OrderState>();
  /** Terminal orders in the order they ended: a ring of `capacity` once full. */
  private readonly terminal: OrderState[] = [];
  private oldestTerminal = 0;
  /** The highest ordinal released (0: none); memory misses some of the orders up to it. */
  releasedUpTo = 0;

  constructor(private readonly capacity: number) {}

  /** By ordinal (ascending); skip the `released` ones. */
  get list(): readonly OrderState[] {
    return this.orders;
  }

  /**
   * Adds an order with a higher ordinal than any before; `idOfOrdinal`: its id is the UUID of
   * its ordinal (so `find` needs no map for it).
   */
  add(order: OrderState, idOfOrdinal: boolean): void {
    this.orders.push(order);
    if (!idOfOrdinal) this.otherIds.set(order.id, order);
    this.byClientId.set(order.clientOrderId, order);
  }

  /** The order with `id`, where `ordinal` is the ordinal `id` is the UUID of (or -1). */
  find(id: string, ordinal: number): OrderState | undefined {
    const orders = this.orders;
    const low = firstAtOrAfter(orders, ordinal);
    const order = orders[low];
    if (order !== undefined && order.ordinal === ordinal && order.id === id && !order.released) {
      return order;
    }
    return this.otherIds.size === 0 ? undefined : this.otherIds.get(id);
  }

  /** Records that `order` became terminal; returns the order released to make room, or null. */
  terminated(order: OrderState): OrderState | null {
    const terminal = this.terminal;
    if (terminal.length < this.capacity) {
      terminal.push(order);
      return null;
    }
    const oldest = terminal[this.oldestTerminal]!;
    terminal[this.oldestTerminal] = order;
    this.oldestTerminal = this.oldestTerminal + 1 === this.capacity ? 0 : this.oldestTerminal + 1;
    this.release(oldest);
    return oldest;
  }

  private release(order: OrderState): void {
    order.released = true;
    if (this.otherIds.size > 0) this.otherIds.delete(order.id);
    if (this.byClientId.get(order.clientOrderId) === order) {
      this.byClientId.delete(order.clientOrderId);
    }
    if (order.ordinal > this.releasedUpTo) this.releasedUpTo = order.ordinal;
    // Dropped in bulk once they are half of the list: no search or move per release.
    this.releasedInList++;
    if (this.releasedInList >= 64 && this.releasedInList * 2 >= this.orders.length) {
      this.orders = this.orders.filter((kept) => !kept.released);
      this.releasedInList = 0;
    }
  }
}

/**
 * An account's open positions, at most one per market: found by market in O(1), and listed in
 * the order they were opened (the hot sums over them allocate no iterator).
 */
export class AccountPositions {
  private readonly slots: (PositionState | undefined)[] = [];
  /** Opening order, as a Map would iterate them. */
  readonly list: PositionState[] = [];

  get size(): number {
    return this.list.length;
  }

  get(market: MarketRuntime): PositionState | undefined {
    return this.slots[market.ordinal];
  }

  set(market: MarketRuntime, position: PositionState): void {
    const existing = this.slots[market.ordinal];
    if (existing === undefined) this.list.push(position);
    else this.list[this.list.indexOf(existing)] = position;
    this.slots[market.ordinal] = position;
  }

  delete(market: MarketRuntime): boolean {
    const existing = this.slots[market.ordinal];
    if (existing === undefined) return false;
    this.slots[market.ordinal] = undefined;
    this.list.splice(this.list.indexOf(existing), 1);
    return true;
  }

  values(): IterableIterator<PositionState> {
    return this.list.values();
  }
}

/**
 * An account's active orders in the order they became active: a list threaded through the
 * orders themselves, so adding and removing one (every order does both) allocates nothing and
 * hashes nothing. The walk survives removing the order it just yielded; for other changes during
 * a walk, copy first.
 */
export class ActiveOrders implements Iterable<OrderState> {
  private head: OrderState | null = null;
  private tail: OrderState | null = null;
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(order: OrderState): void {
    order.activePrevious = this.tail;
    order.activeNext = null;
    if (this.tail === null) this.head = order;
    else this.tail.activeNext = order;
    this.tail = order;
    this.count++;
  }

  delete(order: OrderState): void {
    const previous = order.activePrevious;
    const next = order.activeNext;
    if (previous === null && this.head !== order) return; // not in the list
    if (previous === null) this.head = next;
    else previous.activeNext = next;
    if (next === null) this.tail = previous;
    else next.activePrevious = previous;
    order.activePrevious = null;
    order.activeNext = null;
    this.count--;
  }

  *[Symbol.iterator](): Iterator<OrderState> {
    let order = this.head;
    while (order !== null) {
      // Read ahead, so that removing the order just yielded does not end the walk.
      const next: OrderState | null = order.activeNext;
      yield order;
      order = next;
    }
  }
}

export class AccountState implements RecordSource<AccountRecord> {
  /** Listed in the current unit of work's changes. */
  dirty = false;
  storeMark: unknown = null;
  /** Markets whose position and account snapshots are due at the end of the match (in order). */
  readonly touchedMarkets: MarketRuntime[] = [];
  reserved = 0n;
  sequence = 0;
  snapshotVersion = 0;
  active = true;
  cancelAllAfterDeadline: number | null = null;
  cancelAllAfterTimer: TimerHandle | null = null;
  readonly orders: AccountOrders;
  readonly activeOrders = new ActiveOrders();
  readonly positions = new AccountPositions();
  readonly positionsById = new Map<string, PositionState>();
  /**
   * Active orders that may open exposure, per market (by ordinal) and margin mode
   * (MARGIN_MODE_IN_USE).
   */
  readonly openingOrders: ({ cross: number; isolated: number } | undefined)[] = [];
  activeReduceOnly = 0;

  constructor(
    readonly id: string,
    readonly ordinal: number,
    public wallet: bigint,
    readonly startingBalance: bigint,
    readonly createdAt: number,
    /** Terminal orders kept in memory (see `AccountOrders`). */
    retainedOrders: number,
  ) {
    this.orders = new AccountOrders(retainedOrders);
  }

  /** Adds (+1) or removes (-1) an order from the active set and its counters. */
  trackActive(order: OrderState, change: 1 | -1): void {
    if (change === 1) this.activeOrders.add(order);
    else this.activeOrders.delete(order);
    if (order.reduceOnly) {
      this.activeReduceOnly += change;
      return;
    }
    let counts = this.openingOrders[order.market.ordinal];
    if (counts === undefined) {
      counts = { cross: 0, isolated: 0 };
      this.openingOrders[order.market.ordinal] = counts;
    }
    counts[order.marginMode] += change;
  }

  get key(): string {
    return this.id;
  }

  record(): AccountRecord {
    return {
      account_id: this.id,
      ordinal: this.ordinal,
      wallet: formatMoney(this.wallet),
      starting_balance: formatMoney(this.startingBalance),
      sequence: this.sequence,
      snapshot_version: this.snapshotVersion,
      created_at: this.createdAt,
      active: this.active,
      cancel_all_after_deadline: this.cancelAllAfterDeadline,
    };
  }
}
