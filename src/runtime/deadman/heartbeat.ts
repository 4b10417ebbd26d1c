/**
 * The dead-man heartbeat: keeps a cancel-all-after deadline armed at the venue for as long as
 * the bot may trade, so that if the bot dies, hangs or loses its connection, the venue cancels
 * the account's active orders by itself.
 *
 * - Arms before the first order: `mayTrade$` is false until the venue confirmed a deadline.
 * - Refreshes every `refreshIntervalMs` (at most timeout / 4), each time with a new request id
 *   (a repeated id would return the stored result and move nothing). Each request is one of the
 *   runtime's own journaled commands (`pb-deadman:<epoch>:<n>`).
 * - Stops trading (`mayTrade$` false) after `maxFailedRefreshes` failed refreshes in a row, and
 *   whenever the deadline could pass: now + latency margin >= the deadline as last confirmed.
 *   The deadline used is the earlier of the venue's `deadline_at` and the local send time plus
 *   the timeout, so a clock skew between bot and venue cannot make it look later than it is.
 * - When a deadline fired (the venue's `cancel_all_after.triggered` event, or the deadline
 *   passing without a confirmed refresh), the venue may have cancelled orders: reconcile, then
 *   re-arm, and only then trade again.
 * - Clean shutdown: cancel all, then disarm (timeout 0). If the cancel-all fails, the deadline is
 *   left armed, so the venue still cancels what is left when it passes.
 */
import {
  BehaviorSubject,
  distinctUntilChanged,
  map,
  type Observable,
  type Subscription,
} from 'rxjs';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import { type CancelAllResponse, parseTimestamp } from '../../protocol/index.ts';
import { backoffDelay } from '../execution/classify.ts';
import { type InternalCommandResult, sendInternalCommand } from '../execution/internal-command.ts';
import { type ExecutionLogger, silentLogger } from '../execution/logger.ts';
import type { Journal } from '../journal/journal.ts';
import type { ExecutionVenue, RiskEvent } from '../venue.ts';

export interface DeadmanConfig {
  /** The cancel-all-after timeout armed at the venue, 1..86400 seconds. */
  readonly timeoutSeconds: number;
  /** Refresh period; at most timeout / 4 (the default). */
  readonly refreshIntervalMs: number | null;
  /** Trading stops this long before the confirmed deadline (request latency and clock jitter). */
  readonly latencyMarginMs: number;
  /** Failed refreshes in a row after which trading stops. */
  readonly maxFailedRefreshes: number;
  /** Stop waiting for one heartbeat request after this long; default half the refresh period. */
  readonly requestTimeoutMs: number | null;
  /** Retry delays of arming and of recovery after a fired deadline. */
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
}

export const defaultDeadmanConfig: DeadmanConfig = Object.freeze({
  timeoutSeconds: 60,
  refreshIntervalMs: null,
  latencyMarginMs: 2_000,
  maxFailedRefreshes: 2,
  requestTimeoutMs: null,
  retryBaseDelayMs: 1_000,
  retryMaxDelayMs: 30_000,
});

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

export interface ShutdownReport {
  readonly cancelled: boolean;
  readonly disarmed: boolean;
  readonly cancelAll: CancelAllResponse | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}

export interface DeadmanOptions {
  readonly venue: ExecutionVenue;
  readonly journal: Journal;
  readonly clock: Clock;
  /** Reconciles after a fired deadline; resolves true on success. */
  readonly recover: () => Promise<boolean>;
  readonly logger?: ExecutionLogger | undefined;
  readonly config?: Partial<DeadmanConfig> | undefined;
}

type ResolvedConfig = DeadmanConfig & {
  readonly refreshIntervalMs: number;
  readonly requestTimeoutMs: number;
};

function resolveConfig(partial: Partial<DeadmanConfig> | undefined): ResolvedConfig {
  const config = { ...defaultDeadmanConfig, ...partial };
  const problems: string[] = [];
  const timeout = config.timeoutSeconds;
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 86_400) {
    problems.push(`timeoutSeconds must be an integer in 1..86400, got ${timeout}`);
  }
  const ceiling = (timeout * 1000) / 4;
  const refresh = config.refreshIntervalMs ?? ceiling;
  if (!(refresh > 0) || refresh > ceiling) {
    problems.push(`refreshIntervalMs must be in (0, timeout / 4 = ${ceiling}], got ${refresh}`);
  }
  if (!(config.latencyMarginMs >= 0) || config.latencyMarginMs >= timeout * 1000 - refresh) {
    problems.push(
      `latencyMarginMs must be >= 0 and leave room for a refresh before the deadline, got ${config.latencyMarginMs}`,
    );
  }
  if (!Number.isInteger(config.maxFailedRefreshes) || config.maxFailedRefreshes < 1) {
    problems.push('maxFailedRefreshes must be an integer >= 1');
  }
  if (problems.length > 0) {
    throw new PaperbotError('INVALID_CONFIG', `dead-man switch: ${problems.join('; ')}`, {
      details: { problems },
    });
  }
  return {
    ...config,
    refreshIntervalMs: refresh,
    requestTimeoutMs: config.requestTimeoutMs ?? refresh / 2,
  };
}

export class DeadmanSwitch {
  readonly status$: Observable<DeadmanStatus>;
  readonly mayTrade$: Observable<boolean>;

  private readonly venue: ExecutionVenue;
  private readonly journal: Journal;
  private readonly clock: Clock;
  private readonly recover: () => Promise<boolean>;
  private readonly logger: ExecutionLogger;
  readonly config: ResolvedConfig;
  private readonly statusSubject: BehaviorSubject<DeadmanStatus>;

  private phase: DeadmanPhase = 'idle';
  private deadlineAt: number | null = null;
  private failedRefreshes = 0;
  private lastRequestId: string | null = null;
  private reason = 'not armed yet';
  /** Bumped whenever the switch leaves a period of arming: late answers of older ones are ignored. */
  private generation = 0;
  /** The generation whose heartbeat request is under way, if any. */
  private requestInFlightFor: number | null = null;
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
    this.config = resolveConfig(options.config);
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

  /** Cancels every active order, then disarms. Trading stops first. */
  async shutdown(): Promise<ShutdownReport> {
    this.generation += 1;
    this.clearTimers();
    this.phase = 'shutting_down';
    this.reason = 'shutting down';
    this.publish();
    const cancelAll = await sendInternalCommand(this.context(), 'shutdown', (requestId) => ({
      endpoint: 'cancelAllOrders',
      body: { request_id: requestId },
    }));
    if (!cancelAll.ok) {
      this.logger.error(
        'shutdown cancel-all failed; the deadline stays armed so the venue cancels',
        {
          code: cancelAll.code,
          message: cancelAll.message,
          deadlineAt: this.deadlineAt,
        },
      );
      this.stopWatching('shutdown cancel-all failed; deadline left armed');
      return {
        cancelled: false,
        disarmed: false,
        cancelAll: null,
        error: { code: cancelAll.code, message: cancelAll.message },
      };
    }
    const disarm = await this.sendHeartbeat(0);
    if (!disarm.ok) {
      this.logger.error('disarming failed after cancel-all; the deadline will still fire', {
        code: disarm.code,
      });
      this.stopWatching('disarm failed');
      return {
        cancelled: true,
        disarmed: false,
        cancelAll: cancelAll.response,
        error: { code: disarm.code, message: disarm.message },
      };
    }
    this.deadlineAt = null;
    this.lastRequestId = disarm.requestId;
    this.persist(false, null);
    this.stopWatching('disarmed');
    this.phase = 'disarmed';
    this.publish();
    return {
      cancelled: true,
      disarmed: true,
      cancelAll: cancelAll.response,
      error: null,
    };
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

  /** Sends one arm or refresh and applies its answer, unless the switch moved on meanwhile. */
  private async arm(generation: number): Promise<void> {
    // One request at a time per arming period; a request of an older period (say, a refresh
    // still hanging when the deadline fired) does not hold up the re-arm.
    if (this.requestInFlightFor === generation) return;
    this.requestInFlightFor = generation;
    let result: InternalCommandResult<'setCancelAllAfter'>;
    try {
      result = await this.sendHeartbeat(this.config.timeoutSeconds);
    } finally {
      if (this.requestInFlightFor === generation) this.requestInFlightFor = null;
    }
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
    this.phase = 'armed';
    this.deadlineAt = deadlineAt;
    this.failedRefreshes = 0;
    this.retryAttempt = 0;
    this.lastRequestId = requestId;
    this.reason = 'armed';
    this.persist(true, null);
    if (first) this.logger.info('dead-man deadline armed', { deadlineAt, requestId });
    this.scheduleRefresh(generation);
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
      this.scheduleRefresh(generation);
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
      if (generation === this.generation && this.phase === 'armed') {
        void this.track(this.arm(generation));
      }
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
