/**
 * The exit emulator on its own, on a VirtualClock, fed from Subjects, with a real SQLite
 * journal as its store: every price source, trailing updates, OCO across sources, the
 * strategy's cancel and amend, a flat position dropping its exits, the live bound, and a
 * restart that restores the exits and fires a triggered one's release again only when the
 * executor never journaled it.
 */
import { type Observable, ReplaySubject, Subject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import type { Book, Order, Position, PublicTrade } from '../../../src/protocol/index.ts';
import { ExitEmulator } from '../../../src/runtime/exits/emulator.ts';
import type { IntentOutcome, OrderIntent, StampedIntent } from '../../../src/runtime/intents.ts';
import { journalExitStore } from '../../../src/runtime/journal/exits.ts';
import type { Journal } from '../../../src/runtime/journal/journal.ts';
import { TickerArrivals, type MarketDataVenue } from '../../../src/runtime/streams/market-data.ts';
import {
  bracket,
  cancelOrder,
  limitOrder,
  stopLimit,
  stopMarket,
  takeProfit,
  type Ticker,
  trailingStop,
} from '../../../src/runtime/strategy/index.ts';
import {
  TEST_START_TIME,
  testBook,
  testMarket,
  testOrder,
  testPosition,
  testTicker,
  testTrade,
} from '../../../src/runtime/testing/fixtures.ts';
import { openJournal, tempJournalPath } from '../execution/fixtures.ts';

class FakeMarketData implements MarketDataVenue {
  // Hot, as the venue's: tickers and books replay the latest to a new subscriber.
  readonly tickers = new ReplaySubject<Ticker>(1);
  readonly trades = new Subject<PublicTrade>();
  readonly books = new ReplaySubject<Book>(1);
  readonly subscribed: string[] = [];

  private readonly arrivals = new TickerArrivals((marketId) => this.ticker$(marketId));

  tickerArrivals$(marketId: string): Observable<string> {
    return this.arrivals.arrivals$(marketId);
  }

  latestTicker(marketId: string): Ticker | undefined {
    return this.arrivals.latestTicker(marketId);
  }

  markets() {
    return [testMarket()];
  }

  ticker$(marketId: string): Observable<Ticker> {
    this.subscribed.push(`ticker ${marketId}`);
    return this.tickers;
  }

  trades$(marketId: string): Observable<PublicTrade> {
    this.subscribed.push(`trades ${marketId}`);
    return this.trades;
  }

  book$(marketId: string): Observable<Book> {
    this.subscribed.push(`book ${marketId}`);
    return this.books;
  }

  mark(price: string): void {
    this.tickers.next(testTicker({ market_id: 'BTC-PERP', mark_price: price }));
  }

  trade(price: string): void {
    this.trades.next(testTrade({ market_id: 'BTC-PERP', price, trade_id: `t-${price}` }));
  }

  book(bid: string, ask: string): void {
    this.books.next(testBook({ market_id: 'BTC-PERP', bids: [[bid, '1']], asks: [[ask, '1']] }));
  }
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function long(quantity = '1'): Position {
  return testPosition({ market_id: 'BTC-PERP', side: 'long', quantity, entry_price: '100' });
}

class World {
  readonly clock = new VirtualClock(TEST_START_TIME);
  readonly market = new FakeMarketData();
  readonly releases: StampedIntent[] = [];
  readonly outcomes: IntentOutcome[] = [];
  positions: Position[] = [long()];
  openOrders: Order[] = [];
  emulator!: ExitEmulator;
  private sequence = 0;

  constructor(readonly journal: Journal) {
    this.boot();
  }

  boot(): ExitEmulator {
    this.emulator = new ExitEmulator({
      clock: this.clock,
      marketData: this.market,
      store: journalExitStore(this.journal),
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      positions: () => this.positions,
      openOrders: () => this.openOrders,
      config: { maxLiveExits: 4 },
    });
    this.emulator.releases$.subscribe((stamped) => this.releases.push(stamped));
    this.emulator.outcomes$.subscribe((outcome) => this.outcomes.push(outcome));
    return this.emulator;
  }

  emit(intent: OrderIntent): StampedIntent {
    this.sequence += 1;
    const requestId = `alpha:epoch:${this.sequence}`;
    const stamped: StampedIntent = {
      strategyId: 'alpha',
      sequence: this.sequence,
      requestId,
      clientOrderId: null,
      intent,
      emittedAt: this.clock.now(),
    };
    expect(this.emulator.take(stamped)).toBe(true);
    return stamped;
  }

  states(): Record<string, string> {
    return Object.fromEntries(this.emulator.exitsOf('alpha').map((exit) => [exit.id, exit.state]));
  }
}

function world(): World {
  const clock = new VirtualClock(TEST_START_TIME);
  const temporary = tempJournalPath();
  cleanups.push(temporary.cleanup);
  const journal = openJournal(temporary.path, clock, 'normal');
  cleanups.push(() => journal.isOpen && journal.close());
  return new World(journal);
}

const BTC = { marketId: 'BTC-PERP', quantity: '1' } as const;

describe('ExitEmulator', () => {
  it('fires a stop on the mark at its level, once, as a reduce-only market order', () => {
    const w = world();
    const exit = w.emit(stopMarket({ ...BTC, side: 'sell', triggerPrice: '95' }));
    expect(w.outcomes).toMatchObject([{ status: 'accepted', orderId: null }]);
    w.market.mark('96');
    expect(w.releases).toEqual([]);
    w.market.mark('95');
    w.market.mark('90');
    expect(w.releases).toHaveLength(1);
    expect(w.releases[0]).toMatchObject({
      strategyId: 'alpha',
      requestId: `${exit.requestId}:x`,
      clientOrderId: `${exit.requestId}:x`,
      sequence: -4,
      intent: {
        kind: 'place',
        marketId: 'BTC-PERP',
        side: 'sell',
        type: 'market',
        quantity: '1',
        reduceOnly: true,
      },
    });
    expect(w.states()).toEqual({ [exit.requestId]: 'triggered' });
    w.emulator.onOutcome({ status: 'accepted', intent: w.releases[0]!, orderId: 'o-1' });
    expect(w.states()).toEqual({ [exit.requestId]: 'released' });
    expect(w.emulator.waiting()).toEqual([]);
  });

  it('watches the last trade or the book touch when asked, and only while it needs to', () => {
    const w = world();
    w.emit(
      stopLimit({
        ...BTC,
        side: 'sell',
        triggerPrice: '95',
        limitPrice: '94',
        triggerSource: 'last',
      }),
    );
    w.emit(takeProfit({ ...BTC, side: 'sell', triggerPrice: '110', triggerSource: 'bid_ask' }));
    expect(w.market.subscribed).toEqual(['trades BTC-PERP', 'book BTC-PERP']);
    w.market.mark('50');
    w.market.book('109.5', '111');
    expect(w.releases).toEqual([]);
    expect(w.emulator.waiting()).toMatchObject([
      { kind: 'stop', source: 'last', triggerPrice: '95', price: null, distance: null },
      { kind: 'take_profit', source: 'bid_ask', price: '109.5', distance: '0.5' },
    ]);
    w.market.trade('95');
    expect(w.releases.map((release) => release.intent)).toMatchObject([
      { type: 'limit', price: '94', side: 'sell' },
    ]);
    // The ask moving does not touch a sell's trigger; the bid does.
    w.market.book('109.5', '200');
    expect(w.releases).toHaveLength(1);
    w.market.book('110', '200');
    expect(w.releases).toHaveLength(2);
  });

  it('moves a trailing stop only in the favourable direction and journals its memory', () => {
    const w = world();
    const exit = w.emit(
      trailingStop({ ...BTC, side: 'sell', offset: '5', activationPrice: '100' }),
    );
    for (const price of ['98', '101', '108', '104', '110', '106']) w.market.mark(price);
    expect(w.releases).toEqual([]);
    expect(w.emulator.waiting()).toMatchObject([{ triggerPrice: '105', distance: '1' }]);
    expect(w.journal.exits.live()).toMatchObject([
      { id: exit.requestId, trailing: { active: true, extreme: '110' } },
    ]);
    w.market.mark('105');
    expect(w.releases).toHaveLength(1);
  });

  it('a bracket: the entry leaves at once, the legs wait for its fill, then one cancels the other', () => {
    const w = world();
    const stamped = w.emit(
      bracket({
        entry: limitOrder({ ...BTC, side: 'buy', price: '100' }),
        stopLoss: { triggerPrice: '95' },
        takeProfit: { triggerPrice: '110' },
        triggerSource: 'mark',
      }),
    );
    const id = stamped.requestId;
    expect(w.releases).toMatchObject([
      { requestId: id, clientOrderId: id, sequence: 1, intent: { kind: 'place', price: '100' } },
    ]);
    w.market.mark('90');
    expect(w.releases).toHaveLength(1);
    expect(w.states()).toEqual({ [`${id}:sl`]: 'pending', [`${id}:tp`]: 'pending' });
    w.emulator.onOrder(
      testOrder({
        order_id: 'o-1',
        market_id: 'BTC-PERP',
        client_order_id: id,
        status: 'PARTIALLY_FILLED',
        filled_quantity: '0.4',
      }),
    );
    // The legs start watching: the mark replayed to the new subscriber is 90: under the stop-loss, so it fires now.
    expect(w.releases).toHaveLength(2);
    expect(w.releases[1]).toMatchObject({
      requestId: `${id}:sl:x`,
      sequence: -5,
      intent: { side: 'sell', quantity: '0.4', reduceOnly: true },
    });
    expect(w.states()).toEqual({ [`${id}:sl`]: 'triggered', [`${id}:tp`]: 'cancelled' });
  });

  it('cancels a bracket’s legs when its entry is refused or ends unfilled', () => {
    const w = world();
    const first = w.emit(
      bracket({
        entry: limitOrder({ ...BTC, side: 'buy', price: '100' }),
        stopLoss: { triggerPrice: '95' },
      }),
    );
    w.emulator.onOutcome({ status: 'rejected', intent: w.releases[0]!, code: 'X', message: 'no' });
    const second = w.emit(
      bracket({
        entry: limitOrder({ ...BTC, side: 'buy', price: '100' }),
        takeProfit: { triggerPrice: '105' },
      }),
    );
    w.emulator.onOrder(
      testOrder({
        order_id: 'o-2',
        market_id: 'BTC-PERP',
        client_order_id: second.requestId,
        status: 'CANCELLED',
      }),
    );
    expect(w.states()).toEqual({
      [`${first.requestId}:sl`]: 'cancelled',
      [`${second.requestId}:tp`]: 'cancelled',
    });
  });

  it('lets the strategy amend and cancel its exits, and drops reduce-only exits of a flat market', () => {
    const w = world();
    const a = w.emit(stopMarket({ ...BTC, side: 'sell', triggerPrice: '95' }));
    const b = w.emit(takeProfit({ ...BTC, side: 'sell', triggerPrice: '120' }));
    const amend = w.emit({
      kind: 'amend',
      clientOrderId: a.requestId,
      price: '97',
      quantity: '0.5',
    });
    const cancel = w.emit(cancelOrder(b.requestId));
    expect(w.outcomes.slice(2)).toMatchObject([
      { status: 'accepted', intent: { requestId: amend.requestId } },
      { status: 'accepted', intent: { requestId: cancel.requestId } },
    ]);
    expect(w.emulator.waiting()).toMatchObject([
      { id: a.requestId, triggerPrice: '97', quantity: '0.5' },
    ]);
    expect(w.emulator.take({ ...cancel, intent: cancelOrder('not-an-exit') })).toBe(false);
    w.positions = [];
    w.emulator.onPositions([{ ...long(), quantity: '0' }]);
    expect(w.states()).toEqual({ [a.requestId]: 'cancelled', [b.requestId]: 'cancelled' });
    w.market.mark('1');
    expect(w.releases).toEqual([]);
  });

  it('holds a reduce-only exit while there is no position, and evaluates it when one appears', () => {
    const w = world();
    w.positions = [];
    w.emulator.onPositions([]);
    const exit = w.emit(stopMarket({ ...BTC, side: 'sell', triggerPrice: '95' }));
    w.market.mark('90');
    expect(w.releases).toEqual([]);
    w.positions = [long()];
    w.emulator.onPositions(w.positions);
    expect(w.releases.map((release) => release.requestId)).toEqual([`${exit.requestId}:x`]);
  });

  it('denies an exit or bracket on a market the venue does not list', () => {
    const w = world();
    const exit = w.emit(
      stopMarket({ ...BTC, marketId: 'DOGE-PERP', side: 'sell', triggerPrice: '1' }),
    );
    const pair = w.emit(
      bracket({
        entry: limitOrder({ ...BTC, marketId: 'DOGE-PERP', side: 'buy', price: '1' }),
        stopLoss: { triggerPrice: '0.5' },
      }),
    );
    expect(w.outcomes).toMatchObject([
      {
        status: 'denied',
        intent: { requestId: exit.requestId },
        denials: [{ message: 'no market DOGE-PERP to watch' }],
      },
      { status: 'denied', intent: { requestId: pair.requestId } },
    ]);
    expect(w.releases).toEqual([]);
    expect(w.market.subscribed).toEqual([]);
    expect(w.emulator.exitsOf('alpha')).toEqual([]);
  });

  it('denies exits beyond its bound, and amending a trailing stop’s price', () => {
    const w = world();
    for (let index = 0; index < 4; index += 1) {
      w.emit(stopMarket({ ...BTC, side: 'sell', triggerPrice: '50' }));
    }
    const over = w.emit(stopMarket({ ...BTC, side: 'sell', triggerPrice: '50' }));
    expect(w.outcomes.at(-1)).toMatchObject({
      status: 'denied',
      intent: { requestId: over.requestId },
      denials: [{ rule: 'emulated_exit', message: 'at most 4 live emulated exits' }],
    });
    const w2 = world();
    const trailing = w2.emit(trailingStop({ ...BTC, side: 'sell', offsetPercent: '1' }));
    w2.emit({ kind: 'amend', clientOrderId: trailing.requestId, price: '90' });
    expect(w2.outcomes.at(-1)).toMatchObject({ status: 'denied' });
  });

  it('restores live exits after a restart; a triggered one is released again only if never journaled', () => {
    const w = world();
    const waiting = w.emit(takeProfit({ ...BTC, side: 'sell', triggerPrice: '120' }));
    const fired = w.emit(stopMarket({ ...BTC, side: 'sell', triggerPrice: '95' }));
    w.market.mark('94');
    expect(w.releases.map((release) => release.requestId)).toEqual([`${fired.requestId}:x`]);
    // The process dies before the executor journals the release.
    w.emulator.stop();
    w.releases.length = 0;
    w.boot().restore(true);
    expect(w.releases.map((release) => release.requestId)).toEqual([`${fired.requestId}:x`]);
    expect(w.states()).toEqual({ [waiting.requestId]: 'waiting', [fired.requestId]: 'triggered' });

    // This time the executor journals it; a restart leaves it to the executor.
    w.journal.recordIntent(w.releases[0]!);
    w.emulator.stop();
    w.releases.length = 0;
    w.boot().restore(true);
    expect(w.releases).toEqual([]);
    expect(w.states()).toEqual({ [waiting.requestId]: 'waiting', [fired.requestId]: 'released' });
    w.market.mark('119');
    w.market.mark('120');
    expect(w.releases.map((release) => release.requestId)).toEqual([`${waiting.requestId}:x`]);
  });

  it('drops a restored reduce-only exit whose position is gone, but only once reconciled', () => {
    const w = world();
    const exit = w.emit(stopMarket({ ...BTC, side: 'sell', triggerPrice: '95' }));
    w.emulator.stop();
    w.positions = [];
    w.boot().restore(false);
    expect(w.states()).toEqual({ [exit.requestId]: 'waiting' });
    w.emulator.stop();
    w.boot().restore(true);
    expect(w.states()).toEqual({ [exit.requestId]: 'cancelled' });
    expect(w.journal.exits.live()).toEqual([]);
  });

  it('settles restored bracket legs by what became of their entry while the bot was down', () => {
    const entry = limitOrder({ ...BTC, side: 'buy', price: '100' });
    const legs = { stopLoss: { triggerPrice: '90' }, takeProfit: { triggerPrice: '200' } };
    const restart = (w: World) => {
      w.emulator.stop();
      w.boot().restore(true);
    };

    // Still open, partly filled: the legs watch for what filled.
    const open = world();
    const a = open.emit(bracket({ entry, ...legs }));
    open.openOrders = [
      testOrder({
        order_id: 'o-1',
        market_id: 'BTC-PERP',
        client_order_id: a.requestId,
        status: 'PARTIALLY_FILLED',
        filled_quantity: '0.25',
      }),
    ];
    restart(open);
    expect(open.emulator.waiting()).toMatchObject([
      { id: `${a.requestId}:sl`, state: 'waiting', quantity: '0.25' },
      { id: `${a.requestId}:tp`, state: 'waiting', quantity: '0.25' },
    ]);

    // Gone, and the market has a position: it filled; the legs watch.
    const filled = world();
    const b = filled.emit(bracket({ entry, ...legs }));
    restart(filled);
    expect(filled.states()).toEqual({
      [`${b.requestId}:sl`]: 'waiting',
      [`${b.requestId}:tp`]: 'waiting',
    });
    filled.market.mark('89');
    expect(filled.releases.at(-1)?.requestId).toBe(`${b.requestId}:sl:x`);

    // Gone, and no position: it never filled; the legs are cancelled.
    const unfilled = world();
    const c = unfilled.emit(bracket({ entry, ...legs }));
    unfilled.positions = [];
    restart(unfilled);
    expect(unfilled.states()).toEqual({
      [`${c.requestId}:sl`]: 'cancelled',
      [`${c.requestId}:tp`]: 'cancelled',
    });
  });
});
