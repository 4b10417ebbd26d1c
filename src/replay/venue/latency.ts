/**
 * The delays of the simulated venue, on virtual time. Jitter, when configured, comes from a
 * seeded generator (the emulator's sfc32), drawn once per command leg in the order commands are
 * sent, so the same run draws the same delays.
 */
import { Random } from '../../emulator/index.ts';
import type { LatencyConfig } from './config.ts';

export interface LatencySettings {
  readonly orderMs: number;
  readonly responseMs: number;
  readonly eventMs: number;
  readonly readMs: number;
  readonly jitterMs: number;
}

export const ZERO_LATENCY: LatencySettings = Object.freeze({
  orderMs: 0,
  responseMs: 0,
  eventMs: 0,
  readMs: 0,
  jitterMs: 0,
});

export function latencySettings(config: LatencyConfig): LatencySettings {
  return {
    orderMs: config.order_ms,
    responseMs: config.response_ms,
    eventMs: config.event_ms,
    readMs: config.read_ms,
    jitterMs: config.jitter_ms,
  };
}

export class LatencyModel {
  private readonly random: Random | null;

  /** True without jitter: every command leg of a kind then waits the same. */
  readonly fixed: boolean;

  constructor(
    readonly settings: LatencySettings,
    seed: string | number,
  ) {
    this.random = settings.jitterMs > 0 ? new Random(seed).fork('venue/latency') : null;
    this.fixed = this.random === null;
  }

  /** Command sent to command applied. */
  order(): number {
    return this.settings.orderMs + this.jitter();
  }

  /** Command applied to response received. */
  response(): number {
    return this.settings.responseMs + this.jitter();
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
