/**
 * The records of a recorded session (format version 1). One JSON object per line:
 *
 *   {"v":1,"t":<epoch ms>,"k":"<kind>","m":"<market_id>","d":<payload>}
 *
 * `t` is when the recorder received the event, on its clock, and never decreases within a file;
 * the venue's own timestamps stay untouched inside the payload. `m` is present whenever the
 * record concerns one market (every public record, most private ones). `d` is the wire object
 * exactly as the protocol schemas describe it, so a replay hands the strategy the same objects a
 * live session would have seen. The one addition is a ticker's funding (`RecordedTickerData`): the
 * recorder reads it from the market, since the interface's ticker does not carry it.
 *
 * The types here are plain TypeScript: decoding on the replay hot path is `JSON.parse` (or the
 * binary cache) and nothing else. The zod schema `RecordedEventSchema` is for verification at
 * the edge (the first records of a file, or all of them when asked).
 */
import { z } from 'zod';
import { PaperbotError } from '../../core/errors.ts';
import { describeSchemaIssues, schemaIssuesOf } from '../../core/schema-issues.ts';
import {
  Book,
  type Book as BookType,
  KnownPrivateEventReading,
  type PrivateEvent as PrivateEventType,
  PublicTrade,
  type PublicTrade as PublicTradeType,
  DecimalString,
  Rfc3339Utc,
  TickerData,
  type TickerData as TickerDataType,
} from '../../protocol/index.ts';

export const FORMAT_VERSION = 1;

export const RECORD_KINDS = ['ticker', 'book', 'trade', 'private', 'gap'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/** The streams a recorder listens to; a `gap` record names the one that lost data. */
export const RECORDED_STREAMS = ['ticker', 'book', 'trade', 'private'] as const;
export type RecordedStream = (typeof RECORDED_STREAMS)[number];

export interface GapData {
  readonly stream: RecordedStream;
  /** Free text, for people: why data may be missing here (disconnect, resync, paused feed). */
  readonly reason: string;
}

interface RecordHeader {
  readonly v: typeof FORMAT_VERSION;
  readonly t: number;
}

/**
 * A recorded ticker: the wire ticker, plus the market's funding when the recorder knows it.
 *
 * - `funding_rate` and `funding_time`: the rate the market showed (GET /v1/markets/{id}) for the
 *   funding time `funding_time`, read shortly before that time; the recorder writes them on
 *   every ticker after the read, so a replay settles `funding_time` at that rate and at the mark
 *   of the first ticker at or after it (`recorder/funding-reads.ts`).
 * - `next_funding_time` (with `funding_rate`): recordings made while paperbot's emulator still
 *   sent funding in its ticker frames; the market's current rate and next time, read as then.
 */
export const RecordedTickerData = TickerData.extend({
  funding_rate: DecimalString.nullable().optional(),
  funding_time: Rfc3339Utc.optional(),
  next_funding_time: Rfc3339Utc.nullable().optional(),
});
export type RecordedTickerData = z.infer<typeof RecordedTickerData>;

/** The ticker as the interface shows it: a recorded ticker without the recorder's funding. */
export function wireTickerData(data: RecordedTickerData): TickerDataType {
  if (
    data.funding_rate === undefined &&
    data.funding_time === undefined &&
    data.next_funding_time === undefined
  ) {
    return data;
  }
  return {
    market_id: data.market_id,
    mark_price: data.mark_price,
    index_price: data.index_price,
    last_price: data.last_price,
    data_status: data.data_status,
  };
}

export interface TickerRecord extends RecordHeader {
  readonly k: 'ticker';
  readonly m: string;
  readonly d: RecordedTickerData;
}

export interface BookRecord extends RecordHeader {
  readonly k: 'book';
  readonly m: string;
  readonly d: BookType;
}

export interface TradeRecord extends RecordHeader {
  readonly k: 'trade';
  readonly m: string;
  readonly d: PublicTradeType;
}

export interface PrivateRecord extends RecordHeader {
  readonly k: 'private';
  readonly m?: string;
  readonly d: PrivateEventType;
}

export interface GapRecord extends RecordHeader {
  readonly k: 'gap';
  readonly m?: string;
  readonly d: GapData;
}

export type RecordedEvent = TickerRecord | BookRecord | TradeRecord | PrivateRecord | GapRecord;

const header = {
  v: z.literal(FORMAT_VERSION),
  t: z.int().min(0),
};

export const GapDataSchema = z.strictObject({
  stream: z.enum(RECORDED_STREAMS),
  reason: z.string(),
});

/**
 * Checks one decoded line. Payloads are checked against the protocol schemas, and `m` against
 * the payload's own market id, so a verified file cannot mislabel a record.
 */
export const RecordedEventSchema = z
  .discriminatedUnion('k', [
    z.strictObject({
      ...header,
      k: z.literal('ticker'),
      m: z.string(),
      d: RecordedTickerData,
    }),
    z.strictObject({ ...header, k: z.literal('book'), m: z.string(), d: Book }),
    z.strictObject({
      ...header,
      k: z.literal('trade'),
      m: z.string(),
      d: PublicTrade,
    }),
    z.strictObject({
      ...header,
      k: z.literal('private'),
      m: z.string().optional(),
      // As the client reads them (contract section 7): a live session recorded from a service
      // that adds fields to an event's payload replays.
      d: KnownPrivateEventReading,
    }),
    z.strictObject({
      ...header,
      k: z.literal('gap'),
      m: z.string().optional(),
      d: GapDataSchema,
    }),
  ])
  .superRefine((record, context) => {
    const expected = record.k === 'gap' ? record.m : marketOfPayload(record as RecordedEvent);
    if (record.m !== expected) {
      context.addIssue({
        code: 'custom',
        path: ['m'],
        message: `m must be the payload's market id (${String(expected)}), got ${String(record.m)}`,
      });
    }
  });

/** The market a private event concerns, or undefined for account-wide events. */
export function marketOfPrivateEvent(event: PrivateEventType): string | undefined {
  switch (event.type) {
    case 'fill':
    case 'position':
    case 'liquidation':
      return event.data.market_id;
    default:
      return undefined;
  }
}

function marketOfPayload(record: RecordedEvent): string | undefined {
  switch (record.k) {
    case 'ticker':
    case 'book':
    case 'trade':
      return record.d.market_id;
    case 'private':
      return marketOfPrivateEvent(record.d);
    case 'gap':
      return record.m;
  }
}

export function tickerRecord(t: number, data: RecordedTickerData): TickerRecord {
  return { v: FORMAT_VERSION, t, k: 'ticker', m: data.market_id, d: data };
}

export function bookRecord(t: number, book: BookType): BookRecord {
  return { v: FORMAT_VERSION, t, k: 'book', m: book.market_id, d: book };
}

export function tradeRecord(t: number, trade: PublicTradeType): TradeRecord {
  return { v: FORMAT_VERSION, t, k: 'trade', m: trade.market_id, d: trade };
}

export function privateRecord(t: number, event: PrivateEventType): PrivateRecord {
  const market = marketOfPrivateEvent(event);
  // Key order is part of the format (v, t, k, m, d), so `m` is placed, not appended.
  return market === undefined
    ? { v: FORMAT_VERSION, t, k: 'private', d: event }
    : { v: FORMAT_VERSION, t, k: 'private', m: market, d: event };
}

export function gapRecord(
  t: number,
  stream: RecordedStream,
  reason: string,
  marketId?: string,
): GapRecord {
  const d: GapData = { stream, reason };
  return marketId === undefined
    ? { v: FORMAT_VERSION, t, k: 'gap', d }
    : { v: FORMAT_VERSION, t, k: 'gap', m: marketId, d };
}

/** The record with another `t`, keys kept in format order. */
export function withTime(record: RecordedEvent, t: number): RecordedEvent {
  if (record.t === t) return record;
  return record.m === undefined
    ? ({ v: record.v, t, k: record.k, d: record.d } as RecordedEvent)
    : ({
        v: record.v,
        t,
        k: record.k,
        m: record.m,
        d: record.d,
      } as RecordedEvent);
}

/** One line of the events file, newline included. */
export function encodeRecordLine(record: RecordedEvent): string {
  return `${JSON.stringify(record)}\n`;
}

const KIND_SET: ReadonlySet<string> = new Set(RECORD_KINDS);

/**
 * The cheap check every decoded line gets, verified or not: the version and the kind. Anything
 * deeper is `RecordedEventSchema`'s job.
 */
export function checkRecordHeader(value: unknown, line: number): RecordedEvent {
  const record = value as { v?: unknown; t?: unknown; k?: unknown } | null;
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    throw invalidRecord(line, 'a record must be a JSON object');
  }
  if (record.v !== FORMAT_VERSION) {
    throw new PaperbotError(
      'RECORDING_UNSUPPORTED_VERSION',
      `line ${line}: record version ${JSON.stringify(record.v)} is not supported (this reader reads version ${FORMAT_VERSION})`,
      { details: { line, version: record.v } },
    );
  }
  if (typeof record.t !== 'number' || typeof record.k !== 'string' || !KIND_SET.has(record.k)) {
    throw invalidRecord(line, 'a record needs a numeric t and a known kind k');
  }
  return value as RecordedEvent;
}

/** Full verification of one decoded line against `RecordedEventSchema`. */
export function verifyRecord(value: unknown, line: number): RecordedEvent {
  const result = RecordedEventSchema.safeParse(value);
  if (!result.success) {
    const issues = schemaIssuesOf(result.error);
    throw new PaperbotError(
      'RECORDING_INVALID',
      `line ${line}: ${describeSchemaIssues(issues, '(record)').join('; ')}`,
      { details: { line, issues } },
    );
  }
  // The decoded object itself is returned, not zod's copy: defaults must not creep in, so the
  // replay sees the bytes that were recorded.
  return value as RecordedEvent;
}

export function invalidRecord(line: number, message: string): PaperbotError {
  return new PaperbotError('RECORDING_INVALID', `line ${line}: ${message}`, {
    details: { line },
  });
}

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const NONZERO_DIGIT = /[1-9]/;

function isPositiveDecimal(value: unknown): boolean {
  return (
    typeof value === 'string' &&
    DECIMAL.test(value) &&
    value.charCodeAt(0) !== 45 /* - */ &&
    NONZERO_DIGIT.test(value)
  );
}

function isNonNegativeDecimal(value: unknown): boolean {
  return (
    typeof value === 'string' &&
    DECIMAL.test(value) &&
    (value.charCodeAt(0) !== 45 /* - */ || !NONZERO_DIGIT.test(value))
  );
}

function levelsProblem(levels: unknown, side: string): string | null {
  if (!Array.isArray(levels)) return `d.${side} is not a list`;
  for (let index = 0; index < levels.length; index++) {
    const level = levels[index] as { price?: unknown; quantity?: unknown } | null;
    if (level === null || typeof level !== 'object') return `d.${side}.${index} is not a level`;
    if (!isPositiveDecimal(level.price)) {
      return `d.${side}.${index}.price ${JSON.stringify(level.price)} is not a positive decimal`;
    }
    if (!isNonNegativeDecimal(level.quantity)) {
      return `d.${side}.${index}.quantity ${JSON.stringify(level.quantity)} is not a decimal of zero or more`;
    }
  }
  return null;
}

/**
 * What is wrong with the values a replay trades on, or null: a cheap check run on every record
 * (the zod schema is for the leading records and `paperbot verify`). Time is a whole number of
 * ms, market data names its record's market, prices are positive decimals and quantities are
 * decimals of zero or more (positive for a trade).
 */
export function recordValueProblem(record: RecordedEvent): string | null {
  if (!Number.isSafeInteger(record.t) || record.t < 0) return `t ${String(record.t)} is not a time`;
  if (record.k !== 'ticker' && record.k !== 'book' && record.k !== 'trade') return null;
  const data = record.d as unknown as Record<string, unknown> | null;
  if (data === null || typeof data !== 'object') return 'd is not an object';
  switch (record.k) {
    case 'ticker': {
      if (data.market_id !== record.m) return `d.market_id is not the record's market`;
      for (const field of ['mark_price', 'index_price', 'last_price']) {
        const value = data[field];
        if (value !== null && !isPositiveDecimal(value)) {
          return `d.${field} ${JSON.stringify(value)} is not a positive decimal`;
        }
      }
      return null;
    }
    case 'book':
      if (data.market_id !== record.m) return `d.market_id is not the record's market`;
      return levelsProblem(data.bids, 'bids') ?? levelsProblem(data.asks, 'asks');
    case 'trade':
      if (data.market_id !== record.m) return `d.market_id is not the record's market`;
      if (!isPositiveDecimal(data.price)) {
        return `d.price ${JSON.stringify(data.price)} is not a positive decimal`;
      }
      if (!isPositiveDecimal(data.quantity)) {
        return `d.quantity ${JSON.stringify(data.quantity)} is not a positive decimal`;
      }
      return null;
  }
}
