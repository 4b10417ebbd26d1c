/**
 * The `StrategyEnvironment` the kernel hands the strategy host: market data straight from the
 * `MarketDataVenue`, account data from the order tracker, each account stream replaying the
 * current state to a new subscriber before live updates (as `StrategyEnvironment` promises).
 */
import {
  concat,
  defer,
  EMPTY,
  from,
  map,
  type Observable,
  of,
  Subject,
  type Subscription,
} from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import { parseDecimal, ZERO } from '../../core/decimal.ts';
import type { Account, Fill, Position } from '../../protocol/index.ts';
import type { OrderTracker } from '../execution/tracker.ts';
import type { MarketDataVenue } from '../streams/market-data.ts';
import type { Logger, StrategyEnvironment } from '../strategy/types.ts';

function samePosition(left: Position, right: Position): boolean {
  return (
    left.quantity === right.quantity &&
    left.side === right.side &&
    left.entry_price === right.entry_price &&
    left.margin_mode === right.margin_mode &&
    left.leverage === right.leverage &&
    left.mark_price === right.mark_price &&
    left.unrealized_pnl === right.unrealized_pnl &&
    left.liquidation_price === right.liquidation_price
  );
}

function isFlat(position: Position): boolean {
  return parseDecimal(position.quantity).eq(ZERO);
}

/**
 * Positions one at a time from the tracker's position lists: a position that is new or changed
 * is emitted, one that is gone (or flat) is emitted once more with quantity `0`.
 */
export class PositionFeed {
  private readonly held = new Map<string, Position>();
  private readonly updates = new Subject<Position>();
  private readonly subscription: Subscription;

  /** Open positions first, then every change. */
  readonly positions$: Observable<Position> = defer(() =>
    concat(from([...this.held.values()]), this.updates),
  );

  constructor(lists$: Observable<readonly Position[]>, initial: readonly Position[]) {
    this.apply(initial);
    this.subscription = lists$.subscribe((list) => this.apply(list));
  }

  open(): readonly Position[] {
    return [...this.held.values()];
  }

  dispose(): void {
    this.subscription.unsubscribe();
    this.updates.complete();
  }

  private apply(list: readonly Position[]): void {
    const seen = new Set<string>();
    const changed: Position[] = [];
    for (const position of list) {
      if (isFlat(position)) continue;
      seen.add(position.position_id);
      const previous = this.held.get(position.position_id);
      if (previous !== undefined && samePosition(previous, position)) continue;
      this.held.set(position.position_id, position);
      changed.push(position);
    }
    for (const [positionId, previous] of this.held) {
      if (seen.has(positionId)) continue;
      this.held.delete(positionId);
      changed.push(Object.freeze({ ...previous, quantity: '0' }));
    }
    for (const position of changed) this.updates.next(position);
  }
}

export interface KernelEnvironmentParts {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly marketData: MarketDataVenue;
  readonly tracker: OrderTracker;
  readonly positions: PositionFeed;
  /**
   * Fills applied before the strategies started (made while the bot was down, applied at
   * start): each strategy's `fills$` hands them on first, once, then the live ones.
   */
  readonly startupFills?: () => readonly Fill[];
}

export function createKernelEnvironment(parts: KernelEnvironmentParts): StrategyEnvironment {
  const { marketData, tracker } = parts;
  const candleHistory = marketData.candleHistory?.bind(marketData);
  const account$: Observable<Account> = defer(() => {
    const latest = tracker.account();
    return concat(latest === null ? EMPTY : of(latest), tracker.account$);
  });
  return Object.freeze({
    clock: parts.clock,
    logger: parts.logger,
    markets: () => marketData.markets(),
    ticker$: (marketId: string) => marketData.ticker$(marketId),
    book$: (marketId: string) => marketData.book$(marketId),
    trades$: (marketId: string) => marketData.trades$(marketId),
    ...(candleHistory === undefined ? {} : { candleHistory }),
    orders$: defer(() =>
      concat(
        from(tracker.openOrders().map((tracked) => tracked.order)),
        tracker.orders$.pipe(map((tracked) => tracked.order)),
      ),
    ),
    fills$: defer(() => concat(from(parts.startupFills?.() ?? []), tracker.fills$)),
    positions$: parts.positions.positions$,
    account$,
  });
}
