/**
 * The bot's notifications: one `WebhookChannel` per configured webhook, fed from the kernel's
 * streams, and a daily summary at `daily_summary_at` (UTC) on the clock.
 */
import type { Observable } from 'rxjs';
import type { VenueKeyStatus } from '../../runtime/venue-key.ts';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { NotificationsSection } from './config.ts';
import {
  type NotificationEvent,
  type NotificationSource,
  type NotificationValue,
  subscribeNotificationEvents,
} from './events.ts';
import { createPostJson, type PostJson } from './post.ts';
import { WebhookChannel, type WebhookCounters } from './webhook.ts';

const DAY_MS = 86_400_000;

export interface NotifierOptions {
  readonly section: NotificationsSection;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Default: undici with the section's timeout. */
  readonly post?: PostJson;
  /** The figures of the daily summary (equity, PnL, counts); default none. */
  readonly summary?: () => Readonly<Record<string, NotificationValue>>;
}

/** The next time of day `hhmm` (UTC) strictly after `now`. */
export function nextDailyAt(now: number, hhmm: string): number {
  const [hours, minutes] = hhmm.split(':').map(Number);
  const start = Math.floor(now / DAY_MS) * DAY_MS + ((hours ?? 0) * 60 + (minutes ?? 0)) * 60_000;
  return start > now ? start : start + DAY_MS;
}

export class Notifier {
  private readonly channels: WebhookChannel[];
  private readonly stops: (() => void)[] = [];
  private summaryTimer: TimerHandle | null = null;

  constructor(private readonly options: NotifierOptions) {
    const { section, clock } = options;
    const post = options.post ?? createPostJson(clock, section.timeout_ms);
    this.channels = section.webhooks.map(
      (entry, index) => new WebhookChannel(entry, index, section, clock, post, options.logger),
    );
    if (section.daily_summary_at !== null && this.channels.length > 0) this.scheduleSummary();
  }

  get enabled(): boolean {
    return this.channels.length > 0;
  }

  publish(event: NotificationEvent): void {
    for (const channel of this.channels) channel.publish(event);
  }

  attach(
    source: NotificationSource,
    streamState$?: Observable<string>,
    venueKey$?: Observable<VenueKeyStatus>,
  ): void {
    if (!this.enabled) return;
    this.stops.push(
      subscribeNotificationEvents(
        source,
        this.options.clock,
        (event) => this.publish(event),
        streamState$,
        venueKey$,
      ),
    );
  }

  counts(): WebhookCounters[] {
    return this.channels.map((channel) => channel.counts());
  }

  /**
   * At shutdown: sends what the webhooks hold (the shutdown's own events included) without
   * waiting for batching or backoff, for at most `budgetMs`, then closes. Resolves with the
   * number of events still queued when it gave up (0 when everything went out).
   */
  async drain(budgetMs: number): Promise<number> {
    for (const stop of this.stops.splice(0)) stop();
    const { clock } = this.options;
    let timer: TimerHandle | null = null;
    await Promise.race([
      Promise.all(this.channels.map((channel) => channel.drain())),
      new Promise<void>((resolve) => {
        timer = clock.setTimeout(resolve, budgetMs);
      }),
    ]);
    if (timer !== null) clock.clearTimeout(timer);
    const unsent = this.channels.reduce((sum, channel) => sum + channel.unsent(), 0);
    this.close();
    return unsent;
  }

  close(): void {
    for (const stop of this.stops.splice(0)) stop();
    if (this.summaryTimer !== null) this.options.clock.clearTimeout(this.summaryTimer);
    this.summaryTimer = null;
    for (const channel of this.channels) channel.close();
  }

  private scheduleSummary(): void {
    const { clock, section } = this.options;
    const at = nextDailyAt(clock.now(), section.daily_summary_at ?? '00:00');
    this.summaryTimer = clock.setTimeout(() => {
      const fields = this.options.summary?.() ?? {};
      this.publish({
        kind: 'daily_summary',
        at: clock.now(),
        title: `daily summary: ${Object.entries(fields)
          .map(([key, value]) => `${key} ${String(value)}`)
          .join(', ')}`,
        fields,
      });
      this.scheduleSummary();
    }, at - clock.now());
  }
}

/** The bot's notifier from its config section, or null when no webhook is configured. */
export function notifierOfConfig(
  section: NotificationsSection,
  options: Omit<NotifierOptions, 'section' | 'summary'> & {
    /** The bot's `/status` document, for the daily summary. */
    readonly status: () => {
      readonly tradingState: string;
      readonly counters: { readonly intents: number; readonly fills: number };
      readonly pnl: { readonly equity: string | null; readonly session: string | null };
    } | null;
  },
): Notifier | null {
  if (section.webhooks.length === 0) return null;
  return new Notifier({
    section,
    clock: options.clock,
    logger: options.logger,
    ...(options.post === undefined ? {} : { post: options.post }),
    summary: () => {
      const status = options.status();
      return {
        equity: status?.pnl.equity ?? null,
        pnl_since_start: status?.pnl.session ?? null,
        intents: status?.counters.intents ?? null,
        fills: status?.counters.fills ?? null,
        trading_state: status?.tradingState ?? null,
      };
    },
  });
}
