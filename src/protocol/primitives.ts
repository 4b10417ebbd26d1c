/**
 * Wire primitives shared by every resource, request and frame: decimal strings, bounded
 * numbers-or-decimal-strings, RFC 3339 UTC timestamps, identifiers and the enumerations the
 * interface lists. Issue `params.type` values follow the service's validation vocabulary so
 * that `toServiceIssues` can report them unchanged.
 */
import BigModule from 'big.js';
import { z } from 'zod';

// A private constructor: no other user of big.js can change its settings under us.
const Big = BigModule();
type Big = BigModule.Big;

/** Interface rule 1: optional sign, digits, optional fraction; signs and dots alone are invalid. */
export const DECIMAL_STRING_PATTERN = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

export const DecimalString = z.string().regex(DECIMAL_STRING_PATTERN);
export type DecimalString = z.infer<typeof DecimalString>;

export function isDecimalString(value: unknown): value is string {
  return typeof value === 'string' && DECIMAL_STRING_PATTERN.test(value);
}

const PLUS_SIGN = 43;

function bigOf(text: string): Big {
  // big.js refuses a leading '+', which rule 1 allows.
  return new Big(text.charCodeAt(0) === PLUS_SIGN ? text.slice(1) : text);
}

/**
 * The canonical decimal text the project emits: no exponent, no '+', no trailing fractional
 * zeros, no trailing dot, a leading '0' before a bare fraction, and '0' rather than '-0'.
 * A JS number is already a binary float; its shortest round-trip text is what gets converted,
 * so 0.1 becomes '0.1' and 1e-7 becomes '0.0000001'.
 */
export function toDecimalString(value: number | string): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      throw new RangeError(`not a finite number: ${String(value)}`);
    }
    return canonicalText(new Big(value));
  }
  if (!DECIMAL_STRING_PATTERN.test(value)) {
    throw new RangeError(`not a decimal string: ${JSON.stringify(value)}`);
  }
  return canonicalText(bigOf(value));
}

function canonicalText(amount: Big): string {
  const text = amount.toFixed();
  return text === '-0' ? '0' : text;
}

/** A value the interface describes as "number or decimal string". */
export type NumberOrDecimal = number | string;

const AMOUNT_TYPE_MESSAGE = 'Input should be a number or a decimal string';
const DECIMAL_PARSING_MESSAGE =
  'Input should be a decimal string: optional sign, digits and an optional fraction';

/**
 * A positive number or decimal string, at most `maximum` when one is given. Decimal strings are
 * compared with big.js, never through a float. One issue per failure, typed like the service's.
 */
function positiveAmount(maximum: string | null) {
  const maximumNumber = maximum === null ? null : Number(maximum);
  const maximumBig = maximum === null ? null : new Big(maximum);
  const tooLargeMessage = `Input should be less than or equal to ${maximum}`;
  return z.custom<NumberOrDecimal>().superRefine((value, context) => {
    if (value === undefined) {
      context.addIssue({ code: 'custom', message: 'Field required', params: { type: 'missing' } });
      return;
    }
    let positive: boolean;
    let tooLarge: boolean;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) {
        context.addIssue({
          code: 'custom',
          message: 'Input should be a finite number',
          params: { type: 'finite_number' },
        });
        return;
      }
      positive = value > 0;
      tooLarge = maximumNumber !== null && value > maximumNumber;
    } else if (typeof value === 'string') {
      if (!DECIMAL_STRING_PATTERN.test(value)) {
        context.addIssue({
          code: 'custom',
          message: DECIMAL_PARSING_MESSAGE,
          params: { type: 'decimal_parsing' },
        });
        return;
      }
      const amount = bigOf(value);
      positive = amount.gt(0);
      tooLarge = maximumBig !== null && amount.gt(maximumBig);
    } else {
      context.addIssue({
        code: 'custom',
        message: AMOUNT_TYPE_MESSAGE,
        params: { type: 'decimal_type' },
      });
      return;
    }
    if (!positive) {
      context.addIssue({
        code: 'custom',
        message: 'Input should be greater than 0',
        params: { type: 'greater_than' },
      });
    } else if (tooLarge) {
      context.addIssue({
        code: 'custom',
        message: tooLargeMessage,
        params: { type: 'less_than_equal' },
      });
    }
  });
}

/** Order quantity: > 0 and at most 1000000000 (the bound applies to both forms). */
export const Quantity = positiveAmount('1000000000');
export type Quantity = z.infer<typeof Quantity>;

/** Prices and trigger prices: > 0, no upper bound. */
export const Price = positiveAmount(null);
export type Price = z.infer<typeof Price>;

/** max_slippage_percent: > 0 and at most 2. */
export const SlippagePercent = positiveAmount('2');
export type SlippagePercent = z.infer<typeof SlippagePercent>;

/** quantity_percent of a position close: > 0 and at most 100. */
export const QuantityPercent = positiveAmount('100');
export type QuantityPercent = z.infer<typeof QuantityPercent>;

const TIMESTAMP_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:Z|\+00:00)$/;

const MILLISECONDS_PER_DAY = 86_400_000;

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

// Howard Hinnant's days_from_civil: exact for every proleptic Gregorian date, no Date involved.
function daysFromCivil(year: number, month: number, day: number): number {
  const shiftedYear = month <= 2 ? year - 1 : year;
  const era = Math.floor(shiftedYear / 400);
  const yearOfEra = shiftedYear - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** Epoch milliseconds of an RFC 3339 UTC timestamp, or null when the text is not one. */
export function parseTimestamp(text: string): number | null {
  const match = TIMESTAMP_PATTERN.exec(text);
  if (match === null) return null;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const hour = Number(match[4]);
  const minute = Number(match[5]);
  // Leap seconds (:60) are refused: nothing downstream can represent them.
  const second = Number(match[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const fraction = match[7];
  const milliseconds = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  return (
    daysFromCivil(year, month, day) * MILLISECONDS_PER_DAY +
    ((hour * 60 + minute) * 60 + second) * 1000 +
    milliseconds
  );
}

export function isRfc3339Utc(value: unknown): value is string {
  return typeof value === 'string' && parseTimestamp(value) !== null;
}

const LATEST_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999;

/** The one timestamp form the project emits: `YYYY-MM-DDTHH:MM:SS.sssZ`. */
export function formatTimestamp(epochMilliseconds: number): string {
  if (
    !Number.isInteger(epochMilliseconds) ||
    epochMilliseconds < -62_167_219_200_000 ||
    epochMilliseconds > LATEST_FOUR_DIGIT_YEAR_MS
  ) {
    throw new RangeError(`epoch milliseconds outside years 0000..9999: ${epochMilliseconds}`);
  }
  return new Date(epochMilliseconds).toISOString();
}

/** Interface convention 2: RFC 3339 in UTC, `Z` or `+00:00`; calendar-checked. */
export const Rfc3339Utc = z.string().refine(isRfc3339Utc, {
  error: 'Input should be an RFC 3339 date-time in UTC (suffix Z or +00:00)',
  params: { type: 'datetime_parsing' },
});
export type Rfc3339Utc = z.infer<typeof Rfc3339Utc>;

/** Letters, digits, ':', '_' and '-'. Empty matches so that length alone reports an empty id. */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9:_-]*$/;

export const RequestId = z.string().min(8).max(80).regex(IDENTIFIER_PATTERN);
export type RequestId = z.infer<typeof RequestId>;

export const ClientOrderId = z.string().min(1).max(100).regex(IDENTIFIER_PATTERN);
export type ClientOrderId = z.infer<typeof ClientOrderId>;

export const MarketId = z.string().min(3).max(40);
export type MarketId = z.infer<typeof MarketId>;

export const PositionId = z.string().min(8).max(200);
export type PositionId = z.infer<typeof PositionId>;

/** Any JSON object whose keys the interface does not show. */
export const JsonObject = z.record(z.string(), z.unknown());
export type JsonObject = z.infer<typeof JsonObject>;

export const OrderStatus = z.enum([
  'PENDING',
  'SUBMITTED',
  'OPEN',
  'PARTIALLY_FILLED',
  'FILLED',
  'CANCELLED',
  'REJECTED',
  'UNKNOWN',
]);
export type OrderStatus = z.infer<typeof OrderStatus>;

/** Statuses after which an order never changes again. */
export const TERMINAL_ORDER_STATUSES: ReadonlySet<OrderStatus> = new Set([
  'FILLED',
  'CANCELLED',
  'REJECTED',
]);

/** Statuses of an order that may still rest or fill (UNKNOWN is being reconciled, so neither). */
export const ACTIVE_ORDER_STATUSES: ReadonlySet<OrderStatus> = new Set([
  'PENDING',
  'SUBMITTED',
  'OPEN',
  'PARTIALLY_FILLED',
]);

/**
 * The execution stages the project emits. The Order schema keeps `execution_stage` a string,
 * since the interface shows only QUEUED and TERMINAL.
 */
export const ExecutionStage = z.enum(['QUEUED', 'SUBMITTED', 'WORKING', 'RECONCILING', 'TERMINAL']);
export type ExecutionStage = z.infer<typeof ExecutionStage>;

export const executionStageOfStatus: Readonly<Record<OrderStatus, ExecutionStage>> = {
  PENDING: 'QUEUED',
  SUBMITTED: 'SUBMITTED',
  OPEN: 'WORKING',
  PARTIALLY_FILLED: 'WORKING',
  FILLED: 'TERMINAL',
  CANCELLED: 'TERMINAL',
  REJECTED: 'TERMINAL',
  UNKNOWN: 'RECONCILING',
};

export const OrderSide = z.enum(['buy', 'sell']);
export type OrderSide = z.infer<typeof OrderSide>;

export const OrderType = z.enum(['market', 'limit', 'stop_market', 'stop_limit']);
export type OrderType = z.infer<typeof OrderType>;

export const TimeInForce = z.enum(['GTC', 'IOC', 'FOK']);
export type TimeInForce = z.infer<typeof TimeInForce>;

export const MarginMode = z.enum(['cross', 'isolated']);
export type MarginMode = z.infer<typeof MarginMode>;

export const TradingMode = z.enum(['live', 'paper']);
export type TradingMode = z.infer<typeof TradingMode>;

export const MarketStructure = z.enum(['order_book', 'oracle']);
export type MarketStructure = z.infer<typeof MarketStructure>;

export const RouteHealth = z.enum(['ready', 'degraded', 'disabled']);
export type RouteHealth = z.infer<typeof RouteHealth>;

export const MarketDataStatus = z.enum(['live', 'stale', 'unavailable']);
export type MarketDataStatus = z.infer<typeof MarketDataStatus>;

export const AccountDataStatus = z.enum(['live', 'degraded']);
export type AccountDataStatus = z.infer<typeof AccountDataStatus>;

export const MutationState = z.enum(['PENDING', 'COMPLETED']);
export type MutationState = z.infer<typeof MutationState>;

export const BatchAtomicity = z.enum(['non_atomic', 'native_market_atomic']);
export type BatchAtomicity = z.infer<typeof BatchAtomicity>;

export const CandleInterval = z.enum(['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w']);
export type CandleInterval = z.infer<typeof CandleInterval>;

/** Position sides the project emits; the Position schema keeps `side` a string. */
export const PositionSide = z.enum(['long', 'short']);
export type PositionSide = z.infer<typeof PositionSide>;

export const Scope = z.enum(['account:read', 'orders:read', 'fills:read', 'orders:write']);
export type Scope = z.infer<typeof Scope>;

/** Page wrapper metadata. An absent `next_cursor` reads as null (no further page). */
export const PageMeta = z.strictObject({
  next_cursor: z.string().nullable().default(null),
  has_more: z.boolean().default(false),
});
export type PageMeta = z.infer<typeof PageMeta>;

/** A page of a list: its items and the page metadata. */
export function pageOf<Item extends z.ZodType>(item: Item) {
  return z.strictObject({ data: z.array(item), page: PageMeta });
}
