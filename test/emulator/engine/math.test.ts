import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDecimal, toWire } from '../../../src/core/decimal.ts';
import {
  CANDLE_INTERVALS,
  CandleSeries,
  candleOpenTime,
} from '../../../src/emulator/engine/candles.ts';
import {
  divideRounded,
  formatScaled,
  MONEY_ONE,
  parseScaled,
  UnitGrid,
} from '../../../src/emulator/engine/fixed.ts';
import {
  accountFigures,
  initialMargin,
  liquidationPrice,
  proportionalPart,
} from '../../../src/emulator/engine/margin.ts';
import { IdentifierSource, Random } from '../../../src/emulator/random.ts';

const money = (text: string) => parseScaled(text, 18)!;

describe('fixed-point helpers', () => {
  it('round-trips decimal text through scaled integers like big.js does', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.integer({ min: 0, max: 18 }),
        (value, scale) => {
          const text = formatScaled(value, scale);
          expect(parseScaled(text, scale)).toBe(value);
          const viaBig = toWire(parseDecimal(value.toString()).div(10 ** scale));
          expect(text).toBe(viaBig);
        },
      ),
    );
  });

  it('refuses text with more decimals than the scale and accepts trailing zeros', () => {
    expect(parseScaled('1.25', 1)).toBeNull();
    expect(parseScaled('1.2500', 2)).toBe(125n);
    expect(parseScaled('abc', 2)).toBeNull();
    expect(parseScaled('-.5', 1)).toBe(-5n);
  });

  it('rounds division down, up and half-even toward the infinities', () => {
    expect(divideRounded(7n, 2n, 'down')).toBe(3n);
    expect(divideRounded(7n, 2n, 'up')).toBe(4n);
    expect(divideRounded(-7n, 2n, 'down')).toBe(-4n);
    expect(divideRounded(-7n, 2n, 'up')).toBe(-3n);
    expect(divideRounded(5n, 2n, 'half-even')).toBe(2n);
    expect(divideRounded(7n, 2n, 'half-even')).toBe(4n);
    expect(divideRounded(8n, 2n, 'up')).toBe(4n);
  });

  it('converts grid units and refuses off-grid values', () => {
    const tick = new UnitGrid('0.5');
    expect(tick.unitsOf('64000.5')).toBe(128001);
    expect(tick.unitsOf('64000.25')).toBeNull();
    expect(tick.format(128001)).toBe('64000.5');
    expect(tick.roundedUnitsOf('10.2', 'up')).toBe(21);
    expect(tick.roundedUnitsOf('10.2', 'down')).toBe(20);
    const step = new UnitGrid('0.001');
    expect(step.format(1)).toBe('0.001');
    expect(step.scaledOf(1500)).toBe(money('1.5'));
  });
});

describe('margin formulas', () => {
  it('computes initial margin rounded up to 10^-10', () => {
    expect(initialMargin(money('6400'), 10)).toBe(money('640'));
    expect(initialMargin(money('100'), 3)).toBe(money('33.3333333334'));
  });

  it('computes liquidation prices for long and short positions', () => {
    // long 0.1 at 64000 with 640 margin, mmr 0.5 %: (6400 − 640) / (0.1 × 0.995)
    const long = liquidationPrice(1, money('0.1'), money('6400'), money('640'), money('0.005'));
    // 57889.4472361809045226130653…, rounded down: a long is liquidated at or below it
    expect(formatScaled(long!, 18)).toBe('57889.447236180904522613');
    // short: (6400 + 640) / (0.1 × 1.005)
    const short = liquidationPrice(-1, money('0.1'), money('6400'), money('640'), money('0.005'));
    // 70049.7512437810945273631840…, rounded up: a short is liquidated at or above it
    expect(formatScaled(short!, 18)).toBe('70049.751243781094527364');
    // a fully collateralized long cannot be liquidated
    expect(liquidationPrice(1, money('1'), money('100'), money('100'), money('0.01'))).toBeNull();
  });

  it('removes cost proportionally and exactly in total', () => {
    const total = money('100');
    const first = proportionalPart(total, 1, 3);
    const second = proportionalPart(total - first, 1, 2);
    const third = proportionalPart(total - first - second, 1, 1);
    expect(first + second + third).toBe(total);
  });

  it('counts only net cross losses against available and floors it at zero', () => {
    const figures = accountFigures(money('1000'), money('100'), [
      { isolated: true, margin: money('200'), pnl: money('-50') },
      { isolated: false, margin: money('300'), pnl: money('-20') },
      { isolated: false, margin: money('0'), pnl: money('5') },
    ]);
    expect(figures.totalEquity).toBe(money('935'));
    expect(figures.inPositions).toBe(money('500'));
    expect(figures.available).toBe(money('385'));
    expect(accountFigures(MONEY_ONE, money('5'), []).available).toBe(0n);
  });
});

describe('candles', () => {
  it('aligns the eight intervals to UTC boundaries, weeks to Mondays', () => {
    const at = Date.UTC(2025, 0, 8, 13, 47, 12); // a Wednesday
    const opens = Object.fromEntries(
      CANDLE_INTERVALS.map((interval) => [
        interval,
        new Date(candleOpenTime(interval, at)).toISOString(),
      ]),
    );
    expect(opens).toEqual({
      '1m': '2025-01-08T13:47:00.000Z',
      '5m': '2025-01-08T13:45:00.000Z',
      '15m': '2025-01-08T13:45:00.000Z',
      '30m': '2025-01-08T13:30:00.000Z',
      '1h': '2025-01-08T13:00:00.000Z',
      '4h': '2025-01-08T12:00:00.000Z',
      '1d': '2025-01-08T00:00:00.000Z',
      '1w': '2025-01-06T00:00:00.000Z',
    });
  });

  it('aggregates open, high, low, close and volume and keeps a bounded history', () => {
    const series = new CandleSeries('1m', 2);
    series.record(0, 10, 1);
    series.record(10_000, 12, 2);
    series.record(20_000, 9, 3);
    series.record(60_000, 11, 1);
    series.record(120_000, 13, 1);
    expect(series.latest(5)).toEqual([
      { openTime: 60_000, open: 11, high: 11, low: 11, close: 11, volumeSteps: 1 },
      { openTime: 120_000, open: 13, high: 13, low: 13, close: 13, volumeSteps: 1 },
    ]);
    const first = new CandleSeries('1m', 5);
    first.record(0, 10, 1);
    first.record(10_000, 12, 2);
    first.record(20_000, 9, 3);
    expect(first.latest(1)).toEqual([
      { openTime: 0, open: 10, high: 12, low: 9, close: 9, volumeSteps: 6 },
    ]);
  });
});

describe('random', () => {
  it('repeats the same stream for the same seed and differs for another', () => {
    const draw = (seed: string) => {
      const random = new Random(seed);
      return [random.nextUint32(), random.nextInt(1000), random.normal(), random.fork('x').next()];
    };
    expect(draw('a')).toEqual(draw('a'));
    expect(draw('a')).not.toEqual(draw('b'));
  });

  it('draws integers uniformly enough and within bounds', () => {
    const random = new Random(7);
    const counts = [0, 0, 0, 0];
    for (let index = 0; index < 40_000; index++) counts[random.nextInt(4)]! += 1;
    for (const count of counts) expect(Math.abs(count - 10_000)).toBeLessThan(500);
  });

  it('makes distinct, well-formed UUIDs from counters', () => {
    const ids = new IdentifierSource('seed');
    const seen = new Set<string>();
    for (let counter = 1; counter <= 20_000; counter++) seen.add(ids.uuid(3, counter));
    expect(seen.size).toBe(20_000);
    for (const id of [...seen].slice(0, 50)) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });
});
