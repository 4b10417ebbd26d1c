/**
 * The funding a recording carries. The interface's ticker has none; the market resource
 * (GET /v1/markets/{id}) shows `funding_rate` and `next_funding_time`. A funding time is settled
 * at the rate the market shows for it until it passes, which a read after it no longer shows,
 * so each market is read:
 *
 * - once at the start (learns the next funding time);
 * - `leadMs` before each known funding time: the rate that time settles at, which the recorded
 *   tickers carry from then on as `funding_rate` and `funding_time` (`RecordedTickerData`);
 * - after a funding time passed while the following one is not known yet (on the first ticker
 *   at or after it). Once two funding times were seen the interval is known: the next time is
 *   predicted and the read before it confirms it, so this read is needed once.
 *
 * So one read per market per funding interval, plus the start (and one in the first interval).
 * A read that shows no funding time to come (none published yet, or not rolled over) is
 * repeated after `retryMs`, not on every ticker. Failed reads go to `onError`; the recording goes
 * on, its tickers carrying the funding last read.
 */
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { type Market, parseTimestamp } from '../../protocol/index.ts';

/** What a recorded ticker carries of its market's funding. */
export interface RecordedFunding {
  readonly funding_rate: string;
  readonly funding_time: string;
}

export interface FundingReadsOptions {
  readonly marketIds: readonly string[];
  readonly readMarket: (marketId: string) => Promise<Market>;
  readonly clock: Clock;
  /** How long before a funding time its rate is read. */
  readonly leadMs: number;
  /** The wait before reading again a market that showed no funding time to come. */
  readonly retryMs: number;
  /** Registers a read under way (the recorder waits for it on stop). */
  readonly track: (work: Promise<void>) => void;
  readonly onError?: (error: unknown, context: string) => void;
}

interface MarketFunding {
  readonly marketId: string;
  /** The funding time known to come next; null before the first read or after a stale one. */
  next: number | null;
  /** The time between the last two funding times seen; null until two were. */
  interval: number | null;
  /** The rate read shortly before a funding time, and that time: what tickers carry. */
  recorded: RecordedFunding | null;
  inFlight: boolean;
  timer: TimerHandle | null;
}

export class FundingReads {
  private readonly markets = new Map<string, MarketFunding>();
  private running = false;

  constructor(private readonly options: FundingReadsOptions) {
    for (const marketId of options.marketIds) {
      this.markets.set(marketId, {
        marketId,
        next: null,
        interval: null,
        recorded: null,
        inFlight: false,
        timer: null,
      });
    }
  }

  /** The start read of every market. */
  start(): void {
    this.running = true;
    for (const market of this.markets.values()) this.read(market);
  }

  stop(): void {
    this.running = false;
    for (const market of this.markets.values()) this.clearTimer(market);
  }

  /**
   * A ticker of the market arrived: the funding it is recorded with (null before any funding
   * time was read); a passed funding time whose successor is not known is read again now.
   */
  onTicker(marketId: string): RecordedFunding | null {
    const market = this.markets.get(marketId);
    if (market === undefined) return null;
    if (
      market.next !== null &&
      this.options.clock.now() >= market.next &&
      market.timer === null &&
      !market.inFlight
    ) {
      this.read(market);
    }
    return market.recorded;
  }

  private read(market: MarketFunding): void {
    if (!this.running || market.inFlight) return;
    market.inFlight = true;
    this.clearTimer(market);
    this.options.track(
      this.options
        .readMarket(market.marketId)
        .then(
          (read) => this.onRead(market, read),
          (error: unknown) => {
            this.options.onError?.(error, `market ${market.marketId} (funding)`);
            this.retry(market);
          },
        )
        .finally(() => {
          market.inFlight = false;
        }),
    );
  }

  private onRead(market: MarketFunding, read: Market): void {
    if (!this.running) return;
    const { clock, leadMs } = this.options;
    const now = clock.now();
    const timeText = read.next_funding_time;
    const time = timeText === null ? null : parseTimestamp(timeText);
    if (time === null || timeText === null || read.funding_rate === null || time <= now) {
      this.retry(market);
      return;
    }
    if (market.next !== null && time > market.next) market.interval = time - market.next;
    market.next = time;
    // Close enough to the time that no later rate will stand for it.
    if (now >= time - leadMs)
      market.recorded = { funding_rate: read.funding_rate, funding_time: timeText };
    if (now < time - leadMs) this.schedule(market, time - leadMs);
    else if (market.interval !== null) this.schedule(market, time + market.interval - leadMs);
    // Otherwise the first ticker at or after `time` reads the next one (`onTicker`).
  }

  private retry(market: MarketFunding): void {
    market.next = null;
    this.schedule(market, this.options.clock.now() + this.options.retryMs);
  }

  private schedule(market: MarketFunding, at: number): void {
    if (!this.running) return;
    this.clearTimer(market);
    const clock = this.options.clock;
    market.timer = clock.setTimeout(
      () => {
        market.timer = null;
        this.read(market);
      },
      Math.max(0, at - clock.now()),
    );
  }

  private clearTimer(market: MarketFunding): void {
    if (market.timer === null) return;
    this.options.clock.clearTimeout(market.timer);
    market.timer = null;
  }
}
