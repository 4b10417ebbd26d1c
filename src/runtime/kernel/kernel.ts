/**
 * The kernel: the one composition root of the runtime (design: "One composition root builds
 * the whole pipeline").
 *
 * ```
 * marketData (ticker, book, trades) + tracker (orders, fills, positions, account)
 *   -> StrategyEnvironment -> StrategyHost (ids continue from the journal)
 *   -> queue -> RiskGate (snapshot: markets and marks, positions, open orders, equity, permit)
 *        denied  -> outcome to the strategy
 *        allowed -> Executor (journal, simulate, place, recover) -> venue
 *   <- outcomes (accepted, rejected, unknown, resolved, filled) to the strategy
 * Reconciler (ready$) + DeadmanSwitch (mayTrade$) -> trading permit -> executor and gate
 * ```
 *
 * Live trading, the emulator and replay differ only in the clock and the venues handed in;
 * nothing here asks which one it runs against. The kernel does not own the journal or the
 * venues: the caller opens them before `create` and closes them after `stop`.
 */
import {
  BehaviorSubject,
  map,
  type Observable,
  of,
  queueScheduler,
  Subject,
  type Subscription,
} from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import { type Decimal, parseDecimal } from '../../core/decimal.ts';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import { type Logger, withFields } from '../../core/logger.ts';
import type { Account, Fill } from '../../protocol/index.ts';
import { DeadmanSwitch, type ShutdownOptions, type ShutdownReport } from '../deadman/heartbeat.ts';
import {
  closeOutAccount,
  resolveShutdownConfig,
  type ShutdownConfig,
} from '../deadman/shutdown.ts';
import { withDeadline } from '../execution/deadline.ts';
import { type ExecutionOutcome, Executor } from '../execution/executor.ts';
import { sendInternalCommand } from '../execution/internal-command.ts';
import {
  describePermit,
  type GateReading,
  type PermitState,
  permitState$,
  tradingPermit,
} from '../execution/permit.ts';
import { Reconciler, type ReconciliationReport } from '../execution/reconciler.ts';
import { OrderTracker } from '../execution/tracker.ts';
import { EMULATOR_INTENT_KINDS, ExitEmulator } from '../exits/emulator.ts';
import { journalExitStore } from '../journal/exits.ts';
import { freezeStamped, type IntentOutcome, type StampedIntent } from '../intents.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import {
  type DenialEvent,
  type ReadonlyBehaviorSubject,
  RiskGate,
  type TradingStateSnapshot,
} from '../risk/gate.ts';
import type { RiskSnapshot } from '../risk/view.ts';
import { STRATEGY_ID_PATTERN, StrategyHost } from '../strategy/host.ts';
import { parseStrategyParams } from '../strategy/params.ts';
import type { ExecutionVenue } from '../venue.ts';
import { createKernelEnvironment, PositionFeed } from './environment.ts';
import { measurePlacements, type PlacementTiming } from './placement-timing.ts';
import { composeSend, sendOf, withSend } from '../venue-send.ts';
import {
  type IntentLatency,
  type KernelOptions,
  type KernelStatus,
  type KernelStrategy,
  type KernelStrategyStatus,
  ROUTE_GATE,
  type RouteReadySignal,
  routeGateReading,
} from './options.ts';
import { LOSS_TRACKING_META_KEY, readLossTracking, saveLossTracking } from './loss-tracking.ts';
import { MarketTicks } from './market-ticks.ts';
import { RiskSnapshotBuilder } from './risk-snapshot.ts';
import type { Ticker } from '../strategy/types.ts';

/** Fills applied at start that are kept for the strategies (see `Kernel.startupFills`). */
const STARTUP_FILLS = 10_000;

export { LOSS_TRACKING_META_KEY };
export type {
  IntentCounters,
  IntentLatency,
  KernelOptions,
  KernelStatus,
  KernelStrategy,
  KernelStrategyStatus,
  RouteReadySignal,
} from './options.ts';

type Phase = 'created' | 'starting' | 'running' | 'stopping' | 'stopped';

interface LatencyEntry {
  readonly tickAt: number | null;
}

export class Kernel {
  readonly gate: RiskGate;
  /** Every intent's outcomes: the gate's denials and the executor's outcomes. */
  readonly outcomes$: Observable<IntentOutcome>;
  readonly denials$: Observable<DenialEvent>;
  readonly tradingState$: ReadonlyBehaviorSubject<TradingStateSnapshot>;
  readonly reconciliation$: Observable<ReconciliationReport>;
  /** Fills, each once (de-duplicated by fill id through the journal). */
  readonly fills$: Observable<Fill>;
  readonly intentLatency$: Observable<IntentLatency>;

  private readonly clock: Clock;
  private readonly journal: IntentJournal;
  private readonly logger: Logger;
  private readonly strategies: readonly KernelStrategy[];
  private readonly routeReady$: Observable<boolean | RouteReadySignal> | undefined;
  private readonly routeGate = new BehaviorSubject<GateReading>({ open: true, reason: null });
  private permitState: PermitState = { permitted: false, refusing: [] };
  private readonly tracker: OrderTracker;
  private readonly executor: Executor;
  private readonly reconciler: Reconciler;
  private readonly deadman: DeadmanSwitch | null;
  private readonly shutdownConfig: ShutdownConfig;
  private readonly host: StrategyHost;
  private readonly positions: PositionFeed;
  private readonly exits: ExitEmulator;
  private readonly snapshots: RiskSnapshotBuilder;
  private readonly venue: ExecutionVenue;
  private readonly permit = new BehaviorSubject(false);
  private readonly outcomeSubject = new Subject<IntentOutcome>();
  private readonly latencySubject = new Subject<IntentLatency>();
  private readonly latency = new Map<string, LatencyEntry>();
  /** The last account's equity, as text and parsed. */
  private equityText: string | null = null;
  private equity: Decimal | null = null;
  /** The gate's loss tracking version last written to the journal; -1 before the first. */
  private lossTrackingWritten = -1;
  private readonly ticks: MarketTicks;
  private readonly subscriptions: Subscription[] = [];
  private readonly added = new Set<string>();
  private readonly nextSequences = new Map<string, number>();
  private counters = { intents: 0, denied: 0, rejected: 0, accepted: 0, unknown: 0, fills: 0 };
  /**
   * Fills applied before the strategies start (the private stream's catch-up after a restart),
   * handed to each strategy first; null once they run. Bounded: beyond it, positions tell.
   */
  private startupFills: Fill[] | null = [];
  private unknownIntents = 0;
  private unresolvedIntents = 0;
  private phase: Phase = 'created';
  private stopping: Promise<ShutdownReport> | null = null;

  private constructor(options: KernelOptions) {
    const { clock, journal } = options;
    this.clock = clock;
    this.journal = journal;
    this.ticks = new MarketTicks(options.marketData, clock);
    this.logger = options.logger;
    this.strategies = options.strategies;
    this.routeReady$ = options.routeReady$;
    const log = (component: string) => withFields(options.logger, { component });

    this.gate = new RiskGate({
      config: options.risk,
      clock,
      logger: log('risk'),
      lossTracking: readLossTracking(journal, options.logger),
    });
    // The venue's send with the kernel's concerns around it (venue-send.ts).
    const send = composeSend(measurePlacements(clock, (timing) => this.onPlacement(timing)));
    this.venue = withSend(options.venue, send(sendOf(options.venue)));
    this.tracker = new OrderTracker({
      venue: this.venue,
      journal,
      clock,
      logger: log('tracker'),
      config: options.tracker,
    });
    const marketData = options.marketData;
    this.executor = new Executor({
      venue: this.venue,
      journal,
      tracker: this.tracker,
      clock,
      permit$: this.permit,
      logger: log('executor'),
      config: {
        quantityStep: (marketId: string) =>
          marketData.markets().find((market) => market.market_id === marketId)?.quantity_step ??
          null,
        ...options.execution,
      },
    });
    this.reconciler = new Reconciler({
      venue: this.venue,
      journal,
      tracker: this.tracker,
      execution: this.executor,
      clock,
      logger: log('reconciler'),
      config: options.reconciler,
    });
    this.shutdownConfig = resolveShutdownConfig(options.shutdown);
    const deadman = options.deadman ?? {};
    this.deadman =
      deadman === false
        ? null
        : new DeadmanSwitch({
            venue: this.venue,
            journal,
            clock,
            recover: async () => (await this.reconciler.reconcile('dead-man deadline fired')).ok,
            logger: log('deadman'),
            config: deadman,
          });
    this.positions = new PositionFeed(this.tracker.positions$, this.tracker.positions());
    this.exits = new ExitEmulator({
      clock,
      marketData,
      store: journalExitStore(journal),
      logger: log('exits'),
      positions: () => this.positions.open(),
      openOrders: () => this.tracker.openOrders().map((tracked) => tracked.order),
      nextStart: options.nextStart ?? true,
    });
    this.host = new StrategyHost({
      environment: {
        ...createKernelEnvironment({
          clock,
          logger: log('strategy'),
          marketData,
          tracker: this.tracker,
          positions: this.positions,
          startupFills: () => this.startupFills ?? [],
        }),
        ...(options.candleGraceMs === undefined ? {} : { candleGraceMs: options.candleGraceMs }),
        emulatedOrders: (strategyId: string) => this.exits.exitsOf(strategyId),
      },
      epoch: journal.epoch,
    });
    this.snapshots = new RiskSnapshotBuilder({
      markets: () => marketData.markets(),
      positions: () => this.tracker.positions(),
      openOrders: () => this.tracker.openOrders().map((tracked) => tracked.order),
    });

    this.outcomes$ = this.outcomeSubject.asObservable();
    this.denials$ = this.gate.denials$;
    this.tradingState$ = this.gate.state$;
    this.reconciliation$ = this.reconciler.reports$;
    this.fills$ = this.tracker.fills$;
    this.intentLatency$ = this.latencySubject.asObservable();
  }

  /**
   * Builds the pipeline; nothing is read or sent yet. Strategy ids and params are checked here,
   * every problem at once (`INVALID_CONFIG` with `details.issues`), before anything connects.
   */
  static create(options: KernelOptions): Kernel {
    const issues: { path: string; message: string }[] = [];
    const seen = new Set<string>();
    options.strategies.forEach((strategy, index) => {
      if (!STRATEGY_ID_PATTERN.test(strategy.id)) {
        issues.push({
          path: `strategies.${index}.id`,
          message: `${JSON.stringify(strategy.id)} must match ${STRATEGY_ID_PATTERN}`,
        });
      } else if (seen.has(strategy.id)) {
        issues.push({ path: `strategies.${index}.id`, message: `${strategy.id} is used twice` });
      }
      seen.add(strategy.id);
      try {
        parseStrategyParams(strategy.definition, strategy.params, strategy.id);
      } catch (error) {
        issues.push({
          path: `strategies.${index}.params`,
          message: error instanceof Error ? error.message : String(error),
        });
      }
    });
    if (issues.length > 0) {
      throw new PaperbotError(
        'INVALID_CONFIG',
        `invalid strategies:\n${issues.map((issue) => `  ${issue.path}: ${issue.message}`).join('\n')}`,
        { details: { issues } },
      );
    }
    return new Kernel(options);
  }

  /**
   * Starts trading: wires the pipeline, reconciles with the venue, arms the dead-man switch,
   * then starts the strategies. Resolves after the first reconciliation and the first arming
   * attempt, whether or not they succeeded: until both have, the permit stays closed and no
   * exposure is added (both keep retrying on their own).
   */
  async start(): Promise<void> {
    if (this.phase !== 'created') {
      throw new PaperbotError('KERNEL_STATE', `the kernel cannot start when ${this.phase}`);
    }
    this.phase = 'starting';
    this.wire();
    this.tracker.start();
    const report = await this.reconciler.start();
    if (this.phase !== 'starting') return;
    if (!report.ok) {
      this.logger.error('the first reconciliation failed; nothing is placed until one succeeds', {
        error: report.error,
      });
    }
    if (this.deadman !== null) await this.deadman.start();
    if (this.phase !== 'starting') return;
    for (const strategy of this.strategies) {
      this.host.add({
        strategyId: strategy.id,
        definition: strategy.definition,
        params: strategy.params,
        startSequence: this.journal.nextSequence(strategy.id),
      });
      this.added.add(strategy.id);
    }
    await this.host.loadCandleHistory();
    if (this.phase !== 'starting') return;
    this.phase = 'running';
    // Before the strategies run, and once running, so an exit that fires at once is taken.
    this.exits.restore(report.ok);
    this.host.start();
    this.startupFills = null;
    this.logger.info('kernel started', {
      epoch: this.journal.epoch,
      strategies: this.strategies.map((strategy) => strategy.id),
      reconciled: this.reconciler.ready,
      mayTrade: this.permit.value,
    });
  }

  /**
   * Stops cleanly: the strategies stop, nothing new is placed, every active order is cancelled
   * and the account read back until none is open, then the dead-man deadline is disarmed
   * (without a dead-man switch: the cancel-all and the read alone), all within the shutdown
   * deadline. `confirmed: false` in the report means orders may remain (`remainingOrderIds`).
   * Unknown intents stay in the journal for the next start. Safe to call twice. The caller
   * closes the venues and the journal afterwards.
   */
  stop(reason: string): Promise<ShutdownReport> {
    this.stopping ??= this.shutdown(reason);
    return this.stopping;
  }

  /**
   * Stops at once without a word to the venue, as a crash would: timers and subscriptions end,
   * orders stay, the dead-man deadline stays armed, open intents stay in the journal.
   */
  dispose(): void {
    if (this.phase === 'stopped') return;
    this.logger.warn('kernel disposed without a clean shutdown', { phase: this.phase });
    this.phase = 'stopped';
    this.deadman?.stop();
    this.teardown();
  }

  /** Moves trading to HALTED until `resume()` (the kill switch and the CLI use this). */
  halt(reason: string): void {
    this.gate.halt(reason, 'manual');
  }

  /**
   * An operator's cancel-all (the dashboard's button): journaled like the runtime's own
   * commands (`pb-operator:...`), sent in the executor's lane so no order command is in flight
   * meanwhile. It does not stop the strategies: halt first for that.
   */
  async cancelAllOrders(): Promise<{ readonly ok: boolean; readonly message: string }> {
    if (this.phase !== 'running') return { ok: false, message: `the kernel is ${this.phase}` };
    const result = await this.executor.exclusive(() =>
      sendInternalCommand(
        { venue: this.venue, journal: this.journal, clock: this.clock, timeoutMs: 30_000 },
        'operator',
        (requestId) => ({ endpoint: 'cancelAllOrders', body: { request_id: requestId } }),
      ),
    );
    this.logger.warn('operator cancel-all', {
      request_id: result.requestId,
      ok: result.ok,
      ...(result.ok ? {} : { code: result.code }),
    });
    return result.ok
      ? { ok: true, message: `cancel-all accepted (${result.requestId})` }
      : { ok: false, message: `${result.kind}: ${result.code}: ${result.message}` };
  }

  /** Clears a halt, a reduction and a drawdown stop (a daily loss limit still applies). */
  resume(): void {
    this.gate.resume();
  }

  status(): KernelStatus {
    const trading = this.gate.tradingState;
    // The gate's state is one of the refusals, so a status never says HALTED beside "may trade".
    const refusing =
      trading.state === 'ACTIVE'
        ? this.permitState.refusing
        : [
            ...this.permitState.refusing,
            { gate: 'trading state', reason: `${trading.state}: ${trading.reason ?? 'no reason'}` },
          ];
    return {
      tradingState: trading.state,
      tradingReason: trading.reason,
      mayTrade: this.permit.value && this.routeGate.value.open && trading.state === 'ACTIVE',
      refusing,
      reconciled: this.reconciler.ready,
      deadman: this.deadman?.status ?? null,
      unknownIntents: this.unknownIntents,
      unresolvedIntents: this.unresolvedIntents,
      account: this.tracker.account(),
      positions: this.positions.open(),
      openOrders: this.tracker.openOrders().map((tracked) => tracked.order),
      strategies: this.strategies.map((strategy) => this.strategyStatus(strategy.id)),
      counters: { ...this.counters },
      waitingExits: this.exits.waiting(),
    };
  }

  /** Resolves once the executor, the tracker and the dead-man switch have nothing under way. */
  async idle(): Promise<void> {
    await this.executor.idle();
    await this.tracker.idle();
    await this.reconciler.idle();
    await this.deadman?.idle();
  }

  // Wiring

  private wire(): void {
    const subscriptions = this.subscriptions;
    subscriptions.push(
      tradingPermit(this.reconciler.ready$, this.deadman?.mayTrade$ ?? of(true)).subscribe(
        (permitted) => {
          this.snapshots.setPermitted(permitted);
          this.permit.next(permitted);
        },
      ),
      // Each intent is taken as a task of its own on the queue scheduler, as `observeOn` would
      // hand it, without its per-value subscription bookkeeping: a task left queued when the
      // kernel stops finds it no longer running and does nothing.
      // The host emits each intent from its own queue task, after the strategy's handler: the
      // intent is handled there, without a second hop.
      this.host.intents$.subscribe((stamped) => this.onIntent(stamped)),
      // Emulated exits: their releases take the strategies' path; their answers go back. A
      // release can be emitted while an intent is handled (a bracket's entry): it waits its turn.
      this.exits.releases$.subscribe((stamped) => this.queueIntent(stamped)),
      this.exits.outcomes$.subscribe((outcome) => this.publish(outcome)),
      this.executor.outcomes$.subscribe((outcome) => this.onExecutionOutcome(outcome)),
      this.executor.unknownCount$.subscribe((count) => {
        this.unknownIntents = count;
      }),
      this.executor.unresolvedCount$.subscribe((count) => {
        this.unresolvedIntents = count;
        if (count > 0) {
          this.gate.reduce(
            `${count} intents are still unknown after every automatic resolution attempt`,
          );
        }
      }),
      this.tracker.account$.subscribe((account) => this.onAccount(account)),
      this.tracker.positions$.subscribe(() => this.snapshots.invalidatePositions()),
      this.tracker.orders$.subscribe((tracked) => this.snapshots.onOrder(tracked.order)),
      this.tracker.fills$.subscribe((fill) => {
        this.counters.fills += 1;
        if (this.startupFills !== null && this.startupFills.length < STARTUP_FILLS) {
          this.startupFills.push(fill);
        }
      }),
      // After the snapshot invalidations above, so a release meets the gate's fresh view.
      this.tracker.orders$.subscribe((tracked) => this.exits.onOrder(tracked.order)),
      this.tracker.positions$.subscribe((positions) => this.exits.onPositions(positions)),
      this.host.errors$.subscribe((failure) => {
        this.logger.error('a strategy failed and was stopped; the others run on', {
          strategy: failure.strategyId,
          phase: failure.phase,
          error: failure.message,
        });
      }),
    );
    subscriptions.push(...this.ticks.watch());
    if (this.routeReady$ !== undefined) {
      subscriptions.push(
        this.routeReady$.subscribe((value) => {
          const reading = routeGateReading(value);
          this.snapshots.setRouteReady(reading.open);
          this.routeGate.next(reading);
        }),
      );
    }
    this.wirePermitLog();
  }

  /**
   * Logs the gates once per change: "trading permitted" only while none refuses, else which
   * one refuses and why. The values the sources hold at wiring count as one change.
   */
  private wirePermitLog(): void {
    const deadman = this.deadman;
    let wiring = true;
    // Reconciling and arming are the normal way in (their failures warn on their own); a venue
    // whose route refuses or cannot be read is not, so that refusal is a warning.
    const log = (state: PermitState): void => {
      const fields = { mayTrade: state.permitted, refusing: state.refusing };
      if (state.refusing.some((entry) => entry.gate === ROUTE_GATE)) {
        this.logger.warn(describePermit(state), fields);
      } else {
        this.logger.info(describePermit(state), fields);
      }
    };
    this.subscriptions.push(
      permitState$([
        {
          gate: 'reconciliation',
          reading$: this.reconciler.ready$.pipe(
            map((open) => ({ open, reason: open ? null : 'the venue state is not reconciled' })),
          ),
        },
        {
          gate: 'dead-man',
          reading$:
            deadman === null
              ? of({ open: true, reason: null })
              : deadman.mayTrade$.pipe(
                  map((open) => ({
                    open,
                    reason: open ? null : `${deadman.status.phase}: ${deadman.status.reason}`,
                  })),
                ),
        },
        { gate: ROUTE_GATE, reading$: this.routeGate },
      ]).subscribe((state) => {
        this.permitState = state;
        if (!wiring) log(state);
      }),
    );
    wiring = false;
    log(this.permitState);
  }

  private queueIntent(stamped: StampedIntent): void {
    queueScheduler.schedule(() => this.onIntent(stamped));
  }

  private onIntent(stamped: StampedIntent): void {
    if (this.phase !== 'running') return;
    this.counters.intents += 1;
    try {
      // Every stamped sequence is journaled before anything may keep or answer the intent. On
      // the executor's path the intent's own row carries it (one write): not noted apart.
      if (EMULATOR_INTENT_KINDS.has(stamped.intent.kind)) {
        this.journal.noteSequence(stamped.strategyId, stamped.sequence);
        if (this.exits.take(stamped)) return;
      }
      // The snapshot is built only when the gate reads it (not for a cancel).
      const decision = this.gate.evaluate(stamped, this.readSnapshot);
      if (!decision.allowed) {
        this.journal.noteSequence(stamped.strategyId, stamped.sequence);
        this.counters.denied += 1;
        this.publish(
          Object.freeze({
            status: 'denied',
            intent: stamped,
            denials: Object.freeze(decision.denials.map((denial) => Object.freeze(denial))),
          }),
        );
        return;
      }
      const approved = freezeStamped(decision.intent);
      this.snapshots.addPending(approved);
      if (approved.intent.kind === 'place') {
        this.latency.set(approved.requestId, {
          tickAt: this.ticks.lastAt(approved.intent.marketId),
        });
      }
      this.executor.submit(approved);
    } catch (error) {
      // The journal could not be written (or the gate broke): nothing was sent. Stop adding
      // exposure until an operator looks.
      this.snapshots.removePending(stamped.requestId);
      this.latency.delete(stamped.requestId);
      try {
        this.journal.noteSequence(stamped.strategyId, stamped.sequence);
      } catch {
        // The journal is what failed: the halt below stops everything that would need it.
      }
      const message = error instanceof Error ? error.message : String(error);
      const code = isPaperbotError(error) ? error.code : 'UNEXPECTED_ERROR';
      this.logger.error('intent not taken', { requestId: stamped.requestId, code, error: message });
      this.gate.halt(`the kernel could not take an intent: ${code}`);
      this.counters.denied += 1;
      this.publish(
        Object.freeze({
          status: 'denied',
          intent: stamped,
          denials: Object.freeze([
            Object.freeze({
              rule: 'kernel_error',
              limit: 'the intent is journaled before it is executed',
              observed: code,
              message: `the intent could not be taken: ${message}`,
            }),
          ]),
        }),
      );
    }
  }

  private onExecutionOutcome(outcome: ExecutionOutcome): void {
    const requestId = outcome.intent.requestId;
    if (outcome.status === 'resolved') this.counters[outcome.resolution] += 1;
    else if (outcome.status !== 'filled') this.counters[outcome.status] += 1;
    if (outcome.status !== 'unknown') {
      this.snapshots.removePending(requestId);
      this.latency.delete(requestId);
    }
    this.publish(outcome);
  }

  private publish(outcome: IntentOutcome): void {
    this.exits.onOutcome(outcome);
    this.outcomeSubject.next(outcome);
    this.host.deliverOutcome(outcome);
  }

  private onPlacement(timing: PlacementTiming): void {
    const entry = this.latency.get(timing.requestId);
    if (entry === undefined) return;
    this.latency.delete(timing.requestId);
    this.latencySubject.next(
      Object.freeze({
        requestId: timing.requestId,
        tickToPlaceMs: entry.tickAt === null ? null : timing.sentAt - entry.tickAt,
        placeMs: timing.answeredAt - timing.sentAt,
      }),
    );
  }

  /** The gate's snapshot, with the latest ticker of each market that had one since the last. */
  private readonly readSnapshot = (): RiskSnapshot => {
    this.ticks.takeUnread(this.takeTicker);
    return this.snapshots.snapshot();
  };

  /** The risk snapshot takes a market's latest ticker (`MarketTicks.takeUnread`). */
  private readonly takeTicker = (ticker: Ticker): void => {
    this.snapshots.onTicker(ticker);
  };

  private onAccount(account: Account): void {
    // Most account updates repeat the equity: parsed once per text.
    let equity = this.equity;
    if (equity === null || account.total_equity !== this.equityText) {
      equity = parseDecimal(account.total_equity);
      this.equityText = account.total_equity;
      this.equity = equity;
    }
    this.snapshots.setEquity(equity);
    // An incomplete account (the venue says a part is missing) would read as a loss.
    if (!account.complete) return;
    this.gate.updateEquity(equity);
    // Written when the tracking changed since the last write (not for a repeated equity).
    const version = this.gate.lossTrackingVersion;
    if (this.journal.isOpen && version !== this.lossTrackingWritten) {
      saveLossTracking(this.journal, this.gate);
      this.lossTrackingWritten = version;
    }
  }

  private strategyStatus(strategyId: string): KernelStrategyStatus {
    if (this.added.has(strategyId)) {
      const nextSequence = this.host.nextSequence(strategyId);
      this.nextSequences.set(strategyId, nextSequence);
      return { id: strategyId, status: this.host.status(strategyId), nextSequence };
    }
    let nextSequence = this.nextSequences.get(strategyId);
    if (nextSequence === undefined && this.journal.isOpen) {
      nextSequence = this.journal.nextSequence(strategyId);
      this.nextSequences.set(strategyId, nextSequence);
    }
    return { id: strategyId, status: 'added', nextSequence: nextSequence ?? 1 };
  }

  // Stopping

  private async shutdown(reason: string): Promise<ShutdownReport> {
    const wasRunning = this.phase === 'running' || this.phase === 'starting';
    this.logger.info('kernel stopping', { reason });
    this.phase = 'stopping';
    this.host.stop();
    if (!wasRunning) {
      this.teardown();
      this.phase = 'stopped';
      return {
        cancelled: false,
        disarmed: false,
        confirmed: false,
        remainingOrderIds: [],
        cancelAll: null,
        error: null,
      };
    }
    // Operators' lane: the shutdown does not queue behind order flow. Nothing new is placed,
    // the executor drops what it has queued (journaled, never sent; the next start drops those
    // too) and only the command already on the wire finishes; the close-out waits for that one
    // before it trusts a read of the open orders.
    this.snapshots.setPermitted(false);
    if (this.permit.value) this.permit.next(false);
    // The reconciler first: a run it started after the lane closed (its minute timer, a
    // resync, a rerun, fired while the close-out advances the clock) would fail on the closed
    // lane. The close-out reads the account itself.
    this.reconciler.stop();
    this.executor.stop();
    const options: ShutdownOptions = {
      config: this.shutdownConfig,
      settled: () => this.executor.idle(),
      knownOpenOrderIds: () => this.tracker.openOrders().map((tracked) => tracked.order.order_id),
    };
    let report: ShutdownReport;
    try {
      report =
        this.deadman !== null
          ? await this.deadman.shutdown(options)
          : await this.cancelEverything(options);
    } catch (error) {
      report = {
        cancelled: false,
        disarmed: false,
        confirmed: false,
        remainingOrderIds: options.knownOpenOrderIds?.() ?? [],
        cancelAll: null,
        error: {
          code: isPaperbotError(error) ? error.code : 'UNEXPECTED_ERROR',
          message: error instanceof Error ? error.message : String(error),
        },
      };
    }
    this.teardown();
    await this.tracker.idle();
    // A refresh still unanswered changes nothing now (its answer is ignored); it is waited for
    // no longer than one shutdown request, so a stalled venue cannot hold the exit.
    if (this.deadman !== null) {
      const deadman = this.deadman;
      await withDeadline(this.clock, this.shutdownConfig.requestTimeoutMs, () =>
        deadman.idle(),
      ).catch(() => undefined);
    }
    this.phase = 'stopped';
    this.logger.info('kernel stopped', {
      reason,
      cancelled: report.cancelled,
      confirmed: report.confirmed,
      disarmed: report.disarmed,
      remainingOrderIds: report.remainingOrderIds,
      error: report.error,
    });
    return report;
  }

  /** The shutdown of a kernel without a dead-man switch: the close-out alone. */
  private async cancelEverything(options: ShutdownOptions): Promise<ShutdownReport> {
    const report = await closeOutAccount({
      venue: this.venue,
      journal: this.journal,
      clock: this.clock,
      logger: withFields(this.logger, { component: 'shutdown' }),
      config: this.shutdownConfig,
      deadlineAt: this.clock.now() + this.shutdownConfig.deadlineMs,
      settled: options.settled,
      knownOpenOrderIds: options.knownOpenOrderIds,
    });
    return { ...report, disarmed: true };
  }

  private teardown(): void {
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
    this.snapshots.setPermitted(false);
    if (this.permit.value) this.permit.next(false);
    this.host.stop();
    this.executor.stop();
    this.reconciler.stop();
    this.tracker.stop();
    saveLossTracking(this.journal, this.gate);
    this.gate.dispose();
    this.exits.stop();
    this.positions.dispose();
    this.outcomeSubject.complete();
    this.latencySubject.complete();
  }
}
