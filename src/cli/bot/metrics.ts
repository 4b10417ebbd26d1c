/**
 * Prometheus metrics of the bot, on a registry of its own (never prom-client's global one, so
 * two bots in one process, or a test, do not mix). Counters and histograms are fed from the
 * kernel's streams as events happen; gauges of state are read from `kernel.status()` when
 * scraped, so they are never stale. Every name is listed in docs/operations.md.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Observable, Subscription } from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import type { IntentOutcome } from '../../runtime/intents.ts';
import type { ReadingMonitor } from '../../client/index.ts';

/** The part of the kernel's status the metrics read. */
export interface MetricsStatus {
  readonly tradingState: string;
  readonly mayTrade: boolean;
  readonly reconciled: boolean;
  readonly deadman: { readonly phase: string; readonly deadlineAt: number | null } | null;
  readonly unknownIntents: number;
  readonly unresolvedIntents: number;
  readonly openOrders: readonly unknown[];
  readonly positions: readonly unknown[];
  readonly account: { readonly total_equity: string } | null;
  readonly strategies: readonly { readonly id: string; readonly status: string }[];
}

/** What the metrics subscribe to: the kernel's streams, and its status for the gauges. */
export interface MetricsSource {
  status(): MetricsStatus;
  readonly outcomes$: Observable<IntentOutcome>;
  readonly denials$: Observable<{ readonly denials: readonly { readonly rule: string }[] }>;
  readonly reconciliation$: Observable<ReconciliationSummary>;
  readonly fills$: Observable<{ readonly market_id: string; readonly side: string }>;
  readonly intentLatency$: Observable<IntentLatency>;
}

/** The part of a reconciliation report the metrics count. */
export interface ReconciliationSummary {
  readonly ok: boolean;
  readonly missingLocally: readonly unknown[];
  readonly foreignOrders: readonly unknown[];
  readonly missingAtVenue: readonly unknown[];
  readonly stateMismatches: readonly unknown[];
  readonly positionMismatches: readonly unknown[];
}

export interface IntentLatency {
  readonly tickToPlaceMs: number | null;
  readonly placeMs: number;
}

/** The journal's disk use and rows per table, as the metrics read them. */
export interface JournalSizes {
  readonly fileBytes: number;
  readonly walBytes: number;
  readonly freePages: number;
  readonly pageSize: number;
  readonly rows: Readonly<Record<string, number>>;
}

/** The stream client as the metrics see it. */
export interface StreamStateSource {
  readonly state: string;
  readonly resync$: Observable<{ readonly reason: string }>;
}

export const TRADING_STATES = ['ACTIVE', 'REDUCING', 'HALTED'] as const;
export const STREAM_STATES = [
  'idle',
  'recovering',
  'connecting',
  'authenticating',
  'subscribing',
  'live',
  'backoff',
  'closed',
  'failed',
] as const;
const DIFFERENCE_KINDS = [
  ['missing_locally', 'missingLocally'],
  ['foreign_orders', 'foreignOrders'],
  ['missing_at_venue', 'missingAtVenue'],
  ['state_mismatches', 'stateMismatches'],
  ['position_mismatches', 'positionMismatches'],
] as const;

/** Latency buckets in seconds: 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface BotMetrics {
  readonly registry: Registry;
  /** Starts reading a kernel: subscribes to its streams and reads its status on scrape. */
  attachKernel(source: MetricsSource): void;
  /** Starts reading the stream client's connection state. */
  attachStream(stream: StreamStateSource): void;
  /** Counts the venue's fields the project does not know (tolerant reading). */
  attachReading(monitor: ReadingMonitor): void;
  /** Starts reading the journal's disk use and row counts (null once it is closed). */
  attachJournal(read: () => JournalSizes | null): void;
  /** Starts reading the embedded emulator's store size on disk (bytes by file). */
  attachStore(read: () => Readonly<Record<string, number>>): void;
  /** Unsubscribes from everything (the registry keeps its last values). */
  dispose(): void;
}

export interface BotMetricsOptions {
  readonly clock: Clock;
  /** Node.js process metrics (CPU, memory, event loop, GC); default true. */
  readonly processMetrics?: boolean;
}

function outcomeLabel(outcome: IntentOutcome): string {
  return outcome.status === 'resolved' ? `resolved_${outcome.resolution}` : outcome.status;
}

export function createBotMetrics(options: BotMetricsOptions): BotMetrics {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const subscriptions: Subscription[] = [];
  let kernel: MetricsSource | null = null;
  let stream: StreamStateSource | null = null;
  let journalSizes: (() => JournalSizes | null) | null = null;
  let storeSizes: (() => Readonly<Record<string, number>>) | null = null;
  const status = (): MetricsStatus | null => (kernel === null ? null : kernel.status());
  const counter = <Label extends string>(name: string, help: string, labelNames: Label[]) =>
    new Counter({ name, help, labelNames, registers });
  const latency = (name: string, help: string) =>
    new Histogram({ name, help, buckets: LATENCY_BUCKETS, registers });

  const outcomes = counter(
    'paperbot_intent_outcomes_total',
    'Intent outcomes by strategy and outcome (denied, rejected, accepted, unknown, resolved_accepted, resolved_rejected, filled).',
    ['strategy', 'outcome'],
  );
  const denials = counter(
    'paperbot_risk_denials_total',
    'Risk gate denials by rule (an intent failing several rules counts once per rule).',
    ['rule'],
  );
  const fills = counter('paperbot_fills_total', 'Fills of the account, each fill_id once.', [
    'market',
    'side',
  ]);
  const reconciliations = counter(
    'paperbot_reconciliations_total',
    'Reconciliation runs by result (ok, failed).',
    ['result'],
  );
  const differences = counter(
    'paperbot_reconciliation_differences_total',
    'Differences found by reconciliation, by kind.',
    ['kind'],
  );
  const resyncs = counter(
    'paperbot_stream_resyncs_total',
    'Private stream resyncs (each followed by a reconciliation), by reason.',
    ['reason'],
  );
  const tickToPlace = latency(
    'paperbot_tick_to_place_seconds',
    'From the market event a strategy reacted to until the venue accepted the placement.',
  );
  const place = latency(
    'paperbot_place_seconds',
    'From the intent reaching the executor until the venue answered the placement.',
  );

  new Gauge({
    name: 'paperbot_up',
    help: '1 while the kernel is attached and running.',
    registers,
    collect() {
      this.set(kernel === null ? 0 : 1);
    },
  });
  /** A gauge of one label whose values are read at each scrape; `null` leaves them as they were. */
  const byLabel = (
    name: string,
    help: string,
    label: string,
    read: () => Iterable<readonly [string, number]> | null,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers,
      collect() {
        for (const [value, sample] of read() ?? []) this.set({ [label]: value }, sample);
      },
    });
  /** 1 for the current one of `states`, 0 for the others. */
  const oneHot = (states: readonly string[], current: string | undefined) =>
    states.map((state) => [state, state === current ? 1 : 0] as const);
  byLabel(
    'paperbot_trading_state',
    'The trading state: 1 for the current one, 0 for the others.',
    'state',
    () => oneHot(TRADING_STATES, status()?.tradingState),
  );
  const simple = (name: string, help: string, read: (value: MetricsStatus) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const value = status();
        this.set(value === null ? 0 : read(value));
      },
    });
  simple(
    'paperbot_may_trade',
    '1 when the bot may take new exposure now (ACTIVE and every gate open).',
    (value) => (value.mayTrade ? 1 : 0),
  );
  simple('paperbot_reconciled', '1 when the last reconciliation succeeded.', (value) =>
    value.reconciled ? 1 : 0,
  );
  simple('paperbot_unknown_intents', 'Intents whose outcome is not known yet.', (value) => {
    return value.unknownIntents;
  });
  simple(
    'paperbot_unresolved_intents',
    'Unknown intents left after every automatic resolution attempt.',
    (value) => value.unresolvedIntents,
  );
  simple('paperbot_open_orders', 'Open orders of the account.', (value) => value.openOrders.length);
  simple('paperbot_positions', 'Open positions of the account.', (value) => value.positions.length);
  simple(
    'paperbot_account_equity',
    'Total equity of the account in the settlement asset (approximate: a float).',
    (value) => (value.account === null ? 0 : Number(value.account.total_equity)),
  );
  simple('paperbot_deadman_armed', '1 while a cancel-all-after deadline is armed.', (value) =>
    value.deadman !== null && value.deadman.deadlineAt !== null ? 1 : 0,
  );
  simple(
    'paperbot_deadman_seconds_to_deadline',
    'Seconds until the armed cancel-all-after deadline; 0 when none is armed.',
    (value) =>
      value.deadman?.deadlineAt == null
        ? 0
        : Math.max(0, (value.deadman.deadlineAt - options.clock.now()) / 1000),
  );
  new Gauge({
    name: 'paperbot_strategy_running',
    help: 'Strategies by status: 1 for the current status.',
    labelNames: ['strategy', 'status'],
    registers,
    collect() {
      this.reset();
      for (const strategy of status()?.strategies ?? []) {
        this.set({ strategy: strategy.id, status: strategy.status }, 1);
      }
    },
  });
  byLabel(
    'paperbot_stream_state',
    'The private stream connection state: 1 for the current one.',
    'state',
    () => oneHot(STREAM_STATES, stream?.state),
  );
  byLabel(
    'paperbot_journal_bytes',
    'Disk use of the journal by file (main, wal; free: pages the main file holds unused).',
    'file',
    () => {
      const sizes = journalSizes?.() ?? null;
      if (sizes === null) return null;
      return [
        ['main', sizes.fileBytes],
        ['wal', sizes.walBytes],
        ['free', sizes.freePages * sizes.pageSize],
      ];
    },
  );
  byLabel(
    'paperbot_journal_rows',
    'Rows of the journal by table (large tables: the span of their row ids, exact while rows leave oldest first).',
    'table',
    () => {
      const sizes = journalSizes?.() ?? null;
      return sizes === null ? null : Object.entries(sizes.rows);
    },
  );

  byLabel(
    'paperbot_emulator_store_bytes',
    "Disk use of the embedded emulator's store (with a data dir) by file (main, wal).",
    'file',
    () => Object.entries(storeSizes?.() ?? {}),
  );

  const unknownFields = counter(
    'paperbot_venue_unknown_fields_total',
    'Fields the venue sent that the project does not know, kept as sent, by shape and field (tolerant reading).',
    ['shape', 'field'],
  );

  return {
    registry,
    attachReading(monitor) {
      subscriptions.push(
        monitor.notices$.subscribe((notice) => {
          if (notice.kind === 'unknown_field') {
            unknownFields.inc({ shape: notice.shape, field: notice.field });
          }
        }),
      );
    },
    attachJournal(read) {
      journalSizes = read;
    },
    attachStore(read) {
      storeSizes = read;
    },
    attachKernel(source) {
      kernel = source;
      subscriptions.push(
        source.outcomes$.subscribe((outcome) => {
          outcomes.inc({ strategy: outcome.intent.strategyId, outcome: outcomeLabel(outcome) });
        }),
        source.denials$.subscribe((event) => {
          for (const denial of event.denials) denials.inc({ rule: denial.rule });
        }),
        source.fills$.subscribe((fill) => fills.inc({ market: fill.market_id, side: fill.side })),
        source.reconciliation$.subscribe((report) => {
          reconciliations.inc({ result: report.ok ? 'ok' : 'failed' });
          for (const [kind, field] of DIFFERENCE_KINDS) {
            if (report[field].length > 0) differences.inc({ kind }, report[field].length);
          }
        }),
        source.intentLatency$.subscribe((latency) => {
          place.observe(latency.placeMs / 1000);
          if (latency.tickToPlaceMs !== null) tickToPlace.observe(latency.tickToPlaceMs / 1000);
        }),
      );
    },
    attachStream(source) {
      stream = source;
      subscriptions.push(
        source.resync$.subscribe((signal) => resyncs.inc({ reason: signal.reason })),
      );
    },
    dispose() {
      for (const subscription of subscriptions) subscription.unsubscribe();
      subscriptions.length = 0;
      kernel = null;
    },
  };
}
