import Big from 'big.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ACTIVE_ORDER_STATUSES,
  CandleInterval,
  ClientOrderId,
  DecimalString,
  ExecutionStage,
  executionStageOfStatus,
  formatTimestamp,
  isDecimalString,
  MarketId,
  OrderStatus,
  PageMeta,
  PositionId,
  Price,
  parseTimestamp,
  Quantity,
  QuantityPercent,
  RequestId,
  Rfc3339Utc,
  Scope,
  SlippagePercent,
  TERMINAL_ORDER_STATUSES,
  toDecimalString,
} from '../../src/protocol/index.ts';
import { repeat, shapesOf } from './fixtures.ts';

describe('DecimalString (interface rule 1)', () => {
  it.each(['0', '1', '-1', '+1', '1.5', '-0.25', '.5', '+.5', '1.', '000123.4500'])(
    'accepts %s',
    (text) => {
      expect(DecimalString.safeParse(text).success).toBe(true);
      expect(isDecimalString(text)).toBe(true);
    },
  );

  it.each([
    '',
    '-',
    '+',
    '.',
    '+.',
    '-.',
    '..',
    '+-1',
    '1.2.3',
    '1e5',
    '1E5',
    ' 1',
    '1 ',
    '0x10',
    'NaN',
    'Infinity',
    '1,5',
  ])('refuses %j', (text) => {
    expect(DecimalString.safeParse(text).success).toBe(false);
    expect(isDecimalString(text)).toBe(false);
  });

  it('refuses numbers: decimal strings are strings', () => {
    expect(shapesOf(DecimalString, 1.5)).toEqual([['string_type', 'body']]);
  });
});

describe('toDecimalString', () => {
  it.each([
    ['+1.50', '1.5'],
    ['.5', '0.5'],
    ['1.', '1'],
    ['-0', '0'],
    ['-0.000', '0'],
    ['000123.4500', '123.45'],
    ['100', '100'],
    ['-12.0100', '-12.01'],
  ])('canonicalizes the string %s to %s', (input, expected) => {
    expect(toDecimalString(input)).toBe(expected);
  });

  it.each([
    [0.1, '0.1'],
    [1e-7, '0.0000001'],
    [1e21, '1000000000000000000000'],
    [-0, '0'],
    [0.1 + 0.2, '0.30000000000000004'],
    [1_000_000_000, '1000000000'],
    [123.456, '123.456'],
  ])('writes the number %d without exponent as %s', (input, expected) => {
    expect(toDecimalString(input)).toBe(expected);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
    'refuses the non-finite number %d',
    (input) => {
      expect(() => toDecimalString(input)).toThrow(RangeError);
    },
  );

  it.each(['', '.', '1e5', 'abc'])('refuses the non-decimal string %j', (input) => {
    expect(() => toDecimalString(input)).toThrow(RangeError);
  });

  it('keeps the exact value of any decimal string, in canonical form (property)', () => {
    const decimalText = fc
      .tuple(
        fc.constantFrom('', '+', '-'),
        fc.stringMatching(/^\d{0,25}$/),
        fc.option(fc.stringMatching(/^\d{0,25}$/), { nil: undefined }),
      )
      .map(
        ([sign, whole, fraction]) =>
          `${sign}${whole}${fraction === undefined ? '' : `.${fraction}`}`,
      )
      .filter(isDecimalString);
    fc.assert(
      fc.property(decimalText, (text) => {
        const canonical = toDecimalString(text);
        const unsigned = text.startsWith('+') ? text.slice(1) : text;
        expect(
          new Big(canonical).eq(new Big(unsigned.endsWith('.') ? `${unsigned}0` : unsigned)),
        ).toBe(true);
        expect(canonical).toMatch(/^-?(0|[1-9]\d*)(\.\d*[1-9])?$/);
        expect(canonical).not.toBe('-0');
        expect(toDecimalString(canonical)).toBe(canonical);
      }),
    );
  });

  it('writes any finite number as a decimal string equal to its shortest text (property)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        const text = toDecimalString(value);
        expect(isDecimalString(text)).toBe(true);
        expect(text).not.toMatch(/e/i);
        expect(Number(text)).toBe(Object.is(value, -0) ? 0 : value);
      }),
    );
  });
});

describe('positive number-or-decimal fields', () => {
  it('quantity: bounds at 0, tiny positive, 1000000000 and just over, in both forms', () => {
    expect(shapesOf(Quantity, 0)).toEqual([['greater_than', 'body']]);
    expect(shapesOf(Quantity, '0')).toEqual([['greater_than', 'body']]);
    expect(shapesOf(Quantity, '-0.0')).toEqual([['greater_than', 'body']]);
    expect(shapesOf(Quantity, -1)).toEqual([['greater_than', 'body']]);
    expect(shapesOf(Quantity, Number.MIN_VALUE)).toEqual([]);
    expect(shapesOf(Quantity, '0.000000000000000000000000000001')).toEqual([]);
    expect(shapesOf(Quantity, 1_000_000_000)).toEqual([]);
    expect(shapesOf(Quantity, '1000000000')).toEqual([]);
    expect(shapesOf(Quantity, '+1000000000.000')).toEqual([]);
    expect(shapesOf(Quantity, 1_000_000_000.0001)).toEqual([['less_than_equal', 'body']]);
    expect(shapesOf(Quantity, '1000000000.000000000000000000001')).toEqual([
      ['less_than_equal', 'body'],
    ]);
  });

  it('refuses non-decimal strings, non-finite numbers and other types with one issue each', () => {
    expect(shapesOf(Quantity, '1e5')).toEqual([['decimal_parsing', 'body']]);
    expect(shapesOf(Quantity, '-')).toEqual([['decimal_parsing', 'body']]);
    expect(shapesOf(Quantity, Number.POSITIVE_INFINITY)).toEqual([['finite_number', 'body']]);
    expect(shapesOf(Quantity, Number.NaN)).toEqual([['finite_number', 'body']]);
    expect(shapesOf(Quantity, true)).toEqual([['decimal_type', 'body']]);
    expect(shapesOf(Quantity, null)).toEqual([['decimal_type', 'body']]);
    expect(shapesOf(Quantity, undefined)).toEqual([['missing', 'body']]);
  });

  it('max_slippage_percent: 0 refused, 2 accepted, 2.0001 refused', () => {
    expect(shapesOf(SlippagePercent, 0)).toEqual([['greater_than', 'body']]);
    expect(shapesOf(SlippagePercent, '0')).toEqual([['greater_than', 'body']]);
    expect(shapesOf(SlippagePercent, 0.0001)).toEqual([]);
    expect(shapesOf(SlippagePercent, 2)).toEqual([]);
    expect(shapesOf(SlippagePercent, '2.0')).toEqual([]);
    expect(shapesOf(SlippagePercent, 2.0001)).toEqual([['less_than_equal', 'body']]);
    expect(shapesOf(SlippagePercent, '2.0001')).toEqual([['less_than_equal', 'body']]);
  });

  it('quantity_percent: 0 refused, 100 accepted, 100.01 refused', () => {
    expect(shapesOf(QuantityPercent, 0)).toEqual([['greater_than', 'body']]);
    expect(shapesOf(QuantityPercent, '0.01')).toEqual([]);
    expect(shapesOf(QuantityPercent, 100)).toEqual([]);
    expect(shapesOf(QuantityPercent, '100')).toEqual([]);
    expect(shapesOf(QuantityPercent, 100.01)).toEqual([['less_than_equal', 'body']]);
    expect(shapesOf(QuantityPercent, '100.01')).toEqual([['less_than_equal', 'body']]);
  });

  it('price has no upper bound but must be positive', () => {
    expect(shapesOf(Price, '123456789012345678901234567890.5')).toEqual([]);
    expect(shapesOf(Price, '0.0')).toEqual([['greater_than', 'body']]);
  });

  it('compares decimal strings exactly, never through a float (property)', () => {
    // Strings within 1e-30 of the bound: a float comparison would call both sides equal.
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 17, max: 40 }),
        (digit, zeros) => {
          const justAbove = `2.${'0'.repeat(zeros)}${digit}`;
          const justBelow = `1.${'9'.repeat(zeros)}${digit}`;
          expect(shapesOf(SlippagePercent, justAbove)).toEqual([['less_than_equal', 'body']]);
          expect(shapesOf(SlippagePercent, justBelow)).toEqual([]);
        },
      ),
    );
  });
});

describe('Rfc3339Utc', () => {
  it.each([
    '2025-03-01T12:00:00Z',
    '2025-03-01T12:00:00.123Z',
    '2025-03-01T12:00:00.123456789Z',
    '2025-03-01T12:00:00+00:00',
    '2024-02-29T23:59:59.999Z',
    '2000-02-29T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
  ])('accepts %s', (text) => {
    expect(Rfc3339Utc.safeParse(text).success).toBe(true);
  });

  it.each([
    '2025-03-01T12:00:00+01:00',
    '2025-03-01T12:00:00-00:00',
    '2025-03-01T12:00:00-05:00',
    '2025-03-01T12:00:00',
    '2025-03-01 12:00:00Z',
    '2025-03-01t12:00:00z',
    '2025-03-01',
    '2025-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2025-04-31T00:00:00Z',
    '2025-13-01T00:00:00Z',
    '2025-00-01T00:00:00Z',
    '2025-01-00T00:00:00Z',
    '2025-01-01T24:00:00Z',
    '2025-01-01T23:60:00Z',
    '2025-01-01T23:59:60Z',
    '2025-01-01T12:00:00.Z',
    '1735732800000',
    'not a date',
    '',
  ])('refuses %j', (text) => {
    expect(shapesOf(Rfc3339Utc, text)).toEqual([['datetime_parsing', 'body']]);
  });

  it('parses to epoch milliseconds, truncating below the millisecond', () => {
    expect(parseTimestamp('1970-01-01T00:00:00Z')).toBe(0);
    expect(parseTimestamp('2025-03-01T12:00:00.1239Z')).toBe(Date.UTC(2025, 2, 1, 12, 0, 0, 123));
    expect(parseTimestamp('2025-03-01T12:00:00+00:00')).toBe(Date.UTC(2025, 2, 1, 12));
    expect(parseTimestamp('1969-12-31T23:59:59.999Z')).toBe(-1);
    expect(parseTimestamp('2025-03-01T12:00:00+02:00')).toBeNull();
  });

  it('formats as YYYY-MM-DDTHH:MM:SS.sssZ and parses back (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), (ms) => {
        const text = formatTimestamp(ms);
        expect(text).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        expect(Rfc3339Utc.safeParse(text).success).toBe(true);
        expect(parseTimestamp(text)).toBe(ms);
      }),
    );
  });

  it('refuses to format outside four-digit years or a non-integer', () => {
    expect(() => formatTimestamp(253_402_300_800_000)).toThrow(RangeError);
    expect(() => formatTimestamp(-62_167_219_200_001)).toThrow(RangeError);
    expect(() => formatTimestamp(1.5)).toThrow(RangeError);
  });
});

describe('identifiers', () => {
  it('request_id: 7 refused, 8 and 80 accepted, 81 refused', () => {
    expect(shapesOf(RequestId, repeat(7))).toEqual([['string_too_short', 'body']]);
    expect(shapesOf(RequestId, repeat(8))).toEqual([]);
    expect(shapesOf(RequestId, repeat(80))).toEqual([]);
    expect(shapesOf(RequestId, repeat(81))).toEqual([['string_too_long', 'body']]);
  });

  it('request_id: letters, digits, colon, underscore and dash only', () => {
    expect(shapesOf(RequestId, 'Ab0:_-Zz9')).toEqual([]);
    for (const bad of ['abcdefg ', 'abcdefg.', 'abcdefg/', 'abcdéfgh', 'abcdefg+', 'abc\ndefg']) {
      expect(shapesOf(RequestId, bad)).toEqual([['string_pattern_mismatch', 'body']]);
    }
  });

  it('client_order_id: 0 refused (one issue), 1 and 100 accepted, 101 refused', () => {
    expect(shapesOf(ClientOrderId, '')).toEqual([['string_too_short', 'body']]);
    expect(shapesOf(ClientOrderId, 'x')).toEqual([]);
    expect(shapesOf(ClientOrderId, repeat(100))).toEqual([]);
    expect(shapesOf(ClientOrderId, repeat(101))).toEqual([['string_too_long', 'body']]);
    expect(shapesOf(ClientOrderId, 'a b')).toEqual([['string_pattern_mismatch', 'body']]);
  });

  it('market_id: 2 refused, 3 and 40 accepted, 41 refused', () => {
    expect(shapesOf(MarketId, repeat(2))).toEqual([['string_too_short', 'body']]);
    expect(shapesOf(MarketId, repeat(3))).toEqual([]);
    expect(shapesOf(MarketId, repeat(40))).toEqual([]);
    expect(shapesOf(MarketId, repeat(41))).toEqual([['string_too_long', 'body']]);
  });

  it('position_id: 7 refused, 8 and 200 accepted, 201 refused', () => {
    expect(shapesOf(PositionId, repeat(7))).toEqual([['string_too_short', 'body']]);
    expect(shapesOf(PositionId, repeat(8))).toEqual([]);
    expect(shapesOf(PositionId, repeat(200))).toEqual([]);
    expect(shapesOf(PositionId, repeat(201))).toEqual([['string_too_long', 'body']]);
  });
});

describe('enumerations', () => {
  it('order status is exactly the eight states', () => {
    expect(OrderStatus.options).toEqual([
      'PENDING',
      'SUBMITTED',
      'OPEN',
      'PARTIALLY_FILLED',
      'FILLED',
      'CANCELLED',
      'REJECTED',
      'UNKNOWN',
    ]);
    for (const bad of ['open', 'EXPIRED', 'Open', 'PARTIALLY-FILLED', '']) {
      expect(shapesOf(OrderStatus, bad)).toEqual([['enum', 'body']]);
    }
  });

  it('terminal and active statuses partition all but UNKNOWN, and stages follow status', () => {
    for (const status of OrderStatus.options) {
      const terminal = TERMINAL_ORDER_STATUSES.has(status);
      const active = ACTIVE_ORDER_STATUSES.has(status);
      expect(terminal && active).toBe(false);
      expect(terminal || active).toBe(status !== 'UNKNOWN');
      expect(executionStageOfStatus[status] === 'TERMINAL').toBe(terminal);
      expect(ExecutionStage.options).toContain(executionStageOfStatus[status]);
    }
    expect(executionStageOfStatus.PENDING).toBe('QUEUED');
  });

  it('candle intervals and scopes are exactly as listed', () => {
    expect(CandleInterval.options).toEqual(['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w']);
    expect(Scope.options).toEqual(['account:read', 'orders:read', 'fills:read', 'orders:write']);
    expect(CandleInterval.safeParse('1H').success).toBe(false);
    expect(CandleInterval.safeParse('2h').success).toBe(false);
  });
});

describe('PageMeta', () => {
  it('defaults has_more to false and an absent cursor to null; refuses unknown fields', () => {
    expect(PageMeta.parse({})).toEqual({ next_cursor: null, has_more: false });
    expect(PageMeta.parse({ next_cursor: 'opaque==', has_more: true })).toEqual({
      next_cursor: 'opaque==',
      has_more: true,
    });
    expect(shapesOf(PageMeta, { has_more: false, total: 3 })).toEqual([
      ['extra_forbidden', 'body.total'],
    ]);
  });
});
