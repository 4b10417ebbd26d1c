import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EngineIdentifiers } from '../../../src/emulator/engine/identifiers.ts';
import { WireFormat } from '../../../src/emulator/engine/wire.ts';
import { formatTimestamp } from '../../../src/protocol/index.ts';

const EARLIEST = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const LATEST = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
const DAY = 86_400_000;

describe('WireFormat.timestamp', () => {
  it('writes what formatTimestamp writes, in any order of milliseconds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: EARLIEST, max: LATEST }),
        fc.array(fc.integer({ min: -3 * DAY, max: 3 * DAY }), { maxLength: 40 }),
        (start, steps) => {
          const format = new WireFormat(new EngineIdentifiers('1'));
          let ms = start;
          expect(format.timestamp(ms)).toBe(formatTimestamp(ms));
          for (const step of steps) {
            ms = Math.min(LATEST, Math.max(EARLIEST, ms + step));
            expect(format.timestamp(ms)).toBe(formatTimestamp(ms));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is exact at day boundaries and at the ends of the four-digit years', () => {
    const format = new WireFormat(new EngineIdentifiers('1'));
    const day = Date.UTC(2025, 0, 1);
    for (const ms of [
      day,
      day + DAY - 1,
      day + DAY,
      day - 1,
      day + 1,
      day + 12 * 3_600_000 + 34 * 60_000 + 56_789,
      -1,
      0,
      EARLIEST,
      EARLIEST + 1,
      LATEST,
      LATEST - DAY,
    ]) {
      expect(format.timestamp(ms)).toBe(formatTimestamp(ms));
    }
  });

  it('refuses what formatTimestamp refuses, even within a day it has written', () => {
    const format = new WireFormat(new EngineIdentifiers('1'));
    const day = Date.UTC(2025, 0, 1);
    format.timestamp(day);
    expect(() => format.timestamp(day + 0.5)).toThrow(RangeError);
    expect(() => format.timestamp(Number.NaN)).toThrow(RangeError);
    expect(() => format.timestamp(LATEST + 1)).toThrow(RangeError);
    expect(() => format.timestamp(EARLIEST - 1)).toThrow(RangeError);
    format.timestamp(LATEST);
    expect(() => format.timestamp(LATEST + 1)).toThrow(RangeError);
  });
});
