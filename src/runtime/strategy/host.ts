/**
 * The strategy host: runs strategy plugins, stamps what they emit, and hands the stamped
 * intents to the rest of the runtime.
 *
 * - Each intent is checked, copied and frozen, then stamped with the strategy id, its sequence
 *   and the ids derived from them (`intentRequestId`). Sequences continue from the
 *   `startSequence` the kernel reads from its journal, under the journal's `epoch`, so ids never
 *   repeat across restarts and a replay of the same inputs gives the same ids.
 * - Intents leave through RxJS's queue scheduler, never re-entrantly (design rule 10).
 * - Outcomes come back through `deliverOutcome` and reach the strategy that emitted the intent.
 * - A strategy that throws, errors, or emits something that is not an intent is stopped, and
 *   only that one: it emits nothing more (fail closed), and the failure is logged and
 *   reported on `errors$`. Its intents not yet handed on are dropped (so are those of a
 *   strategy the kernel stops).
 */
import { isObservable, type Observable, queueScheduler, Subject, type Subscription } from 'rxjs';
import { PaperbotError } from '../../core/errors.ts';
import {
  type IntentOutcome,
  intentIdPrefix,
  intentRequestId,
  type StampedIntent,
} from '../intents.ts';
import { createStrategyContext, type StrategyContextRuntime, strategyLogger } from './context.ts';
import { checkIntent } from './intent-check.ts';
import { parseStrategyParams } from './params.ts';
import type { Candle } from '../../protocol/index.ts';
import { isCandleInterval } from '../streams/candles.ts';
import {
  type CandleHistoryRequest,
  type Logger,
  MAX_CANDLE_HISTORY,
  type StrategyContext,
  type StrategyDefinition,
  type StrategyEnvironment,
} from './types.ts';

/** Strategy ids go into every request id: letters, digits, '_' and '-', at most 40. */
export const STRATEGY_ID_PATTERN = /^[A-Za-z0-9_-]{1,40}$/;

export type StrategyStatus = 'added' | 'running' | 'completed' | 'failed' | 'stopped';

export type StrategyFailurePhase = 'create' | 'run' | 'intent' | 'timer' | 'environment';

export interface StrategyFailure {
  readonly strategyId: string;
  readonly phase: StrategyFailurePhase;
  readonly message: string;
  readonly error: unknown;
  /** Epoch milliseconds on the runtime's clock. */
  readonly at: number;
}

export interface StrategyHostOptions {
  readonly environment: StrategyEnvironment;
  /** The journal's epoch: part of every id, so ids of two journals never collide. */
  readonly epoch: string;
}

export interface AddStrategyOptions<Params = unknown> {
  /** The instance id from the config (one plugin may run as several instances). */
  readonly strategyId: string;
  readonly definition: StrategyDefinition<Params>;
  /** Raw params (from config); parsed here with the plugin's schema. */
  readonly params?: unknown;
  /** The sequence of this strategy's next intent; the kernel reads it from its journal. */
  readonly startSequence?: number;
}

interface Instance {
  readonly strategyId: string;
  readonly definition: StrategyDefinition<unknown>;
  readonly params: unknown;
  readonly runtime: StrategyContextRuntime<unknown>;
  readonly logger: Logger;
  nextSequence: number;
  status: StrategyStatus;
  subscription: Subscription | null;
}

export class StrategyHost {
  private readonly environment: StrategyEnvironment;
  private readonly epoch: string;
  private readonly instances = new Map<string, Instance>();
  private readonly intents = new Subject<StampedIntent>();
  private readonly failures = new Subject<StrategyFailure>();

  /** Stamped intents of every strategy, in emission order. Hot: subscribe before `start`. */
  readonly intents$: Observable<StampedIntent> = this.intents.asObservable();
  /** One item per strategy that failed and was stopped. */
  readonly errors$: Observable<StrategyFailure> = this.failures.asObservable();

  constructor(options: StrategyHostOptions) {
    this.environment = options.environment;
    this.epoch = options.epoch;
  }

  /**
   * Adds a strategy: validates its id and params (throws `STRATEGY_PARAMS_INVALID` listing
   * every problem) and builds its context. It runs from `start`.
   */
  add<Params>(options: AddStrategyOptions<Params>): StrategyContext<Params> {
    const { strategyId } = options;
    if (!STRATEGY_ID_PATTERN.test(strategyId)) {
      throw new PaperbotError(
        'STRATEGY_INVALID_ID',
        `strategy id ${JSON.stringify(strategyId)} must match ${STRATEGY_ID_PATTERN}`,
      );
    }
    if (this.instances.has(strategyId)) {
      throw new PaperbotError('STRATEGY_DUPLICATE_ID', `strategy id ${strategyId} is already used`);
    }
    const startSequence = options.startSequence ?? 1;
    if (!Number.isSafeInteger(startSequence) || startSequence < 0) {
      throw new PaperbotError(
        'STRATEGY_INVALID_SEQUENCE',
        `startSequence must be a non-negative integer, got ${startSequence}`,
      );
    }
    // The host handles every plugin alike; each one's params type matters only inside it.
    const definition = options.definition as unknown as StrategyDefinition<unknown>;
    const params = parseStrategyParams(definition, options.params, strategyId);
    const logger = strategyLogger(this.environment.logger, strategyId);
    let instance: Instance | null = null;
    const early: { failure: { source: StrategyFailurePhase; error: unknown } | null } = {
      failure: null,
    };
    const runtime = createStrategyContext({
      strategyId,
      params,
      environment: this.environment,
      logger,
      ownIdPrefix: intentIdPrefix(strategyId, this.epoch),
      onError: (source, error) => {
        // An environment stream may fail while the context is being built.
        if (instance) this.fail(instance, source, error);
        else early.failure ??= { source, error };
      },
    });
    instance = {
      strategyId,
      definition,
      params,
      runtime,
      logger,
      nextSequence: startSequence,
      status: 'added',
      subscription: null,
    };
    this.instances.set(strategyId, instance);
    if (early.failure !== null) this.fail(instance, early.failure.source, early.failure.error);
    return runtime.context as StrategyContext<Params>;
  }

  /**
   * Loads the candle history each added strategy asked for (`candleHistory` of its
   * definition); the kernel awaits it before `start`. A request that is not valid fails its
   * strategy; history the venue cannot serve is logged, and the strategy starts with what came.
   */
  async loadCandleHistory(): Promise<void> {
    for (const instance of this.instances.values()) {
      for (const request of this.historyRequests(instance)) {
        await this.loadHistory(instance, request);
      }
    }
  }

  /**
   * The synchronous form of `loadCandleHistory` for one strategy, for the test harness: `read`
   * answers each request of the strategy's `candleHistory` at once.
   */
  provideCandleHistory(
    strategyId: string,
    read: (request: CandleHistoryRequest) => readonly Candle[],
  ): void {
    const instance = this.instance(strategyId);
    for (const request of this.historyRequests(instance)) {
      this.applyHistory(instance, request, read(request));
    }
  }

  private applyHistory(
    instance: Instance,
    request: CandleHistoryRequest,
    candles: readonly Candle[],
  ): void {
    const { marketId, interval, count } = request;
    instance.runtime.setCandleHistory(marketId, interval, candles);
    const fields = { marketId, interval, asked: count, loaded: candles.length };
    if (candles.length < count) instance.logger.warn('less candle history than asked', fields);
    else instance.logger.info('candle history loaded', fields);
  }

  /** The checked requests of a strategy not yet started; a bad one fails the strategy. */
  private historyRequests(instance: Instance): readonly CandleHistoryRequest[] {
    if (instance.status !== 'added') return [];
    try {
      const requests = instance.definition.candleHistory?.(instance.params) ?? [];
      for (const request of requests) this.checkHistoryRequest(instance, request);
      return requests;
    } catch (error) {
      this.fail(instance, 'create', error);
      return [];
    }
  }

  private checkHistoryRequest(instance: Instance, request: CandleHistoryRequest): void {
    instance.runtime.context.market(request.marketId); // UNKNOWN_MARKET when it is not listed
    const countValid =
      Number.isInteger(request.count) && request.count >= 1 && request.count <= MAX_CANDLE_HISTORY;
    if (!isCandleInterval(request.interval) || !countValid) {
      throw new PaperbotError(
        'STRATEGY_INVALID_HISTORY',
        `candleHistory asks for ${JSON.stringify(request.count)} candles of ${JSON.stringify(
          request.interval,
        )}: the interval must be one of the interface's and the count 1 to ${MAX_CANDLE_HISTORY}`,
        { details: { ...request } },
      );
    }
  }

  private async loadHistory(instance: Instance, request: CandleHistoryRequest): Promise<void> {
    const { marketId, interval, count } = request;
    const load = this.environment.candleHistory;
    if (load === undefined) {
      instance.logger.warn('this venue serves no candle history; starting without it', {
        ...request,
      });
      return;
    }
    try {
      this.applyHistory(
        instance,
        request,
        await load.call(this.environment, marketId, interval, count),
      );
    } catch (error) {
      instance.logger.warn('candle history could not be read; starting without it', {
        ...request,
        error,
      });
    }
  }

  /** Starts one strategy, or every strategy added and not yet started, in the order added. */
  start(strategyId?: string): void {
    const targets =
      strategyId === undefined ? [...this.instances.values()] : [this.instance(strategyId)];
    for (const instance of targets) {
      if (instance.status !== 'added') continue;
      instance.status = 'running';
      // As a queue task, so whatever the strategy emits while subscribing leaves after it.
      queueScheduler.schedule(() => this.run(instance));
    }
  }

  /** Stops one strategy, or all: unsubscribes it and releases its context. */
  stop(strategyId?: string): void {
    const targets =
      strategyId === undefined ? [...this.instances.values()] : [this.instance(strategyId)];
    for (const instance of targets) {
      if (instance.status === 'failed' || instance.status === 'stopped') continue;
      instance.status = 'stopped';
      this.release(instance);
      instance.logger.info('strategy stopped');
    }
  }

  /**
   * Routes an outcome to the strategy that emitted its intent. Returns false when no running
   * strategy has that id (its outcome is then only logged).
   */
  deliverOutcome(outcome: IntentOutcome): boolean {
    const instance = this.instances.get(outcome.intent.strategyId);
    if (!instance || (instance.status !== 'running' && instance.status !== 'completed')) {
      this.environment.logger.debug('outcome for a strategy that is not running', {
        strategy: outcome.intent.strategyId,
        requestId: outcome.intent.requestId,
        status: outcome.status,
      });
      return false;
    }
    instance.runtime.deliverOutcome(outcome);
    return true;
  }

  status(strategyId: string): StrategyStatus {
    return this.instance(strategyId).status;
  }

  /** The sequence the strategy's next intent will get. */
  nextSequence(strategyId: string): number {
    return this.instance(strategyId).nextSequence;
  }

  strategyIds(): readonly string[] {
    return [...this.instances.keys()];
  }

  /** The context a strategy was given (for the kernel's status views and for tests). */
  contextOf(strategyId: string): StrategyContext<unknown> {
    return this.instance(strategyId).runtime.context;
  }

  private instance(strategyId: string): Instance {
    const instance = this.instances.get(strategyId);
    if (!instance) {
      throw new PaperbotError('STRATEGY_UNKNOWN_ID', `no strategy with id ${strategyId}`);
    }
    return instance;
  }

  private run(instance: Instance): void {
    if (instance.status !== 'running') return;
    let intents$: unknown;
    try {
      intents$ = instance.definition.create(instance.runtime.context, instance.params);
    } catch (error) {
      this.fail(instance, 'create', error);
      return;
    }
    if (!isObservable(intents$)) {
      this.fail(
        instance,
        'create',
        new PaperbotError(
          'STRATEGY_INVALID_RESULT',
          'create() must return an Observable of intents',
        ),
      );
      return;
    }
    instance.logger.info('strategy started', {
      name: instance.definition.name,
      nextSequence: instance.nextSequence,
    });
    const subscription = intents$.subscribe({
      next: (value) => this.emit(instance, value),
      error: (error: unknown) => this.fail(instance, 'run', error),
      complete: () => {
        if (instance.status !== 'running') return;
        instance.status = 'completed';
        instance.logger.info('strategy completed; it emits no more intents');
      },
    });
    if (instance.status === 'running' || instance.status === 'completed') {
      instance.subscription = subscription;
    } else {
      subscription.unsubscribe();
    }
  }

  private emit(instance: Instance, value: unknown): void {
    if (instance.status !== 'running') return;
    const checked = checkIntent(value);
    if (!checked.ok) {
      this.fail(
        instance,
        'intent',
        new PaperbotError(
          'STRATEGY_INVALID_INTENT',
          `emitted an invalid intent: ${checked.problems.join('; ')}`,
          { details: { problems: checked.problems } },
        ),
      );
      return;
    }
    const intent = Object.freeze(checked.intent);
    const sequence = instance.nextSequence++;
    const requestId = intentRequestId(instance.strategyId, this.epoch, sequence);
    const createsOrder =
      intent.kind === 'place' || intent.kind === 'amend' || intent.kind === 'close_position';
    const stamped: StampedIntent = Object.freeze({
      strategyId: instance.strategyId,
      sequence,
      requestId,
      clientOrderId: createsOrder ? requestId : null,
      intent,
      emittedAt: this.environment.clock.now(),
    });
    instance.runtime.recordIntent(stamped);
    queueScheduler.schedule(() => {
      if (instance.status === 'failed' || instance.status === 'stopped') {
        instance.logger.warn('intent dropped: its strategy stopped before it left the host', {
          requestId,
          status: instance.status,
        });
        return;
      }
      this.intents.next(stamped);
    });
  }

  private fail(instance: Instance, phase: StrategyFailurePhase, error: unknown): void {
    if (instance.status === 'failed' || instance.status === 'stopped') return;
    instance.status = 'failed';
    this.release(instance);
    const message = error instanceof Error ? error.message : String(error);
    instance.logger.error('strategy failed and was stopped', {
      phase,
      error: message,
      code: (error as { code?: unknown } | null)?.code,
    });
    this.failures.next(
      Object.freeze({
        strategyId: instance.strategyId,
        phase,
        message,
        error,
        at: this.environment.clock.now(),
      }),
    );
  }

  private release(instance: Instance): void {
    instance.subscription?.unsubscribe();
    instance.subscription = null;
    instance.runtime.dispose();
  }
}
