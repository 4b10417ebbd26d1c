/**
 * A test harness for strategy authors: the real strategy host on a `VirtualClock`, fed from
 * Subjects. A test feeds market and account events at virtual times, answers intents the way
 * the risk gate and executor would, advances time, and reads the intents that came out.
 *
 * The harness runs the same host, context and candle code as the runtime, so a strategy that
 * passes here meets the same stamping, queueing and fail-closed rules live.
 */
import { concat, defer, from, type Observable, ReplaySubject, Subject } from 'rxjs';
import { VirtualClock } from '../../core/clock.ts';
import { type Decimal, parseDecimal, toWire, ZERO } from '../../core/decimal.ts';
import { ExitEmulator } from '../exits/emulator.ts';
import { StrategyHost, type StrategyFailure } from '../strategy/host.ts';
import { closedCandleHistory } from '../streams/candles.ts';
import type {
  Account,
  Book,
  Candle,
  Denial,
  Fill,
  IntentOutcome,
  LogFields,
  Logger,
  Market,
  OpenOrder,
  Order,
  OrderStatus,
  Position,
  PositionSnapshot,
  PublicTrade,
  Side,
  StampedIntent,
  StrategyContext,
  StrategyDefinition,
  StrategyEnvironment,
  Ticker,
} from '../strategy/index.ts';
import {
  type BookFields,
  type OrderFields,
  type PositionFields,
  TEST_START_TIME,
  type TestFields,
  type TickerFields,
  testAccount,
  testBook,
  testFill,
  testMarket,
  testOrder,
  testPosition,
  testTicker,
  testTrade,
} from './fixtures.ts';

export interface LogRecord {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: LogFields;
  readonly at: number;
}

/**
 * How the harness answers intents as they leave the host:
 * - `none` (default): the test answers with `accept`, `deny`, ... itself;
 * - `accept`: every intent is accepted; limit orders are then reported OPEN, and cancels (one
 *   or all) report the cancelled orders CANCELLED, as a venue would; market orders stay
 *   accepted until the test fills them;
 * - a function: called with each intent; its outcomes (if any) are delivered.
 */
export type HarnessResponder =
  | 'none'
  | 'accept'
  | ((
      intent: StampedIntent,
      harness: StrategyHarness<unknown>,
    ) => IntentOutcome | readonly IntentOutcome[] | null | undefined);

export interface StrategyHarnessOptions<Params> {
  readonly strategy: StrategyDefinition<Params>;
  /** Raw params, parsed with the strategy's schema (so `{}` gets the defaults). */
  readonly params?: unknown;
  /** Default: one `testMarket()` (BTC-PERP, tick 0.5, step 0.001). */
  readonly markets?: readonly Market[];
  /** Epoch milliseconds; default 2024-01-01T00:00:00Z. */
  readonly startTime?: number;
  readonly strategyId?: string;
  readonly epoch?: string;
  readonly startSequence?: number;
  /** State the account has before the strategy starts (replayed to it, as the kernel does). */
  readonly positions?: readonly Position[];
  readonly orders?: readonly Order[];
  readonly account?: Account;
  readonly tickers?: readonly Ticker[];
  readonly respond?: HarnessResponder;
  readonly candleGraceMs?: number;
  /**
   * Candles the venue's history holds (any markets and intervals): a strategy that declares
   * `candleHistory` gets, per request, the last `count` of them that closed by the start time.
   */
  readonly candleHistory?: readonly Candle[];
  /** Default true; with false, call `start()` after setting up. */
  readonly autoStart?: boolean;
  /** Also receives every log line (they are always kept in `logs`). */
  readonly logger?: Logger;
}

export interface FillOptions {
  /** Default: the order's remaining quantity. */
  readonly quantity?: string;
  /** Default: the order's limit price, else the last mark of the market. */
  readonly price?: string;
  readonly isMaker?: boolean;
  readonly fee?: string;
}

const TERMINAL: ReadonlySet<OrderStatus> = new Set(['FILLED', 'CANCELLED', 'REJECTED']);

class RecordingLogger implements Logger {
  constructor(
    private readonly records: LogRecord[],
    private readonly now: () => number,
    private readonly forward: Logger | undefined,
  ) {}

  debug(message: string, fields: LogFields = {}): void {
    this.record('debug', message, fields);
  }

  info(message: string, fields: LogFields = {}): void {
    this.record('info', message, fields);
  }

  warn(message: string, fields: LogFields = {}): void {
    this.record('warn', message, fields);
  }

  error(message: string, fields: LogFields = {}): void {
    this.record('error', message, fields);
  }

  private record(level: LogRecord['level'], message: string, fields: LogFields): void {
    this.records.push({ level, message, fields, at: this.now() });
    this.forward?.[level](message, fields);
  }
}

export class StrategyHarness<Params> {
  readonly clock: VirtualClock;
  readonly host: StrategyHost;
  readonly strategyId: string;
  readonly context: StrategyContext<Params>;
  /** Every intent the strategy emitted, in order. */
  readonly intents: StampedIntent[] = [];
  /** Every outcome delivered to the strategy, in order. */
  readonly outcomes: IntentOutcome[] = [];
  readonly failures: StrategyFailure[] = [];
  readonly logs: LogRecord[] = [];
  /**
   * The runtime's exit emulator over the harness's feeds (no journal): exits and brackets the
   * strategy emits are held here, and their releases arrive as intents like any other.
   */
  readonly exits: ExitEmulator;

  private readonly markets: Market[];
  private readonly tickerSubjects = new Map<string, ReplaySubject<Ticker>>();
  private readonly bookSubjects = new Map<string, Subject<Book>>();
  private readonly tradeSubjects = new Map<string, Subject<PublicTrade>>();
  private readonly orderUpdates = new Subject<Order>();
  private readonly fillUpdates = new Subject<Fill>();
  private readonly positionUpdates = new Subject<Position>();
  private readonly accountUpdates = new ReplaySubject<Account>(1);
  private readonly activeOrders = new Map<string, Order>();
  private readonly openPositions = new Map<string, Position>();
  private readonly orderIds = new Map<string, string>();
  private readonly respond: HarnessResponder;
  private taken = 0;
  private nextTradeId = 1;
  private nextFillId = 1;

  constructor(options: StrategyHarnessOptions<Params>) {
    this.clock = new VirtualClock(options.startTime ?? TEST_START_TIME);
    this.markets = [...(options.markets ?? [testMarket()])];
    this.strategyId = options.strategyId ?? 'test';
    this.respond = options.respond ?? 'none';
    for (const order of options.orders ?? []) this.trackOrder(order);
    for (const position of options.positions ?? []) this.trackPosition(position);
    if (options.account) this.accountUpdates.next(options.account);
    for (const ticker of options.tickers ?? []) this.tickerSubject(ticker.market_id).next(ticker);

    const logger = new RecordingLogger(this.logs, () => this.clock.now(), options.logger);
    const environment = this.environment(logger, options.candleGraceMs);
    this.exits = new ExitEmulator({
      clock: this.clock,
      marketData: environment,
      store: null,
      logger,
      positions: () => [...this.openPositions.values()],
    });
    this.exits.outcomes$.subscribe((outcome) => this.outcome(outcome));
    this.exits.releases$.subscribe((release) => this.onIntent(release));
    this.orderUpdates.subscribe((order) => this.exits.onOrder(order));
    this.positionUpdates.subscribe(() => this.exits.onPositions([...this.openPositions.values()]));
    this.host = new StrategyHost({
      environment,
      epoch: options.epoch ?? 'e1',
    });
    this.host.intents$.subscribe((intent) => this.onIntent(intent));
    this.host.errors$.subscribe((failure) => this.failures.push(failure));
    this.context = this.host.add({
      strategyId: this.strategyId,
      definition: options.strategy,
      params: options.params,
      startSequence: options.startSequence,
    });
    const history = options.candleHistory ?? [];
    this.host.provideCandleHistory(this.strategyId, ({ marketId, interval, count }) =>
      closedCandleHistory(
        history.filter((candle) => candle.market_id === marketId),
        interval,
        this.clock.now(),
        count,
      ),
    );
    if (options.autoStart !== false) this.start();
  }

  start(): this {
    this.host.start(this.strategyId);
    return this;
  }

  stop(): void {
    this.host.stop(this.strategyId);
  }

  // Time

  now(): number {
    return this.clock.now();
  }

  /** Moves virtual time to `epochMs`, firing every timer due on the way. */
  advanceTo(epochMs: number): this {
    this.clock.advanceTo(epochMs);
    return this;
  }

  advanceBy(milliseconds: number): this {
    this.clock.advanceBy(milliseconds);
    return this;
  }

  /** Moves time to `epochMs` (not backwards); chain a feed after it: `at(t).mark(...)`. */
  at(epochMs: number): this {
    if (epochMs > this.clock.now()) this.clock.advanceTo(epochMs);
    return this;
  }

  // Intents

  /** The intents emitted since the last `take()`. */
  take(): StampedIntent[] {
    const fresh = this.intents.slice(this.taken);
    this.taken = this.intents.length;
    return fresh;
  }

  /** The intent with this client order id, or with this request id. */
  intent(id: string): StampedIntent {
    const found = this.intents.find(
      (candidate) => candidate.clientOrderId === id || candidate.requestId === id,
    );
    if (!found) throw new Error(`no intent with id ${id}`);
    return found;
  }

  // Snapshots, as the strategy sees them

  openOrders(marketId?: string): readonly OpenOrder[] {
    return this.context.openOrders(marketId);
  }

  position(marketId: string): PositionSnapshot {
    return this.context.position(marketId);
  }

  status(): string {
    return this.host.status(this.strategyId);
  }

  // Market data

  ticker(fields: TickerFields): this {
    this.tickerSubject(fields.market_id).next(testTicker(fields, this.clock.now()));
    return this;
  }

  /** A live ticker whose mark, index and last prices are all `price`. */
  mark(marketId: string, price: string): this {
    return this.ticker({ market_id: marketId, mark_price: price });
  }

  trade(fields: TestFields<PublicTrade, 'market_id' | 'price'>): this {
    const trade = testTrade(
      { trade_id: `trade-${this.nextTradeId++}`, ...fields },
      this.clock.now(),
    );
    this.subject(this.tradeSubjects, trade.market_id).next(trade);
    return this;
  }

  book(fields: BookFields): this {
    this.subject(this.bookSubjects, fields.market_id).next(testBook(fields, this.clock.now()));
    return this;
  }

  // Account

  order(fields: OrderFields): this {
    const order = testOrder(fields, this.clock.now());
    this.trackOrder(order);
    this.orderUpdates.next(order);
    return this;
  }

  fill(fields: TestFields<Fill, 'market_id' | 'price' | 'quantity'>): this {
    this.fillUpdates.next(
      testFill({ fill_id: `fill-${this.nextFillId++}`, ...fields }, this.clock.now()),
    );
    return this;
  }

  positionUpdate(fields: PositionFields): this {
    const position = testPosition(fields, this.clock.now());
    this.trackPosition(position);
    this.positionUpdates.next(position);
    return this;
  }

  account(fields: Partial<Account> = {}): this {
    this.accountUpdates.next(testAccount(fields, this.clock.now()));
    return this;
  }

  // Outcomes

  outcome(outcome: IntentOutcome): this {
    this.outcomes.push(outcome);
    this.exits.onOutcome(outcome);
    this.host.deliverOutcome(outcome);
    return this;
  }

  accept(intent: StampedIntent, orderId: string = this.orderIdOf(intent)): this {
    return this.outcome({ status: 'accepted', intent, orderId });
  }

  deny(intent: StampedIntent, denials: readonly Denial[] = []): this {
    return this.outcome({ status: 'denied', intent, denials });
  }

  reject(intent: StampedIntent, code = 'INVALID_REQUEST', message = 'rejected'): this {
    return this.outcome({ status: 'rejected', intent, code, message });
  }

  unknown(intent: StampedIntent, reason = 'timeout'): this {
    return this.outcome({ status: 'unknown', intent, reason });
  }

  resolve(intent: StampedIntent, resolution: 'accepted' | 'rejected'): this {
    return this.outcome({
      status: 'resolved',
      intent,
      resolution,
      orderId: resolution === 'accepted' ? this.orderIdOf(intent) : null,
    });
  }

  /**
   * Reports an order of one of the strategy's place intents with a status, as the venue's
   * order stream would.
   */
  orderStatus(intent: StampedIntent, status: OrderStatus, filledQuantity?: string): this {
    const place = intent.intent;
    if (place.kind !== 'place') throw new Error('orderStatus needs a place intent');
    const previous = this.activeOrders.get(this.orderIdOf(intent));
    return this.order({
      order_id: this.orderIdOf(intent),
      request_id: intent.requestId,
      client_order_id: intent.clientOrderId,
      market_id: place.marketId,
      side: place.side,
      type: place.type,
      quantity: place.quantity,
      price: place.price ?? null,
      time_in_force: place.timeInForce ?? 'GTC',
      post_only: place.postOnly === true,
      reduce_only: place.reduceOnly === true,
      status,
      execution_stage: TERMINAL.has(status) ? 'TERMINAL' : 'WORKING',
      filled_quantity: filledQuantity ?? previous?.filled_quantity ?? '0',
    });
  }

  /**
   * Fills (part of) the order of a place intent as the venue would report it: a fill, the
   * order's new status, and the position it leaves. The position is computed like a venue's
   * one-way account: average entry when adding, same entry when reducing, fill price on a flip.
   */
  fillIntent(intent: StampedIntent, options: FillOptions = {}): this {
    const place = intent.intent;
    if (place.kind !== 'place') throw new Error('fillIntent needs a place intent');
    const orderId = this.orderIdOf(intent);
    const previous = this.activeOrders.get(orderId);
    const filledBefore = parseDecimal(previous?.filled_quantity ?? '0');
    const total = parseDecimal(place.quantity);
    const quantity = parseDecimal(options.quantity ?? toWire(total.minus(filledBefore)));
    const priceText =
      options.price ?? place.price ?? this.context.lastTicker(place.marketId)?.mark_price ?? null;
    if (priceText === null) throw new Error('fillIntent needs a price: pass options.price');
    const price = parseDecimal(priceText);
    const filledAfter = filledBefore.plus(quantity);
    this.fill({
      market_id: place.marketId,
      side: place.side,
      price: toWire(price),
      quantity: toWire(quantity),
      notional: toWire(price.times(quantity)),
      fee: options.fee ?? '0',
      order_id: orderId,
      is_maker: options.isMaker ?? place.type === 'limit',
    });
    this.orderStatus(
      intent,
      filledAfter.gte(total) ? 'FILLED' : 'PARTIALLY_FILLED',
      toWire(filledAfter),
    );
    this.applyFillToPosition(place.marketId, place.side, quantity, price);
    return this;
  }

  /** The order id the harness gives the order of an intent (`order-<sequence>`). */
  orderIdOf(intent: StampedIntent): string {
    const key = intent.clientOrderId ?? intent.requestId;
    let orderId = this.orderIds.get(key);
    if (orderId === undefined) {
      orderId = `order-${intent.sequence}`;
      this.orderIds.set(key, orderId);
    }
    return orderId;
  }

  private applyFillToPosition(
    marketId: string,
    side: Side,
    quantity: Decimal,
    price: Decimal,
  ): void {
    const current = this.context.position(marketId);
    const before = current.quantity;
    const change = side === 'buy' ? quantity : quantity.neg();
    const after = before.plus(change);
    let entry: Decimal;
    if (
      before.eq(ZERO) ||
      (before.gt(ZERO) && after.lt(ZERO)) ||
      (before.lt(ZERO) && after.gt(ZERO))
    ) {
      entry = price;
    } else if (after.abs().gt(before.abs())) {
      const previousEntry = current.entryPrice ?? price;
      entry = previousEntry.times(before.abs()).plus(price.times(quantity)).div(after.abs());
    } else {
      entry = current.entryPrice ?? price;
    }
    this.positionUpdate({
      position_id: current.positionId ?? `position-${marketId}`,
      market_id: marketId,
      side: after.lt(ZERO) ? 'short' : 'long',
      quantity: toWire(after.abs()),
      entry_price: toWire(after.eq(ZERO) ? ZERO : entry),
    });
  }

  private onIntent(intent: StampedIntent): void {
    this.intents.push(intent);
    if (this.exits.take(intent)) return;
    if (this.respond === 'none') return;
    if (this.respond === 'accept') {
      this.acceptLikeAVenue(intent);
      return;
    }
    const answer = this.respond(intent, this as StrategyHarness<unknown>);
    if (answer === null || answer === undefined) return;
    const outcomes = Array.isArray(answer) ? answer : [answer as IntentOutcome];
    for (const outcome of outcomes) this.outcome(outcome);
  }

  private acceptLikeAVenue(intent: StampedIntent): void {
    const body = intent.intent;
    if (body.kind === 'cancel' || body.kind === 'cancel_all') {
      this.outcome({ status: 'accepted', intent, orderId: null });
      for (const open of this.context.openOrders()) {
        const targeted =
          body.kind === 'cancel'
            ? open.clientOrderId === body.clientOrderId
            : body.marketId === undefined || open.marketId === body.marketId;
        if (targeted && open.intent !== null && open.intent.intent.kind === 'place') {
          this.orderStatus(open.intent, 'CANCELLED');
        }
      }
      return;
    }
    this.accept(intent);
    if (body.kind === 'place' && body.type === 'limit') this.orderStatus(intent, 'OPEN');
  }

  private environment(logger: Logger, candleGraceMs: number | undefined): StrategyEnvironment {
    return {
      clock: this.clock,
      logger,
      candleGraceMs,
      markets: () => this.markets,
      ticker$: (marketId) => this.tickerSubject(marketId).asObservable(),
      book$: (marketId) => this.subject(this.bookSubjects, marketId).asObservable(),
      trades$: (marketId) => this.subject(this.tradeSubjects, marketId).asObservable(),
      orders$: this.replayed(() => [...this.activeOrders.values()], this.orderUpdates),
      fills$: this.fillUpdates.asObservable(),
      positions$: this.replayed(() => [...this.openPositions.values()], this.positionUpdates),
      account$: this.accountUpdates.asObservable(),
      emulatedOrders: (strategyId) => this.exits.exitsOf(strategyId),
    };
  }

  /** The current state to each new subscriber, then live updates (the environment contract). */
  private replayed<T>(current: () => T[], updates: Subject<T>): Observable<T> {
    return defer(() => concat(from(current()), updates));
  }

  private tickerSubject(marketId: string): ReplaySubject<Ticker> {
    let subject = this.tickerSubjects.get(marketId);
    if (!subject) {
      subject = new ReplaySubject<Ticker>(1);
      this.tickerSubjects.set(marketId, subject);
    }
    return subject;
  }

  private subject<T>(subjects: Map<string, Subject<T>>, marketId: string): Subject<T> {
    let subject = subjects.get(marketId);
    if (!subject) {
      subject = new Subject<T>();
      subjects.set(marketId, subject);
    }
    return subject;
  }

  private trackOrder(order: Order): void {
    if (TERMINAL.has(order.status)) this.activeOrders.delete(order.order_id);
    else this.activeOrders.set(order.order_id, order);
  }

  private trackPosition(position: Position): void {
    if (parseDecimal(position.quantity).eq(ZERO)) this.openPositions.delete(position.position_id);
    else this.openPositions.set(position.position_id, position);
  }
}

/** Builds a harness and (unless `autoStart: false`) starts the strategy. */
export function createStrategyHarness<Params>(
  options: StrategyHarnessOptions<Params>,
): StrategyHarness<Params> {
  return new StrategyHarness(options);
}
