import { describe, expect, it } from 'vitest';
import { parseReplayVenueConfig, replayEngineConfig } from '../../../src/replay/venue/config.ts';
import { formatRecordTime, RecordTimeText } from '../../../src/replay/venue/market-data.ts';
import { isoTimestamp } from '../../../src/core/clock.ts';
import fc from 'fast-check';
import { testMarket } from '../../../src/runtime/testing/fixtures.ts';

const btc = testMarket({ market_id: 'BTC-PERP', maximum_leverage: 50, mark_price: '64000' });
const unknown = testMarket({ market_id: 'XYZ-PERP', maximum_leverage: 20, mark_price: '3' });

describe('the replay engine config', () => {
  it("takes a known market's rates from the emulator config, others from the global schedule", () => {
    const config = replayEngineConfig([btc, unknown], parseReplayVenueConfig({}), 3);
    const [btcConfig, other] = config.markets;
    expect(btcConfig).toMatchObject({
      market_id: 'BTC-PERP',
      maintenance_margin_rate: '0.005',
      fees: { maker_rate: '0.0002', taker_rate: '0.0005' },
      simulation: { initial_price: '64000', takers: null },
    });
    // Half the initial margin at 20x: 0.025.
    expect(other).toMatchObject({ maintenance_margin_rate: '0.025' });
    expect(config.simulation.enabled).toBe(false);
    expect(config.latency.submit_ms).toBe(0);
    expect(config.seed).toBe(3);
  });

  it('adds slippage to the taker rate and applies overrides', () => {
    const config = replayEngineConfig(
      [btc],
      parseReplayVenueConfig({
        fees: { maker_rate: '0', taker_rate: '0.0004' },
        slippage_bps: '1.5',
        markets: { 'BTC-PERP': { maker_rate: '0.0001', maintenance_margin_rate: '0.01' } },
      }),
      1,
    );
    expect(config.markets[0]).toMatchObject({
      maintenance_margin_rate: '0.01',
      fees: { maker_rate: '0.0001', taker_rate: '0.00055' },
    });
  });

  it('reports every problem at once', () => {
    const error = (() => {
      try {
        replayEngineConfig(
          [testMarket({ market_id: 'NOPE-PERP', price_tick: null })],
          parseReplayVenueConfig({ markets: { 'ABC-PERP': {} } }),
          1,
        );
      } catch (caught) {
        return caught as { code: string; details: { problems: string[] } };
      }
      return null;
    })();
    expect(error?.code).toBe('INVALID_CONFIG');
    expect(error?.details.problems).toHaveLength(3);
  });

  it('refuses unknown keys and bad values with their paths', () => {
    expect(() => parseReplayVenueConfig({ latency: { order_ms: -1 }, slipage: '1' })).toThrow(
      /latency\.order_ms.*slipage|slipage.*latency\.order_ms/s,
    );
  });
});

describe('record times', () => {
  it('formats exactly as toISOString', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), (t) => {
        expect(formatRecordTime(t)).toBe(isoTimestamp(t));
      }),
      { numRuns: 5_000 },
    );
  });

  it('formats a sequence of times exactly as toISOString, within a day and across days', () => {
    const day = 86_400_000;
    const start = fc.integer({ min: -62_167_219_200_000 - day, max: 253_402_300_799_999 + day });
    const step = fc.oneof(
      fc.integer({ min: -2 * day, max: 2 * day }),
      fc.integer({ min: 0, max: 999 }),
    );
    fc.assert(
      fc.property(start, fc.array(step, { maxLength: 30 }), (first, steps) => {
        const text = new RecordTimeText();
        let t = first;
        for (const delta of [0, ...steps]) {
          t += delta;
          expect(text.of(t)).toBe(isoTimestamp(t));
        }
      }),
      { numRuns: 2_000 },
    );
  });
});
