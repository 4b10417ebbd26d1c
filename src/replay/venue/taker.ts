/**
 * The taker model's arithmetic (docs/backtesting.md, "Fills without a book"), pure: the price a
 * held order fills at on a recorded trade, and how much of the trade it may take.
 */
import { BUY, type BookSide } from '../../emulator/index.ts';
import type { TakerModelConfig } from './config.ts';

const HUNDREDTHS_PER_UNIT = 1_000_000n; // hundredths of a basis point in 1

function hundredthsOfBps(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(whole === '' ? '0' : whole) * 100n + BigInt((fraction + '00').slice(0, 2));
}

function millionths(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  return (
    BigInt(whole === '' ? '0' : whole) * 1_000_000n + BigInt((fraction + '000000').slice(0, 6))
  );
}

export class TakerPricing {
  private readonly offset: bigint;
  private readonly share: bigint;

  constructor(config: TakerModelConfig) {
    this.offset = hundredthsOfBps(config.half_spread_bps) + hundredthsOfBps(config.slippage_bps);
    this.share = millionths(config.max_volume_share);
  }

  /**
   * A buy's price: the trade's plus half-spread and slippage, rounded up to the tick; a sell's:
   * minus, rounded down (never under one tick). Rounding never favours the account.
   */
  priceTicks(side: BookSide, tradeTicks: number): number {
    const trade = BigInt(tradeTicks);
    if (side === BUY) {
      const scaled = trade * (HUNDREDTHS_PER_UNIT + this.offset);
      return Number((scaled + HUNDREDTHS_PER_UNIT - 1n) / HUNDREDTHS_PER_UNIT);
    }
    const scaled = trade * (HUNDREDTHS_PER_UNIT - this.offset);
    return Math.max(1, Number(scaled / HUNDREDTHS_PER_UNIT));
  }

  /** The steps of a trade the account's orders may take together (rounded down). */
  capSteps(tradeSteps: number): number {
    return Number((BigInt(tradeSteps) * this.share) / 1_000_000n);
  }
}
