/**
 * Recorded-data fixtures: valid wire objects and a deterministic generator of mixed records,
 * shared by the replay tests and the decode benchmark.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isoTimestamp } from '../../src/core/clock.ts';
import type {
  Book,
  Fill,
  Market,
  PrivateEvent,
  PublicTrade,
  TickerData,
} from '../../src/protocol/index.ts';
import {
  bookRecord,
  gapRecord,
  privateRecord,
  type RecordedEvent,
  tickerRecord,
  tradeRecord,
} from '../../src/replay/format/index.ts';

export const START_MS = Date.UTC(2025, 2, 1, 12, 0, 0);
export const MARKET_IDS = ['BTC-USD', 'ETH-USD', 'SOL-USD'] as const;

export function market(marketId: string): Market {
  return {
    market_id: marketId,
    display_name: `${marketId} perpetual`,
    base_asset: marketId.split('-')[0]!,
    quote_asset: 'USD',
    category: 'crypto',
    status: 'active',
    routes: ['svc-paper'],
    preferred_route_id: 'svc-paper',
    price_tick: '0.5',
    quantity_step: '0.001',
    minimum_quantity: '0.001',
    minimum_notional: '10',
    maximum_leverage: 20,
    margin_modes: ['isolated', 'cross'],
    order_types: ['market', 'limit'],
    mark_price: '65000.5',
    index_price: '65000',
    last_price: null,
    funding_rate: '0.0001',
    next_funding_time: '2025-03-01T16:00:00.000Z',
    volume_24h: null,
    open_interest: null,
    observed_at: isoTimestamp(START_MS),
    data_status: 'live',
  };
}

export function ticker(marketId: string, price: string): TickerData {
  return {
    market_id: marketId,
    mark_price: price,
    index_price: price,
    last_price: price,
    data_status: 'live',
  };
}

export function book(
  marketId: string,
  mid: number,
  depth: number,
  sequence: number,
  t: number,
): Book {
  const bids = [];
  const asks = [];
  for (let level = 0; level < depth; level++) {
    bids.push({
      price: `${mid - 1 - level}.5`,
      quantity: `1.${level}25`,
      order_count: 3,
    });
    asks.push({
      price: `${mid + level}.5`,
      quantity: `0.${level}75`,
      order_count: 2,
    });
  }
  return {
    market_id: marketId,
    route_id: 'svc-paper',
    market_structure: 'order_book',
    sequence,
    checksum: null,
    bids,
    asks,
    oracle: null,
    observed_at: isoTimestamp(t),
  };
}

export function publicTrade(
  marketId: string,
  index: number,
  price: string,
  t: number,
): PublicTrade {
  return {
    trade_id: `t-${index}`,
    market_id: marketId,
    route_id: 'svc-paper',
    price,
    quantity: '0.013',
    side: index % 2 === 0 ? 'buy' : 'sell',
    occurred_at: isoTimestamp(t),
  };
}

export function uuid(index: number): string {
  return `6f1c2a3b-4d5e-4f60-8a7b-${index.toString(16).padStart(12, '0')}`;
}

export function fill(sequence: number, marketId: string, price: string, t: number): Fill {
  return {
    fill_id: `fill-${sequence}`,
    market_id: marketId,
    route_id: 'svc-paper',
    side: sequence % 2 === 0 ? 'sell' : 'buy',
    quantity: '0.01',
    price,
    fee: '0.325',
    notional: '650',
    order_id: `ord-${sequence}`,
    is_maker: false,
    occurred_at: isoTimestamp(t),
  };
}

export function fillEvent(
  sequence: number,
  marketId: string,
  price: string,
  t: number,
): PrivateEvent {
  return {
    version: 1,
    sequence,
    event_id: uuid(sequence),
    occurred_at: isoTimestamp(t),
    channel: 'fills',
    type: 'fill',
    data: fill(sequence, marketId, price, t),
  };
}

export function orderStatusEvent(sequence: number, t: number): PrivateEvent {
  return {
    version: 1,
    sequence,
    event_id: uuid(sequence),
    occurred_at: isoTimestamp(t),
    channel: 'orders',
    type: 'authoritative_status',
    data: {
      entity_type: 'order',
      entity_id: `ord-${sequence}`,
      from_state: null,
      to_state: 'OPEN',
    },
  };
}

export interface MixOptions {
  readonly count: number;
  readonly bookDepth?: number;
  readonly startMs?: number;
  /** Out of 100: tickers, books, trades; the rest are private events (and one gap in 1,000). */
  readonly tickers?: number;
  readonly books?: number;
  readonly trades?: number;
}

/**
 * A deterministic mix of records over three markets, a few milliseconds apart. The default mix
 * (50 tickers, 10 books of depth 10, 38 trades, 2 private events in 100) is the benchmark's.
 */
export function mixedRecords(options: MixOptions): RecordedEvent[] {
  const depth = options.bookDepth ?? 10;
  const tickers = options.tickers ?? 50;
  const books = tickers + (options.books ?? 10);
  const trades = books + (options.trades ?? 38);
  const records: RecordedEvent[] = [];
  let t = options.startMs ?? START_MS;
  let mid = 65_000;
  let sequence = 0;
  for (let index = 0; index < options.count; index++) {
    t += 1 + (index % 5);
    const marketId = MARKET_IDS[index % MARKET_IDS.length]!;
    mid += ((index * 7_919) % 11) - 5;
    const price = `${mid}.5`;
    const slot = (index * 37) % 100;
    if (index % 1_000 === 999) {
      records.push(gapRecord(t, 'ticker', 'reconnected', marketId));
    } else if (slot < tickers) {
      records.push(tickerRecord(t, ticker(marketId, price)));
    } else if (slot < books) {
      records.push(bookRecord(t, book(marketId, mid, depth, index, t)));
    } else if (slot < trades) {
      records.push(tradeRecord(t, publicTrade(marketId, index, price, t)));
    } else {
      sequence++;
      records.push(
        privateRecord(
          t,
          sequence % 3 === 0
            ? orderStatusEvent(sequence, t)
            : fillEvent(sequence, marketId, price, t),
        ),
      );
    }
  }
  return records;
}

export async function withTemporaryDirectory<T>(
  run: (directory: string) => Promise<T>,
): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), 'paperbot-replay-'));
  try {
    return await run(directory);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
