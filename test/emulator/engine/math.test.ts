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
  formatMoney,
  formatScaled,
  MONEY_ONE,
  parseScaled,
  UnitGrid,
} from '../../../src/emulator/engine/fixed.ts';
import {
  accountFigures,
  initialMargin,
  liquidationPrice,
  liquidationTicks,
  proportionalPart,
} from '../../../src/emulator/engine/margin.ts';
import { EngineIdentifiers } from '../../../src/emulator/engine/identifiers.ts';
import { MarketRuntime } from '../../../src/emulator/engine/state.ts';
import { IdentifierSource, Random } from '../../../src/emulator/random.ts';
import { testConfig } from './fixtures.ts';

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

  it('rounds like exact rational division, for every mode and sign', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }),
        fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }).filter((value) => value !== 0n),
        (numerator, denominator) => {
          // floor by the definition: the largest q with q × d <= n (for d > 0)
          const n = denominator < 0n ? -numerator : numerator;
          const d = denominator < 0n ? -denominator : denominator;
          let floor = n / d;
          if (floor * d > n) floor -= 1n;
          const exact = floor * d === n;
          expect(divideRounded(numerator, denominator, 'down')).toBe(floor);
          expect(divideRounded(numerator, denominator, 'up')).toBe(exact ? floor : floor + 1n);
          const twice = (n - floor * d) * 2n;
          const halfEven = twice > d || (twice === d && floor % 2n !== 0n) ? floor + 1n : floor;
          expect(divideRounded(numerator, denominator, 'half-even')).toBe(halfEven);
        },
      ),
    );
  });

  it('reads grid units from text exactly as the general decimal parser does', () => {
    const grids = ['0.5', '0.001', '0.01', '1', '25', '0.0000001', '0.25'].map(
      (text) => new UnitGrid(text),
    );
    const general = (grid: UnitGrid, text: string): number | null => {
      const scaled = parseScaled(text, grid.decimals);
      if (scaled === null || scaled % grid.mantissa !== 0n) return null;
      const units = scaled / grid.mantissa;
      const limit = BigInt(Number.MAX_SAFE_INTEGER);
      return units > limit || units < -limit ? null : Number(units);
    };
    fc.assert(
      fc.property(
        fc.stringMatching(/^-?[0-9]{0,17}(\.[0-9]{0,10})?$/),
        fc.integer({ min: 0, max: grids.length - 1 }),
        (text, index) => {
          const grid = grids[index]!;
          expect(grid.unitsOf(text)).toBe(general(grid, text));
        },
      ),
      { numRuns: 2000 },
    );
    for (const text of ['', '.', '5.', '.5', '000.000', '1e5', ' 1', '+1', '999999999999999.5']) {
      for (const grid of grids) expect(grid.unitsOf(text)).toBe(general(grid, text));
    }
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

describe('fill amounts', () => {
  it('writes notional and fee text from numbers exactly as from the bigint amounts', () => {
    const config = testConfig();
    const base = config.markets[0]!;
    const grids = [
      { price_tick: '0.5', quantity_step: '0.001', maker: '0.0002', taker: '0.0005' },
      { price_tick: '10', quantity_step: '100', maker: '0', taker: '0.000001' },
      { price_tick: '0.000001', quantity_step: '0.000001', maker: '0.000007', taker: '0.25' },
      { price_tick: '25', quantity_step: '0.5', maker: '0.0001', taker: '0.0003' },
    ];
    for (const grid of grids) {
      const market = new MarketRuntime(
        { ...base, price_tick: grid.price_tick, quantity_step: grid.quantity_step, fees: null },
        0,
        { maker_rate: grid.maker, taker_rate: grid.taker },
        10,
        10,
        0,
      );
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 2 ** 40 }),
          fc.integer({ min: 1, max: 2 ** 30 }),
          fc.boolean(),
          (priceTicks, steps, maker) => {
            const units = market.units(priceTicks, steps);
            const notional = market.notional(priceTicks, steps);
            expect(market.formatNotional(priceTicks, steps)).toBe(formatMoney(notional));
            expect(market.formatFee(priceTicks, steps, maker)).toBe(
              formatMoney(market.fee(units, notional, maker)),
            );
          },
        ),
        { numRuns: 500 },
      );
    }
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

  it('puts the liquidation price on the tick grid with one division, as two would', () => {
    const tick = new UnitGrid('0.5');
    fc.assert(
      fc.property(
        fc.constantFrom(1 as const, -1 as const),
        fc.bigInt({ min: 1n, max: 10n ** 22n }),
        fc.bigInt({ min: 0n, max: 10n ** 26n }),
        fc.bigInt({ min: 0n, max: 10n ** 25n }),
        fc.bigInt({ min: 0n, max: 10n ** 17n }),
        (direction, quantity, costBasis, collateral, rate) => {
          const price = liquidationPrice(direction, quantity, costBasis, collateral, rate);
          const expected =
            price === null
              ? null
              : Math.max(1, tick.unitsOfScaled(price, direction === 1 ? 'down' : 'up'));
          expect(
            liquidationTicks(direction, quantity, costBasis, collateral, rate, tick.unitAmount()),
          ).toBe(expected);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("gives a market's initial margin exactly as the general formula", () => {
    const base = testConfig().markets[0]!;
    const grids = [
      { price_tick: '0.5', quantity_step: '0.001' },
      { price_tick: '10', quantity_step: '100' },
      { price_tick: '0.000001', quantity_step: '0.000001' },
      { price_tick: '0.0000000001', quantity_step: '0.00001' },
      { price_tick: '25', quantity_step: '0.5' },
    ];
    for (const grid of grids) {
      const market = new MarketRuntime(
        { ...base, price_tick: grid.price_tick, quantity_step: grid.quantity_step },
        0,
        { maker_rate: '0', taker_rate: '0' },
        10,
        10,
        0,
      );
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 2 ** 40 }),
          fc.integer({ min: 0, max: 2 ** 30 }),
          fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(1001, 5000)),
          (priceTicks, steps, leverage) => {
            expect(market.initialMarginOf(priceTicks, steps, leverage)).toBe(
              initialMargin(market.notional(priceTicks, steps), leverage),
            );
          },
        ),
        { numRuns: 2000 },
      );
    }
  });

  it("gives a market's liquidation ticks exactly as the general formula", () => {
    const base = testConfig().markets[0]!;
    const grids = [
      { price_tick: '0.5', quantity_step: '0.001', rate: '0.005' },
      { price_tick: '10', quantity_step: '100', rate: '0.25' },
      { price_tick: '0.000001', quantity_step: '0.000001', rate: '0.0001' },
      { price_tick: '25', quantity_step: '0.5', rate: '0.999' },
    ];
    for (const grid of grids) {
      const market = new MarketRuntime(
        {
          ...base,
          price_tick: grid.price_tick,
          quantity_step: grid.quantity_step,
          maintenance_margin_rate: grid.rate,
        },
        0,
        { maker_rate: '0', taker_rate: '0' },
        10,
        10,
        0,
      );
      fc.assert(
        fc.property(
          fc.constantFrom(1 as const, -1 as const),
          fc.integer({ min: 0, max: 2 ** 40 }),
          fc.bigInt({ min: 0n, max: 10n ** 28n }),
          fc.bigInt({ min: 0n, max: 10n ** 27n }),
          (direction, steps, costBasis, collateral) => {
            expect(market.liquidationTicks(direction, steps, costBasis, collateral)).toBe(
              liquidationTicks(
                direction,
                market.step.scaledOf(steps),
                costBasis,
                collateral,
                market.maintenanceRate,
                market.tick.unitAmount(),
              ),
            );
          },
        ),
        { numRuns: 2000 },
      );
    }
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

  it('puts every execution in the candle of its open time, on every interval', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CANDLE_INTERVALS),
        fc.array(fc.integer({ min: 0, max: 3 * 7 * 86_400_000 }), { minLength: 1, maxLength: 40 }),
        (interval, offsets) => {
          const times = offsets
            .map((offset) => Date.UTC(2025, 0, 1) + offset)
            .sort((a, b) => a - b);
          const series = new CandleSeries(interval, 1000);
          const volumes = new Map<number, number>();
          times.forEach((time, index) => {
            series.record(time, 100 + index, index + 1);
            const open = candleOpenTime(interval, time);
            volumes.set(open, (volumes.get(open) ?? 0) + index + 1);
          });
          const bars = series.latest(1000);
          expect(bars.map((bar) => [bar.openTime, bar.volumeSteps])).toEqual([...volumes]);
        },
      ),
      { numRuns: 300 },
    );
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

  it('gives the engine the same UUIDs as the identifier source, written at once', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 12 }),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        (seed, kind, counter) => {
          expect(new EngineIdentifiers(seed).uuid(kind, counter)).toBe(
            new IdentifierSource(seed).uuid(kind, counter),
          );
        },
      ),
      { numRuns: 2000 },
    );
    const engine = new EngineIdentifiers('paperbot');
    const source = new IdentifierSource('paperbot');
    for (let counter = 1; counter <= 5_000; counter++) {
      expect(engine.uuid(3, counter)).toBe(source.uuid(3, counter));
    }
  });

  it('tells the counter of an id back, below 2^32', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 12 }),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        (seed, kind, counter) => {
          const ids = new EngineIdentifiers(seed);
          expect(ids.counterOf(kind, ids.uuid(kind, counter))).toBe(counter);
        },
      ),
      { numRuns: 2000 },
    );
    const ids = new EngineIdentifiers('paperbot');
    expect(ids.counterOf(1, 'not-an-id')).toBe(-1);
    expect(ids.counterOf(1, 'ABCDEF12-0000')).toBe(-1);
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
