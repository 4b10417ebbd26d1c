import { describe, expect, it } from 'vitest';
import { durationText, looksLikeDuration, parseDurationText } from '../../src/core/duration.ts';
import { parseDuration } from '../../src/cli/options.ts';

describe('duration texts', () => {
  it('reads whole numbers with ms, s, m, h and d, alone or in sequence', () => {
    expect(parseDurationText('250ms')).toBe(250);
    expect(parseDurationText(' 45s ')).toBe(45_000);
    expect(parseDurationText('10m')).toBe(600_000);
    expect(parseDurationText('1h30m')).toBe(5_400_000);
    expect(parseDurationText('7d')).toBe(7 * 86_400_000);
    expect(parseDurationText('1d2h3m4s5ms')).toBe(93_784_005);
  });

  it('refuses what the library would read but the project never accepted', () => {
    for (const text of ['1.5h', '1 hour', '1 day', '2mo', '1y', '-1h', '1e3ms', '', '10', 'h']) {
      expect(parseDurationText(text), text).toBeNull();
      expect(looksLikeDuration(text), text).toBe(false);
    }
    expect(parseDurationText('99999999999999999d')).toBeNull();
  });

  it('names the option in a refusal', () => {
    expect(parseDuration('1500')).toBe(1_500);
    expect(() => parseDuration('ten minutes', 'book-interval')).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        message: '--book-interval "ten minutes": write a duration such as 10m, 1h30m, 45s or 250ms',
      }),
    );
    expect(() => parseDuration('0s')).toThrow('--duration must be above zero');
  });

  it('prints the two largest units', () => {
    expect(durationText(null)).toBe('n/a');
    expect(durationText(850)).toBe('850 ms');
    expect(durationText(48_000)).toBe('48s');
    expect(durationText(312_000)).toBe('5m 12s');
    expect(durationText(3_720_000)).toBe('1h 02m');
    expect(durationText(2 * 86_400_000 + 3 * 3_600_000)).toBe('2d 03h');
  });
});
