/**
 * Accounting of executions: the fee and released reservation of a fill, its fill record and
 * event, positions opened, grown, reduced and closed, and the account and position figures
 * (margin, PnL, available, cross collateral) with the position and account snapshots sent at
 * the end of a unit of work. Formulas are `margin.ts` and the per-market shortcuts of
 * `MarketRuntime`; liquidation is `liquidation.ts`.
 */
import { AccountEventEntry, FillEntry, PositionCapture, PositionEventEntry } from './events.ts';
import { type EngineContext, empty } from './context.ts';
import {
  type AccountFigures,
  accountFiguresOfTotals,
  availableOfTotals,
  initialMargin,
  maintenanceMargin,
  proportionalPart,
  unrealizedPnl,
} from './margin.ts';
import { BUY } from './order-book.ts';
import { type AccountState, type MarketRuntime, type OrderState, PositionState } from './state.ts';
import { KIND_POSITION } from './wire.ts';

export interface PositionFigures {
  value: bigint;
  pnl: bigint;
  maintenance: bigint;
}

export interface CrossState {
  collateral: bigint;
  pnl: bigint;
  maintenance: bigint;
}

export class Accounting {
  constructor(private readonly context: EngineContext) {}

  /** Books one execution of a user order: fee, reservation, position, fill record and event. */
  applyFill(order: OrderState, steps: number, priceTicks: number, isMaker: boolean): void {
    const context = this.context;
    const market = order.market;
    const account = order.account;
    const units = market.units(priceTicks, steps);
    const notional = units * market.notionalFactor;
    const fee = market.fee(units, notional, isMaker);
    account.wallet -= fee;
    const release = proportionalPart(order.reserved, steps, order.remainingSteps);
    order.reserved -= release;
    account.reserved -= release;
    order.filledSteps += steps;
    order.filledNotional += notional;
    order.updatedAt = context.instantNow();
    context.markOrder(order);
    this.changePosition(
      account,
      market,
      order.side === BUY ? 1 : -1,
      steps,
      priceTicks,
      notional,
      order.leverage,
      order.marginMode,
    );
    const fill = new FillEntry(
      context.codec,
      context.nextIdentifier++,
      account.id,
      market,
      order.side === BUY ? 'buy' : 'sell',
      steps,
      priceTicks,
      order.id,
      isMaker,
      context.instantNow(),
    );
    context.pendingFills.push(fill);
    order.lastEventSequence = context.emitFill(account, fill);
  }

  /** Applies a trade of `steps` in `direction` to the account's position in `market`. */
  private changePosition(
    account: AccountState,
    market: MarketRuntime,
    direction: 1 | -1,
    steps: number,
    priceTicks: number,
    notional: bigint,
    leverage: number,
    marginMode: 'cross' | 'isolated',
  ): void {
    const now = this.context.clock.now();
    this.touch(account, market);
    const position = account.positions.get(market);
    if (position === undefined) {
      this.openPosition(account, market, direction, steps, notional, leverage, marginMode);
      return;
    }
    position.updatedAt = now;
    if (position.direction === direction) {
      position.steps += steps;
      position.costBasis += notional;
      position.margin += market.initialMarginOf(priceTicks, steps, leverage);
      this.context.markPosition(position);
      return;
    }
    const reduced = Math.min(steps, position.steps);
    const reducedNotional = reduced === steps ? notional : market.notional(priceTicks, reduced);
    const costRemoved = proportionalPart(position.costBasis, reduced, position.steps);
    const marginRemoved = proportionalPart(position.margin, reduced, position.steps);
    account.wallet += unrealizedPnl(position.direction, costRemoved, reducedNotional);
    if (reduced === position.steps) {
      this.closePosition(position);
    } else {
      position.steps -= reduced;
      position.costBasis -= costRemoved;
      position.margin -= marginRemoved;
      this.context.markPosition(position);
    }
    if (steps > reduced) {
      this.openPosition(
        account,
        market,
        direction,
        steps - reduced,
        notional - reducedNotional,
        leverage,
        marginMode,
      );
    }
  }

  private openPosition(
    account: AccountState,
    market: MarketRuntime,
    direction: 1 | -1,
    steps: number,
    notional: bigint,
    leverage: number,
    marginMode: 'cross' | 'isolated',
  ): void {
    const context = this.context;
    const ordinal = context.nextIdentifier++;
    const now = context.clock.now();
    const position = new PositionState(
      context.format.uuid(KIND_POSITION, ordinal),
      ordinal,
      account,
      market,
      direction,
      steps,
      notional,
      initialMargin(notional, leverage),
      marginMode,
      now,
      now,
    );
    account.positions.set(market, position);
    account.positionsById.set(position.id, position);
    market.positions.add(position);
    context.markPosition(position);
  }

  /** Removes a position whose quantity reached zero; its last state is sent once more. */
  closePosition(position: PositionState): void {
    const context = this.context;
    // The closed snapshot shows neither value, PnL nor a liquidation price: no collateral needed.
    context.closedSnapshots.push({
      account: position.account,
      market: position.market,
      capture: this.capturePosition(position, position.margin),
    });
    const account = position.account;
    account.positions.delete(position.market);
    account.positionsById.delete(position.id);
    position.market.positions.delete(position);
    position.steps = 0;
    position.closed = true;
    context.closedPositionIds.push(position.id);
  }

  /** Notes that the account's position in `market` changed: its snapshots are due. */
  touch(account: AccountState, market: MarketRuntime): void {
    const markets = account.touchedMarkets;
    if (markets.length === 0) this.context.touchedAccounts.push(account);
    if (!markets.includes(market)) markets.push(market);
  }

  /** One position event per touched position (closed ones with quantity 0), then the account. */
  publishTouched(): void {
    const context = this.context;
    if (context.touchedAccounts.length === 0) return;
    const closed = context.closedSnapshots;
    context.closedSnapshots = [];
    const accounts = context.touchedAccounts;
    context.touchedAccounts = [];
    for (const account of accounts) {
      for (const market of account.touchedMarkets) {
        for (const snapshot of closed) {
          if (snapshot.account === account && snapshot.market === market) {
            this.emitPosition(account, snapshot.capture, true);
          }
        }
        const position = account.positions.get(market);
        if (position !== undefined) this.emitOpenPosition(account, position);
      }
      empty(account.touchedMarkets);
      account.snapshotVersion += 1;
      const now = context.instantNow();
      // As `figures(account)`, without the object in between.
      let margin = 0n;
      let pnl = 0n;
      let crossPnl = 0n;
      for (const position of account.positions.list) {
        const positionPnl = this.positionPnl(position);
        margin += position.margin;
        pnl += positionPnl;
        if (position.marginMode !== 'isolated') crossPnl += positionPnl;
      }
      context.pushEvent(
        account,
        new AccountEventEntry(
          context.codec,
          account.id,
          ++account.sequence,
          context.nextIdentifier++,
          now,
          account.snapshotVersion,
          now,
          account.wallet + pnl,
          availableOfTotals(account.wallet, account.reserved, margin, crossPnl),
          margin,
          pnl,
        ),
      );
    }
  }

  private emitPosition(account: AccountState, capture: PositionCapture, closed: boolean): void {
    const context = this.context;
    context.pushEvent(
      account,
      new PositionEventEntry(
        context.codec,
        account.id,
        ++account.sequence,
        context.nextIdentifier++,
        context.instantNow(),
        capture.positionId,
        capture.market,
        capture.direction,
        capture.steps,
        capture.costBasis,
        capture.margin,
        capture.marginMode,
        capture.markTicks,
        capture.dataStatus,
        capture.collateral,
        capture.observedAt,
        closed,
      ),
    );
  }

  /** A `position` event of an open position with its figures now (as `capturePosition`). */
  private emitOpenPosition(account: AccountState, position: PositionState): void {
    const context = this.context;
    const market = position.market;
    const now = context.instantNow();
    context.pushEvent(
      account,
      new PositionEventEntry(
        context.codec,
        account.id,
        ++account.sequence,
        context.nextIdentifier++,
        now,
        position.id,
        market,
        position.direction,
        position.steps,
        position.costBasis,
        position.margin,
        position.marginMode,
        market.markTicks,
        market.dataStatus,
        this.positionCollateral(position),
        now,
        false,
      ),
    );
  }

  // ---------------------------------------------------------------- figures

  /** Initial margin of the opening part plus the taker fee on it. */
  marginFor(market: MarketRuntime, priceTicks: number, steps: number, leverage: number): bigint {
    if (steps <= 0) return 0n;
    const units = market.units(priceTicks, steps);
    const notional = units * market.notionalFactor;
    return market.initialMarginOf(priceTicks, steps, leverage) + market.fee(units, notional, false);
  }

  positionFigures(position: PositionState): PositionFigures {
    const market = position.market;
    const value = market.notional(market.markTicks, position.steps);
    return {
      value,
      pnl: unrealizedPnl(position.direction, position.costBasis, value),
      maintenance: maintenanceMargin(value, market.maintenanceRate),
    };
  }

  /** Unrealized PnL of a position at its market's mark price. */
  private positionPnl(position: PositionState): bigint {
    const market = position.market;
    const value = market.notional(market.markTicks, position.steps);
    return unrealizedPnl(position.direction, position.costBasis, value);
  }

  figures(account: AccountState): AccountFigures {
    let margin = 0n;
    let pnl = 0n;
    let crossPnl = 0n;
    for (const position of account.positions.list) {
      const positionPnl = this.positionPnl(position);
      margin += position.margin;
      pnl += positionPnl;
      if (position.marginMode !== 'isolated') crossPnl += positionPnl;
    }
    return accountFiguresOfTotals(account.wallet, account.reserved, margin, pnl, crossPnl);
  }

  /** The account's total equity, as in `figures`: the wallet and every position's PnL. */
  totalEquity(account: AccountState): bigint {
    let pnl = 0n;
    for (const position of account.positions.list) pnl += this.positionPnl(position);
    return account.wallet + pnl;
  }

  /** The account's `available` (only cross positions' PnL enters it). */
  available(account: AccountState): bigint {
    let margin = 0n;
    let crossPnl = 0n;
    for (const position of account.positions.list) {
      margin += position.margin;
      if (position.marginMode !== 'isolated') crossPnl += this.positionPnl(position);
    }
    return availableOfTotals(account.wallet, account.reserved, margin, crossPnl);
  }

  /** Cross collateral: the wallet less isolated margins, plus PnL less maintenance of cross positions. */
  crossState(account: AccountState): CrossState {
    let collateral = account.wallet;
    let pnl = 0n;
    let maintenance = 0n;
    for (const position of account.positions.list) {
      if (position.marginMode === 'isolated') {
        collateral -= position.margin;
      } else {
        const figures = this.positionFigures(position);
        pnl += figures.pnl;
        maintenance += figures.maintenance;
      }
    }
    return { collateral, pnl, maintenance };
  }

  /**
   * The position's figures now. `collateral` null: computed (its margin when isolated, the cross
   * collateral net of the other cross positions when cross).
   */
  capturePosition(position: PositionState, collateral: bigint | null): PositionCapture {
    const market = position.market;
    const backing = collateral ?? this.positionCollateral(position);
    return new PositionCapture(
      position.id,
      market,
      position.direction,
      position.steps,
      position.costBasis,
      position.margin,
      position.marginMode,
      market.markTicks,
      market.dataStatus,
      backing,
      this.context.instantNow(),
    );
  }

  /** What backs the position: its margin (isolated), or the cross collateral net of the others. */
  private positionCollateral(position: PositionState): bigint {
    if (position.marginMode !== 'cross') return position.margin;
    const figures = this.positionFigures(position);
    const cross = this.crossState(position.account);
    return cross.collateral + (cross.pnl - figures.pnl) - (cross.maintenance - figures.maintenance);
  }
}
