/**
 * The executor: turns gate-approved intents into venue commands and sees each one to its end.
 * This file composes its parts and owns what they share: the serial lane, the permit, and the
 * executor's start and stop.
 *
 * - Journal first (design rule 6): an intent is journaled when it is submitted, and the exact
 *   bytes of its command before the first byte is sent (`submission.ts`, `simulation.ts`).
 * - Strictly serial: one command (or resolution, or reconciliation) at a time for the whole
 *   account. Cancel-all, margin and the dead-man deadline are account-wide, so per-market lanes
 *   would let a cancel-all overtake a placement it was meant to remove, and a replay would depend
 *   on interleavings. Rate limits, not the lane, bound throughput.
 * - Place, amend and close are simulated first, each simulation with its own request id
 *   (`<request_id>:s<attempt>`); only `decision: READY` goes on.
 * - Every intent ends Denied (local), Rejected (the venue said no), Accepted, or Unknown (design
 *   rule 4; `outcomes.ts`). Unknown is resolved by GET /v1/requests/{id} and the order reads,
 *   and, when the service never saw the request, by resending the journaled bytes under the same
 *   id (rule 5; `recovery.ts`). An intent never gets a second id and never becomes a second order.
 */
import type { Observable, Subscription } from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import type { StampedIntent } from '../intents.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { ExecutionVenue } from '../venue.ts';
import { errorCode, errorMessage } from './classify.ts';
import { type ExecutorConfig, executorConfig } from './executor-config.ts';
import { SerialLane } from './lane.ts';
import { type Logger, silentLogger } from '../../core/logger.ts';
import { denial, type ExecutionOutcome, IntentOutcomes } from './outcomes.ts';
import { Recovery, type SettlementReport } from './recovery.ts';
import { ResolutionTimers } from './resolution-timers.ts';
import { NO_CONTEXT, Simulation } from './simulation.ts';
import { Submission } from './submission.ts';
import type { OrderTracker } from './tracker.ts';
import { VenueCalls } from './venue-calls.ts';

export { defaultExecutorConfig, type ExecutorConfig } from './executor-config.ts';
export type { ExecutionOutcome } from './outcomes.ts';
export type { SettlementReport } from './recovery.ts';

export interface ExecutorOptions {
  readonly venue: ExecutionVenue;
  readonly journal: IntentJournal;
  readonly tracker: OrderTracker;
  readonly clock: Clock;
  /**
   * While false, placements and amendments are denied (fail closed); cancels, cancel-all and
   * closes still go out. Wire it to `tradingPermit(reconciler.ready$, deadman.mayTrade$)`.
   */
  readonly permit$: Observable<boolean>;
  readonly logger?: Logger | undefined;
  readonly config?: Partial<ExecutorConfig> | undefined;
}

export class Executor {
  readonly outcomes$: Observable<ExecutionOutcome>;
  /** Unknown intents whose automatic resolution gave up: the kernel should reduce or halt. */
  readonly unresolvedCount$: Observable<number>;
  /** Every intent whose outcome is currently unknown. */
  readonly unknownCount$: Observable<number>;

  private readonly journal: IntentJournal;
  private readonly logger: Logger;
  private readonly lane = new SerialLane();
  private readonly timers: ResolutionTimers;
  private readonly outcomes: IntentOutcomes;
  private readonly submission: Submission;
  private readonly recovery: Recovery;
  private readonly subscriptions: Subscription[] = [];
  private stopped = false;

  constructor(options: ExecutorOptions) {
    const { journal, tracker, clock } = options;
    this.journal = journal;
    this.logger = options.logger ?? silentLogger;
    const config = executorConfig(options.config);
    const calls = new VenueCalls(options.venue, clock, config.callTimeoutMs);
    this.timers = new ResolutionTimers(clock, config, (requestId) => this.resolveLater(requestId));
    this.outcomes = new IntentOutcomes(journal, tracker, calls, this.timers, this.logger);
    const simulation = new Simulation(calls, journal, this.outcomes, this.logger, config);
    this.submission = new Submission(
      calls,
      journal,
      tracker,
      simulation,
      this.outcomes,
      this.logger,
      config,
    );
    this.recovery = new Recovery(
      calls,
      journal,
      tracker,
      this.submission,
      this.outcomes,
      this.timers,
      clock,
      this.logger,
      config,
    );
    this.outcomes$ = this.outcomes.outcomes$;
    this.unresolvedCount$ = this.outcomes.unresolvedCount$;
    this.unknownCount$ = this.outcomes.unknownCount$;
    this.subscriptions.push(
      options.permit$.subscribe((value) => {
        this.submission.permitted = value;
      }),
      tracker.orders$.subscribe((tracked) => this.outcomes.onOrder(tracked)),
    );
  }

  /**
   * Takes a gate-approved intent: journals it at once, then queues it. An intent whose request
   * id is already journaled is ignored (it has, or had, its one command already).
   */
  submit(stamped: StampedIntent): void {
    if (this.stopped) {
      this.logger.warn('intent arrived after the executor stopped; not journaled', {
        requestId: stamped.requestId,
      });
      return;
    }
    // An idle lane runs the intent at once: a placement's commands are then prepared first, and
    // its bytes and first simulation journaled with the intent (one commit before it goes out).
    const ready = this.lane.size === 0 ? this.submission.readyPlacement(stamped) : null;
    const { created, record } = this.journal.recordIntent(
      stamped,
      ready === null
        ? undefined
        : {
            command: ready.prepared,
            context: NO_CONTEXT,
            step: { simulateRequestId: ready.simulation.requestId, attempt: 1 },
          },
    );
    if (!created) {
      this.logger.warn('intent already journaled; never executed twice', {
        requestId: stamped.requestId,
      });
      return;
    }
    this.outcomes.active.add(stamped.requestId);
    this.lane.post(
      () => this.submission.execute(record, ready),
      (error: unknown) => this.onTaskFailure(stamped.requestId, error),
    );
  }

  /** Submits every intent of `intents$`. */
  connect(intents$: Observable<StampedIntent>): Subscription {
    return intents$.subscribe((stamped) => this.submit(stamped));
  }

  /** Resolves once no intent, resolution or exclusive task is queued or running. */
  idle(): Promise<void> {
    return this.lane.idle();
  }

  /** Runs `work` in the lane: no command is started or in flight while it runs. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.lane.run(work, true);
  }

  /**
   * Settles what the journal holds open and this process is not working on: intents a previous
   * process journaled but never sent end denied; intents left `sending` or `unknown` get one
   * resolution attempt now (even when their automatic attempts are exhausted).
   */
  settleOpenIntents(): Promise<SettlementReport> {
    return this.exclusive(() => this.settleOpenIntentsExclusive());
  }

  /** `settleOpenIntents` for a caller already inside `exclusive`. */
  settleOpenIntentsExclusive(): Promise<SettlementReport> {
    return this.recovery.settleOpenIntents();
  }

  /** Stops timers and refuses new work; journaled state stays for the next process. */
  stop(): void {
    this.stopped = true;
    this.timers.stop();
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
    this.lane.close();
  }

  /** A resolution timer fired: the attempt runs in the lane, ahead of queued intents. */
  private resolveLater(requestId: string): void {
    void this.lane
      .run(() => this.recovery.resolveOnce(requestId, false), true)
      .catch((error: unknown) => this.onTaskFailure(requestId, error));
  }

  /**
   * An intent still queued when the executor stopped never ran, so nothing was sent for it: it is
   * denied now, as the next start would, and the journal holds no intent left to settle.
   */
  private dropUnsent(requestId: string): void {
    if (!this.journal.isOpen) return;
    const record = this.journal.requireIntent(requestId);
    if (record.state !== 'journaled') return;
    this.outcomes.finishDenied(
      record,
      denial(
        'stopped_before_sent',
        'intents queued when the runtime stops are not sent',
        `state ${record.state}, emitted at ${record.intent.emittedAt}`,
        'the runtime stopped before the command was sent; it was dropped',
      ),
    );
  }

  private onTaskFailure(requestId: string, error: unknown): void {
    if (this.stopped) {
      if (errorCode(error) === 'LANE_CLOSED') this.dropUnsent(requestId);
      return;
    }
    this.logger.error('executor task failed; the journal keeps the intent for recovery', {
      requestId,
      code: errorCode(error),
      message: errorMessage(error),
    });
  }
}
