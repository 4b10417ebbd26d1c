/**
 * The exit emulator: holds the stop, take-profit, trailing and bracket exits the venue does not
 * offer, watches each one's price on every tick, and when one fires hands an ordinary place
 * intent (market, or limit at the exit's limit price; reduce-only where it protects a position)
 * to the same path as strategy intents: the risk gate, then the executor.
 *
 * - An exit is journaled in every state change (through `ExitStore`) before anything follows
 *   from it, so a restarted bot restores its waiting exits and never fires one twice: a release
 *   has a fixed request id (`<exit id>:x`), so one already in the executor's journal is not
 *   sent again.
 * - Releases are journaled under the negative of a number derived from the exit's sequence, so
 *   they never take a sequence the strategy will use.
 * - Prices are read only for the markets and sources that live exits watch.
 * - Nothing here talks to a venue or knows whether it runs live or in replay.
 */
import { type Observable, Subject } from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import { type Decimal, parseDecimal, toWire, ZERO } from '../../core/decimal.ts';
import type { Order, Position } from '../../protocol/index.ts';
import type { Logger } from '../../core/logger.ts';
import type {
  AmendIntent,
  BracketIntent,
  CancelIntent,
  Denial,
  ExitIntent,
  ExitTrigger,
  IntentOutcome,
  Side,
  StampedIntent,
} from '../intents.ts';
import type { MarketDataVenue } from '../streams/market-data.ts';
import { ExitBook, type ExitFields, type ExitStore } from './exit-book.ts';
import { resolveOco } from './oco.ts';
import { type FeedSides, observedPriceOf, PriceFeeds } from './price-feeds.ts';
import { releaseOf } from './release.ts';
import { distanceToTrigger, evaluate, triggerLevel } from './trigger.ts';
import {
  type EmulatedExit,
  type ExitState,
  releaseIdOf,
  TRIGGER_SOURCES,
  type TriggerSource,
} from './types.ts';

export type { ExitStore } from './exit-book.ts';

export interface ExitEmulatorConfig {
  /** Live exits held at most; more are denied. */
  readonly maxLiveExits: number;
  /** Finished exits kept for the strategy's view, newest last. */
  readonly recentFinished: number;
}

export const DEFAULT_EXIT_EMULATOR_CONFIG: ExitEmulatorConfig = {
  maxLiveExits: 1000,
  recentFinished: 200,
};

export interface ExitEmulatorOptions {
  readonly clock: Clock;
  /** The market streams the exits watch (the kernel's market data, or a test's). */
  readonly marketData: Pick<MarketDataVenue, 'markets' | 'ticker$' | 'book$' | 'trades$'>;
  readonly store: ExitStore | null;
  readonly logger: Logger;
  /** Open positions now (flat ones left out). */
  readonly positions: () => readonly Position[];
  /** The account's active orders now (to settle restored bracket legs); none when omitted. */
  readonly openOrders?: () => readonly Order[];
  readonly config?: Partial<ExitEmulatorConfig>;
  /**
   * A later start restores what is left in the journal (default true). False for a run that
   * has no next start (a backtest): exits left waiting at the stop are then no warning.
   */
  readonly nextStart?: boolean;
}

/** A live exit as `status()` and the dashboard show it. */
export interface WaitingExitView {
  readonly id: string;
  readonly strategyId: string;
  readonly marketId: string;
  readonly side: Side;
  readonly quantity: string;
  readonly state: ExitState;
  readonly kind: ExitTrigger['kind'];
  readonly source: TriggerSource;
  /** The level it fires at now; null before a trailing stop activates or a bracket fills. */
  readonly triggerPrice: string | null;
  /** The last price seen on its source; null before the first. */
  readonly price: string | null;
  /** How far the price has left to go before it fires (positive: not yet). */
  readonly distance: string | null;
  readonly tag?: string | undefined;
}

/** The intent kinds `take` may keep; it answers false for any other at once, keeping nothing. */
export const EMULATOR_INTENT_KINDS: ReadonlySet<StampedIntent['intent']['kind']> = new Set([
  'exit',
  'bracket',
  'cancel',
  'amend',
]);

function denial(message: string, observed: string): Denial {
  return { rule: 'emulated_exit', limit: 'a live emulated exit', observed, message };
}

export class ExitEmulator {
  /** Place intents of exits that fired: the kernel sends them through the gate. */
  readonly releases$: Observable<StampedIntent>;
  /** Outcomes of the intents the emulator answered itself (exits, their cancels and amends). */
  readonly outcomes$: Observable<IntentOutcome>;

  private readonly clock: Clock;
  private readonly marketData: Pick<MarketDataVenue, 'markets' | 'ticker$' | 'book$' | 'trades$'>;
  private readonly store: ExitStore | null;
  private readonly book: ExitBook;
  private readonly feeds: PriceFeeds;
  private readonly logger: Logger;
  private readonly positions: () => readonly Position[];
  private readonly openOrders: () => readonly Order[];
  private readonly config: ExitEmulatorConfig;
  /** Live exits by id, in creation order (the order OCO picks a winner in): the book's. */
  private readonly live: ReadonlyMap<string, EmulatedExit>;
  /** By the request id of a release or a bracket entry: the exit or exits it concerns. */
  private readonly byRelease = new Map<string, string>();
  private readonly releaseSubject = new Subject<StampedIntent>();
  private readonly outcomeSubject = new Subject<IntentOutcome>();
  private stopped = false;
  private readonly nextStart: boolean;
  /** Markets with an open position, as of the last `onPositions`. */
  private positioned = new Set<string>();

  constructor(options: ExitEmulatorOptions) {
    this.clock = options.clock;
    this.marketData = options.marketData;
    this.store = options.store;
    this.logger = options.logger;
    this.positions = options.positions;
    this.openOrders = options.openOrders ?? (() => []);
    this.config = { ...DEFAULT_EXIT_EMULATOR_CONFIG, ...options.config };
    this.nextStart = options.nextStart ?? true;
    this.book = new ExitBook(this.store, this.clock, this.config.recentFinished, (exit) =>
      this.onLeft(exit),
    );
    this.live = this.book.live;
    this.feeds = new PriceFeeds(this.marketData, (marketId, source, sides) => {
      // A failure here (the journal refusing a write, say) must not break the market feed.
      try {
        this.onPrices(marketId, source, sides);
      } catch (error) {
        this.logger.error('emulated exits could not be evaluated on a price', {
          marketId,
          source,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    });
    this.releases$ = this.releaseSubject.asObservable();
    this.outcomes$ = this.outcomeSubject.asObservable();
    for (const position of this.positions()) {
      if (!parseDecimal(position.quantity).eq(ZERO)) this.positioned.add(position.market_id);
    }
  }

  /**
   * Restores the journaled live exits (call after the first reconciliation, once releases are
   * taken: one may be sent at once). A triggered exit
   * whose release is not in the executor's journal is released again under the same id; one
   * whose release is there is left to the executor's recovery. Reduce-only exits whose market
   * has no position any more are dropped (only when `reconciled`: the positions are known).
   */
  restore(reconciled: boolean): void {
    this.positioned = new Set(
      this.positions()
        .filter((position) => !parseDecimal(position.quantity).eq(ZERO))
        .map((position) => position.market_id),
    );
    if (this.store === null) return;
    const restored = this.store.live();
    for (const exit of restored) this.book.hold(exit);
    for (const exit of restored) {
      if (exit.state === 'triggered' && exit.releaseId !== null) {
        if (this.store.hasIntent(exit.releaseId)) {
          this.update(exit.id, { state: 'released', reason: 'released before the restart' });
        } else {
          this.byRelease.set(exit.releaseId, exit.id);
          this.releaseSubject.next(releaseOf(this.live.get(exit.id) ?? exit, this.clock.now()));
        }
        continue;
      }
      // Without a reconciliation the positions are not known: nothing is dropped on their word.
      const gone = reconciled && exit.reduceOnly && !this.hasPosition(exit.marketId);
      if (exit.state === 'waiting' && gone) {
        this.update(exit.id, {
          state: 'cancelled',
          reason: 'its position was gone when the bot restarted',
        });
        continue;
      }
      if (exit.state === 'pending' && exit.parentId !== null) {
        this.byRelease.set(exit.parentId, exit.id);
      }
      this.watch(exit);
    }
    if (reconciled) this.settleRestoredLegs();
    const kept = [...this.live.values()].filter((exit) => exit.state !== 'triggered');
    this.logger.info('emulated exits restored', {
      restored: restored.length,
      live: kept.length,
    });
  }

  /**
   * Bracket legs restored `pending`: an entry still open is followed as before (its fills so
   * far count); one gone while the bot was down either filled (the market has a position: the
   * legs start watching, for the size they were set for, reduce-only) or did not (cancelled).
   */
  private settleRestoredLegs(): void {
    const parents = new Set<string>();
    for (const exit of this.live.values()) {
      if (exit.state === 'pending' && exit.parentId !== null) parents.add(exit.parentId);
    }
    const open = new Map<string, Order>();
    for (const order of this.openOrders()) {
      if (order.client_order_id) open.set(order.client_order_id, order);
    }
    for (const parentId of parents) {
      const order = open.get(parentId);
      if (order !== undefined) {
        this.onOrder(order);
        continue;
      }
      const legs = [...this.live.values()].filter((exit) => exit.parentId === parentId);
      if (legs.length === 0) continue;
      if (!this.hasPosition(legs[0]!.marketId)) {
        this.cancelChildren(parentId);
        continue;
      }
      this.byRelease.delete(parentId);
      for (const leg of legs) this.update(leg.id, { state: 'waiting' });
      for (const leg of legs) {
        const current = this.live.get(leg.id);
        if (current !== undefined) this.watch(current);
      }
    }
  }

  /**
   * Takes the intents that are the emulator's: exits, brackets (whose entry it releases at
   * once), and cancels and amends that name a live exit. Returns false for anything else.
   */
  take(stamped: StampedIntent): boolean {
    const intent = stamped.intent;
    if (!EMULATOR_INTENT_KINDS.has(intent.kind)) return false;
    switch (intent.kind) {
      case 'exit':
      case 'bracket': {
        const marketId = intent.kind === 'exit' ? intent.marketId : intent.entry.marketId;
        if (!this.marketData.markets().some((market) => market.market_id === marketId)) {
          this.refuse(stamped, `no market ${marketId} to watch`);
        } else if (intent.kind === 'exit') {
          this.addExit(stamped, intent);
        } else {
          this.addBracket(stamped, intent);
        }
        return true;
      }
      case 'cancel':
        return this.cancelByStrategy(stamped, intent);
      case 'amend':
        return this.amendByStrategy(stamped, intent);
      default:
        return false;
    }
  }

  /** Every outcome the kernel publishes: the emulator follows its releases through them. */
  onOutcome(outcome: IntentOutcome): void {
    const exitId = this.byRelease.get(outcome.intent.requestId);
    if (exitId === undefined) return;
    const exit = this.live.get(exitId);
    if (exit === undefined) {
      this.byRelease.delete(outcome.intent.requestId);
      return;
    }
    const refused =
      outcome.status === 'denied' ||
      outcome.status === 'rejected' ||
      (outcome.status === 'resolved' && outcome.resolution === 'rejected');
    if (exit.state === 'triggered') {
      this.byRelease.delete(outcome.intent.requestId);
      this.update(
        exit.id,
        refused
          ? { state: 'cancelled', reason: `its released order was refused (${outcome.status})` }
          : { state: 'released' },
      );
      if (refused) {
        this.logger.error('an emulated exit fired but its order was refused; it is not retried', {
          exitId: exit.id,
          requestId: outcome.intent.requestId,
          status: outcome.status,
        });
      }
      return;
    }
    // A bracket entry refused: its exits will never have a position to protect.
    if (exit.state === 'pending' && refused) this.cancelChildren(outcome.intent.requestId);
  }

  /** Order updates: a bracket's exits start watching when its entry fills, for what it filled. */
  onOrder(order: Order): void {
    if (order.client_order_id === null || order.client_order_id === undefined) return;
    const parentId = order.client_order_id;
    if (!this.byRelease.has(parentId)) return;
    const filled = parseDecimal(order.filled_quantity);
    const terminal =
      order.status === 'FILLED' || order.status === 'CANCELLED' || order.status === 'REJECTED';
    const children = [...this.live.values()].filter((exit) => exit.parentId === parentId);
    if (filled.gt(ZERO)) {
      const quantity = toWire(filled);
      const started: string[] = [];
      // Every leg is waiting before any watches: the first price may fire one, and its
      // partner must then be there to be cancelled.
      for (const child of children) {
        if (child.state !== 'pending' && child.state !== 'waiting') continue;
        if (child.state === 'waiting' && child.quantity === quantity) continue;
        if (child.state === 'pending') started.push(child.id);
        this.update(child.id, { state: 'waiting', quantity });
      }
      for (const id of started) {
        const child = this.live.get(id);
        if (child !== undefined) this.watch(child);
      }
    } else if (terminal) {
      this.cancelChildren(parentId);
    }
    if (terminal) this.byRelease.delete(parentId);
  }

  /**
   * The account's positions, after each change. A reduce-only exit whose market went flat is
   * dropped; a market that has just gained a position has its exits evaluated on the latest
   * price (a reduce-only exit only fires while there is a position for it to reduce).
   */
  onPositions(positions: readonly Position[]): void {
    const now = new Set<string>();
    for (const position of positions) {
      if (!parseDecimal(position.quantity).eq(ZERO)) now.add(position.market_id);
    }
    const before = this.positioned;
    this.positioned = now;
    for (const marketId of before) {
      if (now.has(marketId)) continue;
      for (const exit of [...this.live.values()]) {
        if (exit.marketId !== marketId || exit.state !== 'waiting' || !exit.reduceOnly) continue;
        this.update(exit.id, { state: 'cancelled', reason: 'its position is gone' });
      }
    }
    for (const marketId of now) {
      if (before.has(marketId)) continue;
      for (const source of TRIGGER_SOURCES) {
        const sides = this.feeds.sides(marketId, source);
        if (sides !== undefined) this.onPrices(marketId, source, sides);
      }
    }
  }

  /** Live exits with their trigger and distance from it, for status views. */
  waiting(): readonly WaitingExitView[] {
    return [...this.live.values()].map((exit) => this.view(exit));
  }

  /** One strategy's exits, live and recently finished, oldest first, for its own view. */
  exitsOf(strategyId: string): readonly EmulatedExit[] {
    return this.book.exitsOf(strategyId);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.live.size > 0 && this.nextStart) {
      this.logger.warn(
        'emulated exits left in the journal: nothing watches them until the next start',
        { live: this.live.size },
      );
    } else if (this.live.size > 0) {
      this.logger.debug('emulated exits still waiting at the end of the run', {
        live: this.live.size,
      });
    }
    this.feeds.close();
    this.releaseSubject.complete();
    this.outcomeSubject.complete();
  }

  // Creating exits

  private addExit(stamped: StampedIntent, intent: ExitIntent): void {
    const order: EmulatedExit['order'] =
      intent.limitPrice !== undefined
        ? { type: 'limit', price: intent.limitPrice }
        : intent.maxSlippagePercent !== undefined
          ? { type: 'market', maxSlippagePercent: intent.maxSlippagePercent }
          : { type: 'market' };
    const exit = this.create(stamped, stamped.requestId, {
      marketId: intent.marketId,
      side: intent.side,
      quantity: intent.quantity,
      rule: intent.trigger,
      source: intent.triggerSource ?? 'mark',
      order,
      reduceOnly: intent.reduceOnly ?? true,
      tag: intent.tag,
      ocoGroup: null,
      parentId: null,
      state: 'waiting',
    });
    if (exit === null) return;
    this.answer(stamped, null);
    this.watch(exit);
  }

  private addBracket(stamped: StampedIntent, intent: BracketIntent): void {
    const legs = [intent.stopLoss, intent.takeProfit].filter((leg) => leg !== undefined).length;
    if (this.live.size + legs > this.config.maxLiveExits) {
      this.refuse(stamped, `at most ${this.config.maxLiveExits} live emulated exits`);
      return;
    }
    const entry = intent.entry;
    const exitSide = entry.side === 'buy' ? 'sell' : 'buy';
    const parentId = stamped.requestId;
    const common = {
      marketId: entry.marketId,
      side: exitSide,
      quantity: entry.quantity,
      source: intent.triggerSource ?? 'mark',
      reduceOnly: true,
      tag: intent.tag ?? entry.tag,
      ocoGroup: legs > 1 ? parentId : null,
      parentId,
      state: 'pending',
    } as const;
    const legOrder = (limitPrice: string | undefined): EmulatedExit['order'] =>
      limitPrice === undefined ? { type: 'market' } : { type: 'limit', price: limitPrice };
    if (intent.stopLoss !== undefined) {
      this.create(stamped, `${parentId}:sl`, {
        ...common,
        rule: { kind: 'stop', price: intent.stopLoss.triggerPrice },
        order: legOrder(intent.stopLoss.limitPrice),
      });
    }
    if (intent.takeProfit !== undefined) {
      this.create(stamped, `${parentId}:tp`, {
        ...common,
        rule: { kind: 'take_profit', price: intent.takeProfit.triggerPrice },
        order: legOrder(intent.takeProfit.limitPrice),
      });
    }
    this.byRelease.set(parentId, `${parentId}:sl`);
    if (intent.stopLoss === undefined) this.byRelease.set(parentId, `${parentId}:tp`);
    // The entry is the strategy's own intent: same sequence, same request and client order id.
    const tag = intent.tag ?? entry.tag;
    this.releaseSubject.next(
      Object.freeze({
        ...stamped,
        clientOrderId: stamped.requestId,
        intent: Object.freeze(tag === undefined ? { ...entry } : { ...entry, tag }),
      }),
    );
  }

  private create(stamped: StampedIntent, id: string, fields: ExitFields): EmulatedExit | null {
    if (this.live.size >= this.config.maxLiveExits) {
      this.refuse(stamped, `at most ${this.config.maxLiveExits} live emulated exits`);
      return null;
    }
    const exit = this.book.create(stamped, id, fields);
    this.logger.info('emulated exit added', {
      exitId: id,
      marketId: exit.marketId,
      side: exit.side,
      trigger: exit.rule.kind,
      source: exit.source,
      state: exit.state,
    });
    return exit;
  }

  // The strategy's cancels and amends

  private cancelByStrategy(stamped: StampedIntent, intent: CancelIntent): boolean {
    return this.changeByStrategy(stamped, intent.clientOrderId, 'cancel', (exit) => {
      this.update(exit.id, { state: 'cancelled', reason: 'cancelled by its strategy' });
      this.answer(stamped, null);
    });
  }

  private amendByStrategy(stamped: StampedIntent, intent: AmendIntent): boolean {
    return this.changeByStrategy(stamped, intent.clientOrderId, 'amend', (exit) => {
      if (intent.price !== undefined && exit.rule.kind === 'trailing') {
        this.refuse(stamped, 'a trailing stop has no trigger price to amend; cancel and re-add it');
        return;
      }
      const rule =
        intent.price === undefined || exit.rule.kind === 'trailing'
          ? exit.rule
          : Object.freeze({ ...exit.rule, price: intent.price });
      this.update(exit.id, { rule, quantity: intent.quantity ?? exit.quantity });
      this.answer(stamped, null);
    });
  }

  /**
   * A cancel or an amend of a live exit: false when it names none (the intent is an ordinary
   * order's), refused once the exit has fired (the released order is what to change), else
   * `change` answers it.
   */
  private changeByStrategy(
    stamped: StampedIntent,
    clientOrderId: string,
    verb: 'cancel' | 'amend',
    change: (exit: EmulatedExit) => void,
  ): boolean {
    const exit = this.live.get(clientOrderId);
    if (exit === undefined) return false;
    if (exit.state === 'triggered') {
      this.refuse(stamped, `the exit has fired; ${verb} the order it released instead`);
      return true;
    }
    change(exit);
    return true;
  }

  private answer(stamped: StampedIntent, orderId: string | null): void {
    this.outcomeSubject.next(Object.freeze({ status: 'accepted', intent: stamped, orderId }));
  }

  private refuse(stamped: StampedIntent, message: string): void {
    this.logger.warn('emulated exit intent denied', { requestId: stamped.requestId, message });
    this.outcomeSubject.next(
      Object.freeze({
        status: 'denied',
        intent: stamped,
        denials: Object.freeze([Object.freeze(denial(message, stamped.intent.kind))]),
      }),
    );
  }

  // Watching prices

  private watch(exit: EmulatedExit): void {
    if (this.stopped || exit.state !== 'waiting') return;
    // A hot source may answer synchronously and fire everything it served, the stop included.
    if (this.feeds.open(exit, () => this.stopped)) this.releaseUnusedFeeds();
  }

  /** Unsubscribes from prices no waiting exit watches any more. */
  private releaseUnusedFeeds(): void {
    this.feeds.closeUnused(this.live.values());
  }

  private onPrices(marketId: string, source: TriggerSource, sides: FeedSides): void {
    if (this.stopped) return;
    const candidates: { id: string; ocoGroup: string | null; fired: boolean }[] = [];
    const prices = new Map<string, Decimal>();
    const hasPosition = this.hasPosition(marketId);
    for (const exit of this.live.values()) {
      if (exit.state !== 'waiting' || exit.marketId !== marketId || exit.source !== source) {
        continue;
      }
      // Nothing to reduce yet (a bracket's entry filled before its position was reported).
      if (exit.reduceOnly && !hasPosition) continue;
      const price = observedPriceOf(exit, sides);
      if (price === undefined) continue;
      const result = evaluate(exit.rule, exit.side, exit.trailing, price);
      if (result.trailing !== exit.trailing && !result.fired) {
        this.update(exit.id, { trailing: result.trailing });
      }
      prices.set(exit.id, price);
      candidates.push({ id: exit.id, ocoGroup: exit.ocoGroup, fired: result.fired });
    }
    if (!candidates.some((candidate) => candidate.fired)) return;
    // Partners on another source, or not yet watching, are in the group too: they must not
    // fire later.
    for (const exit of this.live.values()) {
      if (exit.ocoGroup === null || candidates.some((candidate) => candidate.id === exit.id)) {
        continue;
      }
      if (exit.state === 'waiting' || exit.state === 'pending') {
        candidates.push({ id: exit.id, ocoGroup: exit.ocoGroup, fired: false });
      }
    }
    const decision = resolveOco(candidates);
    for (const id of decision.cancel) {
      this.update(id, { state: 'cancelled', reason: 'its one-cancels-other partner fired' });
    }
    for (const id of decision.release) this.fire(id, prices.get(id) ?? ZERO);
    this.releaseUnusedFeeds();
  }

  private fire(id: string, price: Decimal): void {
    const exit = this.live.get(id);
    if (exit === undefined) return;
    const releaseId = releaseIdOf(exit.id);
    const fired = this.update(id, { state: 'triggered', releaseId, triggerPrice: toWire(price) });
    if (fired === undefined) return;
    this.logger.info('emulated exit fired', {
      exitId: id,
      marketId: exit.marketId,
      price: toWire(price),
      releaseId,
    });
    this.byRelease.set(releaseId, id);
    this.releaseSubject.next(releaseOf(fired, this.clock.now()));
  }

  // State

  private cancelChildren(parentId: string): void {
    for (const exit of [...this.live.values()]) {
      if (exit.parentId !== parentId || exit.state === 'triggered') continue;
      this.update(exit.id, { state: 'cancelled', reason: 'its bracket entry did not fill' });
    }
    this.byRelease.delete(parentId);
  }

  /** An exit left the live set: its price feed may be unused now. */
  private onLeft(exit: EmulatedExit): void {
    if (exit.state === 'cancelled') {
      this.logger.info('emulated exit cancelled', { exitId: exit.id, reason: exit.reason });
    }
    this.releaseUnusedFeeds();
  }

  /** Journals a change, then applies it (`ExitBook.update`). */
  private update(id: string, change: Partial<EmulatedExit>): EmulatedExit | undefined {
    return this.book.update(id, change);
  }

  private hasPosition(marketId: string): boolean {
    return this.positions().some(
      (position) => position.market_id === marketId && !parseDecimal(position.quantity).eq(ZERO),
    );
  }

  private view(exit: EmulatedExit): WaitingExitView {
    const price = this.feeds.priceOf(exit);
    const level = triggerLevel(exit.rule, exit.side, exit.trailing);
    const distance =
      price === undefined ? null : distanceToTrigger(exit.rule, exit.side, exit.trailing, price);
    return Object.freeze({
      id: exit.id,
      strategyId: exit.strategyId,
      marketId: exit.marketId,
      side: exit.side,
      quantity: exit.quantity,
      state: exit.state,
      kind: exit.rule.kind,
      source: exit.source,
      triggerPrice: exit.state === 'pending' || level === null ? null : toWire(level),
      price: price === undefined ? null : toWire(price),
      distance: distance === null ? null : toWire(distance),
      ...(exit.tag === undefined ? {} : { tag: exit.tag }),
    });
  }
}
