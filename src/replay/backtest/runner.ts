/**
 * The backtest runner: recorded sessions through exactly the code that trades live.
 *
 * The kernel is the live one (strategy host, risk gate, executor with its journal, tracker,
 * reconciler); only the clock (a virtual `ReplayClock` starting at the first record's `t`) and
 * the venue (`ReplayVenue`) differ. The journal is a real SQLite journal in memory, under a
 * fixed epoch so request ids repeat from run to run. There is no dead-man switch: nothing
 * outlives the run, and the kernel's shutdown cancels every order instead.
 *
 * Each record is delivered when the clock reaches its `t` (`loop.ts`); equity is sampled on a
 * fixed grid of virtual time and at the end; the fills are the kernel's (the order tracker's,
 * from the venue's private stream, as live). The report is collected
 * from those as the run goes, in bounded memory (`report/collector.ts`), with no clock read, so
 * the same data, config and seed give the same bytes.
 */
import { type Subscription, tap } from 'rxjs';
import { PaperbotError } from '../../core/errors.ts';
import type { Fill } from '../../protocol/index.ts';
import { type Logger, silentLogger } from '../../core/logger.ts';
import type { ShutdownReport } from '../../runtime/deadman/heartbeat.ts';
import { ReplayJournal } from '../../runtime/journal/index.ts';
import { type IntentCounters, Kernel, type KernelStrategy } from '../../runtime/kernel/index.ts';
import { type IntentOutcome, intentIdPrefix, type OrderIntent } from '../../runtime/intents.ts';
import type { StrategyDefinition } from '../../runtime/strategy/types.ts';
import { type DamageReport, describeDamage, isDamaged } from '../format/integrity.ts';
import type { RecordedEvent } from '../format/records.ts';
import type { OrderIds } from '../report/divergence.ts';
import { ReportCollector, type ReportFiles } from '../report/collector.ts';
import type { ReportMetadata, StrategyEntry } from '../report/input.ts';
import type { BacktestReport, ParameterValue } from '../report/report.ts';
import { untradedNote } from '../report/figures.ts';
import { reportedGaps } from '../venue/gaps.ts';
import { ReplayVenue } from '../venue/replay-venue.ts';
import { executorSettings, reconcilerSettings, trackerSettings } from '../../runtime/config.ts';
import type { BacktestConfig, ResolvedStrategy } from './config.ts';
import { IntentTally } from './intent-tally.ts';
import { ReplayClock, TimeDriver } from './loop.ts';
import type { ReplaySource } from './sources.ts';

/** The journal epoch of every backtest: part of every request id, fixed so runs repeat. */
export const BACKTEST_EPOCH = 'backtest';
/** Virtual time the kernel may take to start (first reconciliation) and to shut down. */
const START_LIMIT_MS = 60_000;
const STOP_LIMIT_MS = 600_000;
/**
 * Settled intents the journal keeps (besides those of orders still open): a replay of days of
 * data holds a window of intents, not every one (src/runtime/journal/intent-window.ts).
 */
const JOURNAL_INTENT_WINDOW = 10_000;

export interface BacktestRunOptions {
  readonly config: BacktestConfig;
  readonly strategies: readonly ResolvedStrategy[];
  readonly source: ReplaySource;
  /** Strategy params replaced per strategy id (sweeps), applied over the configured ones. */
  readonly paramOverrides?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly logger?: Logger;
  /** Called after each batch of records with the number delivered so far. */
  readonly onProgress?: (delivered: number) => void;
  /**
   * Called as the run passes from one phase to the next (benchmarks time the replay itself
   * between `replaying` and `stopping`).
   */
  readonly onPhase?: (phase: 'replaying' | 'stopping' | 'reporting') => void;
  /**
   * Run without the strategies whose markets the data lacks (named in the report) instead of
   * refusing the run with BACKTEST_MISSING_MARKET.
   */
  readonly skipMissingMarkets?: boolean;
  /** Where every fill, trade and equity sample of the report goes as it happens (`--csv`). */
  readonly reportFiles?: ReportFiles | null;
  /**
   * Each intent a strategy emits, with its strategy and the virtual time (the robustness
   * report's look-ahead check compares them between runs on cut data).
   */
  readonly onIntent?: (strategyId: string, intent: OrderIntent, t: number) => void;
  /**
   * After the last record, virtual time goes on to this point (timers fire, equity is sampled)
   * before the shutdown: a run on data cut at a point lives up to it, as the whole data's run.
   */
  readonly replayUntilMs?: number;
  /**
   * A test seam: the venue's private events of these sequences are never delivered, so a test
   * shows the runtime recovering from a lost event exactly as live (`ReplayVenueOptions`).
   */
  readonly dropPrivateSequences?: readonly number[];
}

export interface BacktestResult {
  readonly report: BacktestReport;
  readonly fills: readonly Fill[];
  /** The runtime's ids of each venue order that filled (for the divergence report). */
  readonly orderIds: ReadonlyMap<string, OrderIds>;
  /** Records delivered. */
  readonly records: number;
  readonly counters: IntentCounters;
  /**
   * Intent outcomes by kind and reason (`denied:<rule>`, `rejected:<code>`, `accepted`, ...),
   * sorted by key: why a strategy's intents did or did not trade.
   */
  readonly outcomes: Readonly<Record<string, number>>;
  readonly shutdown: ShutdownReport;
}

/**
 * The report with what the sessions' checks skipped or found damaged (`--allow-damaged`), in
 * `data_damage`; unchanged (no such field) when every session was as its manifest claims.
 */
function withDataDamage(report: BacktestReport, damage: readonly DamageReport[]): BacktestReport {
  const lines = damage.filter(isDamaged).flatMap(describeDamage);
  return lines.length === 0 ? report : { ...report, data_damage: lines };
}

/**
 * The report with the fill model of each market when one used the taker model, and the orders
 * that found nothing to trade against when there were some; unchanged otherwise.
 */
function withFillModels(report: BacktestReport, venue: ReplayVenue): BacktestReport {
  const models = venue.fillModels();
  const untraded = venue.untradedOrders();
  const anyTaker = Object.values(models).includes('taker');
  if (!anyTaker && untraded.count === 0) return report;
  return {
    ...report,
    ...(anyTaker ? { fill_models: models } : {}),
    ...(untraded.count > 0 ? { untraded_orders: untraded } : {}),
  };
}

/**
 * The markets with book snapshots in the sessions' manifests; null when the source has no
 * manifests (records in memory): the book model then, as before.
 */
function bookedMarkets(source: ReplaySource): ReadonlySet<string> | null {
  if (source.recordings.length === 0) return null;
  const booked = new Set<string>();
  for (const recording of source.recordings) {
    for (const [marketId, counts] of Object.entries(recording.manifest.counts.by_market)) {
      if (counts.book > 0) booked.add(marketId);
    }
  }
  return booked;
}

/** The markets of sessions imported from candles, with the candles' interval. */
function candleIntervals(source: ReplaySource): ReadonlyMap<string, number> {
  const intervals = new Map<string, number>();
  for (const recording of source.recordings) {
    const interval = recording.manifest.settings.candle_interval_ms;
    if (interval === undefined) continue;
    for (const market of recording.manifest.markets) intervals.set(market.market_id, interval);
  }
  return intervals;
}

function outcomeKey(outcome: IntentOutcome): string[] {
  switch (outcome.status) {
    case 'denied':
      return outcome.denials.map((denial) => `denied:${denial.rule}`);
    case 'rejected':
      return [`rejected:${outcome.code}`];
    case 'resolved':
      return [`resolved:${outcome.resolution}`];
    default:
      return [outcome.status];
  }
}

/** A definition whose emitted intents are counted, so the loop knows work has begun. */
function countingDefinition(
  definition: StrategyDefinition<unknown>,
  onIntent: (intent: OrderIntent) => void,
): StrategyDefinition<unknown> {
  return {
    ...definition,
    create: (context, params) => definition.create(context, params).pipe(tap(onIntent)),
  };
}

function flatten(prefix: string, value: unknown, into: Record<string, ParameterValue>): void {
  if (value === undefined) return;
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) {
    into[prefix] = value as ParameterValue;
  } else if (Array.isArray(value)) {
    into[prefix] = JSON.stringify(value);
  } else if (typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      flatten(prefix === '' ? key : `${prefix}.${key}`, inner, into);
    }
  } else {
    into[prefix] = String(value);
  }
}

export function reportMetadata(
  strategies: readonly { id: string; name: string; params: unknown }[],
  seed: string | number,
  data: readonly string[],
): ReportMetadata {
  const parameters: Record<string, ParameterValue> = { seed };
  for (const strategy of strategies) {
    flatten(strategies.length === 1 ? '' : strategy.id, strategy.params, parameters);
  }
  return {
    strategy: [...new Set(strategies.map((strategy) => strategy.name))].join(', '),
    parameters,
    data: [...data],
  };
}

/**
 * The markets a strategy's params name: `markets` (a list) or `market` (one id), the
 * convention of the shipped plugins. Empty when it names none (it trades every market).
 */
export function strategyMarkets(params: unknown): string[] {
  if (typeof params !== 'object' || params === null) return [];
  const { markets, market } = params as { markets?: unknown; market?: unknown };
  if (Array.isArray(markets)) {
    return markets.filter((value): value is string => typeof value === 'string');
  }
  return typeof market === 'string' ? [market] : [];
}

/**
 * Every strategy with its markets and the ones the data lacks. Without `skip`, any missing
 * market refuses the run (BACKTEST_MISSING_MARKET, every strategy listed) before it starts.
 */
export function checkStrategyMarkets(
  strategies: readonly { id: string; name: string; params: unknown }[],
  available: readonly string[],
  skip: boolean,
): StrategyEntry[] {
  const known = new Set(available);
  const entries = strategies.map((strategy) => {
    const markets = strategyMarkets(strategy.params);
    return {
      id: strategy.id,
      name: strategy.name,
      markets,
      missingMarkets: markets.filter((market) => !known.has(market)),
    };
  });
  const missing = entries.filter((entry) => entry.missingMarkets.length > 0);
  if (missing.length > 0 && !skip) {
    throw new PaperbotError(
      'BACKTEST_MISSING_MARKET',
      `the data has no ${missing
        .map((entry) => `${entry.missingMarkets.join(', ')} (strategy ${entry.id})`)
        .join(
          '; ',
        )}; the data's markets are ${available.join(', ') || 'none'}. Replay data with those markets, or pass --skip-missing-markets to run without these strategies`,
      {
        details: {
          strategies: missing.map((entry) => ({ id: entry.id, missing: entry.missingMarkets })),
        },
      },
    );
  }
  return entries;
}

export async function runBacktest(options: BacktestRunOptions): Promise<BacktestResult> {
  const { config, source } = options;
  const parsed = options.strategies.map((strategy) => ({
    id: strategy.id,
    name: strategy.name,
    params: strategy.definition.params.parse({
      ...strategy.rawParams,
      ...options.paramOverrides?.[strategy.id],
    }) as unknown,
  }));
  const entries = checkStrategyMarkets(
    parsed,
    source.markets.map((market) => market.market_id),
    options.skipMissingMarkets === true,
  );
  const skipped = new Set(
    entries.filter((entry) => entry.missingMarkets.length > 0).map((entry) => entry.id),
  );
  const logger = options.logger ?? silentLogger;
  // Deferred: the venue builds a snapshot or a trade only when something reads it.
  const iterator = source.batches({ deferred: true })[Symbol.asyncIterator]();
  let first = await iterator.next();
  while (!first.done && first.value.length === 0) first = await iterator.next();
  if (first.done) {
    throw new PaperbotError('BACKTEST_NO_DATA', `no records in ${source.directories.join(', ')}`);
  }
  const startMs = first.value[0]!.t;
  const clock = new ReplayClock(startMs);
  const venue = new ReplayVenue({
    clock,
    markets: source.markets,
    bookDepth: source.bookDepth,
    config: config.venue,
    seed: config.seed,
    candleHistory: source.candleHistory,
    bookedMarkets: bookedMarkets(source),
    candleIntervals: candleIntervals(source),
    dropPrivateSequences: options.dropPrivateSequences ?? [],
  });
  const journal = ReplayJournal.open({
    now: () => clock.now(),
    epoch: BACKTEST_EPOCH,
    intentWindow: JOURNAL_INTENT_WINDOW,
  });
  let intents = 0;
  const tally = new IntentTally();
  const strategies: KernelStrategy[] = options.strategies
    .filter((strategy) => !skipped.has(strategy.id))
    .map((strategy) => ({
      id: strategy.id,
      definition: countingDefinition(strategy.definition, (intent) => {
        intents++;
        tally.emittedIntent(intent);
        options.onIntent?.(strategy.id, intent, clock.now());
      }),
      params: { ...strategy.rawParams, ...options.paramOverrides?.[strategy.id] },
    }));
  let kernel: Kernel | null = null;
  let fundingPayments: Subscription | undefined;
  const fills: Fill[] = [];
  let stopFunding: (() => void) | undefined;
  let stopped = false;
  try {
    kernel = Kernel.create({
      clock,
      venue: venue.execution,
      marketData: venue,
      journal,
      strategies,
      risk: config.risk,
      execution: executorSettings(config.execution),
      tracker: trackerSettings(config.tracker),
      reconciler: reconcilerSettings(config.reconciler),
      deadman: false,
      nextStart: false,
      logger,
    });
    const driver = new TimeDriver(clock, [() => venue.activity, () => intents]);
    const running = kernel;
    const outcomeCounts = new Map<string, number>();
    const prefixes = entries.map((entry) => ({
      id: entry.id,
      prefix: intentIdPrefix(entry.id, BACKTEST_EPOCH),
    }));
    const collector = new ReportCollector({
      currency: venue.account().settlement_asset,
      startingBalance: config.venue.starting_balance,
      startMs,
      sharpePeriodMs: config.report.sharpe_period_ms,
      markets: source.markets.map((market) => market.market_id),
      strategies: entries,
      metadata: reportMetadata(
        parsed.filter((strategy) => !skipped.has(strategy.id)),
        config.seed,
        source.directories,
      ),
      files: options.reportFiles ?? null,
      priceTicks: new Map(
        source.markets.flatMap((market) =>
          market.price_tick === null ? [] : [[market.market_id, market.price_tick] as const],
        ),
      ),
    });
    // The kernel's fills (the tracker's, from the venue's private stream, read-backs
    // included), to the report with the strategy whose order filled.
    running.fills$.subscribe((fill) => {
      fills.push(fill);
      const clientOrderId =
        fill.order_id === null
          ? null
          : (venue.filledOrderIdsOf(fill.order_id)?.clientOrderId ??
            venue.exchange.getOrder(venue.accountId, fill.order_id).client_order_id);
      const owner = prefixes.find((entry) => clientOrderId?.startsWith(entry.prefix) === true);
      collector.fill(fill, owner?.id, tally.exitReasonOf(fill.order_id, clientOrderId ?? null));
    });
    running.outcomes$.subscribe((outcome) => {
      tally.outcome(outcome);
      for (const key of outcomeKey(outcome)) {
        outcomeCounts.set(key, (outcomeCounts.get(key) ?? 0) + 1);
      }
      const intent = outcome.intent.intent;
      if (outcome.status === 'accepted' && intent.kind === 'place' && intent.price !== undefined) {
        collector.order(intent.marketId, intent.side, clock.now(), intent.price);
      }
    });
    await driver.runUntil(running.start(), START_LIMIT_MS, 'the kernel start');
    // Funding payments of the account's positions, to the report apart from fees, in their
    // place in the private stream: after the tracker (subscribed at the start) has handed on
    // the fills before them, so the trade they belong to is open in the report.
    const funding = new Map<number, { readonly marketId: string; readonly amount: string }>();
    stopFunding = venue.exchange.onPrivateEvent((accountId, event) => {
      if (accountId === venue.accountId && event.type === 'funding_payment') {
        funding.set(event.sequence, { marketId: event.data.market_id, amount: event.data.amount });
      }
    });
    fundingPayments = venue.execution.privateStream.items$.subscribe((item) => {
      if (item.kind !== 'other' || funding.size === 0) return;
      const payment = funding.get(item.sequence);
      if (payment === undefined) return;
      funding.delete(item.sequence);
      collector.funding(payment.marketId, payment.amount);
    });

    const interval = config.report.equity_interval_ms;
    let nextSample = startMs + interval;
    const nextSampleAt = () => nextSample;
    const sample = (t: number) => {
      collector.equity(t, venue.equity());
      nextSample = t + interval;
    };

    let delivered = 0;
    const deliver = async (batch: readonly RecordedEvent[]) => {
      for (let index = 0; index < batch.length; index++) {
        const record = batch[index]!;
        const t = record.t;
        if (t > clock.now()) {
          // Most records reach no timer: time moves, past any equity sample on the way, without
          // a yield (a sample starts no work). A timer due first goes through the driver.
          const due = clock.nextDueAt();
          if (due !== null && due <= t) {
            await driver.advanceTo(t, nextSampleAt, sample);
          } else {
            while (nextSample <= t) {
              clock.advanceTo(nextSample);
              sample(nextSample);
            }
            clock.advanceTo(t);
          }
        }
        if (record.k === 'ticker') {
          const price = record.d.mark_price ?? record.d.last_price;
          if (price !== null) collector.price(record.m, t, price);
        }
        const before = driver.mark();
        venue.ingest(record);
        if (driver.mark() !== before) await driver.settle();
      }
      delivered += batch.length;
      options.onProgress?.(delivered);
    };
    options.onPhase?.('replaying');
    // Not held for the whole run: delivered records die young, in the garbage collector's
    // cheapest collections, instead of being copied out of them with the batch.
    const firstBatch = first.value;
    first = { done: true, value: undefined };
    await deliver(firstBatch);
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      await deliver(next.value);
    }

    if (options.replayUntilMs !== undefined && options.replayUntilMs > clock.now()) {
      await driver.advanceTo(options.replayUntilMs, nextSampleAt, sample);
    }
    options.onPhase?.('stopping');
    const shutdown = await driver.runUntil(
      running.stop('backtest finished'),
      STOP_LIMIT_MS,
      'the final shutdown',
    );
    stopped = true;
    const endMs = clock.now();
    options.onPhase?.('reporting');
    // Open trades are marked where the venue marks the positions the equity counts.
    const marks = new Map<string, string>();
    for (const position of await venue.execution.listPositions()) {
      if (position.mark_price !== null) marks.set(position.market_id, position.mark_price);
    }
    const report = withFillModels(
      withDataDamage(
        collector.finish(endMs, {
          equity: venue.account().total_equity,
          marks,
          intents: tally.figures(),
          gaps: reportedGaps(venue.gaps()),
        }),
        options.source.damage(),
      ),
      venue,
    );
    if (report.untraded_orders !== undefined) {
      // One warning for the run, not one per order.
      logger.warn(untradedNote(report.untraded_orders), {
        count: report.untraded_orders.count,
        markets: report.untraded_orders.markets,
      });
    }
    const orderIds = new Map<string, OrderIds>();
    for (const fill of fills) {
      if (fill.order_id === null || orderIds.has(fill.order_id)) continue;
      const known = venue.filledOrderIdsOf(fill.order_id);
      if (known !== undefined) {
        orderIds.set(fill.order_id, known);
        continue;
      }
      const order = venue.exchange.getOrder(venue.accountId, fill.order_id);
      orderIds.set(fill.order_id, {
        clientOrderId: order.client_order_id,
        requestId: order.request_id,
      });
    }
    return {
      report,
      fills,
      orderIds,
      records: delivered,
      counters: running.status().counters,
      outcomes: Object.fromEntries(
        [...outcomeCounts.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
      ),
      shutdown,
    };
  } finally {
    stopFunding?.();
    fundingPayments?.unsubscribe();
    if (kernel !== null && !stopped) kernel.dispose();
    await iterator.return?.();
    venue.close();
    journal.close();
  }
}
