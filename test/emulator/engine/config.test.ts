import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EMULATOR_CONFIG_INPUT,
  defaultEmulatorConfig,
  parseEmulatorConfig,
} from '../../../src/emulator/config.ts';
import { PaperbotError } from '../../../src/core/errors.ts';

function problems(input: unknown): string[] {
  try {
    parseEmulatorConfig(input);
  } catch (error) {
    if (error instanceof PaperbotError && error.code === 'INVALID_CONFIG') {
      return (error.details.issues as { path: (string | number)[] }[]).map((issue) =>
        issue.path.join('.'),
      );
    }
    throw error;
  }
  return [];
}

describe('emulator config', () => {
  it('fills defaults and keeps decimals as strings', () => {
    const config = defaultEmulatorConfig();
    expect(config.starting_balance).toBe('10000');
    expect(config.latency.submit_ms).toBe(20);
    expect(config.markets.map((market) => market.market_id)).toEqual([
      'BTC-PERP',
      'ETH-PERP',
      'SOL-PERP',
    ]);
    expect(config.markets[2]!.simulation.takers).toBeNull();
    // a parsed config parses again to itself (callers may pass either form)
    expect(parseEmulatorConfig(config)).toEqual(config);
  });

  it('reports every problem at once with its path', () => {
    const [btc, eth] = DEFAULT_EMULATOR_CONFIG_INPUT.markets;
    const paths = problems({
      ...DEFAULT_EMULATOR_CONFIG_INPUT,
      starting_balance: 10000,
      surprise: true,
      markets: [{ ...btc, price_tick: 0.5, maintenance_margin_rate: '0.05' }, eth],
    });
    expect(paths).toEqual(['starting_balance', 'markets.0.price_tick', 'surprise']);
    // whole-config rules run once every field is valid
    expect(
      problems({
        ...DEFAULT_EMULATOR_CONFIG_INPUT,
        markets: [btc, { ...eth, market_id: 'BTC-PERP' }],
      }),
    ).toEqual(['markets.1.market_id']);
    const rate = problems({
      ...DEFAULT_EMULATOR_CONFIG_INPUT,
      markets: [{ ...btc, maintenance_margin_rate: '0.05' }],
    });
    expect(rate).toEqual(['markets.0.maintenance_margin_rate']);
  });
});
