/**
 * Book CSV (timestamp, side, price, quantity) to `book` snapshots at a configured depth and
 * interval. Two modes:
 *
 * - `updates`: each row sets one level's quantity (zero removes it), applied in file order;
 * - `snapshots`: the rows of one timestamp are a whole book, replacing the previous one.
 *
 * Snapshots are taken on the interval grid (multiples of `intervalMs` since the epoch): the book
 * as it stood after every row at or before that time, stamped with that time. A stretch with no
 * rows gives no snapshots (the last one stands, as when a recorder sees no change); the last
 * state is written at the end. Levels are held in maps; only the top `depth` of each side are
 * sorted out at each snapshot.
 */
import { isoTimestamp } from '../../core/clock.ts';
import { parseDecimal } from '../../core/decimal.ts';
import { PaperbotError } from '../../core/errors.ts';
import { bookRecord, type BookRecord } from '../format/index.ts';
import type { ColumnLayout } from './csv-rows.ts';
import { readOrderedRows } from './ordered-rows.ts';
import type { GridCheck, MarketSpec } from './market-spec.ts';
import { atRow, type ImportedRecord, type InputTally } from './rows.ts';
import type { TimeUnit } from './timestamps.ts';

export const BOOK_FIELDS = {
  required: ['timestamp', 'side', 'price', 'quantity'],
  optional: [],
} as const;

export const BOOK_MODES = ['updates', 'snapshots'] as const;
export type BookMode = (typeof BOOK_MODES)[number];

export interface BookInput {
  readonly path: string;
  readonly layout: ColumnLayout;
  readonly timeUnit: TimeUnit;
  readonly sort: boolean;
  readonly mode: BookMode;
  readonly depth: number;
  readonly intervalMs: number;
}

function bookSide(text: string): 'bids' | 'asks' {
  const side = text.toLowerCase();
  if (side === 'bid' || side === 'b' || side === 'buy' || side === 'bids') return 'bids';
  if (side === 'ask' || side === 'a' || side === 'sell' || side === 'asks') return 'asks';
  throw new PaperbotError('IMPORT_INVALID_ROW', `side ${JSON.stringify(text)} is not bid or ask`);
}

class LevelBook {
  readonly bids = new Map<string, string>();
  readonly asks = new Map<string, string>();

  set(side: 'bids' | 'asks', price: string, quantity: string): void {
    if (quantity === '0') this[side].delete(price);
    else this[side].set(price, quantity);
  }

  clear(): void {
    this.bids.clear();
    this.asks.clear();
  }

  snapshot(t: number, market: MarketSpec, depth: number, sequence: number): BookRecord {
    return bookRecord(t, {
      market_id: market.market_id,
      route_id: market.route_id,
      market_structure: 'order_book',
      sequence,
      checksum: null,
      bids: top(this.bids, depth, true),
      asks: top(this.asks, depth, false),
      oracle: null,
      observed_at: isoTimestamp(t),
    });
  }
}

function top(levels: ReadonlyMap<string, string>, depth: number, descending: boolean) {
  const prices = [...levels.keys()]
    .map((price) => ({ price, value: parseDecimal(price) }))
    .sort((a, b) => (descending ? b.value.cmp(a.value) : a.value.cmp(b.value)))
    .slice(0, depth);
  return prices.map(({ price }) => ({ price, quantity: levels.get(price)!, order_count: 0 }));
}

export async function* importBook(
  input: BookInput,
  market: MarketSpec,
  grid: GridCheck,
  tally: InputTally,
): AsyncGenerator<ImportedRecord> {
  const book = new LevelBook();
  const boundaryOf = (t: number) => Math.ceil(t / input.intervalMs) * input.intervalMs;
  let pending: number | null = null; // the interval time the current state will be stamped with
  let lastRowT: number | null = null;
  let lastLine = 0;
  let sequence = 0;
  for await (const row of readOrderedRows(input, tally)) {
    const level = atRow(input.path, row.line, () => ({
      t: row.t,
      side: bookSide(row.fields.side!),
      price: grid.price(row.fields.price!),
      quantity: grid.quantity(row.fields.quantity!),
    }));
    if (pending !== null && level.t > pending) {
      yield { line: lastLine, record: book.snapshot(pending, market, input.depth, ++sequence) };
      pending = null;
    }
    if (input.mode === 'snapshots' && level.t !== lastRowT) book.clear();
    book.set(level.side, level.price, level.quantity);
    pending = boundaryOf(level.t);
    lastRowT = level.t;
    lastLine = row.line;
  }
  if (pending !== null) {
    yield { line: lastLine, record: book.snapshot(pending, market, input.depth, ++sequence) };
  }
}
