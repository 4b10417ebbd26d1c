/**
 * Saving and restoring the exchange's state. `flush` ends a unit of work: the snapshots due are
 * sent, what changed is written to the Store in one commit, then the private events go to the
 * listeners in sequence order and the changed tickers to theirs. `restore` rebuilds accounts,
 * positions, orders and the books from what the Store kept, and sets again the timers of orders
 * not yet matched and of armed cancel-all-after deadlines.
 */
import type { ChangeSet } from '../store/store.ts';
import type { Accounting } from './accounting.ts';
import type { CancelAllAfter } from './cancel-all-after.ts';
import { empty, type EngineContext, isActive } from './context.ts';
import { MONEY_SCALE, parseScaled } from './fixed.ts';
import type { MatchingEngine } from './matching.ts';
import { BUY, SELL } from './order-book.ts';
import type { Reads } from './reads.ts';
import { AccountState, OrderState, PositionState } from './state.ts';
import { KIND_ORDER } from './wire.ts';

export class Persistence {
  // One object for every commit: the store reads it during `commit` only.
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

  constructor(
    private readonly context: EngineContext,
    private readonly accounting: Accounting,
    private readonly reads: Reads,
    private readonly matching: MatchingEngine,
    private readonly cancelAllAfter: CancelAllAfter,
  ) {}

  /** Commits the unit of work that just ended and delivers its events and tickers. */
  flush(): void {
    const context = this.context;
    context.depth++;
    try {
      this.accounting.publishTouched();
    } finally {
      context.depth--;
    }
    const events = context.pendingEvents;
    const fills = context.pendingFills;
    const tickers = context.tickerMarkets;
    context.pendingEvents = context.spareEvents ?? [];
    context.pendingFills = context.spareFills ?? [];
    context.tickerMarkets = context.spareTickers ?? [];
    context.spareEvents = null;
    context.spareFills = null;
    context.spareTickers = null;
    for (const market of tickers) market.tickerDue = false;
    // With listeners, each event is built once (pinned) for the store and every listener.
    const privateListeners = context.privateListeners;
    const delivering = privateListeners.length > 0 && events.length > 0;
    if (delivering) {
      for (const entry of events) entry.pin();
    }
    const accounts = context.dirtyAccounts;
    const orders = context.dirtyOrders;
    const positions = context.dirtyPositions;
    if (
      accounts.length > 0 ||
      orders.length > 0 ||
      positions.length > 0 ||
      context.closedPositionIds.length > 0 ||
      context.releasedOrders.length > 0 ||
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
      const changes = this.changes;
      changes.accounts = accounts;
      changes.orders = orders;
      changes.positions =
        closedCount > 0 ? positions.filter((position) => !position.closed) : positions;
      changes.closedPositions = context.closedPositionIds;
      changes.fills = fills;
      changes.events = events;
      changes.releasedOrders = context.releasedOrders;
      changes.nextIdentifier = context.nextIdentifier;
      try {
        context.store.commit(changes);
      } finally {
        empty(accounts);
        empty(orders);
        empty(positions);
        empty(context.closedPositionIds);
        empty(context.releasedOrders);
      }
    }
    let failure: unknown = null;
    if (delivering) {
      for (const entry of events) {
        const event = entry.pin();
        for (const listener of privateListeners) {
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
    const tickerListeners = context.tickerListeners;
    if (tickers.length > 0 && tickerListeners.length > 0) {
      const occurredAt = context.timestamp(context.clock.now());
      for (const market of tickers) {
        const data = this.reads.tickerWire(market);
        for (const listener of tickerListeners) {
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
    context.spareEvents = events;
    context.spareFills = fills;
    context.spareTickers = tickers;
    // A failing listener must not stop the others, nor leave the unit half-published.
    if (failure !== null) throw failure;
  }

  /** Rebuilds the working state from what the Store kept (once, before anything runs). */
  restore(): void {
    const context = this.context;
    const state = context.store.load();
    context.nextIdentifier = Math.max(context.nextIdentifier, state.nextIdentifier);
    for (const record of state.accounts) {
      const wallet = parseScaled(record.wallet, MONEY_SCALE) ?? 0n;
      const starting = parseScaled(record.starting_balance, MONEY_SCALE) ?? 0n;
      const account = new AccountState(
        record.account_id,
        record.ordinal,
        wallet,
        starting,
        record.created_at,
        context.retainedOrders,
      );
      account.sequence = record.sequence;
      account.snapshotVersion = record.snapshot_version;
      account.active = record.active;
      account.cancelAllAfterDeadline = record.cancel_all_after_deadline;
      context.accounts.set(account.id, account);
      context.nextAccountOrdinal = Math.max(context.nextAccountOrdinal, record.ordinal + 1);
    }
    for (const record of state.positions) {
      const account = context.accounts.get(record.account_id);
      const market = context.marketsById.get(record.market_id);
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
        record.funding_total === undefined
          ? 0n
          : (parseScaled(record.funding_total, MONEY_SCALE) ?? 0n),
      );
      account.positions.set(market, position);
      account.positionsById.set(position.id, position);
      if (account.active) market.positions.add(position);
    }
    const resting: OrderState[] = [];
    for (const record of state.orders) {
      const account = context.accounts.get(record.account_id);
      const market = context.marketsById.get(record.market_id);
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
        context.format.instant(record.received_at),
      );
      order.status = record.status;
      order.updatedAt = context.format.instant(record.updated_at);
      order.filledSteps = market.step.unitsOf(record.filled_quantity) ?? 0;
      order.filledNotional = parseScaled(record.filled_notional, MONEY_SCALE) ?? 0n;
      order.reserved = parseScaled(record.reserved_margin, MONEY_SCALE) ?? 0n;
      order.lastEventSequence = record.last_event_sequence;
      order.bookPriority = record.book_priority;
      order.error = record.error;
      // A store written with another seed holds ids that are not the UUIDs of their ordinals.
      account.orders.add(
        order,
        context.identifiers.counterOf(KIND_ORDER, order.id) === order.ordinal &&
          context.format.uuid(KIND_ORDER, order.ordinal) === order.id,
      );
      if (isActive(order.status)) {
        account.trackActive(order, 1);
        account.reserved += order.reserved;
        if (record.book_priority !== null) resting.push(order);
      } else {
        context.terminated(order);
      }
    }
    resting.sort((a, b) => (a.bookPriority ?? 0) - (b.bookPriority ?? 0));
    for (const order of resting) {
      this.matching.addToBook(order);
      context.nextBookPriority = Math.max(context.nextBookPriority, (order.bookPriority ?? 0) + 1);
    }
    for (const account of context.accounts.values()) {
      for (const order of account.activeOrders) {
        // Submission is transient within one unit of work; a stored PENDING or SUBMITTED order
        // had not been matched yet, so it is submitted again.
        if (order.status === 'PENDING' || order.status === 'SUBMITTED') {
          order.status = 'PENDING';
          this.matching.scheduleSubmission(order);
        }
      }
      if (account.cancelAllAfterDeadline !== null) this.cancelAllAfter.arm(account);
    }
  }
}
