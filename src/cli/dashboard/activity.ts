/**
 * What the dashboard shows beyond `/status`: the recent history of a running bot, kept in
 * bounded lists fed from the kernel's streams (fills, intents, denials, reconciliations, the
 * trading state, the stream's connection) and an equity curve sampled on the clock. Every list
 * has a fixed length; the equity curve halves its resolution when full, so it always spans the
 * whole run in at most `MAXIMUM_EQUITY_POINTS` points.
 */
import type { Observable, Subscription } from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import { type Decimal, parseDecimal, toWire, ZERO } from '../../core/decimal.ts';
import type { Fill } from '../../protocol/index.ts';
import type { ReconciliationReport } from '../../runtime/execution/reconciler.ts';
import type { IntentOutcome } from '../../runtime/intents.ts';
import type { DenialEvent, TradingStateSnapshot } from '../../runtime/risk/gate.ts';

export const MAXIMUM_RECENT = 50;
export const MAXIMUM_EQUITY_POINTS = 1_000;

export interface ActivityFill {
  readonly at: number;
  readonly fillId: string;
  readonly marketId: string;
  readonly side: string;
  readonly quantity: string;
  readonly price: string;
  readonly fee: string;
  readonly orderId: string | null;
  readonly strategyId: string | null;
}

export interface ActivityIntent {
  readonly at: number;
  readonly strategyId: string;
  readonly requestId: string;
  readonly kind: string;
  readonly marketId: string | null;
  readonly status: IntentOutcome['status'];
  /** Why it was denied, rejected or left unknown; null otherwise. */
  readonly reason: string | null;
}

export interface ActivityNotice {
  readonly at: number;
  readonly level: 'warn' | 'error';
  readonly message: string;
}

export interface ActivityReconciliation {
  readonly at: number;
  readonly reason: string;
  readonly ok: boolean;
  readonly error: string | null;
  readonly differences: number;
  readonly summary: string;
}

/** The kernel's streams the recorder reads; a real `Kernel` has them all. */
export interface ActivitySource {
  readonly outcomes$: Observable<IntentOutcome>;
  readonly denials$: Observable<DenialEvent>;
  readonly fills$: Observable<Fill>;
  readonly reconciliation$: Observable<ReconciliationReport>;
  readonly tradingState$: Observable<TradingStateSnapshot>;
}

/** Keeps at most `limit` items, newest first. */
class Recent<T> {
  private readonly items: T[] = [];
  constructor(private readonly limit: number) {}
  add(item: T): void {
    this.items.unshift(item);
    if (this.items.length > this.limit) this.items.length = this.limit;
  }
  list(): readonly T[] {
    return this.items.slice();
  }
}

function intentMarket(outcome: IntentOutcome): string | null {
  const intent = outcome.intent.intent as { marketId?: unknown };
  return typeof intent.marketId === 'string' ? intent.marketId : null;
}

function outcomeReason(outcome: IntentOutcome): string | null {
  switch (outcome.status) {
    case 'denied':
      return outcome.denials.map((denial) => `${denial.rule}: ${denial.message}`).join('; ');
    case 'rejected':
      return `${outcome.code}: ${outcome.message}`;
    case 'unknown':
      return outcome.reason;
    default:
      return null;
  }
}

export function reconciliationDifferences(report: ReconciliationReport): number {
  return (
    report.missingLocally.length +
    report.foreignOrders.length +
    report.missingAtVenue.length +
    report.stateMismatches.length +
    report.positionMismatches.length
  );
}

function reconciliationSummary(report: ReconciliationReport): string {
  const parts: string[] = [];
  const add = (count: number, what: string) => {
    if (count > 0) parts.push(`${count} ${what}`);
  };
  add(report.missingLocally.length, 'open at the venue only');
  add(report.foreignOrders.length, 'foreign');
  add(report.missingAtVenue.length, 'missing at the venue');
  add(report.stateMismatches.length, 'order state mismatches');
  add(report.positionMismatches.length, 'position mismatches');
  return parts.length === 0 ? 'no differences' : parts.join(', ');
}

export class ActivityRecorder {
  private readonly fills = new Recent<ActivityFill>(MAXIMUM_RECENT);
  private readonly intents = new Recent<ActivityIntent>(MAXIMUM_RECENT);
  private readonly notices = new Recent<ActivityNotice>(MAXIMUM_RECENT);
  private readonly lastIntents = new Map<string, ActivityIntent>();
  /** Venue order id -> strategy, for fills; bounded like everything else. */
  private readonly orderOwners = new Map<string, string>();
  private readonly fillCounts = new Map<string, number>();
  /** Strategy -> market -> position and cash from the fills of this session. */
  private readonly ledgers = new Map<string, Map<string, { quantity: Decimal; cash: Decimal }>>();
  private equityPoints: [number, string][] = [];
  private equityStride = 1;
  private equitySkipped = 0;
  private reconciliation: ActivityReconciliation | null = null;
  private tradingSince: number | null = null;
  private streamState: { state: string; since: number } | null = null;
  private readonly subscriptions: Subscription[] = [];
  private readonly marks = new Map<string, string>();
  private routes: { ready: boolean; since: number } | null = null;

  constructor(private readonly clock: Clock) {}

  attach(source: ActivitySource): void {
    this.subscriptions.push(
      source.outcomes$.subscribe((outcome) => this.onOutcome(outcome)),
      source.fills$.subscribe((fill) => this.onFill(fill)),
      source.reconciliation$.subscribe((report) => this.onReconciliation(report)),
      source.tradingState$.subscribe((state) => {
        this.tradingSince = state.since;
        if (state.state !== 'ACTIVE') {
          this.notice('warn', `trading ${state.state}: ${state.reason ?? 'no reason given'}`);
        }
      }),
    );
  }

  /** The stream client's connection state, as it changes. */
  attachStream(state$: Observable<string>): void {
    this.subscriptions.push(
      state$.subscribe((state) => {
        this.streamState = { state, since: this.clock.now() };
        if (state === 'failed') this.notice('error', 'stream failed');
        else if (state === 'backoff') this.notice('warn', 'stream disconnected, reconnecting');
      }),
    );
  }

  /** Whether the venue's order routes are ready (the live venue's `routeReady$`). */
  attachRouteReady(ready$: Observable<boolean>): void {
    this.subscriptions.push(
      ready$.subscribe((ready) => {
        if (this.routes?.ready === ready) return;
        this.routes = { ready, since: this.clock.now() };
        if (!ready) this.notice('warn', 'order routes not ready');
      }),
    );
  }

  /** The latest mark price of each market, for the orders' distance from it. */
  attachMarks(
    marks: readonly Observable<{ market_id: string; mark_price: string | null }>[],
  ): void {
    for (const mark$ of marks) {
      this.subscriptions.push(
        mark$.subscribe((ticker) => {
          if (ticker.mark_price !== null) this.marks.set(ticker.market_id, ticker.mark_price);
        }),
      );
    }
  }

  detach(): void {
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
  }

  notice(level: ActivityNotice['level'], message: string): void {
    this.notices.add({ at: this.clock.now(), level, message });
  }

  /** Adds an equity point; the curve keeps the whole run by halving its resolution when full. */
  sampleEquity(equity: string | null): void {
    if (equity === null) return;
    const last = this.equityPoints.at(-1);
    if (last !== undefined && last[1] === equity) return;
    this.equitySkipped += 1;
    if (this.equitySkipped < this.equityStride && last !== undefined) return;
    this.equitySkipped = 0;
    this.equityPoints.push([this.clock.now(), equity]);
    if (this.equityPoints.length > MAXIMUM_EQUITY_POINTS) {
      this.equityPoints = this.equityPoints.filter((_, index) => index % 2 === 0);
      this.equityStride *= 2;
    }
  }

  snapshot() {
    return {
      fills: this.fills.list(),
      intents: this.intents.list(),
      notices: this.notices.list(),
      lastIntents: Object.fromEntries(this.lastIntents),
      fillCounts: Object.fromEntries(this.fillCounts),
      strategyPnl: this.strategyPnl(),
      equity: this.equityPoints.slice(),
      reconciliation: this.reconciliation,
      tradingSince: this.tradingSince,
      stream: this.streamState,
      marks: Object.fromEntries(this.marks),
      routes: this.routes,
    };
  }

  private onOutcome(outcome: IntentOutcome): void {
    const entry: ActivityIntent = {
      at: this.clock.now(),
      strategyId: outcome.intent.strategyId,
      requestId: outcome.intent.requestId,
      kind: outcome.intent.intent.kind,
      marketId: intentMarket(outcome),
      status: outcome.status,
      reason: outcomeReason(outcome),
    };
    this.intents.add(entry);
    this.lastIntents.set(entry.strategyId, entry);
    if ((outcome.status === 'accepted' || outcome.status === 'resolved') && outcome.orderId) {
      this.orderOwners.set(outcome.orderId, entry.strategyId);
      if (this.orderOwners.size > 10_000) {
        const oldest = this.orderOwners.keys().next().value;
        if (oldest !== undefined) this.orderOwners.delete(oldest);
      }
    }
    if (outcome.status === 'rejected')
      this.notice('warn', `${entry.requestId} rejected: ${entry.reason}`);
    if (outcome.status === 'unknown')
      this.notice('warn', `${entry.requestId} unknown: ${entry.reason}`);
  }

  private onFill(fill: Fill): void {
    const strategyId =
      fill.order_id === null ? null : (this.orderOwners.get(fill.order_id) ?? null);
    this.fills.add({
      at: Date.parse(fill.occurred_at),
      fillId: fill.fill_id,
      marketId: fill.market_id,
      side: fill.side,
      quantity: fill.quantity,
      price: fill.price,
      fee: fill.fee,
      orderId: fill.order_id,
      strategyId,
    });
    if (strategyId !== null) {
      this.fillCounts.set(strategyId, (this.fillCounts.get(strategyId) ?? 0) + 1);
      this.book(strategyId, fill);
    }
  }

  private book(strategyId: string, fill: Fill): void {
    let markets = this.ledgers.get(strategyId);
    if (markets === undefined) {
      markets = new Map();
      this.ledgers.set(strategyId, markets);
    }
    const entry = markets.get(fill.market_id) ?? {
      quantity: ZERO,
      cash: ZERO,
    };
    const quantity = parseDecimal(fill.quantity);
    const notional = quantity.times(parseDecimal(fill.price));
    const buy = fill.side.toLowerCase() === 'buy';
    markets.set(fill.market_id, {
      quantity: buy ? entry.quantity.plus(quantity) : entry.quantity.minus(quantity),
      cash: (buy ? entry.cash.minus(notional) : entry.cash.plus(notional)).minus(
        parseDecimal(fill.fee),
      ),
    });
  }

  /**
   * Each strategy's PnL from the fills it made in this session: cash paid and received, fees,
   * and what it still holds at the mark. Null while a market it holds has no mark yet.
   */
  private strategyPnl(): Record<string, string | null> {
    const out: Record<string, string | null> = {};
    for (const [strategyId, markets] of this.ledgers) {
      let total: Decimal | null = ZERO;
      for (const [marketId, entry] of markets) {
        if (total === null) break;
        const mark = this.marks.get(marketId);
        if (entry.quantity.eq(0)) total = total.plus(entry.cash);
        else if (mark === undefined) total = null;
        else total = total.plus(entry.cash).plus(entry.quantity.times(parseDecimal(mark)));
      }
      out[strategyId] = total === null ? null : toWire(total);
    }
    return out;
  }

  private onReconciliation(report: ReconciliationReport): void {
    const differences = reconciliationDifferences(report);
    this.reconciliation = {
      at: report.finishedAt,
      reason: report.reason,
      ok: report.ok,
      error: report.error === null ? null : `${report.error.code}: ${report.error.message}`,
      differences,
      summary: reconciliationSummary(report),
    };
    if (!report.ok) this.notice('error', `reconciliation failed: ${this.reconciliation.error}`);
    else if (differences > 0) {
      this.notice('warn', `reconciliation found ${this.reconciliation.summary}`);
    }
  }
}

export type ActivitySnapshot = ReturnType<ActivityRecorder['snapshot']>;
