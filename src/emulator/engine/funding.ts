/**
 * Funding settlement: when a market's published funding time has passed, every open position
 * in it is paid or charged `position value at the mark × funding rate`, a long paying and a
 * short receiving when the rate is positive. Each payment moves the wallet, adds to the
 * position's funding total and is a `funding_payment` event on the account channel, followed
 * by the position and account events.
 */
import type { Accounting } from './accounting.ts';
import type { EngineContext } from './context.ts';
import { divideRounded, formatMoney, MONEY_ONE, MONEY_SCALE, parseScaled } from './fixed.ts';
import type { MarketRuntime } from './state.ts';

export class FundingSettlement {
  constructor(
    private readonly context: EngineContext,
    private readonly accounting: Accounting,
  ) {}

  /**
   * Settles the market's published funding time (`nextFundingTime`) at its published rate, once;
   * the driver calls it before it publishes the next period. Returns whether anything was paid.
   */
  settle(market: MarketRuntime): boolean {
    const fundingTime = market.nextFundingTime;
    if (!market.fundingPublished || market.settledFundingTime >= fundingTime) return false;
    if (this.context.clock.now() < fundingTime) return false;
    market.settledFundingTime = fundingTime;
    const rate = parseScaled(market.fundingRate, MONEY_SCALE);
    if (rate === null || rate === 0n || market.positions.size === 0) return false;
    const context = this.context;
    const fundingTimeText = context.timestamp(fundingTime);
    const markText = market.tick.format(market.markTicks);
    for (const position of [...market.positions]) {
      const account = position.account;
      const value = market.notional(market.markTicks, position.steps);
      // Received by the account: a long (direction 1) pays a positive rate.
      let amount =
        -BigInt(position.direction) * divideRounded(value * rate, MONEY_ONE, 'half-even');
      // The wallet never goes negative; a charge beyond it is absorbed like a liquidation loss.
      if (account.wallet + amount < 0n) amount = -account.wallet;
      account.wallet += amount;
      position.fundingTotal += amount;
      position.updatedAt = context.clock.now();
      context.markPosition(position);
      context.markAccount(account);
      context.emitFunding(account, {
        market_id: market.id,
        position_id: position.id,
        side: position.direction === 1 ? 'long' : 'short',
        quantity: market.step.format(position.steps),
        mark_price: markText,
        position_value: market.formatNotional(market.markTicks, position.steps),
        funding_rate: market.fundingRate,
        funding_time: fundingTimeText,
        amount: formatMoney(amount),
        position_funding_total: formatMoney(position.fundingTotal),
      });
      this.accounting.touch(account, market);
    }
    this.accounting.publishTouched();
    return true;
  }
}
