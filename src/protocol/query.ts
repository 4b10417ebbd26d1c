/**
 * Query-parameter schemas, one per endpoint that takes parameters. Values arrive as strings
 * (`queryRecord`); integers must be plain decimal digits, optionally signed, so '1.5', '',
 * ' 5' and '1e3' are refused. Unknown parameters are refused; a repeated parameter arrives as
 * an array and is refused as not a string.
 */
import { z } from 'zod';
import { CandleInterval, OrderStatus } from './primitives.ts';

const INTEGER_TEXT = /^-?\d+$/;

/** A query integer in [minimum, maximum] (no upper bound when `maximum` is null). */
export function queryInteger(minimum: number, maximum: number | null, fallback: number) {
  return z
    .string()
    .transform((text, context): number => {
      if (!INTEGER_TEXT.test(text)) {
        context.issues.push({
          code: 'custom',
          input: text,
          message: 'Input should be a valid integer, unable to parse string as an integer',
          params: { type: 'int_parsing' },
        });
        return z.NEVER;
      }
      const value = Number(text);
      if (value < minimum) {
        context.issues.push({
          code: 'custom',
          input: text,
          message: `Input should be greater than or equal to ${minimum}`,
          params: { type: 'greater_than_equal' },
        });
        return z.NEVER;
      }
      if (maximum !== null ? value > maximum : !Number.isSafeInteger(value)) {
        context.issues.push({
          code: 'custom',
          input: text,
          message: `Input should be less than or equal to ${maximum ?? Number.MAX_SAFE_INTEGER}`,
          params: { type: 'less_than_equal' },
        });
        return z.NEVER;
      }
      return value;
    })
    .default(fallback);
}

const QueryText = z.string().min(1);

/** For endpoints without parameters: any parameter is refused. */
export const EmptyQuery = z.strictObject({});
export type EmptyQuery = z.output<typeof EmptyQuery>;

export const BookQuery = z.strictObject({
  route_id: QueryText.optional(),
  depth: queryInteger(1, 200, 20),
});
export type BookQuery = z.output<typeof BookQuery>;

export const TradesQuery = z.strictObject({
  route_id: QueryText.optional(),
  limit: queryInteger(1, 500, 50),
});
export type TradesQuery = z.output<typeof TradesQuery>;

export const CandlesQuery = z.strictObject({
  route_id: QueryText.optional(),
  interval: CandleInterval.default('1h'),
  limit: queryInteger(1, 1000, 100),
});
export type CandlesQuery = z.output<typeof CandlesQuery>;

/** The cursor pages of the account's lists. */
const accountPaging = {
  limit: queryInteger(1, 200, 50),
  cursor: QueryText.optional(),
};

/** Orders and fills also filter by market and route. */
const marketAndRouteFilters = {
  ...accountPaging,
  market_id: QueryText.optional(),
  route_id: QueryText.optional(),
};

export const PositionsQuery = z.strictObject(accountPaging);
export type PositionsQuery = z.output<typeof PositionsQuery>;

export const OrdersQuery = z.strictObject({
  ...marketAndRouteFilters,
  status: OrderStatus.optional(),
});
export type OrdersQuery = z.output<typeof OrdersQuery>;

export const FillsQuery = z.strictObject(marketAndRouteFilters);
export type FillsQuery = z.output<typeof FillsQuery>;

export const EventsQuery = z.strictObject({
  after_sequence: queryInteger(0, null, 0),
  limit: queryInteger(1, 200, 100),
});
export type EventsQuery = z.output<typeof EventsQuery>;

/**
 * The query object a schema parses: one string per parameter, an array for a repeated one
 * (which the schemas then refuse).
 */
export function queryRecord(parameters: URLSearchParams): Record<string, string | string[]> {
  const values = new Map<string, string | string[]>();
  for (const [name, value] of parameters) {
    const previous = values.get(name);
    if (previous === undefined) values.set(name, value);
    else if (typeof previous === 'string') values.set(name, [previous, value]);
    else previous.push(value);
  }
  // fromEntries defines own properties, so a parameter named __proto__ stays a plain key.
  return Object.fromEntries(values);
}
