/**
 * The dead-man heartbeat: keeps a cancel-all-after deadline armed at the venue for as long as
 * the bot may trade, so that if the bot dies, hangs or loses its connection, the venue cancels
 * the account's active orders by itself.
 *
 * - Arms before the first order: `mayTrade$` is false until the venue confirmed a deadline.
 * - Refreshes every `refreshIntervalMs` (at most timeout / 4) on a fixed schedule, each time with
 *   a new request id (a repeated id would return the stored result and move nothing). Each
 *   request is one of the runtime's own journaled commands (`pb-deadman:<epoch>:<n>`).
 * - Refreshes run on their own lane, never behind order commands, and are pipelined: when one is
 *   still unanswered as the next falls due (a slow venue), the next goes anyway, up to
 *   `maxRefreshesInFlight`. The deadline the bot believes is the latest one confirmed.
 * - Stops trading (`mayTrade$` false) after `maxFailedRefreshes` failed refreshes in a row, and
 *   whenever the deadline could pass: now + latency margin >= the deadline as last confirmed.
 *   The deadline used is the earlier of the venue's `deadline_at` and the local send time plus
 *   the timeout, so a clock skew between bot and venue cannot make it look later than it is.
 * - When a deadline fired (the venue's `cancel_all_after.triggered` event, or the deadline
 *   passing without a confirmed refresh), the venue may have cancelled orders: reconcile, then
 *   re-arm, and only then trade again.
 * - Clean shutdown (`shutdown.ts`): cancel all with retries, confirm by reading the open orders
 *   that none is left, then disarm (timeout 0). When that cannot be confirmed within the shutdown
 *   deadline, the deadline is left armed, so the venue still cancels what is left when it
 *   passes, and the report names the orders that may remain.
 */
import {
  BehaviorSubject,
  distinctUntilChanged,
  map,
  type Observable,
  type Subscription,
} from 'rxjs';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { parseTimestamp } from '../../protocol/index.ts';
import { backoffDelay } from '../execution/classify.ts';
import {
  type InternalCommandResult,
  sendInternalCommand,
  sendInternalCommandWithRetries,
} from '../execution/internal-command.ts';
import { ConcurrentLane } from '../execution/lane.ts';
import { type Logger, silentLogger } from '../../core/logger.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { ExecutionVenue, RiskEvent } from '../venue.ts';
import { type DeadmanConfig, type ResolvedDeadmanConfig, resolveDeadmanConfig } from './config.ts';
import {
  type CloseOutReport,
  closeOutAccount,
  resolveShutdownConfig,
  retryBudget,
  type ShutdownConfig,
} from './shutdown.ts';

export { type DeadmanConfig, defaultDeadmanConfig } from './config.ts';

export type DeadmanPhase =
  'idle' | 'arming' | 'armed' | 'expired' | 'recovering' | 'shutting_down' | 'disarmed' | 'stopped';

export interface DeadmanStatus {
  readonly phase: DeadmanPhase;
  readonly mayTrade: boolean;
  /** The deadline as last confirmed, epoch milliseconds; null when none is armed. */
  readonly deadlineAt: number | null;
  readonly failedRefreshes: number;
  readonly lastRequestId: string | null;
  readonly reason: string;
}

/** The close-out's report, and whether the dead-man deadline was disarmed. */
export interface ShutdownReport extends CloseOutReport {
  /** The dead-man deadline was disarmed (or there was none to disarm). */
  readonly disarmed: boolean;
}

/** What the kernel hands the shutdown: its budget and what it knows of the order flow. */
export interface ShutdownOptions {
  readonly config?: Partial<ShutdownConfig> | undefined;
  /** Resolves once no order command is in flight. */
  readonly settled?: (() => Promise<void>) | undefined;
  /** The orders the bot believes open, named when no read of them succeeds. */
  readonly knownOpenOrderIds?: (() => readonly string[]) | undefined;
}

export interface DeadmanOptions {
  readonly venue: ExecutionVenue;
  readonly journal: IntentJournal;
  readonly clock: Clock;
  /** Reconciles after a fired deadline; resolves true on success. */
  readonly recover: () => Promise<boolean>;
  readonly logger?: Logger | undefined;
  readonly config?: Partial<DeadmanConfig> | undefined;
}

export class DeadmanSwitch {
  readonly status$: Observable<DeadmanStatus>;
  readonly mayTrade$: Observable<boolean>;

  private readonly venue: ExecutionVenue;
  private readonly journal: IntentJournal;
  private readonly clock: Clock;
  private readonly recover: () => Promise<boolean>;
  private readonly logger: Logger;
  readonly config: ResolvedDeadmanConfig;
  private readonly statusSubject: BehaviorSubject<DeadmanStatus>;

  private phase: DeadmanPhase = 'idle';
  private deadlineAt: number | null = null;
  private failedRefreshes = 0;
  private lastRequestId: string | null = null;
  private reason = 'not armed yet';
  /** Bumped whenever the switch leaves a period of arming: late answers of older ones are ignored. */
  private generation = 0;
  /** The heartbeat's own lane: refreshes in flight at once, bounded, never behind orders. */
  private readonly refreshLane: ConcurrentLane;
  /** Set while an arming request (not a refresh) is under way, so arming is not repeated. */
  private armingFor: number | null = null;
  private retryAttempt = 0;
  private refreshTimer: TimerHandle | undefined;
  private guardTimer: TimerHandle | undefined;
  private expiryTimer: TimerHandle | undefined;
  private retryTimer: TimerHandle | undefined;
  private riskSubscription: Subscription | undefined;
  private readonly handledTriggers = new Set<string>();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(options: DeadmanOptions) {
    this.venue = options.venue;
    this.journal = options.journal;
    this.clock = options.clock;
    this.recover = options.recover;
    this.logger = options.logger ?? silentLogger;
    this.config = resolveDeadmanConfig(options.config);
    this.refreshLane = new ConcurrentLane(this.config.maxRefreshesInFlight);
    this.statusSubject = new BehaviorSubject(this.snapshot());
    this.status$ = this.statusSubject.asObservable();
    this.mayTrade$ = this.statusSubject.pipe(
      map((status) => status.mayTrade),
      distinctUntilChanged(),
    );
  }

  get status(): DeadmanStatus {
    return this.statusSubject.value;
  }

  /** Resolves once no heartbeat request or recovery started by the switch is under way. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private track(work: Promise<void>): Promise<void> {
    this.inFlight.add(work);
    void work
      .finally(() => this.inFlight.delete(work))
      .catch((error: unknown) => {
        this.logger.error('dead-man task failed', {
          message: error instanceof Error ? error.message : String(error),
        });
      });
    return work;
  }

  /** Arms the deadline (retrying until it is confirmed) and starts refreshing it. */
  start(): Promise<void> {
    if (this.phase !== 'idle') return Promise.resolve();
    this.riskSubscription = this.venue.riskEvents$.subscribe((event) => this.onRiskEvent(event));
    const previous = this.journal.readDeadman();
    if (previous?.armed && previous.deadlineAt !== null) {
      const passed = previous.deadlineAt <= this.clock.now();
      this.logger.warn(
        passed
          ? 'a deadline armed by an earlier process has passed: the venue may have cancelled orders'
          : 'a deadline armed by an earlier process is still pending; arming anew',
        {
          deadlineAt: previous.deadlineAt,
          lastRequestId: previous.lastRequestId,
        },
      );
    }
    this.phase = 'arming';
    this.reason = 'arming';
    this.publish();
    return this.track(this.arm(this.generation));
  }

  /**
   * Trading stops; every active order is cancelled and the account read back until none is open
   * (`closeOutAccount`), then the deadline is disarmed, all within the shutdown deadline. When
   * no read confirms the account empty, the deadline stays armed (the venue cancels what is left
   * when it passes) and the report names the orders that may remain.
   */
  async shutdown(options: ShutdownOptions = {}): Promise<ShutdownReport> {
    const config = resolveShutdownConfig(options.config);
    this.generation += 1;
    this.clearTimers();
    this.phase = 'shutting_down';
    this.reason = 'shutting down';
    this.publish();
    const deadlineAt = this.clock.now() + config.deadlineMs;
    const closeOut = await closeOutAccount({
      venue: this.venue,
      journal: this.journal,
      clock: this.clock,
      logger: this.logger,
      config,
      deadlineAt,
      settled: options.settled,
      knownOpenOrderIds: options.knownOpenOrderIds,
    });
    if (!closeOut.confirmed) {
      this.logger.error(
        'shutdown could not confirm every order closed; the deadline stays armed so the venue cancels',
        {
          remainingOrderIds: closeOut.remainingOrderIds,
          code: closeOut.error?.code,
          message: closeOut.error?.message,
          deadlineAt: this.deadlineAt,
        },
      );
      this.stopWatching('shutdown could not confirm every order closed; deadline left armed');
      return { ...closeOut, disarmed: false };
    }
    const disarm = await sendInternalCommandWithRetries(
      { venue: this.venue, journal: this.journal, clock: this.clock },
      'deadman',
      (requestId) => ({
        endpoint: 'setCancelAllAfter',
        body: { request_id: requestId, timeout_seconds: 0 },
      }),
      retryBudget(config, deadlineAt),
    );
    if (!disarm.ok) {
      this.logger.error('disarming failed after every order closed; the deadline will still fire', {
        code: disarm.code,
      });
      this.stopWatching('disarm failed');
      return {
        ...closeOut,
        disarmed: false,
        error: { code: disarm.code, message: disarm.message },
      };
    }
    this.deadlineAt = null;
    this.lastRequestId = disarm.requestId;
    this.persist(false, null);
    this.stopWatching('disarmed');
    this.phase = 'disarmed';
    this.publish();
    return { ...closeOut, disarmed: true, error: null };
  }

  /** Stops timers and the event subscription; leaves the venue's deadline as it is. */
  stop(): void {
    this.generation += 1;
    this.stopWatching('stopped');
    this.phase = 'stopped';
    this.publish();
  }

  private stopWatching(reason: string): void {
    this.clearTimers();
    this.riskSubscription?.unsubscribe();
    this.riskSubscription = undefined;
    this.reason = reason;
  }

  private context() {
    return {
      venue: this.venue,
      journal: this.journal,
      clock: this.clock,
      timeoutMs: this.config.requestTimeoutMs,
    };
  }

  private sendHeartbeat(
    timeoutSeconds: number,
  ): Promise<InternalCommandResult<'setCancelAllAfter'>> {
    return sendInternalCommand(this.context(), 'deadman', (requestId) => ({
      endpoint: 'setCancelAllAfter',
      body: { request_id: requestId, timeout_seconds: timeoutSeconds },
    }));
  }

  /** Sends one arming request and applies its answer, unless the switch moved on meanwhile. */
  private async arm(generation: number): Promise<void> {
    // One arming request at a time per arming period; a request of an older period (say, a
    // refresh still hanging when the deadline fired) does not hold up the re-arm.
    if (this.armingFor === generation) return;
    this.armingFor = generation;
    let result: InternalCommandResult<'setCancelAllAfter'>;
    try {
      result = await this.sendHeartbeat(this.config.timeoutSeconds);
    } finally {
      if (this.armingFor === generation) this.armingFor = null;
    }
    this.apply(generation, result);
  }

  /**
   * A refresh falls due: the next one is scheduled at once (a fixed period, whatever the venue's
   * speed) and this one goes out on the heartbeat's lane, beside any still unanswered.
   */
  private refresh(generation: number): void {
    this.scheduleRefresh(generation);
    const work = this.refreshLane.tryRun(() => this.sendHeartbeat(this.config.timeoutSeconds));
    if (work === null) {
      this.onHeartbeatFailure(
        generation,
        `${this.refreshLane.size} refreshes are still unanswered; this one was not sent`,
      );
      return;
    }
    void this.track(work.then((result) => this.apply(generation, result)));
  }

  private apply(generation: number, result: InternalCommandResult<'setCancelAllAfter'>): void {
    if (generation !== this.generation) return;
    if (result.ok) {
      const venueDeadline =
        result.response.deadline_at === null ? null : parseTimestamp(result.response.deadline_at);
      if (venueDeadline === null) {
        this.onHeartbeatFailure(generation, 'the venue returned no deadline');
        return;
      }
      const localDeadline = result.sentAt + this.config.timeoutSeconds * 1000;
      this.confirm(generation, Math.min(venueDeadline, localDeadline), result.requestId);
      return;
    }
    this.onHeartbeatFailure(generation, `${result.code}: ${result.message}`);
  }

  private confirm(generation: number, deadlineAt: number, requestId: string): void {
    const first = this.phase !== 'armed';
    this.failedRefreshes = 0;
    this.retryAttempt = 0;
    this.reason = 'armed';
    // Pipelined refreshes may be answered out of order: the later deadline stands.
    if (!first && this.deadlineAt !== null && deadlineAt <= this.deadlineAt) {
      this.publish();
      return;
    }
    this.phase = 'armed';
    this.deadlineAt = deadlineAt;
    this.lastRequestId = requestId;
    this.persist(true, null);
    if (first) {
      this.logger.info('dead-man deadline armed', { deadlineAt, requestId });
      this.scheduleRefresh(generation);
    }
    this.scheduleDeadlineWatch(generation, deadlineAt);
    this.publish();
  }

  private onHeartbeatFailure(generation: number, reason: string): void {
    if (this.phase === 'armed') {
      this.failedRefreshes += 1;
      this.reason = `refresh failed (${this.failedRefreshes} in a row): ${reason}`;
      this.logger.warn('dead-man refresh failed', {
        failedRefreshes: this.failedRefreshes,
        reason,
        deadlineAt: this.deadlineAt,
      });
      this.publish();
      return;
    }
    // Not armed yet (start, or re-arming after recovery): keep trying, trading stays off.
    this.reason = `arming failed: ${reason}`;
    this.logger.warn('dead-man arming failed; retrying', { reason });
    this.scheduleRetry(() => void this.track(this.arm(generation)));
    this.publish();
  }

  private scheduleRefresh(generation: number): void {
    this.clock.clearTimeout(this.refreshTimer);
    this.refreshTimer = this.clock.setTimeout(() => {
      this.refreshTimer = undefined;
      if (generation === this.generation && this.phase === 'armed') this.refresh(generation);
    }, this.config.refreshIntervalMs);
  }

  private scheduleDeadlineWatch(generation: number, deadlineAt: number): void {
    this.clock.clearTimeout(this.guardTimer);
    this.clock.clearTimeout(this.expiryTimer);
    const now = this.clock.now();
    this.guardTimer = this.clock.setTimeout(
      () => {
        this.guardTimer = undefined;
        if (generation !== this.generation || this.deadlineAt !== deadlineAt) return;
        this.reason = 'the deadline could pass before another refresh is confirmed';
        this.logger.warn('dead-man deadline is near and unrefreshed; trading stops', {
          deadlineAt,
        });
        this.publish();
      },
      Math.max(0, deadlineAt - this.config.latencyMarginMs - now),
    );
    this.expiryTimer = this.clock.setTimeout(
      () => {
        this.expiryTimer = undefined;
        if (generation !== this.generation || this.deadlineAt !== deadlineAt) return;
        this.onFired('the deadline passed without a confirmed refresh');
      },
      Math.max(0, deadlineAt - now),
    );
  }

  private scheduleRetry(work: () => void): void {
    this.clock.clearTimeout(this.retryTimer);
    const delay = backoffDelay(
      this.retryAttempt,
      this.config.retryBaseDelayMs,
      this.config.retryMaxDelayMs,
    );
    this.retryAttempt += 1;
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
      work();
    }, delay);
  }

  private onRiskEvent(event: RiskEvent): void {
    if (event.type !== 'cancel_all_after.triggered') return;
    const key = event.data.deadline_at;
    if (this.handledTriggers.has(key)) return;
    this.handledTriggers.add(key);
    if (this.phase === 'armed' || this.phase === 'arming') {
      this.onFired(`the venue reported the deadline fired at ${event.data.triggered_at}`);
    } else {
      this.logger.info('cancel-all-after trigger noted while not trading', {
        phase: this.phase,
        deadlineAt: event.data.deadline_at,
      });
    }
  }

  /** A deadline fired: the venue may have cancelled orders. Reconcile, then re-arm. */
  private onFired(reason: string): void {
    this.generation += 1;
    this.clearTimers();
    this.phase = 'expired';
    this.reason = reason;
    this.failedRefreshes = 0;
    this.retryAttempt = 0;
    this.persist(false, this.clock.now());
    this.logger.error('dead-man deadline fired; trading stops until reconciled and re-armed', {
      reason,
      deadlineAt: this.deadlineAt,
    });
    this.deadlineAt = null;
    this.publish();
    void this.track(this.recoverThenArm(this.generation));
  }

  private async recoverThenArm(generation: number): Promise<void> {
    if (generation !== this.generation) return;
    this.phase = 'recovering';
    this.publish();
    let recovered = false;
    try {
      recovered = await this.recover();
    } catch (error) {
      this.logger.error('reconciliation after a fired deadline threw', {
        message: error instanceof Error ? error.message : String(error),
      });
    }
    if (generation !== this.generation) return;
    if (!recovered) {
      this.reason = 'reconciliation after the fired deadline failed; retrying';
      this.publish();
      this.scheduleRetry(() => void this.track(this.recoverThenArm(generation)));
      return;
    }
    this.retryAttempt = 0;
    this.phase = 'arming';
    this.reason = 're-arming after reconciliation';
    this.publish();
    await this.arm(generation);
  }

  private clearTimers(): void {
    for (const timer of [this.refreshTimer, this.guardTimer, this.expiryTimer, this.retryTimer]) {
      this.clock.clearTimeout(timer);
    }
    this.refreshTimer = undefined;
    this.guardTimer = undefined;
    this.expiryTimer = undefined;
    this.retryTimer = undefined;
  }

  private persist(armed: boolean, firedAt: number | null): void {
    if (!this.journal.isOpen) return;
    this.journal.writeDeadman({
      armed,
      timeoutSeconds: this.config.timeoutSeconds,
      deadlineAt: this.deadlineAt,
      lastRequestId: this.lastRequestId,
      confirmedAt: this.clock.now(),
      firedAt,
    });
  }

  private mayTradeNow(): boolean {
    return (
      this.phase === 'armed' &&
      this.deadlineAt !== null &&
      this.failedRefreshes < this.config.maxFailedRefreshes &&
      this.clock.now() + this.config.latencyMarginMs < this.deadlineAt
    );
  }

  private snapshot(): DeadmanStatus {
    return Object.freeze({
      phase: this.phase,
      mayTrade: this.mayTradeNow(),
      deadlineAt: this.deadlineAt,
      failedRefreshes: this.failedRefreshes,
      lastRequestId: this.lastRequestId,
      reason: this.reason,
    });
  }

  private publish(): void {
    this.statusSubject.next(this.snapshot());
  }
}
