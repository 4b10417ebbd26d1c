/**
 * Runs the journal's retention in the background: every `intervalMs`, a pass of small steps
 * (each one short transaction of at most `batchRows` rows per table), with a pause between steps
 * so order flow runs in between; after a pass that moved rows, the WAL is checkpointed and the
 * freed pages are given back a few at a time. Nothing here stops the bot: a failed step is
 * reported and the next pass tries again.
 */
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Journal } from './journal.ts';
import type { RetentionPolicy } from './retention.ts';

export interface RetentionRunnerOptions {
  readonly journal: Journal;
  readonly clock: Clock;
  readonly policy: RetentionPolicy;
  /** Between two passes. */
  readonly intervalMs: number;
  /** Between two steps of a pass: order flow runs in between. */
  readonly pauseMs: number;
  /** The ids of orders still live (their intents stay), read once per step. */
  readonly liveOrderIds: () => ReadonlySet<string>;
  /** A pass that moved rows, or a failure. */
  readonly report?: (event: RetentionPassReport | { readonly error: unknown }) => void;
}

export interface RetentionPassReport {
  readonly intents: number;
  readonly orderEvents: number;
  readonly fills: number;
  readonly internalCommands: number;
  readonly steps: number;
  readonly freePagesLeft: number;
  readonly archiveFile: string | null;
}

/** Steps in one pass at most; the rest waits for the next pass. */
const MAX_STEPS_PER_PASS = 10_000;
/** Pages given back per vacuum step. */
const RECLAIM_PAGES_PER_STEP = 256;
/** Vacuum steps after one pass at most. */
const MAX_RECLAIM_STEPS = 1_000;

export class RetentionRunner {
  private timer: TimerHandle | undefined;
  private running: Promise<RetentionPassReport> | null = null;
  private stopped = false;

  constructor(private readonly options: RetentionRunnerOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  /** Stops scheduling; a pass under way ends after its current step. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One pass now (a test, or the timer). Passes never overlap. */
  runPass(): Promise<RetentionPassReport> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimeout(() => {
      this.runPass()
        .then((report) => {
          if (report.steps > 0 && this.moved(report)) this.options.report?.(report);
        })
        .catch((error: unknown) => this.options.report?.({ error }))
        .finally(() => this.schedule());
    }, this.options.intervalMs);
  }

  private moved(report: RetentionPassReport): boolean {
    return report.intents + report.orderEvents + report.fills + report.internalCommands > 0;
  }

  private async pass(): Promise<RetentionPassReport> {
    const { journal, policy, liveOrderIds } = this.options;
    const totals = { intents: 0, orderEvents: 0, fills: 0, internalCommands: 0 };
    let steps = 0;
    let archiveFile: string | null = null;
    while (!this.stopped && journal.isOpen && steps < MAX_STEPS_PER_PASS) {
      const live = liveOrderIds();
      const step = journal.pruneStep(policy, (orderId) => live.has(orderId));
      steps += 1;
      totals.intents += step.intents;
      totals.orderEvents += step.orderEvents;
      totals.fills += step.fills;
      totals.internalCommands += step.internalCommands;
      archiveFile = step.archiveFile ?? archiveFile;
      if (step.done) break;
      await this.pause();
    }
    journal.retention.flushManifest();
    let freePagesLeft = 0;
    const moved = totals.intents + totals.orderEvents + totals.fills + totals.internalCommands;
    if (moved > 0 && journal.isOpen && !this.stopped) {
      journal.retention.checkpoint();
      // A journal made before incremental auto-vacuum reuses its free pages instead.
      const reclaims = journal.retention.reclaimsSpace();
      for (let reclaim = 0; reclaims && reclaim < MAX_RECLAIM_STEPS; reclaim++) {
        if (this.stopped || !journal.isOpen) break;
        freePagesLeft = journal.retention.reclaim(RECLAIM_PAGES_PER_STEP);
        if (freePagesLeft === 0) break;
        await this.pause();
      }
      if (journal.isOpen) journal.retention.checkpoint();
    }
    return { ...totals, steps, freePagesLeft, archiveFile };
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => {
      this.options.clock.setTimeout(resolve, this.options.pauseMs);
    });
  }
}
