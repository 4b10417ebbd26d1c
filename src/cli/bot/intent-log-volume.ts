/**
 * How many intent lines a long run writes at info: up to `maxPerMinute` in each minute of the
 * clock, then the rest of that minute at debug (an unknown outcome stays a warning and a fill
 * line stays at info, whatever the rate), so a month of logs at info stays readable; and a summary line every `summaryEveryMs`
 * (an hour by default) with what the period brought, the lines moved to debug included.
 */
import type { Logger } from '../../core/logger.ts';
import type { Clock, TimerHandle } from '../../core/clock.ts';

export type IntentLineLevel = 'info' | 'warn' | 'debug';

export interface IntentLogVolumeOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Intent lines per minute at their own level; null: no limit. */
  readonly maxPerMinute: number | null;
  readonly summaryEveryMs: number;
}

const MINUTE_MS = 60_000;

export class IntentLogVolume {
  private minute = -1;
  private linesThisMinute = 0;
  private readonly period = new Map<string, number>();
  private demoted = 0;
  private fills = 0;
  private timer: TimerHandle | undefined;

  constructor(private readonly options: IntentLogVolumeOptions) {}

  /** Starts the summary line; returns its stop. */
  start(): () => void {
    this.timer = this.options.clock.setInterval(
      () => this.summarize(),
      this.options.summaryEveryMs,
    );
    return () => this.options.clock.clearInterval(this.timer);
  }

  /** The level of one intent line (`kind`: the outcome, or `fill`) wanted at `level`. */
  levelOf(kind: string, level: IntentLineLevel): IntentLineLevel {
    if (kind === 'fill') this.fills += 1;
    else this.period.set(kind, (this.period.get(kind) ?? 0) + 1);
    // Fill lines are the account's money, not intent lines: they stay (and so does an unknown).
    if (level === 'debug' || kind === 'unknown' || kind === 'fill') return level;
    if (this.options.maxPerMinute === null) return level;
    const minute = Math.floor(this.options.clock.now() / MINUTE_MS);
    if (minute !== this.minute) {
      this.minute = minute;
      this.linesThisMinute = 0;
    }
    this.linesThisMinute += 1;
    if (this.linesThisMinute <= this.options.maxPerMinute) return level;
    this.demoted += 1;
    return 'debug';
  }

  /** Logs the period's summary at info and starts a new period. */
  summarize(): void {
    const outcomes = Object.fromEntries(this.period);
    const intents = [...this.period.values()].reduce((sum, count) => sum + count, 0);
    const minutes = Math.round(this.options.summaryEveryMs / MINUTE_MS);
    this.options.logger.info(
      `last ${minutes} min: ${intents} intents (${Object.entries(outcomes)
        .map(([outcome, count]) => `${count} ${outcome}`)
        .join(', ')}), ${this.fills} fills; ${this.demoted} intent lines at debug`,
      {
        event: 'bot.summary',
        period_minutes: minutes,
        intents,
        outcomes,
        fills: this.fills,
        intent_lines_at_debug: this.demoted,
      },
    );
    this.period.clear();
    this.fills = 0;
    this.demoted = 0;
  }
}
