/**
 * The emulator's seeded past: one-minute candles and public trades for the hours before the
 * exchange opened, so candle warm-up, `record` and `download` have history on a first start.
 *
 * Nothing is simulated at start-up. The past is a pure function of (seed, market, minute): a
 * backward random walk of minute closes ending at the market's initial price (drawn once per
 * market, on its first read) and, inside each minute, a few synthetic trades from that minute's
 * own generator. One-minute bars are cached as they are read (at most `length` per market);
 * trades are made again per read (the trades endpoint serves at most 500, a few minutes' worth).
 * The past never touches the live engine: its state, sequence numbers and random streams.
 */
import { Random } from '../random.ts';
import { type CandleBar, type CandleIntervalName, candleOpenTime } from './candles.ts';
import type { MarketRuntime, TradeEntry } from './state.ts';

const MINUTE_MS = 60_000;
/** Synthetic trades in one past minute, at most (bounds one minute's work). */
const MAX_TRADES_PER_MINUTE = 60;

export interface PastTrade extends TradeEntry {
  /** Index of the minute (0 = the oldest past minute) and of the trade in it. */
  readonly minute: number;
  readonly index: number;
}

/** One market's past: `minutes` one-minute buckets ending where the live data begins. */
class MarketPast {
  private closes: Float64Array | null = null;
  private readonly bars: (CandleBar | undefined)[];
  private readonly sigma: number;
  private readonly tradesPerMinute: number;
  private readonly minSteps: number;
  private readonly maxSteps: number;

  constructor(
    private readonly seed: string,
    private readonly market: MarketRuntime,
    readonly firstMinuteMs: number,
    readonly minutes: number,
    stepMs: number,
  ) {
    const simulation = market.config.simulation;
    const takers = simulation.takers;
    this.sigma = simulation.daily_volatility / Math.sqrt(1440);
    this.tradesPerMinute = takers
      ? Math.min(MAX_TRADES_PER_MINUTE, takers.probability_per_step * (MINUTE_MS / stepMs))
      : 0;
    this.minSteps = takers
      ? Math.max(1, market.step.roundedUnitsOf(takers.minimum_quantity, 'up') ?? 1)
      : 1;
    this.maxSteps = takers
      ? Math.max(this.minSteps, market.step.roundedUnitsOf(takers.maximum_quantity, 'down') ?? 1)
      : 1;
    this.bars = new Array<CandleBar | undefined>(minutes);
  }

  /** Log closes of every past minute; the last one is the market's initial price. */
  private logCloses(): Float64Array {
    if (this.closes !== null) return this.closes;
    const closes = new Float64Array(this.minutes);
    const random = new Random(`${this.seed}/past/${this.market.id}`);
    let price = Math.log(Number(this.market.config.simulation.initial_price));
    for (let minute = this.minutes - 1; minute >= 0; minute--) {
      closes[minute] = price;
      price -= this.sigma * random.normal();
    }
    this.closes = closes;
    return closes;
  }

  /** The trades of one past minute, oldest first; none when nobody trades on the market. */
  tradesOf(minute: number): PastTrade[] {
    if (this.tradesPerMinute <= 0) return [];
    const closes = this.logCloses();
    const close = closes[minute]!;
    const open = minute > 0 ? closes[minute - 1]! : close;
    const random = new Random(`${this.seed}/past/${this.market.id}/${minute}`);
    const count = 1 + random.nextInt(Math.max(1, Math.round(2 * this.tradesPerMinute)));
    const start = this.firstMinuteMs + minute * MINUTE_MS;
    const unit = Number(this.market.config.price_tick);
    const trades: PastTrade[] = [];
    for (let index = 0; index < count; index++) {
      const fraction = (index + 1) / count;
      // A bridge from the previous close to this one: noisy inside, exact at the end.
      const noise = index === count - 1 ? 0 : 0.5 * this.sigma * random.normal();
      const logPrice =
        open + (close - open) * fraction + noise * Math.sqrt(fraction * (1 - fraction));
      trades.push({
        minute,
        index,
        ordinal: minute * MAX_TRADES_PER_MINUTE * 4 + index,
        priceTicks: Math.max(1, Math.round(Math.exp(logPrice) / unit)),
        steps: random.integerBetween(this.minSteps, this.maxSteps),
        side: random.chance(0.5) ? 'buy' : 'sell',
        at: start + Math.floor(((index + 1) * MINUTE_MS) / (count + 1)),
      });
    }
    return trades;
  }

  /** The one-minute bar of a past minute (cached), or null when it has no trades. */
  barOf(minute: number): CandleBar | null {
    const cached = this.bars[minute];
    if (cached !== undefined) return cached;
    const trades = this.tradesOf(minute);
    if (trades.length === 0) return null;
    const bar: CandleBar = {
      openTime: this.firstMinuteMs + minute * MINUTE_MS,
      open: trades[0]!.priceTicks,
      high: Math.max(...trades.map((trade) => trade.priceTicks)),
      low: Math.min(...trades.map((trade) => trade.priceTicks)),
      close: trades[trades.length - 1]!.priceTicks,
      volumeSteps: trades.reduce((sum, trade) => sum + trade.steps, 0),
    };
    this.bars[minute] = bar;
    return bar;
  }
}

export interface SeededPastOptions {
  readonly seed: string;
  /** When the exchange opened: the past ends at the start of this minute. */
  readonly openedAt: number;
  /** Length of the past in minutes (0: none). */
  readonly minutes: number;
  /** The simulation step, which sets how many synthetic trades a minute has. */
  readonly stepMs: number;
}

export class SeededPast {
  private readonly markets = new Map<string, MarketPast>();

  constructor(private readonly options: SeededPastOptions) {}

  private pastOf(market: MarketRuntime): MarketPast | null {
    if (this.options.minutes <= 0 || market.config.simulation.takers === null) return null;
    let past = this.markets.get(market.id);
    if (past === undefined) {
      const end = candleOpenTime('1m', this.options.openedAt);
      // Never before the Unix epoch (a virtual clock may start near zero).
      const minutes = Math.min(this.options.minutes, Math.floor(end / MINUTE_MS));
      past = new MarketPast(
        this.options.seed,
        market,
        end - minutes * MINUTE_MS,
        minutes,
        this.options.stepMs,
      );
      this.markets.set(market.id, past);
    }
    return past;
  }

  /** Up to `limit` past trades older than `before` (epoch ms), newest first. */
  trades(market: MarketRuntime, limit: number, before: number): PastTrade[] {
    const past = this.pastOf(market);
    const out: PastTrade[] = [];
    if (past === null) return out;
    for (let minute = past.minutes - 1; minute >= 0 && out.length < limit; minute--) {
      if (past.firstMinuteMs + minute * MINUTE_MS >= before) continue;
      const trades = past.tradesOf(minute);
      for (let index = trades.length - 1; index >= 0 && out.length < limit; index--) {
        if (trades[index]!.at < before) out.push(trades[index]!);
      }
    }
    return out;
  }

  /**
   * Up to `limit` past candles of `interval` opening at or before `before`, oldest first. The
   * newest may be a partial bucket that the live candles go on (the caller merges it).
   */
  candles(
    market: MarketRuntime,
    interval: CandleIntervalName,
    limit: number,
    before: number,
  ): CandleBar[] {
    const past = this.pastOf(market);
    const out: CandleBar[] = [];
    if (past === null) return out;
    for (let minute = past.minutes - 1; minute >= 0; minute--) {
      const openTime = past.firstMinuteMs + minute * MINUTE_MS;
      if (openTime >= before) continue;
      const bar = past.barOf(minute);
      if (bar === null) continue;
      const bucket = candleOpenTime(interval, openTime);
      const newest = out[out.length - 1];
      if (newest !== undefined && newest.openTime === bucket) {
        // Walking backwards: this minute comes before what the bucket holds.
        newest.open = bar.open;
        newest.high = Math.max(newest.high, bar.high);
        newest.low = Math.min(newest.low, bar.low);
        newest.volumeSteps += bar.volumeSteps;
        continue;
      }
      if (out.length === limit) break;
      out.push({ ...bar, openTime: bucket });
    }
    return out.reverse();
  }
}
