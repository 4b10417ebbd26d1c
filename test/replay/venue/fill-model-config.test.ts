import { describe, expect, it } from 'vitest';
import { BUY, SELL } from '../../../src/emulator/index.ts';
import { fillModelOf, parseReplayVenueConfig } from '../../../src/replay/venue/config.ts';
import { TakerPricing } from '../../../src/replay/venue/taker.ts';

describe('venue.fill_model', () => {
  it('defaults to auto, no half-spread or slippage, the whole trade', () => {
    const config = parseReplayVenueConfig({});
    expect(config.fill_model).toEqual({
      model: 'auto',
      markets: {},
      taker: { half_spread_bps: '0', slippage_bps: '0', max_volume_share: '1' },
    });
  });

  it('refuses bad values, naming their path', () => {
    const refused = (input: unknown): string => {
      try {
        parseReplayVenueConfig(input);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused({ fill_model: { taker: { max_volume_share: '0' } } })).toContain(
      'fill_model.taker.max_volume_share: must be above 0 and at most 1',
    );
    expect(refused({ fill_model: { taker: { max_volume_share: '1.5' } } })).toContain(
      'fill_model.taker.max_volume_share',
    );
    expect(refused({ fill_model: { taker: { half_spread_bps: '0.001' } } })).toContain(
      'fill_model.taker.half_spread_bps: at most 2 decimals',
    );
    expect(refused({ fill_model: { taker: { slippage_bps: 5 } } })).toContain(
      'fill_model.taker.slippage_bps',
    );
    expect(refused({ fill_model: { model: 'queue' } })).toContain('fill_model.model');
    expect(refused({ fill_model: { markets: { 'BTC-PERP': 'auto' } } })).toContain(
      'fill_model.markets.BTC-PERP',
    );
    expect(refused({ fill_model: { taker: { spread: '1' } } })).toContain('fill_model.taker');
  });

  it('chooses the book model where the recording has a book, unless told', () => {
    const auto = parseReplayVenueConfig({}).fill_model;
    const booked = new Set(['BTC-PERP']);
    expect(fillModelOf(auto, 'BTC-PERP', booked)).toBe('book');
    expect(fillModelOf(auto, 'RW-PERP', booked)).toBe('taker');
    // Unknown (records in memory): the book model, as before.
    expect(fillModelOf(auto, 'RW-PERP', null)).toBe('book');
    const forced = parseReplayVenueConfig({
      fill_model: { model: 'taker', markets: { 'ETH-PERP': 'book' } },
    }).fill_model;
    expect(fillModelOf(forced, 'BTC-PERP', booked)).toBe('taker');
    expect(fillModelOf(forced, 'ETH-PERP', new Set())).toBe('book');
  });
});

describe('TakerPricing', () => {
  it('moves buys up and sells down by half-spread plus slippage, rounding against the account', () => {
    const pricing = new TakerPricing({
      half_spread_bps: '5',
      slippage_bps: '2.5',
      max_volume_share: '0.25',
    });
    // 1002 ticks × (1 ± 0.00075) = 1002.7515 / 1001.2485
    expect(pricing.priceTicks(BUY, 1002)).toBe(1003);
    expect(pricing.priceTicks(SELL, 1002)).toBe(1001);
    // Exact: no rounding either way.
    expect(
      new TakerPricing({
        half_spread_bps: '0',
        slippage_bps: '0',
        max_volume_share: '1',
      }).priceTicks(BUY, 1002),
    ).toBe(1002);
    expect(pricing.priceTicks(SELL, 1)).toBe(1);
    expect(pricing.capSteps(7)).toBe(1);
    expect(pricing.capSteps(3)).toBe(0);
  });
});
