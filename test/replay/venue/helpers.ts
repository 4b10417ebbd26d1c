/**
 * A replay venue on a virtual clock with one simple market (tick 1, step 1, so prices and
 * quantities read as integers), and helpers to feed it records and send it commands.
 */
import { VirtualClock } from '../../../src/core/clock.ts';
import type { Fill, PrivateEvent } from '../../../src/protocol/index.ts';
import {
  bookRecord,
  type RecordedEvent,
  tickerRecord,
  tradeRecord,
} from '../../../src/replay/format/records.ts';
import {
  parseReplayVenueConfig,
  type ReplayVenueConfigInput,
} from '../../../src/replay/venue/config.ts';
import { ReplayVenue } from '../../../src/replay/venue/replay-venue.ts';
import type {
  CommandEndpoint,
  PreparedCommand,
  VenueCommandOf,
} from '../../../src/runtime/venue.ts';
import { testBook, testMarket, testTrade } from '../../../src/runtime/testing/fixtures.ts';

export const T0 = Date.UTC(2025, 0, 1);
export const MARKET = 'TST-PERP';

export function simpleMarket() {
  return testMarket({
    market_id: MARKET,
    price_tick: '1',
    quantity_step: '1',
    minimum_quantity: '1',
    minimum_notional: null,
    maximum_leverage: 10,
    mark_price: '100',
    index_price: '100',
  });
}

export interface Harness {
  readonly clock: VirtualClock;
  readonly venue: ReplayVenue;
  /** Private events in delivery order (after the event latency). */
  readonly delivered: Fill[];
  readonly engineEvents: PrivateEvent[];
  /** The account's fills as the engine made them (before the event latency). */
  readonly fills: Fill[];
  ingest(record: RecordedEvent): void;
  ticker(mark: string): void;
  book(bids: readonly [string, string][], asks: readonly [string, string][]): void;
  trade(side: 'buy' | 'sell', price: string, quantity: string): void;
  /** Sends a command and moves the clock until its answer arrives. */
  send<E extends CommandEndpoint>(command: VenueCommandOf<E>): Promise<unknown>;
  /** Sends a command prepared or restored already, likewise. */
  sendPrepared(prepared: PreparedCommand): Promise<unknown>;
  advance(ms: number): Promise<void>;
}

let tradeCounter = 0;

export function harness(config: ReplayVenueConfigInput = {}, bookDepth = 5): Harness {
  const clock = new VirtualClock(T0);
  const venue = new ReplayVenue({
    clock,
    markets: [simpleMarket()],
    bookDepth,
    config: parseReplayVenueConfig({
      latency: { order_ms: 10, response_ms: 10, event_ms: 5 },
      fees: { maker_rate: '0.0002', taker_rate: '0.0005' },
      ...config,
    }),
    seed: 7,
  });
  const delivered: Fill[] = [];
  const engineEvents: PrivateEvent[] = [];
  venue.execution.privateStream.items$.subscribe((item) => {
    if (item.kind === 'fill') delivered.push(item.fill);
  });
  const fills: Fill[] = [];
  venue.exchange.onPrivateEvent((_, event) => {
    engineEvents.push(event);
    if (event.type === 'fill') fills.push(event.data);
  });
  const ingest = (record: RecordedEvent) => venue.ingest(record);
  const advance = async (ms: number) => {
    clock.advanceBy(ms);
    // Answers resolve promises; let their continuations run.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    clock,
    venue,
    delivered,
    engineEvents,
    fills,
    ingest,
    ticker: (mark) =>
      ingest(
        tickerRecord(clock.now(), {
          market_id: MARKET,
          mark_price: mark,
          index_price: mark,
          last_price: null,
          data_status: 'live',
        }),
      ),
    book: (bids, asks) =>
      ingest(bookRecord(clock.now(), testBook({ market_id: MARKET, bids, asks }, clock.now()))),
    trade: (side, price, quantity) =>
      ingest(
        tradeRecord(
          clock.now(),
          testTrade(
            { market_id: MARKET, price, quantity, side, trade_id: `t-${++tradeCounter}` },
            clock.now(),
          ),
        ),
      ),
    send: (command) => sendPrepared(venue.execution.prepare(command)),
    sendPrepared,
    advance,
  };

  async function sendPrepared(prepared: PreparedCommand): Promise<unknown> {
    let settled = false;
    const answer = venue.execution.send(prepared).finally(() => {
      settled = true;
    });
    answer.catch(() => undefined);
    for (let step = 0; step < 1_000 && !settled; step++) await advance(1);
    return answer;
  }
}

export function limit(
  requestId: string,
  side: 'buy' | 'sell',
  price: string,
  quantity: string,
  extra: Record<string, unknown> = {},
): VenueCommandOf<'placeOrder'> {
  return {
    endpoint: 'placeOrder',
    body: {
      request_id: requestId,
      client_order_id: requestId,
      market_id: MARKET,
      side,
      type: 'limit',
      quantity,
      price,
      leverage: 1,
      time_in_force: 'GTC',
      post_only: true,
      margin_mode: 'isolated',
      ...extra,
    },
  } as VenueCommandOf<'placeOrder'>;
}

export function marketOrder(requestId: string, side: 'buy' | 'sell', quantity: string) {
  return {
    endpoint: 'placeOrder',
    body: {
      request_id: requestId,
      client_order_id: requestId,
      market_id: MARKET,
      side,
      type: 'market',
      quantity,
      leverage: 1,
      max_slippage_percent: '2',
      margin_mode: 'isolated',
    },
  } as VenueCommandOf<'placeOrder'>;
}
