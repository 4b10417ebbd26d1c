/**
 * When an unknown intent is next tried: the backoff of its automatic resolution attempts
 * (`resolutionAttempts`, `resolutionBaseDelayMs`, `resolutionMaxDelayMs`) and one timer per
 * intent on the injected clock. A timer that fires hands the request id to `due`.
 */
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { backoffDelay } from './classify.ts';
import type { ExecutorConfig } from './executor-config.ts';

export class ResolutionTimers {
  private readonly timers = new Map<string, TimerHandle>();
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly config: ExecutorConfig,
    private readonly due: (requestId: string) => void,
  ) {}

  /** When the attempt after `attemptsSoFar` is due; null once the automatic ones are spent. */
  nextAt(attemptsSoFar: number): number | null {
    if (attemptsSoFar >= this.config.resolutionAttempts) return null;
    return (
      this.clock.now() +
      backoffDelay(
        attemptsSoFar,
        this.config.resolutionBaseDelayMs,
        this.config.resolutionMaxDelayMs,
      )
    );
  }

  schedule(requestId: string, at: number): void {
    this.clear(requestId);
    if (this.stopped) return;
    const timer = this.clock.setTimeout(
      () => {
        this.timers.delete(requestId);
        this.due(requestId);
      },
      Math.max(0, at - this.clock.now()),
    );
    this.timers.set(requestId, timer);
  }

  clear(requestId: string): void {
    const timer = this.timers.get(requestId);
    if (timer !== undefined) this.clock.clearTimeout(timer);
    this.timers.delete(requestId);
  }

  /** Clears every timer and schedules no more. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) this.clock.clearTimeout(timer);
    this.timers.clear();
  }
}
