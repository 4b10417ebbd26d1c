/**
 * A recording of the emulator running in this process, on virtual time: an hour of the
 * emulator's synthetic markets takes seconds, and the same seed gives the same bytes. This is how
 * the sample sessions in backtest-data/ are made (`paperbot record --emulator-virtual`).
 *
 * With `trading`, a kernel trades on the emulator while it is recorded (a "live" session against
 * the emulator, through `ExchangeExecutionVenue` on the same clock), and the account's private
 * events are recorded too: the input of the divergence report, which sets those fills beside a
 * backtest of the same strategy over the same public data. The kernel's market data are the
 * records themselves, as the recorder captures them.
 */
import {
  defaultEmulatorConfig,
  type EmulatorConfig,
  type EmulatorConfigInput,
  Exchange,
  MemoryStore,
  parseEmulatorConfig,
} from '../../emulator/index.ts';
import { type Logger, silentLogger } from '../../core/logger.ts';
import type { CandleInterval, Fill, Market } from '../../protocol/index.ts';
import type { OrderTrackerConfig, ReconcilerConfig } from '../../runtime/execution/index.ts';
import type { ExecutorConfig } from '../../runtime/execution/executor.ts';
import { Journal } from '../../runtime/journal/index.ts';
import { Kernel, type KernelStrategy } from '../../runtime/kernel/index.ts';
import type { RiskConfig } from '../../runtime/risk/index.ts';
import { ReplayClock, TimeDriver } from '../backtest/loop.ts';
import type { Compression, RecordingManifest } from '../format/manifest.ts';
import { RecordingSink } from '../format/recorder-sink.ts';
import type { OrderIds } from '../report/divergence.ts';
import { recordCandleHistory } from './candle-history.ts';
import { ExchangeExecutionVenue } from '../venue/exchange-venue.ts';
import { LatencyModel, type LatencySettings } from '../venue/latency.ts';
import { RecordedMarketData } from '../venue/market-data.ts';
import { Recorder } from './recorder.ts';
import { exchangeSource } from './sources.ts';

export interface EmulatorTrading {
  readonly strategies: readonly KernelStrategy[];
  readonly risk: RiskConfig;
  readonly execution?: Partial<ExecutorConfig>;
  readonly tracker?: Partial<OrderTrackerConfig>;
  readonly reconciler?: Partial<ReconcilerConfig>;
  /** The network between the bot and the emulator; default 20 ms each way, events 20 ms. */
  readonly latency?: LatencySettings;
  readonly startingBalance?: string;
  readonly logger?: Logger;
  /** The journal epoch of the session (part of its request ids). */
  readonly epoch?: string;
  /** A journal file to keep (`paperbot calibrate --journal`); in memory when omitted. */
  readonly journalPath?: string;
}

export interface EmulatorSessionOptions {
  readonly directory: string;
  /** Overrides the emulator config's seed. */
  readonly seed: string | number;
  /** Virtual start time, epoch ms. */
  readonly startMs: number;
  readonly durationMs: number;
  /** The emulator's config (the built-in markets when omitted). */
  readonly emulatorConfig?: EmulatorConfig | EmulatorConfigInput;
  /** Record only these markets; every market when omitted or null. */
  readonly marketIds?: readonly string[] | null;
  readonly bookDepth: number;
  readonly bookIntervalMs: number;
  readonly tradesIntervalMs: number;
  readonly compression?: Compression;
  readonly trading?: EmulatorTrading;
  /** Called with the virtual time as the run goes (for a progress bar). */
  readonly onProgress?: (t: number) => void;
  /**
   * Candle history kept in `candles.json` (the emulator's seeded past at the start), as
   * `paperbot record --candle-history` does; none when omitted.
   */
  readonly candleHistory?: {
    readonly intervals: readonly CandleInterval[];
    readonly limit: number;
  };
}

export interface EmulatorSessionResult {
  readonly manifest: RecordingManifest;
  /** The trading account's fills (empty without `trading`). */
  readonly fills: readonly Fill[];
  /** The runtime's ids of each order that filled, from the live session's own venue. */
  readonly orderIds: ReadonlyMap<string, OrderIds>;
}

export const DEFAULT_SESSION_LATENCY: LatencySettings = Object.freeze({
  orderMs: 20,
  responseMs: 20,
  eventMs: 20,
  readMs: 0,
  jitterMs: 0,
});

/** Longer than any recording: the sink's timers never fire; the loop flushes. */
const VIRTUAL_SINK_TIMERS_MS = 10 * 365 * 86_400_000;

/** Where a virtual emulator recording says it came from (kept in the manifest's `source`). */
export function emulatorSourceUrl(seed: string | number): string {
  return `emulator://in-process/seed-${encodeURIComponent(String(seed))}`;
}

export async function recordEmulatorSession(
  options: EmulatorSessionOptions,
): Promise<EmulatorSessionResult> {
  const base = options.emulatorConfig ?? defaultEmulatorConfig();
  const config = parseEmulatorConfig({ ...base, seed: options.seed });
  const clock = new ReplayClock(options.startMs);
  const store = new MemoryStore();
  const exchange = Exchange.open({ clock, config, store });
  const wanted = options.marketIds ?? null;
  const markets: Market[] = exchange
    .listMarkets()
    .filter((market) => wanted === null || wanted.includes(market.market_id));
  const trading = options.trading;
  const accountId =
    trading === undefined
      ? null
      : exchange.createAccount(
          trading.startingBalance === undefined ? {} : { startingBalance: trading.startingBalance },
        );
  const sink = await RecordingSink.create({
    directory: options.directory,
    clock,
    source: { kind: 'emulator', baseUrl: emulatorSourceUrl(options.seed) },
    markets,
    bookDepth: options.bookDepth,
    bookIntervalMs: options.bookIntervalMs,
    privateEvents: accountId !== null,
    ...(options.compression === undefined ? {} : { compression: options.compression }),
    // Virtual time outruns the disk, so the sink's own timers would flush at points that depend
    // on I/O timing (and gzip bytes with them); the loop flushes at fixed points instead.
    flushCharacters: Number.MAX_SAFE_INTEGER,
    flushIntervalMs: VIRTUAL_SINK_TIMERS_MS,
    fsyncIntervalMs: VIRTUAL_SINK_TIMERS_MS,
    manifestIntervalMs: VIRTUAL_SINK_TIMERS_MS,
  });
  const marketData = new RecordedMarketData(markets);
  const recorder = new Recorder({
    source: exchangeSource({ exchange, accountId }),
    sink,
    clock,
    marketIds: markets.map((market) => market.market_id),
    bookDepth: options.bookDepth,
    bookIntervalMs: options.bookIntervalMs,
    tradesIntervalMs: options.tradesIntervalMs,
    privateEvents: accountId !== null,
    tap: marketData,
    // Virtual time: read each rate 1 ms before its funding time, after the last step before it
    // (steps fall on whole milliseconds), so the recording has the rate the emulator settles.
    fundingLeadMs: 1,
  });

  const activity: (() => number)[] = [];
  let venue: ExchangeExecutionVenue | null = null;
  let journal: Journal | null = null;
  let kernel: Kernel | null = null;
  const fills: Fill[] = [];
  if (trading !== undefined && accountId !== null) {
    venue = new ExchangeExecutionVenue({
      exchange,
      accountId,
      clock,
      store,
      latency: new LatencyModel(trading.latency ?? DEFAULT_SESSION_LATENCY, options.seed),
      hooks: {
        onEngineEvent: (event) => {
          if (event.type === 'fill') fills.push(event.data);
        },
      },
    });
    const tradingVenue = venue;
    activity.push(() => tradingVenue.activity);
    journal = Journal.open(trading.journalPath ?? ':memory:', {
      now: () => clock.now(),
      epoch: trading.epoch ?? 'emulator',
      durability: 'normal',
    });
    kernel = Kernel.create({
      clock,
      venue,
      marketData,
      journal,
      strategies: trading.strategies,
      risk: trading.risk,
      ...(trading.execution === undefined ? {} : { execution: trading.execution }),
      ...(trading.tracker === undefined ? {} : { tracker: trading.tracker }),
      ...(trading.reconciler === undefined ? {} : { reconciler: trading.reconciler }),
      deadman: false,
      nextStart: false,
      logger: trading.logger ?? silentLogger,
    });
  }
  const driver = new TimeDriver(clock, activity);
  const end = options.startMs + options.durationMs;
  let stopped = false;
  if (options.candleHistory !== undefined) {
    await recordCandleHistory({
      source: exchangeSource({ exchange, accountId: null }),
      directory: options.directory,
      clock,
      marketIds: markets.map((market) => market.market_id),
      intervals: options.candleHistory.intervals,
      limit: options.candleHistory.limit,
    });
  }
  try {
    exchange.start();
    recorder.start();
    // The first polls answer at once: let them be recorded at the start time.
    await driver.settle();
    if (kernel !== null) await driver.runUntil(kernel.start(), 60_000, 'the kernel start');
    const progressStep = Math.max(1_000, Math.floor(options.durationMs / 200));
    for (let t = clock.now(); t < end;) {
      t = Math.min(end, t + progressStep);
      await driver.advanceTo(t);
      await sink.flush();
      options.onProgress?.(t);
    }
    if (kernel !== null) {
      await driver.runUntil(kernel.stop('recording finished'), 600_000, 'the kernel shutdown');
    }
    stopped = true;
    exchange.stop();
    await recorder.idle();
    const manifest = await recorder.stop();
    const orderIds = new Map<string, OrderIds>();
    if (accountId !== null) {
      for (const fill of fills) {
        if (fill.order_id === null || orderIds.has(fill.order_id)) continue;
        const order = exchange.getOrder(accountId, fill.order_id);
        orderIds.set(fill.order_id, {
          clientOrderId: order.client_order_id,
          requestId: order.request_id,
        });
      }
    }
    return { manifest, fills, orderIds };
  } finally {
    if (!stopped) {
      kernel?.dispose();
      exchange.stop();
      await recorder.stop().catch(() => undefined);
    }
    venue?.close();
    journal?.close();
    marketData.complete();
    store.close();
  }
}
