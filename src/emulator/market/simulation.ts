/**
 * The synthetic market: a seeded, deterministic process that moves each market's index and mark
 * price, keeps a funding rate, quotes a book through a synthetic market maker and sends synthetic
 * taker flow so that trades and candles exist. It drives the exchange only through VenueDriver,
 * so a replay can put recorded prices and books in its place.
 *
 * Price process, per step of `step_ms` (dt in days):
 *   x ← x − θ·x·dt + σ·√dt·N(0,1)        x = ln(index / initial_price), θ mean reversion, σ daily vol
 *   index = initial_price · e^x, rounded to the tick grid (floats only drive the random walk;
 *   every published price is an integer number of ticks)
 *   basis ← φ·basis + √(1 − φ²)·β·N(0,1)  in basis points, β = basis_volatility_bps, φ = 0.8^(step_ms / 1 s)
 *   (an Ornstein-Uhlenbeck process sampled exactly: β is the basis's standard deviation and its
 *   memory is the same per second whatever the step, so a finer step does not make the mark
 *   noisier; at 1 s steps, φ = 0.8 and √(1 − φ²) = 0.6)
 *   mark = index · (1 + basis / 10 000), rounded to the tick grid
 *   funding_rate = clamp((mark − index) / index, ±funding_rate_cap), 8 decimals
 */
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { EmulatorConfig } from '../config.ts';
import type { DriverMarket, QuoteLevel, VenueDriver } from '../engine/driver.ts';
import { formatScaled } from '../engine/fixed.ts';
import { BUY, SELL } from '../engine/order-book.ts';
import type { Random } from '../random.ts';

const DAY_MS = 86_400_000;
export const SYNTHETIC_MAKER = 'synthetic-maker';

interface MarketProcess {
  readonly market: DriverMarket;
  readonly random: Random;
  readonly initialPrice: number;
  logOffset: number;
  basisBps: number;
  readonly levelSteps: number;
  readonly takerMinimumSteps: number;
  readonly takerMaximumSteps: number;
}

export class MarketSimulation {
  private readonly processes: MarketProcess[];
  private timer: TimerHandle | null = null;
  private readonly fundingCapScaled: number;
  /** φ and √(1 − φ²) of the basis process for this step (0.64^s is φ², exact at s = 1). */
  private readonly basisPersistence: number;
  private readonly basisInnovation: number;

  constructor(
    private readonly driver: VenueDriver,
    private readonly config: EmulatorConfig,
    private readonly clock: Clock,
    random: Random,
  ) {
    this.fundingCapScaled = Math.round(Number(config.simulation.funding_rate_cap) * 1e8);
    const stepSeconds = config.simulation.step_ms / 1000;
    this.basisPersistence = 0.8 ** stepSeconds;
    this.basisInnovation = Math.sqrt(1 - 0.64 ** stepSeconds);
    this.processes = driver.driverMarkets().map((market) => {
      const simulation = market.config.simulation;
      const takers = simulation.takers;
      return {
        market,
        random: random.fork(`market/${market.marketId}`),
        initialPrice: Number(simulation.initial_price),
        logOffset: 0,
        basisBps: 0,
        levelSteps: Math.max(
          1,
          market.step.roundedUnitsOf(simulation.makers.level_quantity, 'down') ?? 1,
        ),
        takerMinimumSteps: takers
          ? Math.max(1, market.step.roundedUnitsOf(takers.minimum_quantity, 'up') ?? 1)
          : 0,
        takerMaximumSteps: takers
          ? Math.max(1, market.step.roundedUnitsOf(takers.maximum_quantity, 'down') ?? 1)
          : 0,
      };
    });
  }

  /** Publishes funding and the first quotes around the initial prices, without moving them. */
  initialize(): void {
    this.driver.batch(() => {
      for (const process of this.processes) {
        this.publishFunding(process);
        this.quote(process);
      }
    });
  }

  start(): void {
    if (this.timer !== null) return;
    this.timer = this.clock.setInterval(() => this.step(), this.config.simulation.step_ms);
  }

  stop(): void {
    this.clock.clearInterval(this.timer ?? undefined);
    this.timer = null;
  }

  /** One step of every market (also callable directly, e.g. by a test or a replay harness). */
  step(): void {
    this.driver.batch(() => {
      for (const process of this.processes) {
        if (this.driver.isFeedPaused(process.market.marketId)) continue;
        this.movePrices(process);
        this.quote(process);
        this.trade(process);
      }
    });
  }

  private movePrices(process: MarketProcess): void {
    const simulation = process.market.config.simulation;
    const dt = this.config.simulation.step_ms / DAY_MS;
    const random = process.random;
    process.logOffset +=
      -simulation.mean_reversion_per_day * process.logOffset * dt +
      simulation.daily_volatility * Math.sqrt(dt) * random.normal();
    process.basisBps =
      this.basisPersistence * process.basisBps +
      this.basisInnovation * simulation.basis_volatility_bps * random.normal();
    const tick = process.market.tick;
    const tickValue = tick.mantissaNumber / 10 ** tick.decimals;
    const indexTicks = Math.max(
      1,
      Math.round((process.initialPrice * Math.exp(process.logOffset)) / tickValue),
    );
    const markTicks = Math.max(1, Math.round(indexTicks * (1 + process.basisBps / 10_000)));
    this.driver.setReferencePrices(process.market.marketId, indexTicks, markTicks);
    this.publishFunding(process, indexTicks, markTicks);
  }

  private publishFunding(process: MarketProcess, indexTicks?: number, markTicks?: number): void {
    const interval = this.config.simulation.funding_interval_ms;
    const now = this.clock.now();
    const next = (Math.floor(now / interval) + 1) * interval;
    let rateUnits = 0;
    if (indexTicks !== undefined && markTicks !== undefined) {
      const premium = (markTicks - indexTicks) / indexTicks;
      rateUnits = Math.round(premium * 1e8);
      rateUnits = Math.max(-this.fundingCapScaled, Math.min(this.fundingCapScaled, rateUnits));
    }
    this.driver.setFunding(process.market.marketId, formatScaled(rateUnits, 8), next);
  }

  private quote(process: MarketProcess): void {
    const makers = process.market.config.simulation.makers;
    const mark = this.driver.markTicks(process.market.marketId);
    const bids: QuoteLevel[] = [];
    const asks: QuoteLevel[] = [];
    for (let level = 0; level < makers.levels; level++) {
      const offset = makers.spread_ticks + level * makers.level_spacing_ticks;
      const size = (jitter: number) =>
        Math.max(
          1,
          Math.round(process.levelSteps * (1 + makers.depth_growth * level) * (1 + jitter)),
        );
      const bidPrice = mark - offset;
      const bidJitter = makers.quantity_jitter * (2 * process.random.next() - 1);
      const askJitter = makers.quantity_jitter * (2 * process.random.next() - 1);
      if (bidPrice >= 1) bids.push({ priceTicks: bidPrice, steps: size(bidJitter) });
      asks.push({ priceTicks: mark + offset, steps: size(askJitter) });
    }
    this.driver.replaceQuotes(process.market.marketId, SYNTHETIC_MAKER, bids, asks);
  }

  private trade(process: MarketProcess): void {
    const takers = process.market.config.simulation.takers;
    if (takers === null) return;
    const random = process.random;
    if (!random.chance(takers.probability_per_step)) return;
    const side = random.chance(0.5) ? BUY : SELL;
    const steps = random.integerBetween(
      process.takerMinimumSteps,
      Math.max(process.takerMinimumSteps, process.takerMaximumSteps),
    );
    const marketId = process.market.marketId;
    const best = side === BUY ? this.driver.bestAsk(marketId) : this.driver.bestBid(marketId);
    if (best === null) return;
    const limit =
      side === BUY
        ? best + takers.maximum_slippage_ticks
        : Math.max(1, best - takers.maximum_slippage_ticks);
    this.driver.submitSyntheticOrder(marketId, side, steps, limit);
  }
}
