/**
 * The shared state of one exchange and the bookkeeping of its unit of work. Owns the markets,
 * accounts and counters, what changed since the last commit (dirty entities, queued events and
 * fills, tickers due, accounts whose snapshots are due), the listeners, and the lookups and
 * errors every part uses. The parts (`commands.ts`, `placement.ts`, `matching.ts`,
 * `accounting.ts`, `liquidation.ts`, `cancel-all-after.ts`, `reads.ts`, `persistence.ts`) each
 * hold a reference to one `EngineContext` and change it in place; none keeps a copy of its state.
 *
 * A unit of work begins with `depth++` (or `run`) and ends with `endWork`; the outermost end
 * calls `flush` (set by the exchange to `Persistence.flush`).
 */
import type { Clock } from '../../core/clock.ts';
import type {
  FundingPaymentData,
  OrderStatus,
  PrivateChannel,
  PrivateEvent,
  RouteHealth,
  TickerData,
} from '../../protocol/index.ts';
import type { EmulatorConfig } from '../config.ts';
import type { OrderArchive, OrderRecord, Store } from '../store/store.ts';
import { ExchangeError } from './errors.ts';
import {
  EventCodec,
  type FillEntry,
  DataEventEntry,
  type PendingEvent,
  type PositionCapture,
} from './events.ts';
import { EngineIdentifiers } from './identifiers.ts';
import type { Instant } from './instant.ts';
import { type AccountState, MarketRuntime, type OrderState, type PositionState } from './state.ts';
import { WireFormat } from './wire.ts';

export interface ExchangeOptions {
  readonly clock: Clock;
  readonly config: EmulatorConfig;
  readonly store: Store;
}

export type PrivateEventListener = (accountId: string, event: PrivateEvent) => void;
export type TickerListener = (marketId: string, data: TickerData, occurredAt: string) => void;

export type RiskEventType = Extract<PrivateEvent, { channel: 'risk' }>['type'];
export type RiskEventData = Extract<PrivateEvent, { channel: 'risk' }>['data'];

/** The last state of a position that closed in this unit of work, sent once more at its end. */
export interface ClosedPositionSnapshot {
  readonly account: AccountState;
  readonly market: MarketRuntime;
  readonly capture: PositionCapture;
}

export function isActive(status: OrderStatus): boolean {
  return (
    status === 'PENDING' ||
    status === 'SUBMITTED' ||
    status === 'OPEN' ||
    status === 'PARTIALLY_FILLED'
  );
}

/** Empties a reused array; popping the few items of a unit of work is cheaper than `length = 0`. */
export function empty(items: unknown[]): void {
  if (items.length > 64) items.length = 0;
  else while (items.length > 0) items.pop();
}

export class EngineContext {
  readonly clock: Clock;
  readonly config: EmulatorConfig;
  readonly store: Store;
  /** Terminal orders kept in memory per account (the store's `retainedOrders`). */
  readonly retainedOrders: number;
  readonly archive: OrderArchive | null;
  readonly identifiers: EngineIdentifiers;
  readonly format: WireFormat;
  readonly codec: EventCodec;
  readonly markets: MarketRuntime[] = [];
  readonly marketsById = new Map<string, MarketRuntime>();
  readonly accounts = new Map<string, AccountState>();
  readonly privateListeners: PrivateEventListener[] = [];
  readonly tickerListeners: TickerListener[] = [];
  routeHealth: RouteHealth = 'ready';
  /** Called with a user order's market before it is matched (`Exchange.beforeMatching`). */
  beforeMatching: ((marketId: string) => void) | null = null;
  /**
   * Whether a user order of that market waits to be matched until the driver submits it
   * (`Exchange.holdSubmissions`): a replay without a book matches takers at the next trade.
   */
  holdSubmission: ((marketId: string) => boolean) | null = null;
  /** One counter for every identifier and event ordinal (orders, fills, events, positions, trades). */
  nextIdentifier = 1;
  nextBookPriority = 1;
  nextAccountOrdinal = 1;

  // The current unit of work.
  depth = 0;
  /** Commits the unit of work and delivers its events (`Persistence.flush`). */
  flush: () => void = () => undefined;
  // Each entity is listed once (its `dirty` flag), in the order it first changed. These arrays
  // are emptied after each commit and used again (the store copies what it keeps).
  readonly dirtyAccounts: AccountState[] = [];
  readonly dirtyOrders: OrderState[] = [];
  readonly dirtyPositions: PositionState[] = [];
  readonly closedPositionIds: string[] = [];
  readonly releasedOrders: OrderState[] = [];
  closedSnapshots: ClosedPositionSnapshot[] = [];
  // Delivered after the commit, where a listener may start another unit of work: each flush
  // takes these and leaves fresh ones (the spares, once delivery is over).
  pendingFills: FillEntry[] = [];
  pendingEvents: PendingEvent[] = [];
  /** Markets whose ticker changed (each once: `tickerDue`), in order. */
  tickerMarkets: MarketRuntime[] = [];
  spareFills: FillEntry[] | null = null;
  spareEvents: PendingEvent[] | null = null;
  spareTickers: MarketRuntime[] | null = null;
  /** Accounts whose snapshots are due (their `touchedMarkets` say which), in order. */
  touchedAccounts: AccountState[] = [];

  constructor(options: ExchangeOptions) {
    this.clock = options.clock;
    this.config = options.config;
    this.store = options.store;
    this.retainedOrders = options.store.retainedOrders;
    this.archive = options.store.orderArchive;
    this.identifiers = new EngineIdentifiers(String(options.config.seed));
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
  }

  // ---------------------------------------------------------------- unit of work

  run<T>(work: () => T): T {
    this.depth++;
    try {
      return work();
    } finally {
      this.endWork();
    }
  }

  /** Ends a unit of work begun with `depth++` (the hot paths do so without a closure). */
  endWork(): void {
    this.depth--;
    if (this.depth === 0) this.flush();
  }

  markAccount(account: AccountState): void {
    queueOnce(account, this.dirtyAccounts);
  }

  markOrder(order: OrderState): void {
    queueOnce(order, this.dirtyOrders);
  }

  markPosition(position: PositionState): void {
    queueOnce(position, this.dirtyPositions);
  }

  markTicker(market: MarketRuntime): void {
    if (market.tickerDue) return;
    market.tickerDue = true;
    this.tickerMarkets.push(market);
  }

  /** Queues an event of `account` (whose sequence it took) for the end of the unit of work. */
  pushEvent(account: AccountState, entry: PendingEvent): number {
    this.pendingEvents.push(entry);
    this.markAccount(account);
    return entry.sequence;
  }

  emitFill(account: AccountState, fill: FillEntry): number {
    return this.pushEvent(
      account,
      // The event carries the fill's own time: on a system clock a later read may be 1 ms on.
      fill.announce(++account.sequence, this.nextIdentifier++),
    );
  }

  emitRisk(account: AccountState, type: RiskEventType, data: RiskEventData): void {
    this.emitData(account, 'risk', type, data);
  }

  emitFunding(account: AccountState, data: FundingPaymentData): void {
    this.emitData(account, 'account', 'funding_payment', data);
  }

  private emitData(
    account: AccountState,
    channel: PrivateChannel,
    type: string,
    data: unknown,
  ): void {
    this.pushEvent(
      account,
      new DataEventEntry(
        this.codec,
        account.id,
        ++account.sequence,
        this.nextIdentifier++,
        this.instantNow(),
        channel,
        type,
        data,
      ),
    );
  }

  /** Notes that `order` became terminal; the order it makes the account release goes to the store. */
  terminated(order: OrderState): void {
    const released = order.account.orders.terminated(order);
    if (released !== null) this.releasedOrders.push(released);
  }

  // ---------------------------------------------------------------- lookups

  timestamp(epochMs: number): string {
    return this.format.timestamp(epochMs);
  }

  instantNow(): Instant {
    return this.format.instant(this.clock.now());
  }

  accountOf(accountId: string, allowInactive = false): AccountState {
    const account = this.accounts.get(accountId);
    if (account === undefined || (!account.active && !allowInactive)) {
      throw new ExchangeError('KEY_REVOKED', 'the account is not active', {
        account_id: accountId,
      });
    }
    return account;
  }

  marketOf(marketId: string): MarketRuntime {
    const market = this.marketsById.get(marketId);
    if (market === undefined) throw this.unknownMarket(marketId);
    return market;
  }

  /** The newest released order with that client id, when the archive keeps released orders. */
  releasedOrderByClientId(account: AccountState, clientOrderId: string): OrderRecord | undefined {
    if (this.archive === null || account.orders.releasedUpTo === 0) return undefined;
    return this.archive.findOrderByClientId(account.id, clientOrderId);
  }

  unknownMarket(marketId: string): ExchangeError {
    return new ExchangeError('UNKNOWN_MARKET', `market ${marketId} does not exist`, {
      market_id: marketId,
    });
  }

  positionNotFound(positionId: string): ExchangeError {
    return new ExchangeError('POSITION_NOT_FOUND', `position ${positionId} not found`, {
      position_id: positionId,
    });
  }
}

/** Queues `item` for the next flush, once: its `dirty` flag says it is queued already. */
function queueOnce<Item extends { dirty: boolean }>(item: Item, queue: Item[]): void {
  if (item.dirty) return;
  item.dirty = true;
  queue.push(item);
}
