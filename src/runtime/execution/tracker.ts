/**
 * The order tracker: the account's orders, fills, positions and account as the runtime knows
 * them, kept from the venue's streams and REST reads.
 *
 * - Order events carry only the entity id and the from/to states. A move to PENDING, SUBMITTED
 *   or OPEN of a known order is applied from the event; anything that changes quantities or ends
 *   the order (PARTIALLY_FILLED, FILLED, CANCELLED, REJECTED, UNKNOWN), and any order not known
 *   yet, is read back by REST. Reads are coalesced: a burst of events for one order within
 *   `coalesceMs` costs one read, and an event arriving during a read costs one more read after it.
 *   A read is dropped when, by the time it would go out, the order is already held terminal as
 *   the venue returned it whole (a cancel's response), at or past every event that asked for it.
 * - A status-only move of an order not known yet (its events can arrive before the response of
 *   the command that placed it) is kept, and applied to the order when the venue returns it
 *   whole, if newer. The read those events asked for is then dropped too: the order is held at
 *   or past every one of them, and none of them changed more than the status.
 * - Versions only move forward: an update older than what is held (by `last_event_sequence`) is
 *   ignored, and a terminal order never becomes active again.
 * - Fills are de-duplicated by `fill_id` through the journal, so a fill replayed after a
 *   reconnect or a restart is counted once (LEAN #2204, NautilusTrader #3046).
 * - Exactly once by sequence, from the venue's private stream (`ExecutionVenue.privateStream`,
 *   the only source of order events and fills, live and in replay): each order event and fill is journaled together with its
 *   sequence as the highest applied, in one transaction; an order event at or below that
 *   sequence was applied before and is ignored. A gap in the sequence (the venue's event log no
 *   longer reaching back) owes a read-back of GET /v1/fills down to the newest fill known,
 *   kept in the journal until done, so a crash in the middle does not forget it.
 * - Positions and the account are read by REST after fills (coalesced) and on a timer.
 * - An order an intent created is tracked under the intent's client order id, also when the venue
 *   reports another one (an amendment's replacement): `orders$` carries the order with
 *   `client_order_id` set to the runtime's id, the venue's in `venueClientOrderId`.
 */
import { type Observable, Subject } from 'rxjs';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { isPaperbotError } from '../../core/errors.ts';
import {
  type Account,
  executionStageOfStatus,
  type Fill,
  type Order,
  type OrderStatus,
  type OrderStatusEvent,
  type Position,
  TERMINAL_ORDER_STATUSES,
} from '../../protocol/index.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { ExecutionVenue, PrivateStreamItem } from '../venue.ts';
import { withDeadline } from './deadline.ts';
import { readOwedFills } from './fill-read-back.ts';
import { FifoQueue } from '../../core/fifo-queue.ts';
import { type Logger, silentLogger } from '../../core/logger.ts';

export interface TrackedOrder {
  /** The venue's order; `client_order_id` is the runtime's id for it (see the header). */
  readonly order: Order;
  /** The client order id as the venue reported it. */
  readonly venueClientOrderId: string | null;
  /** The request id of the intent that created the order; null for orders no intent explains. */
  readonly requestId: string | null;
}

export interface OrderTrackerConfig {
  /** Window in which order events of one order are coalesced into one REST read. */
  readonly coalesceMs: number;
  /** Period of the positions and account refresh. */
  readonly refreshIntervalMs: number;
  /** Give up waiting for one REST read after this long. */
  readonly readTimeoutMs: number | null;
  /** Reads of an order that failed are retried this many times, `retryDelayMs` apart. */
  readonly readRetries: number;
  readonly retryDelayMs: number;
  /** Terminal orders remembered (to ignore their late events) before the oldest is forgotten. */
  readonly terminalMemory: number;
  /** Most fills one read-back of GET /v1/fills takes (it ends there, reported incomplete). */
  readonly readBackMaximumFills: number;
}

export const defaultOrderTrackerConfig: OrderTrackerConfig = Object.freeze({
  coalesceMs: 25,
  refreshIntervalMs: 30_000,
  readTimeoutMs: 15_000,
  readRetries: 3,
  retryDelayMs: 1_000,
  terminalMemory: 10_000,
  readBackMaximumFills: 10_000,
});

export interface OrderTrackerOptions {
  readonly venue: ExecutionVenue;
  readonly journal: IntentJournal;
  readonly clock: Clock;
  readonly logger?: Logger | undefined;
  readonly config?: Partial<OrderTrackerConfig> | undefined;
}

export interface OrderLink {
  readonly clientOrderId: string;
  readonly requestId: string;
}

/** Where an order update came from (for logs and for the reconciler's diff). */
export type OrderSource = 'event' | 'read' | 'response' | 'snapshot';

function isTerminal(status: OrderStatus): boolean {
  return TERMINAL_ORDER_STATUSES.has(status);
}

/** A status-only move of an order not known yet, kept for when it is (see the header). */
interface EarlyMove {
  readonly status: OrderStatus;
  readonly sequence: number;
  readonly occurredAt: string;
}

/** Early moves kept at most; beyond it the oldest is forgotten and its order read instead. */
const EARLY_MOVES_KEPT = 1_000;

/** Statuses whose move is applied from the event alone: nothing but the status changes. */
const STATUS_ONLY_MOVES: ReadonlySet<OrderStatus> = new Set(['PENDING', 'SUBMITTED', 'OPEN']);

/**
 * A callback that drops `item` from `set`. Made here, not as a named arrow at the call site:
 * under tsx a closure assigned to a name costs a name definition each time it is made.
 */
function forgetter<T>(set: Set<T>, item: T): () => void {
  return () => {
    set.delete(item);
  };
}

function sameVersion(left: Order, right: Order): boolean {
  return (
    left.status === right.status &&
    left.filled_quantity === right.filled_quantity &&
    left.average_fill_price === right.average_fill_price &&
    left.quantity === right.quantity &&
    left.price === right.price &&
    left.last_event_sequence === right.last_event_sequence &&
    left.execution_stage === right.execution_stage
  );
}

export class OrderTracker {
  readonly orders$: Observable<TrackedOrder>;
  readonly fills$: Observable<Fill>;
  readonly positions$: Observable<readonly Position[]>;
  readonly account$: Observable<Account>;

  private readonly venue: ExecutionVenue;
  private readonly journal: IntentJournal;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly config: OrderTrackerConfig;

  private readonly orderUpdates = new Subject<TrackedOrder>();
  private readonly fillUpdates = new Subject<Fill>();
  private readonly positionUpdates = new Subject<readonly Position[]>();
  private readonly accountUpdates = new Subject<Account>();

  /** Active (and UNKNOWN) orders by order id. */
  private readonly active = new Map<string, TrackedOrder>();
  /** Terminal orders by order id, oldest first, bounded. */
  private readonly terminal = new Map<string, TrackedOrder>();
  /**
   * The terminal orders as stored, oldest first (an entry is stale once its order is stored
   * again or forgotten): the oldest is found here, not by `terminal.keys().next()`, which skips
   * every entry deleted since the map last compacted, some microseconds per order once the
   * memory is full.
   */
  private readonly terminalQueue = new FifoQueue<TrackedOrder>();
  private readonly orderIdByClientId = new Map<string, string>();
  private readonly links = new Map<string, OrderLink>();

  private readonly pendingReads = new Map<string, number>();
  /** The highest event sequence that asked for a pending read of the order (see `settled`). */
  private readonly readSequences = new Map<string, number>();
  /**
   * Orders whose pending read only a read can answer: asked for without an event (a fill, a
   * resolution, a retry), or by an event that changes more than the status.
   */
  private readonly readsRequired = new Set<string>();
  /** The latest status-only move of each order not known yet, by order id (see the header). */
  private readonly earlyMoves = new Map<string, EarlyMove>();
  private readonly readsInFlight = new Set<string>();
  private readonly rereadAfterFlight = new Set<string>();
  private flushTimer: TimerHandle | undefined;
  private accountRefreshQueued = false;
  private accountRefreshInFlight: Promise<void> | null = null;
  private accountRefreshAgain = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private positionList: readonly Position[] = [];
  private positionsRead = false;
  private latestAccount: Account | null = null;
  private refreshTimer: TimerHandle | undefined;
  private readonly subscriptions: { unsubscribe(): void }[] = [];
  private running = false;
  private readBack: Promise<boolean> | null = null;

  constructor(options: OrderTrackerOptions) {
    this.venue = options.venue;
    this.journal = options.journal;
    this.clock = options.clock;
    this.logger = options.logger ?? silentLogger;
    this.config = { ...defaultOrderTrackerConfig, ...options.config };
    this.orders$ = this.orderUpdates.asObservable();
    this.fills$ = this.fillUpdates.asObservable();
    this.positions$ = this.positionUpdates.asObservable();
    this.account$ = this.accountUpdates.asObservable();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // A journal from before sequences were kept (schema 1) knows fills but no sequence: the
    // fills made since its last run can only be read back.
    if (this.journal.privateCursor() === null && this.journal.fillCount() > 0) {
      this.journal.requestFillReadBack('the journal holds no private sequence yet');
    }
    this.subscriptions.push(
      this.venue.privateStream.items$.subscribe((item) => this.onPrivateItem(item)),
    );
    this.refreshTimer = this.clock.setInterval(
      () => this.refreshAccount(),
      this.config.refreshIntervalMs,
    );
  }

  stop(): void {
    this.running = false;
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
    this.clock.clearInterval(this.refreshTimer);
    this.clock.clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.pendingReads.clear();
    this.readSequences.clear();
    this.readsRequired.clear();
    this.earlyMoves.clear();
  }

  /** Resolves once no REST read started by the tracker is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) {
      await Promise.allSettled([...this.inFlight]);
    }
  }

  // Reads

  openOrders(): TrackedOrder[] {
    return [...this.active.values()];
  }

  /** Active orders by the runtime's client order id (orders without one are left out). */
  openOrdersByClientOrderId(): ReadonlyMap<string, TrackedOrder> {
    const byClientId = new Map<string, TrackedOrder>();
    for (const tracked of this.active.values()) {
      const clientOrderId = tracked.order.client_order_id;
      if (clientOrderId !== null) byClientId.set(clientOrderId, tracked);
    }
    return byClientId;
  }

  /** The order by id, active or recently terminal. */
  order(orderId: string): TrackedOrder | undefined {
    return this.active.get(orderId) ?? this.terminal.get(orderId);
  }

  /** The order by the runtime's client order id, active or recently terminal. */
  orderByClientOrderId(clientOrderId: string): TrackedOrder | undefined {
    const orderId = this.orderIdByClientId.get(clientOrderId);
    return orderId === undefined ? undefined : this.order(orderId);
  }

  positions(): readonly Position[] {
    return this.positionList;
  }

  /** True once positions were read from the venue at least once. */
  get positionsKnown(): boolean {
    return this.positionsRead;
  }

  account(): Account | null {
    return this.latestAccount;
  }

  // Updates

  /** Ties a venue order to the intent that created it, before or after the order is seen. */
  linkOrder(orderId: string, link: OrderLink): void {
    this.links.set(orderId, link);
    this.orderIdByClientId.set(link.clientOrderId, orderId);
    const known = this.order(orderId);
    if (known !== undefined && known.order.client_order_id !== link.clientOrderId) {
      this.store({
        order: { ...known.order, client_order_id: link.clientOrderId },
        venueClientOrderId: known.venueClientOrderId,
        requestId: link.requestId,
      });
    }
  }

  /** Applies an order the venue returned (a command response, a read, a snapshot). */
  applyOrder(order: Order, source: OrderSource = 'read'): TrackedOrder | null {
    const link = this.linkOf(order);
    let taken =
      link === null || order.client_order_id === link.clientOrderId
        ? order
        : { ...order, client_order_id: link.clientOrderId };
    if (this.earlyMoves.size > 0) taken = this.withEarlyMove(taken);
    const tracked: TrackedOrder = Object.freeze({
      order: Object.freeze(taken),
      venueClientOrderId: order.client_order_id,
      requestId: link?.requestId ?? null,
    });
    const current = this.order(order.order_id);
    if (current !== undefined && !this.isNewer(current.order, tracked.order, source)) return null;
    if (current !== undefined && sameVersion(current.order, tracked.order)) {
      // Same version: keep the stored one, but take a link learnt meanwhile.
      if (current.requestId === tracked.requestId) return null;
    }
    this.store(tracked);
    if (this.pendingReads.size > 0) this.dropSettledRead(order.order_id);
    return tracked;
  }

  /**
   * Drops the pending read of an order that the order just applied settles (`settled`), and the
   * flush timer with it when nothing else waits: a response that lands between an event and the
   * read it asked for leaves no timer to fire.
   */
  private dropSettledRead(orderId: string): void {
    if (this.pendingReads.get(orderId) !== 0 || !this.settled(orderId)) return;
    this.pendingReads.delete(orderId);
    this.readSequences.delete(orderId);
    this.readsRequired.delete(orderId);
    if (this.pendingReads.size === 0 && !this.accountRefreshQueued) {
      this.clock.clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
  }

  /**
   * Takes the venue's view from a reconciliation: its open orders, positions and account. Orders
   * held here but absent from `openOrders` are left for the caller to read back (their final
   * state is not in the snapshot).
   */
  applySnapshot(snapshot: {
    readonly openOrders: readonly Order[];
    readonly positions: readonly Position[];
    readonly account: Account | null;
  }): void {
    for (const order of snapshot.openOrders) this.applyOrder(order, 'snapshot');
    this.setPositions(snapshot.positions);
    if (snapshot.account !== null) this.setAccount(snapshot.account);
  }

  /** Reads the order back by REST, coalesced with other requests for it. */
  refreshOrder(orderId: string): void {
    this.queueRead(orderId, null);
  }

  /** Queues a read of the order; `sequence` is that of the event asking for it, if any. */
  private queueRead(orderId: string, sequence: number | null): void {
    if (sequence === null) this.readsRequired.add(orderId);
    else if (sequence > (this.readSequences.get(orderId) ?? -1)) {
      this.readSequences.set(orderId, sequence);
    }
    if (this.readsInFlight.has(orderId)) {
      this.rereadAfterFlight.add(orderId);
      return;
    }
    if (!this.pendingReads.has(orderId)) this.pendingReads.set(orderId, 0);
    this.scheduleFlush(this.config.coalesceMs);
  }

  /** Reads positions and the account back by REST (one read pair however often asked). */
  refreshAccount(): void {
    if (this.accountRefreshInFlight !== null) {
      this.accountRefreshAgain = true;
      return;
    }
    if (this.accountRefreshQueued) return;
    this.accountRefreshQueued = true;
    this.scheduleFlush(this.config.coalesceMs);
  }

  // Stream handlers

  private onOrderEvent(event: OrderStatusEvent): void {
    const orderId = event.data.entity_id;
    const current = this.order(orderId);
    if (current !== undefined) {
      const held = current.order.last_event_sequence;
      if (held !== null && event.sequence <= held) return;
      if (isTerminal(current.order.status)) return;
    }
    const to = event.data.to_state;
    if (current === undefined || !STATUS_ONLY_MOVES.has(to)) {
      if (current === undefined) this.noteEarlyMove(orderId, event);
      else this.readsRequired.add(orderId);
      this.queueRead(orderId, event.sequence);
      return;
    }
    this.store(
      Object.freeze({
        order: Object.freeze({
          ...current.order,
          status: to,
          execution_stage: executionStageOfStatus[to],
          last_event_sequence: event.sequence,
          updated_at: event.occurred_at,
        }),
        venueClientOrderId: current.venueClientOrderId,
        requestId: current.requestId,
      }),
    );
  }

  /**
   * Reads back the fills a gap in the private sequence may have hidden, when the journal owes
   * such a read-back (down to the newest fill known when the gap was found). One at a time;
   * resolves true once none is owed. A failure leaves it owed, for the next reconciliation.
   */
  readFillsBack(): Promise<boolean> {
    if (!this.journal.isOpen) return Promise.resolve(true);
    if (this.readBack !== null) return this.readBack;
    const run = readOwedFills({
      journal: this.journal,
      feed: this.venue.privateStream,
      clock: this.clock,
      logger: this.logger,
      readTimeoutMs: this.config.readTimeoutMs,
      maximumFills: this.config.readBackMaximumFills,
      running: () => this.running,
      apply: (fill) => this.onFill(fill, { sequence: null, source: 'rest' }),
    });
    this.readBack = this.track(run).finally(() => {
      this.readBack = null;
    });
    return this.readBack;
  }

  private onPrivateItem(item: PrivateStreamItem): void {
    if (!this.journal.isOpen) return;
    switch (item.kind) {
      case 'order':
        if (!this.journal.recordOrderEvent(item.event)) {
          this.logger.debug('order event already applied; ignored', {
            sequence: item.sequence,
            orderId: item.event.data.entity_id,
          });
          return;
        }
        this.onOrderEvent(item.event);
        return;
      case 'fill':
        this.onFill(item.fill, { sequence: item.sequence, source: 'stream' }, item.occurredAt);
        return;
      case 'other':
        // Nothing here changes: not written (a restart hands it on again, to no effect).
        return;
      case 'unreadable':
        // An event of a known type that broke its schema: what it said is read back, never
        // guessed. An order event names its order; anything else may have been a fill, and
        // fills read back are keyed by fill_id, so none is lost and none is counted twice.
        this.logger.warn('a private event breaks its schema; what it said is read back', {
          sequence: item.sequence,
          channel: item.channel,
          type: item.type,
          problem: item.problem,
        });
        if (item.channel === 'orders' && item.entityId !== null) {
          this.refreshOrder(item.entityId);
          return;
        }
        this.owe(
          `the ${item.type ?? 'private'} event at sequence ${item.sequence} broke its schema`,
        );
        return;
      case 'gap':
        this.logger.warn('private events will not be delivered; fills are read back over REST', {
          after: item.after,
          next: item.next,
          reason: item.reason,
        });
        if (item.after !== null && item.next !== null && item.next <= item.after) {
          this.journal.restartPrivateSequence(item.next - 1);
        }
        this.owe(item.reason);
        return;
    }
  }

  /** Fills may be missing: the journal owes a read-back (kept across restarts), started now. */
  private owe(reason: string): void {
    this.journal.requestFillReadBack(reason);
    void this.readFillsBack();
  }

  /** Applies a fill once by `fill_id`; true when it was new. */
  private onFill(
    fill: Fill,
    delivery: { readonly sequence: number | null; readonly source: 'stream' | 'rest' },
    eventAt: string | null = null,
  ): boolean {
    if (!this.journal.recordFill(fill, delivery, eventAt)) {
      this.logger.debug('fill already counted; ignored', {
        fillId: fill.fill_id,
        source: delivery.source,
      });
      return false;
    }
    this.fillUpdates.next(fill);
    if (fill.order_id !== null) this.refreshOrder(fill.order_id);
    this.refreshAccount();
    return true;
  }

  // Internals

  /** Keeps the event of an order not known yet: its move, if status-only (see the header). */
  private noteEarlyMove(orderId: string, event: OrderStatusEvent): void {
    const to = event.data.to_state;
    if (!STATUS_ONLY_MOVES.has(to) || this.readsRequired.has(orderId)) {
      // A move that changes more than the status: only the read tells what it changed.
      this.earlyMoves.delete(orderId);
      this.readsRequired.add(orderId);
      return;
    }
    const kept = this.earlyMoves.get(orderId);
    if (kept !== undefined && kept.sequence >= event.sequence) return;
    if (kept === undefined && this.earlyMoves.size >= EARLY_MOVES_KEPT) {
      // Bounded: a move forgotten leaves its order to the read the event asked for.
      const oldest = this.earlyMoves.keys().next();
      if (oldest.done !== true) {
        this.earlyMoves.delete(oldest.value);
        this.readsRequired.add(oldest.value);
      }
    }
    this.earlyMoves.set(orderId, {
      status: to,
      sequence: event.sequence,
      occurredAt: event.occurred_at,
    });
  }

  /** The order with the status-only move its events made before it was known, when newer. */
  private withEarlyMove(order: Order): Order {
    const move = this.earlyMoves.get(order.order_id);
    if (move === undefined) return order;
    this.earlyMoves.delete(order.order_id);
    const held = order.last_event_sequence;
    if (isTerminal(order.status) || held === null || move.sequence <= held) return order;
    return {
      ...order,
      status: move.status,
      execution_stage: executionStageOfStatus[move.status],
      last_event_sequence: move.sequence,
      updated_at: move.occurredAt,
    };
  }

  private linkOf(order: Order): OrderLink | null {
    const known = this.links.get(order.order_id);
    if (known !== undefined) return known;
    const record = this.journal.isOpen ? this.journal.intentByOrderId(order.order_id) : undefined;
    if (record !== undefined && record.clientOrderId !== null) {
      const link = {
        clientOrderId: record.clientOrderId,
        requestId: record.requestId,
      };
      this.links.set(order.order_id, link);
      return link;
    }
    if (order.client_order_id !== null && this.journal.isOpen) {
      const byClient = this.journal.intentByClientOrderId(order.client_order_id);
      // The intent that used this client order id, unless it is known to have made another
      // order (an amendment's replacement may reuse the replaced order's client order id).
      if (
        byClient !== undefined &&
        (byClient.orderId === null || byClient.orderId === order.order_id)
      ) {
        const link = {
          clientOrderId: order.client_order_id,
          requestId: byClient.requestId,
        };
        this.links.set(order.order_id, link);
        return link;
      }
    }
    return null;
  }

  private isNewer(current: Order, incoming: Order, source: OrderSource): boolean {
    if (isTerminal(current.status) && !isTerminal(incoming.status)) return false;
    const held = current.last_event_sequence;
    const offered = incoming.last_event_sequence;
    if (held !== null && offered !== null) {
      if (offered < held) return false;
      // A snapshot at the same sequence says nothing new; a read or response may add fields.
      if (offered === held && source === 'snapshot') return false;
    }
    return true;
  }

  private store(tracked: TrackedOrder): void {
    const orderId = tracked.order.order_id;
    const clientOrderId = tracked.order.client_order_id;
    if (clientOrderId !== null) this.orderIdByClientId.set(clientOrderId, orderId);
    if (isTerminal(tracked.order.status)) {
      this.active.delete(orderId);
      // Set over the entry held, not deleted first: the map is never iterated (its age order is
      // `terminalQueue`), and a delete and insert per order churn its table.
      this.terminal.set(orderId, tracked);
      this.terminalQueue.push(tracked);
      while (this.terminal.size > this.config.terminalMemory) {
        const forgotten = this.terminalQueue.shift();
        if (forgotten === undefined) break;
        const oldest = forgotten.order.order_id;
        // Stale: the order was stored again since (it is further on) or is no longer held.
        if (this.terminal.get(oldest) !== forgotten) continue;
        this.terminal.delete(oldest);
        const forgottenClientId = forgotten?.order.client_order_id;
        if (
          forgottenClientId !== null &&
          forgottenClientId !== undefined &&
          this.orderIdByClientId.get(forgottenClientId) === oldest
        ) {
          this.orderIdByClientId.delete(forgottenClientId);
        }
        this.links.delete(oldest);
      }
      // Bounded: stale entries beyond the memory are dropped.
      if (this.terminalQueue.size > 2 * this.config.terminalMemory + 1_024) {
        this.terminalQueue.keep((kept) => this.terminal.get(kept.order.order_id) === kept);
      }
    } else {
      this.active.set(orderId, tracked);
    }
    this.orderUpdates.next(tracked);
  }

  private setPositions(positions: readonly Position[]): void {
    this.positionList = Object.freeze([...positions]);
    this.positionsRead = true;
    this.positionUpdates.next(this.positionList);
  }

  private setAccount(account: Account): void {
    this.latestAccount = account;
    this.accountUpdates.next(account);
  }

  private scheduleFlush(delayMs: number): void {
    if (this.flushTimer !== undefined || !this.running) return;
    this.flushTimer = this.clock.setTimeout(() => {
      this.flushTimer = undefined;
      this.flush();
    }, delayMs);
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.inFlight.add(promise);
    // One reaction for either end (not `finally` and a `catch`: two more promises per read).
    const forget = forgetter(this.inFlight, promise);
    promise.then(forget, forget);
    return promise;
  }

  private flush(): void {
    const reads = [...this.pendingReads];
    this.pendingReads.clear();
    for (const [orderId, failures] of reads) {
      const settled = this.settled(orderId);
      this.readsRequired.delete(orderId);
      if (settled) {
        this.readSequences.delete(orderId);
        continue;
      }
      // The read answers for the move kept, if any.
      this.earlyMoves.delete(orderId);
      this.track(this.readOrder(orderId, failures));
    }
    if (this.accountRefreshQueued) {
      this.accountRefreshQueued = false;
      this.accountRefreshInFlight = this.track(this.readAccount());
    }
  }

  /**
   * True when a read of the order can tell nothing new, so it is not made, in two cases.
   * - The order is held terminal, as the venue returned it whole (a response, read or snapshot:
   *   an event alone never makes an order terminal here), at or past the sequence of every event
   *   that asked for the read, and under the link it has now. A terminal order never changes at
   *   the venue, and a fill asking for the read was made before the order ended, so that order
   *   already counts it. The market maker's cancels end this way: the cancel's response lands
   *   between the event and the read, and the read would return the same order again.
   * - The order is held active, under the link it has now, at or past the sequence of every
   *   event that asked for the read, and only status-only moves of an order not known yet asked
   *   for it (`readsRequired` holds the others): a placement whose events came before its
   *   response, which took their move (`withEarlyMove`).
   */
  private settled(orderId: string): boolean {
    const held = this.order(orderId);
    if (held === undefined) return false;
    const asked = this.readSequences.get(orderId);
    const sequence = held.order.last_event_sequence;
    if (!isTerminal(held.order.status)) {
      if (asked === undefined || this.readsRequired.has(orderId)) return false;
      if (sequence === null || sequence < asked) return false;
    } else if (asked !== undefined) {
      if (sequence === null || sequence < asked) return false;
    }
    const link = this.links.get(orderId);
    return link !== undefined && link.requestId === held.requestId;
  }

  private async readOrder(orderId: string, failures: number): Promise<void> {
    this.readSequences.delete(orderId);
    this.readsInFlight.add(orderId);
    try {
      const order = await withDeadline(this.clock, this.config.readTimeoutMs, () =>
        this.venue.getOrder(orderId),
      );
      if (this.running) this.applyOrder(order, 'read');
    } catch (error) {
      const code = isPaperbotError(error) ? error.code : 'UNEXPECTED_ERROR';
      if (code === 'ORDER_NOT_FOUND') {
        this.logger.debug('order event for an entity that is not an order of this account', {
          orderId,
        });
      } else if (failures + 1 < this.config.readRetries && this.running) {
        this.logger.warn('order read failed; retrying', {
          orderId,
          code,
          attempt: failures + 1,
        });
        this.pendingReads.set(orderId, failures + 1);
        this.readsRequired.add(orderId);
        this.scheduleFlush(this.config.retryDelayMs);
      } else {
        this.logger.warn('order read failed; left to the next reconciliation', {
          orderId,
          code,
        });
      }
    } finally {
      this.readsInFlight.delete(orderId);
      if (this.rereadAfterFlight.delete(orderId)) this.refreshOrder(orderId);
    }
  }

  private async readAccount(): Promise<void> {
    try {
      // Both reads start together, so one deadline over the pair gives up when either would.
      const [positions, account] = await withDeadline(this.clock, this.config.readTimeoutMs, () =>
        Promise.all([this.venue.listPositions(), this.venue.getAccount()]),
      );
      if (this.running) {
        this.setPositions(positions);
        this.setAccount(account);
      }
    } catch (error) {
      this.logger.warn('positions and account read failed; retried on the next refresh', {
        code: isPaperbotError(error) ? error.code : 'UNEXPECTED_ERROR',
      });
    } finally {
      this.accountRefreshInFlight = null;
      if (this.accountRefreshAgain) {
        this.accountRefreshAgain = false;
        this.refreshAccount();
      }
    }
  }
}
