import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import {
  DEFAULT_EMULATOR_CONFIG_INPUT,
  parseEmulatorConfig,
} from '../../../src/emulator/config.ts';
import { Exchange } from '../../../src/emulator/engine/exchange.ts';
import { MemoryStore } from '../../../src/emulator/store/memory-store.ts';

const START = Date.UTC(2025, 0, 6);
const SECONDS = 1_800;

/** The mark's basis over the index, in basis points, once a second for half an hour. */
function basisPerSecond(stepMs: number): number[] {
  const clock = new VirtualClock(START);
  const config = parseEmulatorConfig({
    ...DEFAULT_EMULATOR_CONFIG_INPUT,
    seed: 7,
    simulation: { enabled: true, step_ms: stepMs },
  });
  const exchange = Exchange.open({ clock, config, store: new MemoryStore() });
  exchange.start();
  const basis: number[] = [];
  for (let second = 0; second < SECONDS; second++) {
    clock.advanceBy(1_000);
    const market = exchange.getMarket('BTC-PERP');
    const mark = Number(market.mark_price);
    const index = Number(market.index_price);
    basis.push(((mark - index) / index) * 10_000);
  }
  exchange.stop();
  return basis;
}

function standardDeviation(values: readonly number[]): number {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length);
}

/** Correlation of the series with itself one second later. */
function lagOneCorrelation(values: readonly number[]): number {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  let covariance = 0;
  for (let index = 1; index < values.length; index++) {
    covariance += (values[index]! - mean) * (values[index - 1]! - mean);
  }
  return covariance / (values.length - 1) / standardDeviation(values) ** 2;
}

describe('the basis process', () => {
  // β (basis_volatility_bps) is 2 for BTC-PERP in the default config, and the basis keeps 80%
  // of itself per second. Half an hour of samples puts the estimates within a few hundredths.
  it.each([1_000, 100])('has the same noise per second at a %i ms step', (stepMs) => {
    const basis = basisPerSecond(stepMs);
    expect(standardDeviation(basis)).toBeGreaterThan(1.6);
    expect(standardDeviation(basis)).toBeLessThan(2.4);
    // A per-step process sampled at 100 ms would have forgotten itself within the second (0.1).
    expect(lagOneCorrelation(basis)).toBeGreaterThan(0.72);
    expect(lagOneCorrelation(basis)).toBeLessThan(0.88);
  });
});
