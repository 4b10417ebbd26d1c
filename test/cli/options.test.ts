import { describe, expect, it } from 'vitest';
import { givenOptions, integerOption } from '../../src/cli/options.ts';

describe('command-line options', () => {
  it('reads whole numbers in range and names the option when refusing', () => {
    expect(integerOption('8', 'workers')).toBe(8);
    expect(integerOption('0', 'port', { minimum: 0, maximum: 65_535 })).toBe(0);
    expect(() => integerOption('0', 'workers')).toThrow('--workers must be a positive integer');
    expect(() => integerOption('1.5', 'depth')).toThrow('--depth must be a positive integer');
    expect(() => integerOption('201', 'book-depth', { maximum: 200 })).toThrow(
      '--book-depth must be an integer from 1 to 200',
    );
    expect(() => integerOption('-1', 'cuts', { minimum: 0 })).toThrow(
      '--cuts must be an integer of at least 0',
    );
  });

  it('passes on only the options that were given', () => {
    const options: { budget?: string; method?: string; json?: boolean } = { budget: '4' };
    const given = givenOptions(options, ['budget', 'method', 'json']);
    expect(given).toEqual({ budget: '4' });
    expect('method' in given).toBe(false);
  });
});
