/**
 * The delays of the simulated venue, on virtual time. Jitter, when configured, comes from a
 * seeded generator (the emulator's sfc32), drawn once per command leg in the order commands are
 * sent, so the same run draws the same delays. A leg with a measured distribution
 * (`latency.distribution`, written by `paperbot calibrate`) draws from its quantiles instead,
 * from a generator of its own.
 */
import { Random } from '../../emulator/index.ts';
import type { LatencyConfig } from './config.ts';

export interface LatencySettings {
  readonly orderMs: number;
  readonly responseMs: number;
  readonly eventMs: number;
  readonly readMs: number;
  readonly jitterMs: number;
  /** Quantiles (ms, equal probability steps from 0 to 1) per leg; absent: fixed plus jitter. */
  readonly orderQuantiles?: readonly number[] | null;
  readonly responseQuantiles?: readonly number[] | null;
  readonly eventQuantiles?: readonly number[] | null;
}

export const ZERO_LATENCY: LatencySettings = Object.freeze({
  orderMs: 0,
  responseMs: 0,
  eventMs: 0,
  readMs: 0,
  jitterMs: 0,
});

export function latencySettings(
  config: Omit<LatencyConfig, 'distribution'> & Partial<Pick<LatencyConfig, 'distribution'>>,
): LatencySettings {
  const distribution = config.distribution;
  return {
    orderMs: config.order_ms,
    responseMs: config.response_ms,
    eventMs: config.event_ms,
    readMs: config.read_ms,
    jitterMs: config.jitter_ms,
    orderQuantiles: distribution?.order_ms ?? null,
    responseQuantiles: distribution?.response_ms ?? null,
    eventQuantiles: distribution?.event_ms ?? null,
  };
}

/** One leg's delays drawn from its quantiles: inverse CDF, linear between quantiles, whole ms. */
class QuantileLeg {
  private readonly random: Random;

  constructor(
    private readonly quantiles: readonly number[],
    seed: string | number,
    label: string,
  ) {
    this.random = new Random(seed).fork(`venue/latency/${label}`);
  }

  draw(): number {
    const last = this.quantiles.length - 1;
    const position = this.random.next() * last;
    const index = Math.floor(position);
    const low = this.quantiles[index]!;
    const high = this.quantiles[Math.min(last, index + 1)]!;
    return Math.round(low + (high - low) * (position - index));
  }
}

function leg(
  quantiles: readonly number[] | null | undefined,
  seed: string | number,
  label: string,
): QuantileLeg | null {
  return quantiles === null || quantiles === undefined
    ? null
    : new QuantileLeg(quantiles, seed, label);
}

export class LatencyModel {
  private readonly random: Random | null;
  private readonly orderLeg: QuantileLeg | null;
  private readonly responseLeg: QuantileLeg | null;
  private readonly eventLeg: QuantileLeg | null;

  /** True without jitter or distributions: every command leg of a kind then waits the same. */
  readonly fixed: boolean;
  /** True when every event waits `eventMs`. */
  readonly fixedEvents: boolean;

  constructor(
    readonly settings: LatencySettings,
    seed: string | number,
  ) {
    this.random = settings.jitterMs > 0 ? new Random(seed).fork('venue/latency') : null;
    this.orderLeg = leg(settings.orderQuantiles, seed, 'order');
    this.responseLeg = leg(settings.responseQuantiles, seed, 'response');
    this.eventLeg = leg(settings.eventQuantiles, seed, 'event');
    this.fixed = this.random === null && this.orderLeg === null && this.responseLeg === null;
    this.fixedEvents = this.eventLeg === null;
  }

  /** Command sent to command applied. */
  order(): number {
    return this.orderLeg === null ? this.settings.orderMs + this.jitter() : this.orderLeg.draw();
  }

  /** Command applied to response received. */
  response(): number {
    return this.responseLeg === null
      ? this.settings.responseMs + this.jitter()
      : this.responseLeg.draw();
  }

  /** Venue event to the bot. */
  event(): number {
    return this.eventLeg === null ? this.settings.eventMs : this.eventLeg.draw();
  }

  get eventMs(): number {
    return this.settings.eventMs;
  }

  get readMs(): number {
    return this.settings.readMs;
  }

  private jitter(): number {
    return this.random === null ? 0 : this.random.integerBetween(0, this.settings.jitterMs);
  }
}
