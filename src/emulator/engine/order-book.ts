/**
 * A limit order book with price-time priority on integer ticks and steps. It knows nothing of
 * accounts, markets or money: each resting order carries an opaque `owner`, and matching reports
 * every execution to a callback. The exchange, the synthetic market and a replay venue all use
 * it the same way.
 *
 * Each side keeps its price levels in an array sorted so that the best level is last (bids
 * ascending, asks descending): the common operations, reading and emptying the best level, are
 * O(1) at the array's end. Each level is a doubly linked FIFO, so cancelling any order is O(1)
 * once its level is found.
 */

export const BUY = 0;
export const SELL = 1;
export type BookSide = typeof BUY | typeof SELL;

export class RestingOrder<Owner> {
  /** Steps still resting; the book lowers it on each fill. */
  remaining: number;
  level: PriceLevel<Owner> | null = null;
  previous: RestingOrder<Owner> | null = null;
  next: RestingOrder<Owner> | null = null;

  constructor(
    readonly side: BookSide,
    readonly priceTicks: number,
    remaining: number,
    readonly owner: Owner,
  ) {
    this.remaining = remaining;
  }

  get resting(): boolean {
    return this.level !== null;
  }
}

export class PriceLevel<Owner> {
  totalSteps = 0;
  orderCount = 0;
  head: RestingOrder<Owner> | null = null;
  tail: RestingOrder<Owner> | null = null;

  constructor(readonly priceTicks: number) {}

  /** The level's orders in time priority. */
  *orders(): IterableIterator<RestingOrder<Owner>> {
    for (let order = this.head; order !== null; order = order.next) yield order;
  }
}

/**
 * Asked before each execution: true stops the match before `maker` trades (it stays resting,
 * untouched). Self-trade prevention uses it.
 */
export type MatchGuard<Owner> = (maker: RestingOrder<Owner>) => boolean;

/** Called once per execution, after the maker's `remaining` has been lowered. */
export type FillListener<Owner> = (
  maker: RestingOrder<Owner>,
  steps: number,
  priceTicks: number,
) => void;

export interface LevelView {
  readonly priceTicks: number;
  readonly steps: number;
  readonly orderCount: number;
}

export class OrderBook<Owner> {
  /** Ascending: the best (highest) bid is last. */
  private readonly bidLevels: PriceLevel<Owner>[] = [];
  /** Descending: the best (lowest) ask is last. */
  private readonly askLevels: PriceLevel<Owner>[] = [];
  private readonly bidByPrice = new Map<number, PriceLevel<Owner>>();
  private readonly askByPrice = new Map<number, PriceLevel<Owner>>();
  private restingCount = 0;

  get size(): number {
    return this.restingCount;
  }

  bestBid(): number | null {
    const levels = this.bidLevels;
    return levels.length === 0 ? null : levels[levels.length - 1]!.priceTicks;
  }

  bestAsk(): number | null {
    const levels = this.askLevels;
    return levels.length === 0 ? null : levels[levels.length - 1]!.priceTicks;
  }

  /** Best price on `side`, or null when that side is empty. */
  best(side: BookSide): number | null {
    return side === BUY ? this.bestBid() : this.bestAsk();
  }

  /** Whether an order on `side` at `priceTicks` would execute against the opposite side now. */
  wouldCross(side: BookSide, priceTicks: number): boolean {
    if (side === BUY) {
      const ask = this.bestAsk();
      return ask !== null && priceTicks >= ask;
    }
    const bid = this.bestBid();
    return bid !== null && priceTicks <= bid;
  }

  /** Puts `order` at the back of its price level. */
  add(order: RestingOrder<Owner>): void {
    if (order.level !== null) throw new Error('order is already resting');
    if (order.remaining <= 0) throw new RangeError('a resting order needs a positive quantity');
    const level = this.levelFor(order.side, order.priceTicks);
    order.level = level;
    order.previous = level.tail;
    order.next = null;
    if (level.tail === null) level.head = order;
    else level.tail.next = order;
    level.tail = order;
    level.totalSteps += order.remaining;
    level.orderCount += 1;
    this.restingCount += 1;
  }

  /** Takes `order` out of the book; false when it was not resting. */
  remove(order: RestingOrder<Owner>): boolean {
    const level = order.level;
    if (level === null) return false;
    level.totalSteps -= order.remaining;
    this.unlink(level, order);
    return true;
  }

  /** Lowers a resting order's quantity in place, keeping its time priority. */
  reduce(order: RestingOrder<Owner>, steps: number): void {
    const level = order.level;
    if (level === null) throw new Error('order is not resting');
    if (steps <= 0 || steps > order.remaining) throw new RangeError(`cannot reduce by ${steps}`);
    order.remaining -= steps;
    level.totalSteps -= steps;
    if (order.remaining === 0) this.unlink(level, order);
  }

  /**
   * Executes an incoming order of `steps` on `side` against the opposite side at prices no worse
   * than `limitTicks` (use `Number.POSITIVE_INFINITY` / `0` for an unbounded buy / sell), in
   * price-time priority, each execution at the maker's price. Returns the steps left unfilled.
   * The listener may add or remove other orders; the loop re-reads the best level each time.
   * A `guard` that answers true for the next maker stops the match there.
   */
  match(
    side: BookSide,
    limitTicks: number,
    steps: number,
    onFill: FillListener<Owner>,
    guard: MatchGuard<Owner> | null = null,
  ): number {
    let left = steps;
    const levels = side === BUY ? this.askLevels : this.bidLevels;
    while (left > 0) {
      const level = levels[levels.length - 1];
      if (level === undefined) break;
      const price = level.priceTicks;
      if (side === BUY ? price > limitTicks : price < limitTicks) break;
      const maker = level.head!;
      if (guard !== null && guard(maker)) break;
      const fill = Math.min(maker.remaining, left);
      maker.remaining -= fill;
      level.totalSteps -= fill;
      left -= fill;
      if (maker.remaining === 0) this.unlink(level, maker);
      onFill(maker, fill, price);
    }
    return left;
  }

  /** Steps available to an order on `side` up to `limitTicks`, without executing anything. */
  availableTo(side: BookSide, limitTicks: number, cap = Number.POSITIVE_INFINITY): number {
    const levels = side === BUY ? this.askLevels : this.bidLevels;
    let total = 0;
    for (let index = levels.length - 1; index >= 0 && total < cap; index--) {
      const level = levels[index]!;
      if (side === BUY ? level.priceTicks > limitTicks : level.priceTicks < limitTicks) break;
      total += level.totalSteps;
    }
    return Math.min(total, cap);
  }

  /**
   * The average execution price (in ticks, as a fraction) an order of `steps` on `side` would get
   * up to `limitTicks`, and how many steps it would fill; nothing executes.
   */
  sweep(side: BookSide, limitTicks: number, steps: number): { steps: number; tickSteps: number } {
    const levels = side === BUY ? this.askLevels : this.bidLevels;
    let filled = 0;
    let tickSteps = 0;
    for (let index = levels.length - 1; index >= 0 && filled < steps; index--) {
      const level = levels[index]!;
      if (side === BUY ? level.priceTicks > limitTicks : level.priceTicks < limitTicks) break;
      const take = Math.min(level.totalSteps, steps - filled);
      filled += take;
      tickSteps += take * level.priceTicks;
    }
    return { steps: filled, tickSteps };
  }

  /** Up to `depth` levels of `side`, best first. */
  depth(side: BookSide, depth: number): LevelView[] {
    const levels = side === BUY ? this.bidLevels : this.askLevels;
    const views: LevelView[] = [];
    for (let index = levels.length - 1; index >= 0 && views.length < depth; index--) {
      const level = levels[index]!;
      views.push({
        priceTicks: level.priceTicks,
        steps: level.totalSteps,
        orderCount: level.orderCount,
      });
    }
    return views;
  }

  /** The level at `priceTicks` on `side` (for queue-position models), or undefined. */
  levelAt(side: BookSide, priceTicks: number): PriceLevel<Owner> | undefined {
    return (side === BUY ? this.bidByPrice : this.askByPrice).get(priceTicks);
  }

  /** Every resting order of `side`, best level first, each level in time priority. */
  *orders(side: BookSide): IterableIterator<RestingOrder<Owner>> {
    const levels = side === BUY ? this.bidLevels : this.askLevels;
    for (let index = levels.length - 1; index >= 0; index--) yield* levels[index]!.orders();
  }

  private levelFor(side: BookSide, priceTicks: number): PriceLevel<Owner> {
    const byPrice = side === BUY ? this.bidByPrice : this.askByPrice;
    const existing = byPrice.get(priceTicks);
    if (existing !== undefined) return existing;
    const level = new PriceLevel<Owner>(priceTicks);
    byPrice.set(priceTicks, level);
    const levels = side === BUY ? this.bidLevels : this.askLevels;
    const low = insertionIndex(levels, side, priceTicks);
    if (low === levels.length) levels.push(level);
    else levels.splice(low, 0, level);
    return level;
  }

  private unlink(level: PriceLevel<Owner>, order: RestingOrder<Owner>): void {
    if (order.previous === null) level.head = order.next;
    else order.previous.next = order.next;
    if (order.next === null) level.tail = order.previous;
    else order.next.previous = order.previous;
    order.previous = null;
    order.next = null;
    order.level = null;
    level.orderCount -= 1;
    this.restingCount -= 1;
    if (level.orderCount === 0) this.dropLevel(order.side, level);
  }

  private dropLevel(side: BookSide, level: PriceLevel<Owner>): void {
    const levels = side === BUY ? this.bidLevels : this.askLevels;
    (side === BUY ? this.bidByPrice : this.askByPrice).delete(level.priceTicks);
    const last = levels.length - 1;
    if (levels[last] === level) {
      levels.pop();
      return;
    }
    // Prices are unique on a side: the level's place is where its price would go.
    const index = insertionIndex(levels, side, level.priceTicks);
    if (levels[index] === level) levels.splice(index, 1);
  }
}

/**
 * The first index of `levels` whose price is not better than `priceTicks` for `side` (bids
 * ascend and asks descend towards the array's end): where a level at that price is or goes.
 */
function insertionIndex<Owner>(
  levels: readonly PriceLevel<Owner>[],
  side: BookSide,
  priceTicks: number,
): number {
  let low = 0;
  let high = levels.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const price = levels[middle]!.priceTicks;
    if (side === BUY ? priceTicks > price : priceTicks < price) low = middle + 1;
    else high = middle;
  }
  return low;
}
