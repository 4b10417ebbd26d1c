/**
 * `MarketDataVenue` over recorded (or being-recorded) data: the replay venue feeds it records as
 * virtual time reaches them, and an in-process emulator session feeds it what its recorder
 * captures, so the strategy sees the same objects either way. Tickers carry the record's time
 * as `occurred_at` (the time the recorder received them, which replay reproduces).
 *
 * Streams are hot; values are built and pushed only while someone listens, and a new ticker or
 * book subscriber first gets the latest one. A listener that needs only the latest ticker when
 * it asks (the kernel's risk snapshot) hears of arrivals and reads it then: a ticker nobody
 * reads is never built.
 */
import type { Observable } from 'rxjs';
import { isoTimestamp } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import type { Book, Market, PublicTrade, TickerData } from '../../protocol/index.ts';
import type { MarketDataVenue } from '../../runtime/streams/market-data.ts';
import type { Ticker } from '../../runtime/strategy/types.ts';
import { HotStream } from '../../core/streams.ts';

function pad2(value: number): string {
  return value < 10 ? `0${value}` : `${value}`;
}

/**
 * `isoTimestamp(t)` without a `Date`: civil date from days since the epoch (H. Hinnant's
 * algorithm), in integer arithmetic. A replay formats one per ticker, and `toISOString` costs
 * about a microsecond; this costs a few dozen nanoseconds. Years 0 to 9999, as `toISOString`.
 */
export function formatRecordTime(t: number): string {
  if (!Number.isSafeInteger(t) || t < -62_167_219_200_000 || t > 253_402_300_799_999) {
    return isoTimestamp(t);
  }
  const millisecond = ((t % 1000) + 1000) % 1000;
  const totalSeconds = (t - millisecond) / 1000;
  const secondOfDay = ((totalSeconds % 86_400) + 86_400) % 86_400;
  const days = (totalSeconds - secondOfDay) / 86_400;
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(secondOfDay / 3600);
  const minute = Math.floor((secondOfDay % 3600) / 60);
  const second = secondOfDay % 60;
  const yearText = year < 1000 ? `${year}`.padStart(4, '0') : `${year}`;
  const millisecondText =
    millisecond < 10
      ? `00${millisecond}`
      : millisecond < 100
        ? `0${millisecond}`
        : `${millisecond}`;
  return `${yearText}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(second)}.${millisecondText}Z`;
}

/** "00" to "23": the hours of a day. */
const TWO_DIGITS = Array.from({ length: 24 }, (_, value) => pad2(value));
/** "00:00" to "59:59" and ".000Z" to ".999Z": the rest of a time within its hour, built once. */
const MINUTE_SECOND = Array.from(
  { length: 3600 },
  (_, value) => `${pad2(Math.floor(value / 60))}:${pad2(value % 60)}`,
);
const MILLISECOND_SUFFIX = Array.from(
  { length: 1000 },
  (_, value) => `.${`${value}`.padStart(3, '0')}Z`,
);
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** The times `formatRecordTime` formats itself (years 0 to 9999). */
const FIRST_FORMATTED = -62_167_219_200_000;
const LAST_FORMATTED = 253_402_300_799_999;

/**
 * The RFC 3339 text of the last record time asked: records of one instant share it. The date
 * and hour are kept for their hour, so a new time costs two concatenations of table entries (a
 * replay formats one per ticker time, and the pieces of a full format are garbage at once).
 */
export class RecordTimeText {
  private t = Number.NaN;
  private text = '';
  private dayStart = Number.NaN;
  private dayPrefix = '';
  /** The hour of the day `hourPrefix` ("YYYY-MM-DDTHH:") is for; -1 for none. */
  private hour = -1;
  private hourPrefix = '';

  of(t: number): string {
    if (t === this.t) return this.text;
    this.t = t;
    let offset = t - this.dayStart;
    if (!(offset >= 0 && offset < DAY_MS) || !Number.isSafeInteger(t)) {
      if (!Number.isSafeInteger(t) || t < FIRST_FORMATTED || t > LAST_FORMATTED) {
        this.dayStart = Number.NaN;
        this.text = formatRecordTime(t);
        return this.text;
      }
      offset = ((t % DAY_MS) + DAY_MS) % DAY_MS;
      this.dayStart = t - offset;
      // "YYYY-MM-DDT"
      this.dayPrefix = formatRecordTime(this.dayStart).slice(0, 11);
      this.hour = -1;
    }
    const hour = Math.floor(offset / HOUR_MS);
    if (hour !== this.hour) {
      this.hour = hour;
      this.hourPrefix = `${this.dayPrefix}${TWO_DIGITS[hour]}:`;
    }
    const withinHour = offset - hour * HOUR_MS;
    const millisecond = withinHour % 1000;
    this.text =
      this.hourPrefix +
      MINUTE_SECOND[(withinHour - millisecond) / 1000]! +
      MILLISECOND_SUFFIX[millisecond]!;
    return this.text;
  }
}

class MarketStreams {
  latestTicker: TickerData | null = null;
  latestTickerT = 0;
  tickerObject: Ticker | null = null;
  /** The latest book, or the record that builds it when first read (a replay's). */
  latestBook: { readonly d: Book } | null = null;
  /** Signals carry the market's id: a listener that reads tickers only when it needs them. */
  readonly ticker: HotStream<Ticker, string>;
  readonly book = new HotStream<Book>(() => this.latestBook?.d);
  readonly trades = new HotStream<PublicTrade>();

  constructor(
    marketId: string,
    private readonly times: RecordTimeText,
  ) {
    this.ticker = new HotStream<Ticker, string>(() => this.currentTicker(), marketId);
  }

  currentTicker(): Ticker | undefined {
    const data = this.latestTicker;
    if (data === null) return undefined;
    // Fields listed (not spread): the same keys in the same order, built faster.
    this.tickerObject ??= {
      market_id: data.market_id,
      mark_price: data.mark_price,
      index_price: data.index_price,
      last_price: data.last_price,
      data_status: data.data_status,
      occurred_at: this.times.of(this.latestTickerT),
    };
    return this.tickerObject;
  }
}

export class RecordedMarketData implements MarketDataVenue {
  private readonly byId = new Map<string, MarketStreams>();

  constructor(private readonly listed: readonly Market[]) {
    const times = new RecordTimeText();
    for (const market of listed)
      this.byId.set(market.market_id, new MarketStreams(market.market_id, times));
  }

  markets(): readonly Market[] {
    return this.listed;
  }

  has(marketId: string): boolean {
    return this.byId.has(marketId);
  }

  ticker$(marketId: string): Observable<Ticker> {
    return this.streamsOf(marketId).ticker.observable;
  }

  tickerArrivals$(marketId: string): Observable<string> {
    return this.streamsOf(marketId).ticker.signals;
  }

  latestTicker(marketId: string): Ticker | undefined {
    return this.streamsOf(marketId).currentTicker();
  }

  book$(marketId: string): Observable<Book> {
    return this.streamsOf(marketId).book.observable;
  }

  trades$(marketId: string): Observable<PublicTrade> {
    return this.streamsOf(marketId).trades.observable;
  }

  ticker(marketId: string, data: TickerData, t: number): void {
    const streams = this.byId.get(marketId);
    if (streams === undefined) return;
    streams.latestTicker = data;
    streams.latestTickerT = t;
    streams.tickerObject = null;
    // Built only if someone takes tickers as values; arrivals alone build nothing.
    if (streams.ticker.observed) streams.ticker.nextBuilt();
  }

  book(marketId: string, book: Book): void {
    this.bookRecord(marketId, { d: book });
  }

  /** A book record (its `d` may be built on first read): read only if someone listens. */
  bookRecord(marketId: string, record: { readonly d: Book }): void {
    const streams = this.byId.get(marketId);
    if (streams === undefined) return;
    streams.latestBook = record;
    if (streams.book.observed) streams.book.next(record.d);
  }

  trade(marketId: string, trade: PublicTrade): void {
    this.tradeRecord(marketId, { d: trade });
  }

  /** A trade record (its `d` may be built on first read): read only if someone listens. */
  tradeRecord(marketId: string, record: { readonly d: PublicTrade }): void {
    const streams = this.byId.get(marketId);
    if (streams === undefined) return;
    if (streams.trades.observed) streams.trades.next(record.d);
  }

  complete(): void {
    for (const streams of this.byId.values()) {
      streams.ticker.complete();
      streams.book.complete();
      streams.trades.complete();
    }
  }

  private streamsOf(marketId: string): MarketStreams {
    const streams = this.byId.get(marketId);
    if (streams === undefined) {
      throw new PaperbotError('UNKNOWN_MARKET', `no recorded market ${marketId}`, {
        details: { market_id: marketId },
      });
    }
    return streams;
  }
}
