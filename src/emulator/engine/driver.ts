/**
 * What moves a market from outside the exchange: reference prices, funding, synthetic quotes
 * and synthetic taker flow. The synthetic market simulation (../market/) drives the exchange
 * through this interface, and a replay venue can drive the same exchange from recorded data.
 * Prices are integer ticks and quantities integer steps of the market's grids.
 */
import type { MarketConfig } from '../config.ts';
import type { UnitGrid } from './fixed.ts';
import type { BookSide } from './order-book.ts';

export interface DriverMarket {
  readonly marketId: string;
  readonly config: MarketConfig;
  readonly tick: UnitGrid;
  readonly step: UnitGrid;
}

export interface QuoteLevel {
  readonly priceTicks: number;
  readonly steps: number;
}

export interface VenueDriver {
  driverMarkets(): readonly DriverMarket[];
  /** Runs `work` as one unit: its changes are stored and its events sent together. */
  batch(work: () => void): void;
  /** Sets the index and mark price; positions are checked for liquidation at the new mark. */
  setReferencePrices(marketId: string, indexTicks: number, markTicks: number): void;
  setFunding(marketId: string, rate: string, nextFundingTime: number): void;
  /**
   * Replaces every resting order of `quoterId` in the market by these levels. New quotes go
   * through matching first, so a quote that crosses a user's resting order trades with it.
   */
  replaceQuotes(
    marketId: string,
    quoterId: string,
    bids: readonly QuoteLevel[],
    asks: readonly QuoteLevel[],
  ): void;
  /** A synthetic immediate-or-cancel order; returns the steps it filled. */
  submitSyntheticOrder(marketId: string, side: BookSide, steps: number, limitTicks: number): number;
  bestBid(marketId: string): number | null;
  bestAsk(marketId: string): number | null;
  markTicks(marketId: string): number;
  isFeedPaused(marketId: string): boolean;
}
