/**
 * The `RiskSnapshot` the gate evaluates each intent against, kept by the kernel:
 * - markets: the venue's market list (tick, step, minimums, leverage) with the latest ticker's
 *   mark, data status and time laid over it;
 * - positions and open orders: the order tracker's (the orders kept view by view and summed by
 *   market as each order event arrives, so a change costs one order, not all of them), plus the placements the gate let through
 *   that the venue has not answered yet, so two intents in one burst cannot both pass a limit
 *   that only one fits under;
 * - equity: the account's total equity;
 * - route readiness: the trading permit (reconciled and covered by the dead-man deadline) and
 *   the venue's own route readiness.
 * Each part is rebuilt only after what it is made of changed, so a burst of tickers costs one
 * rebuild at the next intent, not one per ticker.
 */
import type { Decimal } from '../../core/decimal.ts';
import type { Market, Order, Position } from '../../protocol/index.ts';
import type { StampedIntent } from '../intents.ts';
import {
  type RiskMarketView,
  type RiskOpenOrderView,
  type RiskPositionView,
  type RiskSnapshot,
  openOrderView,
  orderAmount,
  riskMarketFromWire,
  riskMarketWithTicker,
  riskPositionsFromWire,
} from '../risk/view.ts';
import {
  addToSums,
  type MarketOrderSums,
  type OrderSums,
  OrderSumsKeeper,
} from '../risk/order-sums.ts';
import type { Ticker } from '../strategy/types.ts';

export interface RiskSnapshotSources {
  markets(): readonly Market[];
  positions(): readonly Position[];
  openOrders(): readonly Order[];
}

interface MarketEntry {
  readonly marketId: string;
  /** The market as listed, without a ticker: parsed once. */
  readonly listed: RiskMarketView;
  ticker: Ticker | null;
  /** The view with the latest ticker laid over, rebuilt when it is dirty. */
  view: RiskMarketView;
}

function marketView(entry: MarketEntry): RiskMarketView {
  return entry.ticker === null ? entry.listed : riskMarketWithTicker(entry.listed, entry.ticker);
}

/**
 * The tracked orders' sums (the keeper's own, live) with the pending placements laid over,
 * read-only: one object for the builder's life whose overlay is refilled when the orders
 * change, not a copy of every market's sums per intent. A lookup reads through; only iterating
 * (a rule over every market) makes the merged map, once per refill.
 */
class SumsWithPending implements ReadonlyMap<string, MarketOrderSums> {
  private base: OrderSums = new Map();
  private readonly laid = new Map<string, MarketOrderSums>();
  private merged: Map<string, MarketOrderSums> | null = null;

  /** Starts again over `base`, with no placement laid over. */
  reset(base: OrderSums): void {
    this.base = base;
    this.laid.clear();
    this.merged = null;
  }

  lay(order: RiskOpenOrderView): void {
    this.laid.set(order.marketId, addToSums(this.get(order.marketId), order));
    this.merged = null;
  }

  get size(): number {
    return this.mergedMap().size;
  }

  get(marketId: string): MarketOrderSums | undefined {
    return this.laid.get(marketId) ?? this.base.get(marketId);
  }

  has(marketId: string): boolean {
    return this.laid.has(marketId) || this.base.has(marketId);
  }

  forEach(
    callback: (
      value: MarketOrderSums,
      key: string,
      map: ReadonlyMap<string, MarketOrderSums>,
    ) => void,
  ): void {
    this.mergedMap().forEach((value, key) => callback(value, key, this));
  }

  entries(): MapIterator<[string, MarketOrderSums]> {
    return this.mergedMap().entries();
  }

  keys(): MapIterator<string> {
    return this.mergedMap().keys();
  }

  values(): MapIterator<MarketOrderSums> {
    return this.mergedMap().values();
  }

  [Symbol.iterator](): MapIterator<[string, MarketOrderSums]> {
    return this.mergedMap().entries();
  }

  /** The base's markets in their order, then those only placements are on (as a copy did). */
  private mergedMap(): Map<string, MarketOrderSums> {
    if (this.merged === null) {
      const merged = new Map(this.base);
      for (const [marketId, sums] of this.laid) merged.set(marketId, sums);
      this.merged = merged;
    }
    return this.merged;
  }
}

export class RiskSnapshotBuilder {
  private readonly sources: RiskSnapshotSources;
  private marketList: readonly Market[] | null = null;
  private readonly entries = new Map<string, MarketEntry>();
  private readonly dirtyMarkets = new Set<string>();
  private marketViews: Readonly<Record<string, RiskMarketView>> = {};
  private positionViews: Readonly<Record<string, RiskPositionView>> | null = null;
  /**
   * The tracker's open orders as views with their sums, kept per order event; null until the
   * first snapshot reads them whole (and after `invalidateOrders`).
   */
  private tracked: OrderSumsKeeper | null = null;
  /** The tracked views and the pending placements the tracker does not hold yet. */
  private orderViews: readonly RiskOpenOrderView[] | null = null;
  private orderSums: OrderSums | null = null;
  private readonly pending = new Map<string, RiskOpenOrderView>();
  /** The sums with the pending placements laid over, when any is (`orderSums` then). */
  private readonly withPending = new SumsWithPending();
  private equity: Decimal | null = null;
  private permitted = false;
  private routeReady = true;

  constructor(sources: RiskSnapshotSources) {
    this.sources = sources;
  }

  onTicker(ticker: Ticker): void {
    this.syncMarkets();
    const entry = this.entries.get(ticker.market_id);
    if (entry === undefined) return;
    entry.ticker = ticker;
    this.dirtyMarkets.add(ticker.market_id);
  }

  /** The tracker's positions changed. */
  invalidatePositions(): void {
    this.positionViews = null;
  }

  /** One of the tracker's orders changed (a new order, an update, or an end). */
  onOrder(order: Order): void {
    if (this.tracked === null) return;
    // Most order events move only the status (submitted, then open): the views stay as they are.
    if (this.tracked.set(order.order_id, openOrderView(order))) this.orderViews = null;
  }

  /** The tracker's orders changed in a way not told order by order: read them whole again. */
  invalidateOrders(): void {
    this.tracked = null;
    this.orderViews = null;
  }

  setEquity(equity: Decimal | null): void {
    this.equity = equity;
  }

  setPermitted(permitted: boolean): void {
    this.permitted = permitted;
  }

  setRouteReady(ready: boolean): void {
    this.routeReady = ready;
  }

  get isPermitted(): boolean {
    return this.permitted;
  }

  /** A placement the gate let through: it counts as an open order until the venue answers. */
  addPending(stamped: StampedIntent): void {
    const intent = stamped.intent;
    if (intent.kind !== 'place') return;
    this.pending.set(stamped.requestId, {
      clientOrderId: stamped.clientOrderId,
      marketId: intent.marketId,
      side: intent.side,
      price:
        intent.type === 'limit' && intent.price !== undefined ? orderAmount(intent.price) : null,
      remainingQuantity: orderAmount(intent.quantity),
      reduceOnly: intent.reduceOnly === true,
    });
    this.orderViews = null;
  }

  /** The venue answered (the tracker holds the order now), or the intent ended without one. */
  removePending(requestId: string): void {
    if (this.pending.delete(requestId)) this.orderViews = null;
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * The snapshot for one gate call. Its order sums are live (the tracked ones, or the one
   * overlay with the pending placements): read them within the call, keep nothing of them.
   */
  snapshot(): RiskSnapshot {
    this.syncMarkets();
    if (this.dirtyMarkets.size > 0) {
      for (const marketId of this.dirtyMarkets) {
        const entry = this.entries.get(marketId);
        if (entry !== undefined) entry.view = marketView(entry);
      }
      this.dirtyMarkets.clear();
      // Written out market by market in the listed order: an object spread of the previous
      // record took V8's slow clone path, a few microseconds per snapshot after a ticker.
      const views: Record<string, RiskMarketView> = {};
      for (const entry of this.entries.values()) views[entry.marketId] = entry.view;
      this.marketViews = Object.freeze(views);
    }
    this.positionViews ??= Object.freeze(riskPositionsFromWire(this.sources.positions()));
    if (this.orderViews === null || this.orderSums === null) {
      // The tracker's orders are read whole once; after that each order event changes one
      // view and one market's sums. Pending placements are laid over them here.
      if (this.tracked === null) {
        const tracked = new OrderSumsKeeper();
        for (const order of this.sources.openOrders()) {
          tracked.set(order.order_id, openOrderView(order));
        }
        this.tracked = tracked;
      }
      const tracked = this.tracked;
      const views: RiskOpenOrderView[] = [];
      for (const view of tracked.orders()) views.push(view);
      const sums = tracked.live();
      let laid = false;
      for (const order of this.pending.values()) {
        if (tracked.hasClientOrderId(order.clientOrderId)) continue;
        views.push(order);
        if (!laid) this.withPending.reset(sums);
        laid = true;
        this.withPending.lay(order);
      }
      this.orderViews = Object.freeze(views);
      this.orderSums = laid ? this.withPending : sums;
    }
    return {
      routeReady: this.permitted && this.routeReady,
      markets: this.marketViews,
      positions: this.positionViews,
      openOrders: this.orderViews,
      orderSums: this.orderSums,
      equity: this.equity,
    };
  }

  /** Picks up the venue's market list (read once the venue has loaded it). */
  private syncMarkets(): void {
    const list = this.sources.markets();
    if (list === this.marketList) return;
    this.marketList = list;
    for (const market of list) {
      if (this.entries.has(market.market_id)) continue;
      const listed = riskMarketFromWire(market);
      this.entries.set(market.market_id, {
        marketId: market.market_id,
        listed,
        ticker: null,
        view: listed,
      });
      this.dirtyMarkets.add(market.market_id);
    }
  }
}
