/**
 * Queue position of the account's resting limit orders in one market, against recorded data.
 *
 * A resting order sits behind the quantity the recorded book displayed at its price when it
 * started resting (`queueAhead`). Later snapshots can only shorten that queue (what leaves the
 * level ahead of the order is gone; what joins it joins behind). A recorded trade reaches the
 * account's orders on the side it hit, best price first:
 * - an order priced better than the trade (the trade went through its price) fills up to the
 *   traded quantity still unallocated;
 * - an order at the trade's price first lets the trade consume the queue ahead of it, then
 *   fills with what is left; several orders at one price are served in time priority, each
 *   behind its own queue and the fills of the orders before it;
 * - orders priced worse than the trade are not reached.
 *
 * An order whose price the snapshot does not show within its depth (a deeper level than the
 * recording kept) has an unknown queue (`Infinity`) until a snapshot shows its level. Prices are
 * integer ticks and quantities integer steps, as in the engine.
 */
import { BUY, type BookSide, SELL } from '../../emulator/index.ts';

export interface DisplayedLevel {
  readonly priceTicks: number;
  readonly steps: number;
}

/** One side of a recorded snapshot, best level first. */
export interface DisplayedSide {
  readonly levels: readonly DisplayedLevel[];
  /** True when the snapshot showed the whole side (fewer levels than the recorded depth). */
  readonly complete: boolean;
}

export interface QueuedOrder {
  readonly orderId: string;
  readonly side: BookSide;
  readonly priceTicks: number;
  remainingSteps: number;
  /** Recorded quantity still ahead of the order at its price; `Infinity` while unknown. */
  queueAheadSteps: number;
  /** Time priority among the account's orders (the engine's book order). */
  readonly priority: number;
}

export interface TradeAllocation {
  /** Steps the trade fills across the account's orders. */
  readonly steps: number;
  /** The worst price reached: a synthetic order limited here fills exactly these orders. */
  readonly limitTicks: number;
}

/** Displayed quantity at `priceTicks` on one side: 0 when absent, Infinity when beyond view. */
export function displayedAt(
  side: DisplayedSide | null,
  book: BookSide,
  priceTicks: number,
): number {
  if (side === null) return Number.POSITIVE_INFINITY;
  const levels = side.levels;
  for (let index = 0; index < levels.length; index++) {
    const level = levels[index]!;
    if (level.priceTicks === priceTicks) return level.steps;
    // Levels are best first: past the order's price, it is not shown.
    if (book === BUY ? level.priceTicks < priceTicks : level.priceTicks > priceTicks) return 0;
  }
  return side.complete ? 0 : Number.POSITIVE_INFINITY;
}

function before(side: BookSide, a: QueuedOrder, b: QueuedOrder): boolean {
  if (a.priceTicks !== b.priceTicks) {
    return side === BUY ? a.priceTicks > b.priceTicks : a.priceTicks < b.priceTicks;
  }
  return a.priority < b.priority;
}

export class MarketQueues {
  /** Best first: highest price, then oldest. */
  private readonly bids: QueuedOrder[] = [];
  /** Best first: lowest price, then oldest. */
  private readonly asks: QueuedOrder[] = [];
  private readonly byId = new Map<string, QueuedOrder>();
  private nextPriority = 1;

  constructor(private readonly queuePosition: boolean) {}

  get size(): number {
    return this.byId.size;
  }

  has(orderId: string): boolean {
    return this.byId.has(orderId);
  }

  get(orderId: string): QueuedOrder | undefined {
    return this.byId.get(orderId);
  }

  /** The account's highest resting bid, or null. */
  bestBid(): number | null {
    return this.bids[0]?.priceTicks ?? null;
  }

  /** The account's lowest resting ask, or null. */
  bestAsk(): number | null {
    return this.asks[0]?.priceTicks ?? null;
  }

  /** Orders of one side, best first (read-only view for tests and reports). */
  orders(side: BookSide): readonly QueuedOrder[] {
    return side === BUY ? this.bids : this.asks;
  }

  add(
    orderId: string,
    side: BookSide,
    priceTicks: number,
    remainingSteps: number,
    displayedAhead: number,
  ): QueuedOrder {
    const existing = this.byId.get(orderId);
    if (existing !== undefined) return existing;
    const order: QueuedOrder = {
      orderId,
      side,
      priceTicks,
      remainingSteps,
      queueAheadSteps: this.queuePosition ? displayedAhead : 0,
      priority: this.nextPriority++,
    };
    const list = side === BUY ? this.bids : this.asks;
    let index = list.length;
    while (index > 0 && before(side, order, list[index - 1]!)) index--;
    list.splice(index, 0, order);
    this.byId.set(orderId, order);
    return order;
  }

  remove(orderId: string): void {
    const order = this.byId.get(orderId);
    if (order === undefined) return;
    this.byId.delete(orderId);
    const list = order.side === BUY ? this.bids : this.asks;
    const index = list.indexOf(order);
    if (index >= 0) list.splice(index, 1);
  }

  setRemaining(orderId: string, remainingSteps: number): void {
    const order = this.byId.get(orderId);
    if (order === undefined) return;
    if (remainingSteps <= 0) this.remove(orderId);
    else order.remainingSteps = remainingSteps;
  }

  /**
   * Continuity lost (a `gap` record): every order's queue ahead becomes unknown, so the next
   * snapshot sets it to what is displayed at its price, as for an order placed then. Returns the
   * ids of the orders whose queue restarted (none without queue position).
   */
  restart(): string[] {
    if (!this.queuePosition) return [];
    const restarted: string[] = [];
    for (const order of this.bids) {
      order.queueAheadSteps = Number.POSITIVE_INFINITY;
      restarted.push(order.orderId);
    }
    for (const order of this.asks) {
      order.queueAheadSteps = Number.POSITIVE_INFINITY;
      restarted.push(order.orderId);
    }
    return restarted;
  }

  /** A new snapshot: queues ahead shrink to what is displayed at each order's price. */
  onSnapshot(bids: DisplayedSide, asks: DisplayedSide): void {
    if (!this.queuePosition) return;
    for (const order of this.bids) {
      order.queueAheadSteps = Math.min(
        order.queueAheadSteps,
        displayedAt(bids, BUY, order.priceTicks),
      );
    }
    for (const order of this.asks) {
      order.queueAheadSteps = Math.min(
        order.queueAheadSteps,
        displayedAt(asks, SELL, order.priceTicks),
      );
    }
  }

  /**
   * What a recorded trade (aggressor `aggressor`, at `priceTicks`, for `steps`) fills of the
   * account's orders, as described in the header; null when it fills none. Queues ahead are
   * consumed here; remaining quantities change only when the engine reports the fills.
   */
  allocate(aggressor: BookSide, priceTicks: number, steps: number): TradeAllocation | null {
    // A sell hits bids, a buy lifts asks.
    const orders = aggressor === SELL ? this.bids : this.asks;
    // Inline, not a closure: called for every recorded trade of a market with resting orders.
    const selling = aggressor === SELL;
    let left = steps;
    let total = 0;
    let limitTicks = 0;
    let index = 0;
    while (index < orders.length && left > 0) {
      const order = orders[index]!;
      if (selling ? order.priceTicks > priceTicks : order.priceTicks < priceTicks) {
        const fill = Math.min(order.remainingSteps, left);
        left -= fill;
        total += fill;
        limitTicks = order.priceTicks;
        index++;
        continue;
      }
      if (order.priceTicks !== priceTicks) break;
      const arriving = left;
      let filledAtLevel = 0;
      while (index < orders.length && orders[index]!.priceTicks === priceTicks) {
        const queued = orders[index]!;
        const available = arriving - queued.queueAheadSteps - filledAtLevel;
        const fill = Math.max(0, Math.min(queued.remainingSteps, available));
        filledAtLevel += fill;
        queued.queueAheadSteps = Math.max(0, queued.queueAheadSteps - arriving);
        index++;
      }
      if (filledAtLevel > 0) limitTicks = priceTicks;
      total += filledAtLevel;
      left -= filledAtLevel;
      break;
    }
    return total > 0 ? { steps: total, limitTicks } : null;
  }
}
