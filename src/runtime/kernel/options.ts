/**
 * The kernel's public shapes: what `Kernel.create` takes (`KernelOptions`), what `status()`
 * answers, the intent counters and latencies it reports, and the route readiness it gates on.
 */
import type { Observable } from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import type { Account, Order, Position } from '../../protocol/index.ts';
import type { DeadmanConfig, DeadmanStatus } from '../deadman/heartbeat.ts';
import type { ShutdownConfig } from '../deadman/shutdown.ts';
import type { ExecutorConfig } from '../execution/executor.ts';
import type { GateReading, PermitState } from '../execution/permit.ts';
import type { ReconcilerConfig } from '../execution/reconciler.ts';
import type { OrderTrackerConfig } from '../execution/tracker.ts';
import type { WaitingExitView } from '../exits/emulator.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { RiskConfig } from '../risk/config.ts';
import type { MarketDataVenue } from '../streams/market-data.ts';
import type { StrategyDefinition } from '../strategy/types.ts';
import type { ExecutionVenue } from '../venue.ts';
import type { Logger } from '../../core/logger.ts';

export interface KernelStrategy {
  /** The instance id (part of every request id); letters, digits, `_` and `-`, at most 40. */
  readonly id: string;
  readonly definition: StrategyDefinition<unknown>;
  /** Raw params; parsed with the plugin's schema at `create`. */
  readonly params: unknown;
}

export interface KernelOptions {
  readonly clock: Clock;
  readonly venue: ExecutionVenue;
  readonly marketData: MarketDataVenue;
  /** Opened by the caller, closed by the caller after `stop`. */
  readonly journal: IntentJournal;
  readonly strategies: readonly KernelStrategy[];
  readonly risk: RiskConfig;
  readonly execution?: Partial<ExecutorConfig>;
  readonly tracker?: Partial<OrderTrackerConfig>;
  readonly reconciler?: Partial<ReconcilerConfig>;
  /** `false`: no dead-man switch (replay, where nothing outlives the run). */
  readonly deadman?: Partial<DeadmanConfig> | false;
  /** The shutdown's deadline and retry budget (cancel-all, confirmation, disarm). */
  readonly shutdown?: Partial<ShutdownConfig>;
  readonly logger: Logger;
  /**
   * The venue's route readiness (`LiveVenue.routeReadiness$`, or a plain boolean); while not
   * ready the gate adds no exposure, and the log and status say why. Counted ready when omitted.
   */
  readonly routeReady$?: Observable<boolean | RouteReadySignal>;
  /** Grace before a candle closes on the clock alone (`StrategyEnvironment.candleGraceMs`). */
  readonly candleGraceMs?: number;
  /**
   * A later start picks up this run's journal (default true). False for a backtest: what it
   * leaves for a next start (waiting exits) is then no warning.
   */
  readonly nextStart?: boolean;
}

export interface IntentCounters {
  /** Intents the strategies emitted. */
  readonly intents: number;
  /** Denied by the gate or the executor. */
  readonly denied: number;
  /** Rejected by the venue, at once or once resolved. */
  readonly rejected: number;
  /** Accepted by the venue, at once or once resolved. */
  readonly accepted: number;
  /** Outcomes that were unknown when first reported. */
  readonly unknown: number;
  /** Fills, each counted once. */
  readonly fills: number;
}

export interface KernelStrategyStatus {
  readonly id: string;
  /** `added` before `start`; then the host's status (`running`, `completed`, `failed`, `stopped`). */
  readonly status: string;
  readonly nextSequence: number;
}

/** Route readiness with its reason (`LiveVenue.routeReadiness$` emits a superset of this). */
export interface RouteReadySignal {
  readonly ready: boolean;
  readonly reason: string | null;
}

export const ROUTE_GATE = 'route readiness';

export function routeGateReading(value: boolean | RouteReadySignal): GateReading {
  if (typeof value === 'boolean') {
    return { open: value, reason: value ? null : 'the venue reports the route not ready' };
  }
  return { open: value.ready, reason: value.ready ? null : (value.reason ?? 'not ready') };
}

export interface KernelStatus {
  readonly tradingState: 'ACTIVE' | 'REDUCING' | 'HALTED';
  readonly tradingReason: string | null;
  /**
   * New exposure may be taken: reconciled, covered by a confirmed dead-man deadline, the route
   * ready, and the risk gate ACTIVE (not HALTED or REDUCING).
   */
  readonly mayTrade: boolean;
  /** Every gate that refuses new exposure now, with its reason; empty while `mayTrade`. */
  readonly refusing: PermitState['refusing'];
  readonly reconciled: boolean;
  readonly deadman: DeadmanStatus | null;
  readonly unknownIntents: number;
  readonly unresolvedIntents: number;
  readonly account: Account | null;
  readonly positions: readonly Position[];
  readonly openOrders: readonly Order[];
  readonly strategies: readonly KernelStrategyStatus[];
  readonly counters: IntentCounters;
  /** Emulated exits still live (pending, waiting or triggered), with trigger and distance. */
  readonly waitingExits: readonly WaitingExitView[];
}

export interface IntentLatency {
  readonly requestId: string;
  /**
   * From the last ticker of the intent's market received to the placement handed to the venue
   * (the simulation round trip included); null when no ticker had been received.
   */
  readonly tickToPlaceMs: number | null;
  /** The placement request's round trip. */
  readonly placeMs: number;
}
