/**
 * Matching of user and synthetic orders on each market's `OrderBook`: an accepted order is
 * created PENDING and submitted after `latency.submit_ms`; submission checks what only the book
 * can tell (reduce-only cover, post-only crossing), matches it as the taker, and rests, fills or
 * cancels the rest. The book's fill callbacks book each execution (`accounting.ts`) and record
 * the public trade. Synthetic quotes and orders of the market simulation or a replay match here
 * too, with no account behind them.
 */
import type { OrderRequest } from '../../protocol/index.ts';
import type { Accounting } from './accounting.ts';
import type { EngineContext } from './context.ts';
import type { QuoteLevel } from './driver.ts';
import { type BookSide, BUY, RestingOrder, SELL } from './order-book.ts';
import type { OrderLifecycle } from './order-lifecycle.ts';
import { type KeyRiskLimits, type OrderPlacement, refusalOf, slippageBound } from './placement.ts';
import {
  type AccountState,
  type BookOwner,
  type MarketRuntime,
  OrderState,
  type SyntheticOwner,
} from './state.ts';
import { KIND_ORDER } from './wire.ts';

const SELF_TRADE_INCOMING = {
  code: 'SELF_TRADE_PREVENTED',
  message: "the order would have traded with the account's own resting order",
};
const SELF_TRADE_RESTING = {
  code: 'SELF_TRADE_PREVENTED',
  message: 'an incoming order of the same account would have traded with this order',
};

export class MatchingEngine {
  private readonly quoters = new Map<string, SyntheticOwner>();
  /** User orders waiting for the driver to submit them (`EngineContext.holdSubmission`). */
  private readonly heldSubmissions = new Map<MarketRuntime, OrderState[]>();
  // The incoming order of the match in progress.
  private currentTaker: OrderState | null = null;
  // The account's own resting order that stopped the match in progress (self-trade prevention).
  private selfTradeMaker: OrderState | null = null;
  private syntheticMarket: MarketRuntime | null = null;
  private syntheticSide: BookSide = BUY;

  constructor(
    private readonly context: EngineContext,
    private readonly lifecycle: OrderLifecycle,
    private readonly accounting: Accounting,
    private readonly placement: OrderPlacement,
  ) {}

  /** Accepts an order (PENDING) or throws why not; it is submitted on the clock. */
  place(
    account: AccountState,
    request: OrderRequest,
    limits: KeyRiskLimits | undefined,
    replacing: boolean,
  ): OrderState {
    const context = this.context;
    const { problems, prepared } = this.placement.prepare(
      account,
      request,
      limits,
      false,
      replacing,
    );
    if (problems.length > 0 || prepared === null) throw refusalOf(problems);
    const ordinal = context.nextIdentifier++;
    const now = context.instantNow();
    const order = new OrderState(
      ordinal,
      context.format.uuid(KIND_ORDER, ordinal),
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
    this.lifecycle.statusEvent(order, null, 'PENDING');
    this.scheduleSubmission(order);
    return order;
  }

  scheduleSubmission(order: OrderState): void {
    const context = this.context;
    const hold = context.holdSubmission;
    if (hold !== null && hold(order.market.id)) {
      let held = this.heldSubmissions.get(order.market);
      if (held === undefined) {
        held = [];
        this.heldSubmissions.set(order.market, held);
      }
      // Once: `Exchange.start` schedules pending orders again after a stop.
      if (!held.includes(order)) held.push(order);
      return;
    }
    order.submitTimer = context.clock.setTimeout(() => {
      order.submitTimer = null;
      context.depth++;
      try {
        this.submit(order);
      } finally {
        context.endWork();
      }
    }, context.config.latency.submit_ms);
  }

  /**
   * Submits the held orders of a market on one side (`Exchange.submitHeld`), oldest first; those
   * no longer pending (cancelled meanwhile) are dropped. The number submitted.
   */
  submitHeld(market: MarketRuntime, side: BookSide): number {
    const held = this.heldSubmissions.get(market);
    if (held === undefined || held.length === 0) return 0;
    const kept: OrderState[] = [];
    const due: OrderState[] = [];
    for (const order of held) {
      if (order.status !== 'PENDING') continue;
      if (order.side === side) due.push(order);
      else kept.push(order);
    }
    this.heldSubmissions.set(market, kept);
    for (const order of due) this.submit(order);
    return due.length;
  }

  /** The held orders of a market still pending. */
  heldCount(market: MarketRuntime): number {
    const held = this.heldSubmissions.get(market);
    if (held === undefined) return 0;
    let count = 0;
    for (const order of held) if (order.status === 'PENDING') count++;
    return count;
  }

  private submit(order: OrderState): void {
    if (order.status !== 'PENDING') return;
    const beforeMatching = this.context.beforeMatching;
    if (beforeMatching !== null) beforeMatching(order.market.id);
    const lifecycle = this.lifecycle;
    lifecycle.transition(order, 'SUBMITTED');
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
        lifecycle.transition(order, 'REJECTED');
        return;
      }
      cap = Math.min(cap, position.steps);
    }
    let limit: number;
    if (order.type === 'market') {
      const opposite = order.side === BUY ? market.book.bestAsk() : market.book.bestBid();
      limit = slippageBound(order.side, order.maxSlippagePercent!, opposite ?? market.markTicks);
    } else {
      limit = order.priceTicks!;
    }
    if (order.postOnly && market.book.wouldCross(order.side, limit)) {
      order.error = {
        code: 'POST_ONLY_WOULD_TAKE',
        message: 'post_only order would have taken liquidity',
      };
      lifecycle.transition(order, 'REJECTED');
      return;
    }
    const selfTradeStopped = this.matchAsTaker(order, limit, cap);
    this.accounting.publishTouched();
    if (order.remainingSteps === 0) {
      lifecycle.transition(order, 'FILLED');
    } else if (selfTradeStopped) {
      lifecycle.cancelActive(order, SELF_TRADE_INCOMING);
    } else if (order.type === 'market' || order.timeInForce === 'IOC') {
      lifecycle.transition(order, 'CANCELLED');
    } else if (order.reduceOnly && !this.reduceOnlyMayRest(order)) {
      order.error = {
        code: 'REDUCE_ONLY_EXCEEDS_POSITION',
        message: 'the rest of the reduce_only order would increase exposure',
      };
      lifecycle.transition(order, 'CANCELLED');
    } else {
      this.rest(order);
      lifecycle.transition(order, order.filledSteps > 0 ? 'PARTIALLY_FILLED' : 'OPEN');
    }
  }

  /**
   * Matches `order` as the taker for up to `cap` steps. Before each execution against the
   * account's own resting order, self-trade prevention applies the configured policy; true when
   * it says the incoming order stops there (its rest is then cancelled by the caller).
   */
  private matchAsTaker(order: OrderState, limit: number, cap: number): boolean {
    const book = order.market.book;
    const policy = this.context.config.self_trade_prevention;
    // An account whose only active order is this one has nothing resting to trade with.
    const guard = order.account.activeOrders.size > 1 ? this.isSelfTrade : null;
    let left = cap;
    this.currentTaker = order;
    try {
      for (;;) {
        left = book.match(order.side, limit, left, this.onTakerFill, guard);
        const own = this.selfTradeMaker;
        if (own === null) return false;
        this.selfTradeMaker = null;
        if (policy !== 'cancel_incoming') this.lifecycle.cancelActive(own, SELF_TRADE_RESTING);
        if (policy !== 'cancel_resting') return true;
        if (left === 0) return false;
      }
    } finally {
      this.currentTaker = null;
      this.selfTradeMaker = null;
    }
  }

  // Stops a taker's match before it would trade with a resting order of the same account.
  private readonly isSelfTrade = (maker: RestingOrder<BookOwner>): boolean => {
    const owner = maker.owner;
    if (owner.synthetic || owner.account !== this.currentTaker!.account) return false;
    this.selfTradeMaker = owner;
    return true;
  };

  private rest(order: OrderState): void {
    order.bookPriority = this.context.nextBookPriority++;
    this.addToBook(order);
  }

  /** Puts a limit order's remaining quantity in its market's book (behind its price level). */
  addToBook(order: OrderState): void {
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
    // Each execution of a user order is booked, then its reduce-only siblings are checked.
    this.accounting.applyFill(taker, steps, priceTicks, false);
    this.enforceReduceOnly(taker.account, taker.market, taker);
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

  private makerFilled(maker: RestingOrder<BookOwner>, steps: number, priceTicks: number): void {
    const owner = maker.owner;
    if (owner.synthetic) return;
    this.accounting.applyFill(owner, steps, priceTicks, true);
    this.enforceReduceOnly(owner.account, owner.market, owner);
    if (maker.remaining === 0) {
      owner.resting = null;
      this.lifecycle.transition(owner, 'FILLED');
    } else if (owner.status === 'OPEN') {
      this.lifecycle.transition(owner, 'PARTIALLY_FILLED');
    }
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
      this.lifecycle.cancelActive(order, {
        code: 'REDUCE_ONLY_EXCEEDS_POSITION',
        message: 'the position no longer covers this reduce_only order',
      });
    }
  }

  private recordTrade(
    market: MarketRuntime,
    priceTicks: number,
    steps: number,
    side: BookSide,
  ): void {
    const context = this.context;
    const ordinal = context.nextIdentifier++;
    market.recordTrade({
      ordinal,
      priceTicks,
      steps,
      side: side === BUY ? 'buy' : 'sell',
      at: context.clock.now(),
    });
    context.markTicker(market);
  }

  // ---------------------------------------------------------------- synthetic liquidity

  /** Matches a synthetic order; returns the steps left unfilled. */
  matchSynthetic(market: MarketRuntime, side: BookSide, steps: number, limitTicks: number): number {
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

  /** Replaces a quoter's resting levels; each level first takes what it crosses. */
  replaceQuotes(
    market: MarketRuntime,
    quoterId: string,
    bids: readonly QuoteLevel[],
    asks: readonly QuoteLevel[],
  ): void {
    let owner = this.quoters.get(quoterId);
    if (owner === undefined) {
      owner = { synthetic: true, quoterId };
      this.quoters.set(quoterId, owner);
    }
    const quoter = owner;
    this.context.run(() => {
      for (const resting of market.quotes.get(quoterId) ?? []) market.book.remove(resting);
      const fresh: RestingOrder<BookOwner>[] = [];
      for (const level of bids) this.postQuote(market, quoter, BUY, level, fresh);
      for (const level of asks) this.postQuote(market, quoter, SELL, level, fresh);
      market.quotes.set(quoterId, fresh);
    });
  }

  // A method, not a closure per call: a replay replaces quotes at every recorded book.
  private postQuote(
    market: MarketRuntime,
    quoter: BookOwner,
    side: BookSide,
    level: QuoteLevel,
    fresh: RestingOrder<BookOwner>[],
  ): void {
    const left = this.matchSynthetic(market, side, level.steps, level.priceTicks);
    if (left > 0) {
      const resting = new RestingOrder<BookOwner>(side, level.priceTicks, left, quoter);
      market.book.add(resting);
      fresh.push(resting);
    }
  }
}
