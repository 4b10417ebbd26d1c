/**
 * Liquidation: after a market's mark price moves, isolated positions below maintenance and cross
 * accounts below maintenance are closed at the mark price against the emulator's insurance fund
 * (not through the book), their orders in those markets cancelled first.
 */
import type { Accounting } from './accounting.ts';
import type { EngineContext } from './context.ts';
import { FillEntry } from './events.ts';
import { maxBigint } from './fixed.ts';
import { isBelowMaintenance } from './margin.ts';
import type { OrderLifecycle } from './order-lifecycle.ts';
import type { AccountState, MarketRuntime, PositionState } from './state.ts';

export class Liquidation {
  constructor(
    private readonly context: EngineContext,
    private readonly accounting: Accounting,
    private readonly lifecycle: OrderLifecycle,
  ) {}

  /** Liquidates what the mark price of `market` put below maintenance. */
  check(market: MarketRuntime): void {
    if (market.positions.size === 0 || !this.mayLiquidate(market)) return;
    const accounting = this.accounting;
    const crossAccounts = new Set<AccountState>();
    for (const position of [...market.positions]) {
      if (!position.account.active) continue;
      if (position.marginMode === 'isolated') {
        const figures = accounting.positionFigures(position);
        if (isBelowMaintenance(position.margin, figures.pnl, figures.maintenance)) {
          this.liquidate([position]);
        }
      } else {
        crossAccounts.add(position.account);
      }
    }
    for (const account of crossAccounts) {
      const cross = accounting.crossState(account);
      if (isBelowMaintenance(cross.collateral, cross.pnl, cross.maintenance)) {
        this.liquidate(
          [...account.positions.values()].filter((position) => position.marginMode === 'cross'),
        );
      }
    }
  }

  /**
   * False when no position of the market can be liquidated now: every isolated one is above
   * maintenance and none is cross (a cross account is left to the full check). A replay checks
   * at every recorded mark of a market it holds, and almost never liquidates: this pass reads
   * the same figures without the copies and sets of the full check.
   */
  private mayLiquidate(market: MarketRuntime): boolean {
    for (const position of market.positions) {
      if (!position.account.active) continue;
      if (position.marginMode !== 'isolated') return true;
      const figures = this.accounting.positionFigures(position);
      if (isBelowMaintenance(position.margin, figures.pnl, figures.maintenance)) return true;
    }
    return false;
  }

  /**
   * Closes positions at their mark price. An isolated position loses at most its margin; a cross
   * liquidation at most the cross collateral. The account's active orders in those markets are
   * cancelled first.
   */
  private liquidate(positions: readonly PositionState[]): void {
    const first = positions[0];
    if (first === undefined) return;
    const context = this.context;
    const accounting = this.accounting;
    const account = first.account;
    const markets = new Set(positions.map((position) => position.market));
    for (const order of [...account.activeOrders]) {
      if (markets.has(order.market)) {
        this.lifecycle.cancelActive(order, {
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
    const now = context.clock.now();
    for (const position of positions) {
      const market = position.market;
      const figures = accounting.positionFigures(position);
      const realized =
        position.marginMode === 'isolated' ? maxBigint(figures.pnl, -position.margin) : figures.pnl;
      const price = market.tick.format(market.markTicks);
      const quantity = market.step.format(position.steps);
      context.emitRisk(account, 'liquidation', {
        position_id: position.id,
        market_id: market.id,
        price,
        quantity,
      });
      const fill = new FillEntry(
        context.codec,
        context.nextIdentifier++,
        account.id,
        market,
        position.direction === 1 ? 'sell' : 'buy',
        position.steps,
        market.markTicks,
        null,
        false,
        context.format.instant(now),
      );
      context.pendingFills.push(fill);
      context.emitFill(account, fill);
      account.wallet += realized;
      accounting.touch(account, market);
      accounting.closePosition(position);
    }
    // Losses beyond the collateral are absorbed by the insurance fund.
    if (first.marginMode === 'cross' && account.wallet < isolatedMargin) {
      account.wallet = isolatedMargin;
    }
    if (account.wallet < 0n) account.wallet = 0n;
    context.markAccount(account);
    accounting.publishTouched();
  }
}
