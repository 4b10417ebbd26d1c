/**
 * The reconciler: brings the runtime's view in line with the venue's, at start, periodically and
 * after every loss of stream continuity, and says what differed.
 *
 * One run, inside the executor's lane (nothing is sent while it compares):
 * 1. settles open journal entries (resolves unknown intents by request id; intents a previous
 *    process journaled but never sent end denied);
 * 2. reads back the fills a gap in the private sequence hid, when the journal owes that (the
 *    fills are keyed by `fill_id`, so nothing is counted twice); then reads the venue's open
 *    orders, positions and account;
 * 3. diffs them with the tracker: orders the venue has and the runtime did not (its own are
 *    adopted; others are foreign), orders the runtime held open that the venue does not list
 *    (read back for their final state), state mismatches, position mismatches;
 * 4. cancels foreign orders only when `cancelUnknownOrders` is set, and never while an intent is
 *    still unknown (a foreign-looking order may be that intent's);
 * 5. takes the venue's view and publishes the report.
 *
 * Nothing is dropped, flattened or duplicated silently (NautilusTrader #5000, #3176): every
 * difference is reported, positions are never closed here.
 *
 * `ready$` is false until the first run succeeds, and false again from a resync until the next
 * run succeeds: the executor places nothing meanwhile (fail closed).
 */
import { BehaviorSubject, type Observable, Subject, type Subscription } from 'rxjs';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { parseDecimal, ZERO } from '../../core/decimal.ts';
import { isPaperbotError } from '../../core/errors.ts';
import type { Account, Order, Position } from '../../protocol/index.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { ExecutionVenue } from '../venue.ts';
import { backoffDelay } from './classify.ts';
import { withDeadline } from './deadline.ts';
import type { SettlementReport } from './executor.ts';
import { sendInternalCommand } from './internal-command.ts';
import { type Logger, silentLogger } from '../../core/logger.ts';
import type { OrderTracker } from './tracker.ts';

export interface OrderSummary {
  readonly orderId: string;
  readonly clientOrderId: string | null;
  readonly marketId: string;
  readonly side: string | null;
  readonly status: string;
  readonly quantity: string | null;
  readonly filledQuantity: string;
}

export interface OrderStateMismatch {
  readonly orderId: string;
  readonly clientOrderId: string | null;
  readonly local: { readonly status: string; readonly filledQuantity: string };
  readonly venue: { readonly status: string; readonly filledQuantity: string };
}

export interface PositionView {
  readonly positionId: string;
  readonly side: string;
  readonly quantity: string;
}

export interface PositionMismatch {
  readonly marketId: string;
  readonly local: PositionView | null;
  readonly venue: PositionView | null;
}

export interface ReconciliationReport {
  readonly reason: string;
  /** Epoch milliseconds when the run started and ended. */
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly ok: boolean;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly settlement: SettlementReport | null;
  /** Open at the venue, not held by the tracker; the runtime's own ones were adopted. */
  readonly missingLocally: readonly OrderSummary[];
  /** Open at the venue and explained by no journal entry or id of this journal. */
  readonly foreignOrders: readonly OrderSummary[];
  /** Held open by the tracker, not listed by the venue; `status` is the final one read back. */
  readonly missingAtVenue: readonly OrderSummary[];
  readonly stateMismatches: readonly OrderStateMismatch[];
  readonly positionMismatches: readonly PositionMismatch[];
  /** Foreign orders cancelled (only with `cancelUnknownOrders`). */
  readonly cancelledForeignOrders: readonly string[];
  /** Foreign orders a cancel was tried for and failed or stayed unknown. */
  readonly failedForeignCancels: readonly {
    readonly orderId: string;
    readonly code: string;
  }[];
}

/** The executor as the reconciler uses it. */
export interface ReconcilerExecution {
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  settleOpenIntentsExclusive(): Promise<SettlementReport>;
}

export interface ReconcilerConfig {
  readonly intervalMs: number;
  /** Cancel orders that no journal entry explains. Off by default: they are only reported. */
  readonly cancelUnknownOrders: boolean;
  /** Retry delays after a failed run while not ready. */
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
  readonly readTimeoutMs: number | null;
}

export const defaultReconcilerConfig: ReconcilerConfig = Object.freeze({
  intervalMs: 60_000,
  cancelUnknownOrders: false,
  retryBaseDelayMs: 1_000,
  retryMaxDelayMs: 30_000,
  readTimeoutMs: 15_000,
});

export interface ReconcilerOptions {
  readonly venue: ExecutionVenue;
  readonly journal: IntentJournal;
  readonly tracker: OrderTracker;
  readonly execution: ReconcilerExecution;
  readonly clock: Clock;
  readonly logger?: Logger | undefined;
  readonly config?: Partial<ReconcilerConfig> | undefined;
}

function summary(order: Order): OrderSummary {
  return {
    orderId: order.order_id,
    clientOrderId: order.client_order_id,
    marketId: order.market_id,
    side: order.side,
    status: order.status,
    quantity: order.quantity,
    filledQuantity: order.filled_quantity,
  };
}

function positionView(position: Position): PositionView {
  return {
    positionId: position.position_id,
    side: position.side,
    quantity: position.quantity,
  };
}

function openPositionsByMarket(positions: readonly Position[]): Map<string, Position> {
  const byMarket = new Map<string, Position>();
  for (const position of positions) {
    if (!parseDecimal(position.quantity).eq(ZERO)) byMarket.set(position.market_id, position);
  }
  return byMarket;
}

function samePosition(left: Position, right: Position): boolean {
  return (
    left.side === right.side &&
    parseDecimal(left.quantity).eq(parseDecimal(right.quantity)) &&
    left.position_id === right.position_id
  );
}

function describe(error: unknown): { code: string; message: string } {
  return {
    code: isPaperbotError(error) ? error.code : 'UNEXPECTED_ERROR',
    message: error instanceof Error ? error.message : String(error),
  };
}

/** True when `ours` reflects a later event of the order than `theirs` (both sequenced). */
function isNewer(ours: Order, theirs: Order): boolean {
  return (
    ours.last_event_sequence !== null &&
    theirs.last_event_sequence !== null &&
    ours.last_event_sequence > theirs.last_event_sequence
  );
}

export class Reconciler {
  readonly ready$: Observable<boolean>;
  readonly reports$: Observable<ReconciliationReport>;

  private readonly venue: ExecutionVenue;
  private readonly journal: IntentJournal;
  private readonly tracker: OrderTracker;
  private readonly execution: ReconcilerExecution;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly config: ReconcilerConfig;
  private readonly readySubject = new BehaviorSubject(false);
  private readonly reportSubject = new Subject<ReconciliationReport>();
  private running: Promise<ReconciliationReport> | null = null;
  private rerunReason: string | null = null;
  private failures = 0;
  private intervalTimer: TimerHandle | undefined;
  private retryTimer: TimerHandle | undefined;
  private resyncSubscription: Subscription | undefined;
  private started = false;
  /** After `stop()`: no run starts, none is scheduled, and one cut short is no failure. */
  private stopped = false;

  constructor(options: ReconcilerOptions) {
    this.venue = options.venue;
    this.journal = options.journal;
    this.tracker = options.tracker;
    this.execution = options.execution;
    this.clock = options.clock;
    this.logger = options.logger ?? silentLogger;
    this.config = { ...defaultReconcilerConfig, ...options.config };
    this.ready$ = this.readySubject.asObservable();
    this.reports$ = this.reportSubject.asObservable();
  }

  get ready(): boolean {
    return this.readySubject.value;
  }

  /** Resolves once no run is under way (including runs queued behind one). */
  async idle(): Promise<void> {
    while (this.running !== null) await this.running;
  }

  /** Runs at once, then every `intervalMs`, and after every resync. */
  start(): Promise<ReconciliationReport> {
    if (!this.started) {
      this.started = true;
      this.resyncSubscription = this.venue.resync$.subscribe((signal) => {
        this.logger.warn('stream continuity lost; trading stops until reconciled', {
          reason: signal.reason,
        });
        this.setReady(false);
        void this.reconcile(`resync: ${signal.reason}`);
      });
      this.intervalTimer = this.clock.setInterval(
        () => void this.reconcile('periodic'),
        this.config.intervalMs,
      );
    }
    return this.reconcile('start');
  }

  /**
   * Stops for good: no timer, no resync, no rerun; a run asked for later is not made. The
   * kernel stops the reconciler before it closes the executor's lane at shutdown, so no run
   * finds the lane closed (a run already queued there ends quietly).
   */
  stop(): void {
    this.started = false;
    this.stopped = true;
    this.rerunReason = null;
    this.resyncSubscription?.unsubscribe();
    this.clock.clearInterval(this.intervalTimer);
    this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /**
   * One run (runs asked for while one is under way are folded into one more run after it). The
   * promise resolves with the report of the run that covers the request.
   */
  reconcile(reason: string): Promise<ReconciliationReport> {
    if (this.stopped) {
      const now = this.clock.now();
      return Promise.resolve(
        this.failedReport(reason, now, null, new Error('the reconciler is stopped')),
      );
    }
    if (this.running !== null) {
      this.rerunReason = this.rerunReason === null ? reason : `${this.rerunReason}, ${reason}`;
      return this.running.then(() => this.running ?? this.reconcile(reason));
    }
    const startedAt = this.clock.now();
    const run = this.execution
      .exclusive(() => this.run(reason))
      .catch((error: unknown) => this.failedReport(reason, startedAt, null, error))
      .then((report) => {
        this.running = null;
        this.afterRun(report);
        const again = this.rerunReason;
        this.rerunReason = null;
        if (again !== null && !this.stopped) void this.reconcile(again);
        return report;
      });
    this.running = run;
    return run;
  }

  private afterRun(report: ReconciliationReport): void {
    this.reportSubject.next(report);
    if (report.ok) {
      this.failures = 0;
      this.clock.clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      const clean =
        report.missingLocally.length === 0 &&
        report.missingAtVenue.length === 0 &&
        report.stateMismatches.length === 0 &&
        report.positionMismatches.length === 0 &&
        report.foreignOrders.length === 0;
      const fields = {
        reason: report.reason,
        missingLocally: report.missingLocally.length,
        foreignOrders: report.foreignOrders.length,
        missingAtVenue: report.missingAtVenue.length,
        stateMismatches: report.stateMismatches.length,
        positionMismatches: report.positionMismatches.length,
        unresolvedIntents: report.settlement?.unresolved.length ?? 0,
        report,
      };
      // A clean periodic run is routine (one a minute): at debug, so a day's log is not a
      // report per minute; the start, a resync or a retry that finds nothing stays at info.
      if (!clean) this.logger.warn('reconciliation found differences', fields);
      else if (report.reason === 'periodic') {
        this.logger.debug('reconciliation found no differences', fields);
      } else this.logger.info('reconciliation found no differences', fields);
      // A resync that arrived during the run asked for another run; stay closed until it.
      if (this.rerunReason === null || !this.rerunReason.includes('resync')) this.setReady(true);
      return;
    }
    if (this.stopped) {
      // Asked for before the stop, cut short by it (the lane closed): nothing failed.
      this.logger.debug('reconciliation ended by the stop', { reason: report.reason });
      return;
    }
    this.failures += 1;
    this.logger.error('reconciliation failed', {
      reason: report.reason,
      error: report.error,
    });
    if (!this.ready && this.started && this.retryTimer === undefined) {
      const delay = backoffDelay(
        this.failures - 1,
        this.config.retryBaseDelayMs,
        this.config.retryMaxDelayMs,
      );
      this.retryTimer = this.clock.setTimeout(() => {
        this.retryTimer = undefined;
        void this.reconcile('retry');
      }, delay);
    }
  }

  private setReady(value: boolean): void {
    if (this.readySubject.value !== value) this.readySubject.next(value);
  }

  private read<T>(work: () => Promise<T>): Promise<T> {
    return withDeadline(this.clock, this.config.readTimeoutMs, work);
  }

  private failedReport(
    reason: string,
    startedAt: number,
    settlement: SettlementReport | null,
    error: unknown,
  ): ReconciliationReport {
    return {
      reason,
      startedAt,
      finishedAt: this.clock.now(),
      ok: false,
      error: describe(error),
      settlement,
      missingLocally: [],
      foreignOrders: [],
      missingAtVenue: [],
      stateMismatches: [],
      positionMismatches: [],
      cancelledForeignOrders: [],
      failedForeignCancels: [],
    };
  }

  private async run(reason: string): Promise<ReconciliationReport> {
    const startedAt = this.clock.now();
    let settlement: SettlementReport | null = null;
    let venueOrders: Order[];
    let venuePositions: Position[];
    let account: Account;
    try {
      settlement = await this.execution.settleOpenIntentsExclusive();
      // Fills a gap in the private sequence hid (owed in the journal, also from a crashed run).
      await this.tracker.readFillsBack();
      [venueOrders, venuePositions, account] = await Promise.all([
        this.read(() => this.venue.listOpenOrders()),
        this.read(() => this.venue.listPositions()),
        this.read(() => this.venue.getAccount()),
      ]);
    } catch (error) {
      return this.failedReport(reason, startedAt, settlement, error);
    }

    const epochMarker = `:${this.journal.epoch}:`;
    const missingLocally: OrderSummary[] = [];
    const foreign: Order[] = [];
    const stateMismatches: OrderStateMismatch[] = [];
    const venueIds = new Set<string>();
    for (const order of venueOrders) {
      venueIds.add(order.order_id);
      const local = this.tracker.order(order.order_id);
      if (local === undefined) {
        missingLocally.push(summary(order));
        // Indexed lookups per order, not every id the journal ever held (start-up stays flat).
        const ours =
          this.journal.isKnownOrder(order.order_id, order.client_order_id) ||
          (order.client_order_id !== null && order.client_order_id.includes(epochMarker));
        if (!ours) foreign.push(order);
        continue;
      }
      // An event that arrived after the venue answered (an order placed a moment before the
      // read, filled since) makes ours newer than the snapshot: that is no mismatch.
      if (isNewer(local.order, order)) continue;
      if (
        local.order.status !== order.status ||
        !parseDecimal(local.order.filled_quantity).eq(parseDecimal(order.filled_quantity))
      ) {
        stateMismatches.push({
          orderId: order.order_id,
          clientOrderId: local.order.client_order_id,
          local: {
            status: local.order.status,
            filledQuantity: local.order.filled_quantity,
          },
          venue: {
            status: order.status,
            filledQuantity: order.filled_quantity,
          },
        });
      }
    }

    // Held open here, not open at the venue: its final state has to be read.
    const missingAtVenue: OrderSummary[] = [];
    for (const tracked of this.tracker.openOrders()) {
      if (venueIds.has(tracked.order.order_id)) continue;
      try {
        const final = await this.read(() => this.venue.getOrder(tracked.order.order_id));
        this.tracker.applyOrder(final, 'read');
        missingAtVenue.push({
          ...summary(final),
          clientOrderId: tracked.order.client_order_id,
        });
      } catch (error) {
        this.logger.warn('order missing at the venue could not be read back', {
          orderId: tracked.order.order_id,
          code: describe(error).code,
        });
        missingAtVenue.push(summary(tracked.order));
      }
    }

    // Positions are compared once the tracker has held some; the first read simply adopts them.
    const localPositions = openPositionsByMarket(this.tracker.positions());
    const remotePositions = openPositionsByMarket(venuePositions);
    const positionMismatches: PositionMismatch[] = [];
    const markets = this.tracker.positionsKnown
      ? new Set([...localPositions.keys(), ...remotePositions.keys()])
      : new Set<string>();
    for (const marketId of markets) {
      const local = localPositions.get(marketId);
      const remote = remotePositions.get(marketId);
      if (local !== undefined && remote !== undefined && samePosition(local, remote)) continue;
      positionMismatches.push({
        marketId,
        local: local === undefined ? null : positionView(local),
        venue: remote === undefined ? null : positionView(remote),
      });
    }

    this.tracker.applySnapshot({
      openOrders: venueOrders,
      positions: venuePositions,
      account,
    });

    const cancelledForeignOrders: string[] = [];
    const failedForeignCancels: { orderId: string; code: string }[] = [];
    if (foreign.length > 0) {
      const unresolved = settlement.unresolved.length;
      if (!this.config.cancelUnknownOrders) {
        this.logger.warn(
          'orders no journal entry explains are left alone (cancelUnknownOrders is off)',
          {
            orderIds: foreign.map((order) => order.order_id),
          },
        );
      } else if (unresolved > 0) {
        this.logger.warn('foreign orders not cancelled while intents are unresolved', {
          orderIds: foreign.map((order) => order.order_id),
          unresolved,
        });
      } else {
        for (const order of foreign) {
          const result = await sendInternalCommand(
            {
              venue: this.venue,
              journal: this.journal,
              clock: this.clock,
              timeoutMs: this.config.readTimeoutMs,
            },
            'reconcile',
            (requestId) => ({
              endpoint: 'cancelOrder',
              params: { order_id: order.order_id },
              body: { request_id: requestId },
            }),
          );
          if (result.ok) {
            this.tracker.applyOrder(result.response, 'response');
            cancelledForeignOrders.push(order.order_id);
          } else {
            failedForeignCancels.push({
              orderId: order.order_id,
              code: result.code,
            });
          }
        }
      }
    }

    return {
      reason,
      startedAt,
      finishedAt: this.clock.now(),
      ok: true,
      error: null,
      settlement,
      missingLocally,
      foreignOrders: foreign.map(summary),
      missingAtVenue,
      stateMismatches,
      positionMismatches,
      cancelledForeignOrders,
      failedForeignCancels,
    };
  }
}
