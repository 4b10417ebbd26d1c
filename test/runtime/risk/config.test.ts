import { describe, expect, it } from 'vitest';
import { toWire } from '../../../src/core/decimal.ts';
import { isPaperbotError } from '../../../src/core/errors.ts';
import {
  defaultRiskConfig,
  limitsFor,
  parseRiskConfig,
  RiskConfig,
} from '../../../src/runtime/risk/config.ts';

function issuesOf(raw: unknown): { path: string; message: string }[] {
  try {
    parseRiskConfig(raw);
  } catch (error) {
    if (!isPaperbotError(error)) throw error;
    expect(error.code).toBe('INVALID_CONFIG');
    return error.details.issues as { path: string; message: string }[];
  }
  throw new Error('expected the configuration to be refused');
}

describe('RiskConfig', () => {
  it('fills every default', () => {
    const config = defaultRiskConfig();
    expect(JSON.parse(JSON.stringify(config))).toEqual({
      max_order_notional: null,
      max_order_quantity: null,
      max_position_quantity: null,
      max_position_notional: null,
      max_leverage: null,
      max_open_orders_per_market: 50,
      price_band_percent: '5',
      max_gross_exposure: null,
      max_account_leverage: null,
      max_open_orders: 100,
      max_orders_per_second: 5,
      max_orders_per_minute: 120,
      max_market_data_age_ms: null,
      halted_allows_closes: true,
      halted_allows_reduce_only: false,
      daily_loss: {
        reduce_at: null,
        halt_at: null,
        reduce_at_percent: null,
        halt_at_percent: null,
      },
      drawdown: { reduce_at_percent: null, halt_at_percent: null },
      day_start_utc: '00:00',
      kill_switch: { file: 'data/paperbot.kill', poll_ms: 1000, signal: 'SIGUSR2' },
      markets: {},
    });
    expect(parseRiskConfig(undefined)).toEqual(config);
  });

  it('parses decimals once, from strings or whole numbers', () => {
    const config = RiskConfig.parse({ max_order_notional: '2500.50', max_gross_exposure: 100000 });
    expect(toWire(config.max_order_notional!)).toBe('2500.5');
    expect(toWire(config.max_gross_exposure!)).toBe('100000');
  });

  it('reports every problem at once, with its path', () => {
    const issues = issuesOf({
      max_order_notional: 0.5,
      max_position_quantity: '-1',
      price_band_percent: 'five',
      max_orders_per_second: 0,
      unknown_key: true,
      daily_loss: { reduce_at: '500', halt_at: '100', extra: 1 },
      drawdown: { halt_at_percent: '150' },
      day_start_utc: '24:00',
      kill_switch: { signal: 'SIGKILL' },
      markets: { 'BTC-PERP': { max_leverage: 500, max_gross_exposure: '1' } },
    });
    const paths = issues.map((issue) => issue.path).sort();
    expect(paths).toEqual(
      [
        'risk.unknown_key',
        'risk.daily_loss.extra',
        'risk.daily_loss.reduce_at',
        'risk.day_start_utc',
        'risk.drawdown.halt_at_percent',
        'risk.kill_switch.signal',
        'risk.markets.BTC-PERP.max_gross_exposure',
        'risk.markets.BTC-PERP.max_leverage',
        'risk.max_order_notional',
        'risk.max_orders_per_second',
        'risk.max_position_quantity',
        'risk.price_band_percent',
      ].sort(),
    );
    const message = (path: string) => issues.find((issue) => issue.path === path)?.message;
    expect(message('risk.max_order_notional')).toContain('quote decimals in YAML');
    expect(message('risk.unknown_key')).toBe('unknown key');
    expect(message('risk.daily_loss.reduce_at')).toContain('must not be above');
  });

  it('merges per-market overrides over the global limits; null lifts a limit', () => {
    const config = RiskConfig.parse({
      max_order_notional: '1000',
      max_leverage: 10,
      markets: { 'BTC-PERP': { max_order_notional: null, max_leverage: 3, enabled: false } },
    });
    const btc = limitsFor(config, 'BTC-PERP');
    expect(btc.max_order_notional).toBeNull();
    expect(btc.max_leverage).toBe(3);
    expect(btc.enabled).toBe(false);
    expect(btc.price_band_percent && toWire(btc.price_band_percent)).toBe('5');
    const eth = limitsFor(config, 'ETH-PERP');
    expect(eth.max_order_notional && toWire(eth.max_order_notional)).toBe('1000');
    expect(eth.enabled).toBe(true);
    expect(limitsFor(config, 'constructor').max_leverage).toBe(10);
  });
});
