import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  BookQuery,
  CandlesQuery,
  EmptyQuery,
  EventsQuery,
  FillsQuery,
  OrdersQuery,
  PositionsQuery,
  queryRecord,
  TradesQuery,
} from '../../src/protocol/index.ts';
import { shapesOf } from './fixtures.ts';

function at(schema: z.ZodType, query: Record<string, unknown>): Array<[string, string]> {
  return shapesOf(schema, query, 'query');
}

describe('defaults', () => {
  it('applies the interface defaults to an empty query', () => {
    expect(BookQuery.parse({})).toEqual({ depth: 20 });
    expect(TradesQuery.parse({})).toEqual({ limit: 50 });
    expect(CandlesQuery.parse({})).toEqual({ interval: '1h', limit: 100 });
    expect(PositionsQuery.parse({})).toEqual({ limit: 50 });
    expect(OrdersQuery.parse({})).toEqual({ limit: 50 });
    expect(FillsQuery.parse({})).toEqual({ limit: 50 });
    expect(EventsQuery.parse({})).toEqual({ after_sequence: 0, limit: 100 });
    expect(EmptyQuery.parse({})).toEqual({});
  });

  it('converts integer text and keeps the other parameters as given', () => {
    expect(
      OrdersQuery.parse({
        limit: '200',
        cursor: 'b3BhcXVl',
        market_id: 'BTC-USD',
        route_id: 'svc-paper',
        status: 'PARTIALLY_FILLED',
      }),
    ).toEqual({
      limit: 200,
      cursor: 'b3BhcXVl',
      market_id: 'BTC-USD',
      route_id: 'svc-paper',
      status: 'PARTIALLY_FILLED',
    });
    expect(CandlesQuery.parse({ interval: '1w', limit: '007', route_id: 'svc-paper' })).toEqual({
      interval: '1w',
      limit: 7,
      route_id: 'svc-paper',
    });
  });
});

describe('integer bounds', () => {
  const bounds: Array<[string, z.ZodType, string, number, number | null]> = [
    ['book depth', BookQuery, 'depth', 1, 200],
    ['trades limit', TradesQuery, 'limit', 1, 500],
    ['candles limit', CandlesQuery, 'limit', 1, 1000],
    ['positions limit', PositionsQuery, 'limit', 1, 200],
    ['orders limit', OrdersQuery, 'limit', 1, 200],
    ['fills limit', FillsQuery, 'limit', 1, 200],
    ['events limit', EventsQuery, 'limit', 1, 200],
    ['events after_sequence', EventsQuery, 'after_sequence', 0, null],
  ];

  it.each(bounds)(
    '%s: just outside, at and just inside each bound',
    (_name, schema, field, minimum, maximum) => {
      expect(at(schema, { [field]: String(minimum - 1) })).toEqual([
        ['greater_than_equal', `query.${field}`],
      ]);
      expect(at(schema, { [field]: String(minimum) })).toEqual([]);
      expect(at(schema, { [field]: String(minimum + 1) })).toEqual([]);
      if (maximum === null) {
        expect(at(schema, { [field]: String(Number.MAX_SAFE_INTEGER) })).toEqual([]);
        expect(at(schema, { [field]: '9007199254740993' })).toEqual([
          ['less_than_equal', `query.${field}`],
        ]);
      } else {
        expect(at(schema, { [field]: String(maximum - 1) })).toEqual([]);
        expect(at(schema, { [field]: String(maximum) })).toEqual([]);
        expect(at(schema, { [field]: String(maximum + 1) })).toEqual([
          ['less_than_equal', `query.${field}`],
        ]);
      }
    },
  );

  it.each(['1.5', '', ' 5', '5 ', '1e3', '+5', '0x10', 'ten', '٣'])(
    'refuses the integer text %j',
    (text) => {
      expect(at(EventsQuery, { limit: text })).toEqual([['int_parsing', 'query.limit']]);
    },
  );

  it('events after_sequence: -1 refused, 0 accepted', () => {
    expect(at(EventsQuery, { after_sequence: '-1' })).toEqual([
      ['greater_than_equal', 'query.after_sequence'],
    ]);
    expect(EventsQuery.parse({ after_sequence: '0' })).toEqual({ after_sequence: 0, limit: 100 });
  });
});

describe('strictness', () => {
  it('refuses unknown parameters', () => {
    expect(at(OrdersQuery, { page: '2' })).toEqual([['extra_forbidden', 'query.page']]);
    expect(at(EmptyQuery, { limit: '5' })).toEqual([['extra_forbidden', 'query.limit']]);
  });

  it('status accepts exactly the eight states', () => {
    expect(at(OrdersQuery, { status: 'OPEN' })).toEqual([]);
    expect(at(OrdersQuery, { status: 'open' })).toEqual([['enum', 'query.status']]);
    expect(at(OrdersQuery, { status: 'EXPIRED' })).toEqual([['enum', 'query.status']]);
  });

  it('candle interval is one of the eight', () => {
    expect(at(CandlesQuery, { interval: '2h' })).toEqual([['enum', 'query.interval']]);
  });

  it('refuses empty text parameters', () => {
    expect(at(FillsQuery, { cursor: '' })).toEqual([['string_too_short', 'query.cursor']]);
    expect(at(BookQuery, { route_id: '' })).toEqual([['string_too_short', 'query.route_id']]);
  });
});

describe('queryRecord', () => {
  it('turns search parameters into strings, a repeated one into an array that is refused', () => {
    const record = queryRecord(new URLSearchParams('limit=5&status=OPEN&status=FILLED'));
    expect(record).toEqual({ limit: '5', status: ['OPEN', 'FILLED'] });
    expect(at(OrdersQuery, record)).toEqual([['enum', 'query.status']]);
    expect(at(OrdersQuery, queryRecord(new URLSearchParams('limit=1&limit=2&limit=3')))).toEqual([
      ['string_type', 'query.limit'],
    ]);
  });

  it('keeps a parameter named __proto__ as a plain key, refused as unknown', () => {
    const record = queryRecord(new URLSearchParams('__proto__=x&__proto__=y'));
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(Object.keys(record)).toEqual(['__proto__']);
    expect(at(OrdersQuery, record)).toEqual([['extra_forbidden', 'query.__proto__']]);
  });

  it('decodes percent-encoding and plus signs the URL way', () => {
    expect(queryRecord(new URLSearchParams('cursor=a%2Bb%3D&market_id=BTC+USD'))).toEqual({
      cursor: 'a+b=',
      market_id: 'BTC USD',
    });
  });
});
