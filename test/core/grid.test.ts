import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDecimal, toWire } from '../../src/core/decimal.ts';
import {
  checkSize,
  IncrementGrid,
  isOnIncrement,
  roundPrice,
  roundQuantity,
  roundToIncrement,
} from '../../src/core/grid.ts';

const increments = fc.constantFrom('0.01', '0.5', '0.001', '1', '5', '0.0001', '0.25', '10');
const values = fc
  .tuple(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.integer({ min: 0, max: 8 }))
  .map(([units, scale]) => parseDecimal(units.toString()).div(10 ** scale));
const directions = fc.constantFrom('down' as const, 'up' as const, 'nearest' as const);

describe('roundToIncrement', () => {
  it('lands on the grid and is idempotent', () => {
    fc.assert(
      fc.property(values, increments, directions, (value, incrementText, direction) => {
        const increment = parseDecimal(incrementText);
        const once = roundToIncrement(value, increment, direction);
        expect(isOnIncrement(once, increment)).toBe(true);
        expect(toWire(roundToIncrement(once, increment, direction))).toBe(toWire(once));
        expect(once.minus(value).abs().lt(increment)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('rounds down toward minus infinity and up toward plus infinity', () => {
    fc.assert(
      fc.property(values, increments, (value, incrementText) => {
        const increment = parseDecimal(incrementText);
        expect(roundToIncrement(value, increment, 'down').lte(value)).toBe(true);
        expect(roundToIncrement(value, increment, 'up').gte(value)).toBe(true);
      }),
    );
    const tick = parseDecimal('0.5');
    expect(toWire(roundToIncrement(parseDecimal('-1.2'), tick, 'down'))).toBe('-1.5');
    expect(toWire(roundToIncrement(parseDecimal('-1.2'), tick, 'up'))).toBe('-1');
  });

  it('rounds prices in the owner’s favour: buys down, sells up; quantities down', () => {
    const tick = parseDecimal('0.01');
    expect(toWire(roundPrice(parseDecimal('100.019'), tick, 'buy'))).toBe('100.01');
    expect(toWire(roundPrice(parseDecimal('100.011'), tick, 'sell'))).toBe('100.02');
    expect(toWire(roundPrice(parseDecimal('100.01'), tick, 'sell'))).toBe('100.01');
    expect(toWire(roundQuantity(parseDecimal('0.0099'), parseDecimal('0.001')))).toBe('0.009');
  });

  it('refuses a zero or negative increment', () => {
    expect(() => roundToIncrement(parseDecimal('1'), parseDecimal('0'), 'down')).toThrowError(
      expect.objectContaining({ code: 'INVALID_INCREMENT' }),
    );
  });
});

describe('checkSize', () => {
  const rules = { minimumQuantity: parseDecimal('0.001'), minimumNotional: parseDecimal('10') };

  it('passes at the minimums exactly', () => {
    expect(checkSize(parseDecimal('0.001'), parseDecimal('10000'), rules)).toEqual([]);
  });

  it('lists every broken rule with its limit and observed figure', () => {
    expect(checkSize(parseDecimal('0.0009'), parseDecimal('100'), rules)).toEqual([
      { rule: 'minimum_quantity', limit: '0.001', observed: '0.0009' },
      { rule: 'minimum_notional', limit: '10', observed: '0.09' },
    ]);
    expect(
      checkSize(parseDecimal('0'), parseDecimal('1'), {
        minimumQuantity: null,
        minimumNotional: null,
      }),
    ).toEqual([{ rule: 'positive_quantity', limit: '0', observed: '0' }]);
  });
});

describe('IncrementGrid', () => {
  it('converts to integer units and back without loss', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), increments, (units, incrementText) => {
        const grid = new IncrementGrid(parseDecimal(incrementText));
        expect(grid.toUnits(grid.fromUnits(units))).toBe(units);
        expect(grid.unitsToWire(units)).toBe(toWire(grid.fromUnits(units)));
      }),
    );
  });

  it('refuses values off the grid', () => {
    const grid = new IncrementGrid(parseDecimal('0.5'));
    expect(() => grid.toUnits(parseDecimal('1.25'))).toThrowError(
      expect.objectContaining({ code: 'OFF_GRID' }),
    );
  });
});
