/**
 * Summarises repeated denials in the log. A strategy that keeps emitting while trading is
 * halted (after `paperbot kill`, say) is denied about once a second; one line each would bury
 * everything else. The first denial of a kind (strategy and rules) is logged in full; repeats
 * within the interval that follows are counted and written as one summary line when it ends,
 * on the injected clock. A kind quiet for a whole interval is forgotten, so its next denial is
 * logged in full again.
 */
import type { Clock, TimerHandle } from '../../core/clock.ts';

export const DEFAULT_DENIAL_SUMMARY_INTERVAL_MS = 60_000;
/** Kinds followed at once; beyond it every denial is logged in full (nothing is lost). */
export const MAX_DENIAL_KINDS = 1_000;

export interface DenialKind {
  readonly strategyId: string;
  /** The rules that denied, comma-separated, as the full line names them. */
  readonly rules: string;
}

export interface DenialLogOptions {
  readonly clock: Clock;
  /** Writes a summary line (the gate's logger, at warn). */
  readonly write: (fields: Record<string, unknown>, message: string) => void;
  readonly intervalMs?: number;
}

interface Window {
  readonly kind: DenialKind;
  startedAt: number;
  repeats: number;
  timer: TimerHandle | undefined;
}

export class DenialLog {
  private readonly clock: Clock;
  private readonly write: DenialLogOptions['write'];
  private readonly intervalMs: number;
  private readonly windows = new Map<string, Window>();

  constructor(options: DenialLogOptions) {
    this.clock = options.clock;
    this.write = options.write;
    this.intervalMs = options.intervalMs ?? DEFAULT_DENIAL_SUMMARY_INTERVAL_MS;
  }

  /** Counts a denial; true when it is the first of its kind and should be logged in full. */
  first(kind: DenialKind): boolean {
    const key = `${kind.strategyId}\u0000${kind.rules}`;
    const open = this.windows.get(key);
    if (open !== undefined) {
      open.repeats += 1;
      return false;
    }
    if (this.windows.size >= MAX_DENIAL_KINDS) return true;
    const window: Window = { kind, startedAt: this.clock.now(), repeats: 0, timer: undefined };
    this.windows.set(key, window);
    this.schedule(key, window);
    return true;
  }

  /** Writes what is still counted and stops the timers. */
  dispose(): void {
    for (const window of this.windows.values()) {
      this.clock.clearTimeout(window.timer);
      this.summarise(window);
    }
    this.windows.clear();
  }

  private schedule(key: string, window: Window): void {
    window.timer = this.clock.setTimeout(() => {
      if (window.repeats === 0) {
        this.windows.delete(key);
        return;
      }
      this.summarise(window);
      window.startedAt = this.clock.now();
      window.repeats = 0;
      this.schedule(key, window);
    }, this.intervalMs);
  }

  private summarise(window: Window): void {
    if (window.repeats === 0) return;
    const seconds = Math.round((this.clock.now() - window.startedAt) / 1000);
    this.write(
      {
        event: 'risk.denied_repeated',
        strategyId: window.kind.strategyId,
        rules: window.kind.rules,
        count: window.repeats,
        intervalSeconds: seconds,
      },
      `intent denied ${window.repeats} more ${window.repeats === 1 ? 'time' : 'times'} in the last ${seconds} s by ${window.kind.rules} (strategy ${window.kind.strategyId})`,
    );
  }
}
