/**
 * One webhook's delivery: events wait in a bounded queue, are gathered for `batch_ms` into one
 * message of at most `max_batch_events`, at most `max_per_minute` messages a minute, one
 * message in flight at a time. A failed message is tried again after an exponential backoff
 * (`retry_base_ms` doubling up to `retry_max_ms`) up to `max_attempts`, then dropped and
 * counted; events keep gathering meanwhile (the oldest dropped beyond `queue_size`). A webhook
 * that is down is logged once per `down_log_interval_ms`, not per event, and its URL is never
 * logged (Slack's and Discord's hold a secret): only its host.
 *
 * Publishing is a push onto an array; all sending happens later on the clock's timers, so the
 * trading path never waits for a webhook.
 */
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { NotificationKind, NotificationsSection, WebhookEntry } from './config.ts';
import type { NotificationEvent } from './events.ts';
import { webhookBody } from './format.ts';
import type { PostJson } from './post.ts';

export interface WebhookCounters {
  readonly webhook: string;
  readonly queued: number;
  readonly sentMessages: number;
  readonly sentEvents: number;
  readonly failedAttempts: number;
  readonly droppedMessages: number;
  readonly droppedEvents: number;
  readonly down: boolean;
}

const MINUTE_MS = 60_000;

/** `webhook 1 (hooks.slack.com)`: how a webhook is named in logs and on the dashboard. */
export function webhookLabel(entry: WebhookEntry, index: number): string {
  let host = 'invalid URL';
  try {
    host = new URL(entry.url).host;
  } catch {
    // Checked by the config already; the label stays readable regardless.
  }
  return `webhook ${index + 1} (${host})`;
}

export class WebhookChannel {
  readonly label: string;
  private readonly kinds: ReadonlySet<NotificationKind> | null;
  private queue: NotificationEvent[] = [];
  private timer: TimerHandle | null = null;
  private sending = false;
  private inFlight: Promise<void> = Promise.resolve();
  private inFlightEvents = 0;
  /** Set at shutdown: no more batching waits or retries, what is queued goes out once. */
  private draining = false;
  private wakeBackoff: (() => void) | null = null;
  private closed = false;
  private readonly sentAt: number[] = [];
  private pendingDropped = 0;
  private lastDownLogAt: number | null = null;
  private downSince: number | null = null;
  private failuresSinceLog = 0;
  private counters = {
    sentMessages: 0,
    sentEvents: 0,
    failedAttempts: 0,
    droppedMessages: 0,
    droppedEvents: 0,
  };

  constructor(
    private readonly entry: WebhookEntry,
    index: number,
    private readonly settings: NotificationsSection,
    private readonly clock: Clock,
    private readonly post: PostJson,
    private readonly logger: Logger,
  ) {
    this.label = webhookLabel(entry, index);
    this.kinds = entry.events === undefined ? null : new Set(entry.events);
  }

  /** Queues the event if this webhook wants its kind; never waits. */
  publish(event: NotificationEvent): void {
    if (this.closed || (this.kinds !== null && !this.kinds.has(event.kind))) return;
    this.queue.push(event);
    if (this.queue.length > this.settings.queue_size) {
      this.queue.shift();
      this.pendingDropped += 1;
      this.counters.droppedEvents += 1;
    }
    if (this.timer === null && !this.sending) this.schedule(this.settings.batch_ms);
  }

  counts(): WebhookCounters {
    return {
      webhook: this.label,
      queued: this.queue.length,
      ...this.counters,
      down: this.downSince !== null,
    };
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.wakeBackoff?.();
    // Whatever is still queued or in flight is lost with the process: counted, not silently gone.
    this.counters.droppedEvents += this.unsent();
    this.queue = [];
  }

  /** Events queued or in a message not yet answered. */
  unsent(): number {
    return this.queue.length + this.inFlightEvents;
  }

  /**
   * At shutdown: sends what is queued without waiting for the batch timer, one attempt a
   * message, while the rate limit allows; the caller bounds it in time and then closes. Events
   * still queued at `close` are counted as dropped.
   */
  async drain(): Promise<void> {
    if (this.closed) return;
    this.draining = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    // A message in a backoff wait is tried once more now instead of after the wait.
    this.wakeBackoff?.();
    await this.inFlight;
    while (!this.closed && this.queue.length > 0 && this.rateWait(this.clock.now()) === 0) {
      this.inFlight = this.sendBatch();
      await this.inFlight;
    }
  }

  private schedule(delayMs: number): void {
    if (this.closed || this.draining) return;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, delayMs);
  }

  /** Milliseconds until the rate limit allows another message; 0 when it does now. */
  private rateWait(now: number): number {
    while (this.sentAt.length > 0 && (this.sentAt[0] ?? 0) <= now - MINUTE_MS) this.sentAt.shift();
    if (this.sentAt.length < this.settings.max_per_minute) return 0;
    return (this.sentAt[0] ?? now) + MINUTE_MS - now;
  }

  private async flush(): Promise<void> {
    if (this.closed || this.sending || this.queue.length === 0) return;
    const wait = this.rateWait(this.clock.now());
    if (wait > 0) {
      this.schedule(wait);
      return;
    }
    this.inFlight = this.sendBatch();
    await this.inFlight;
    if (this.queue.length > 0) this.schedule(this.settings.batch_ms);
  }

  /** Sends up to `max_batch_events` queued events as one message. */
  private async sendBatch(): Promise<void> {
    this.sending = true;
    const events = this.queue.splice(0, this.settings.max_batch_events);
    const dropped = this.pendingDropped;
    this.pendingDropped = 0;
    const body = webhookBody(this.entry.format, events, dropped);
    this.inFlightEvents = events.length;
    try {
      // What a message given up held is reported by the next one that gets through.
      if (!(await this.deliver(body, events.length)))
        this.pendingDropped += dropped + events.length;
    } finally {
      this.sending = false;
      this.inFlightEvents = 0;
    }
  }

  /** Sends one message, retrying with backoff; resolves true once sent, false once given up. */
  private async deliver(body: unknown, eventCount: number): Promise<boolean> {
    for (let attempt = 1; attempt <= this.settings.max_attempts; attempt++) {
      if (this.closed) return false;
      this.sentAt.push(this.clock.now());
      const result = await this.post(this.entry.url, body);
      if (result.ok) {
        this.counters.sentMessages += 1;
        this.counters.sentEvents += eventCount;
        // `close` counted the message in flight as lost with the process; it got through.
        if (this.closed) this.counters.droppedEvents -= eventCount;
        if (this.downSince !== null) {
          this.logger.info(`${this.label} answers again`, {
            event: 'notifications.webhook_up',
            webhook: this.label,
            failures: this.failuresSinceLog,
          });
        }
        this.downSince = null;
        this.lastDownLogAt = null;
        this.failuresSinceLog = 0;
        return true;
      }
      this.counters.failedAttempts += 1;
      this.failuresSinceLog += 1;
      this.noteDown(result.error ?? 'failed');
      if (attempt === this.settings.max_attempts || this.draining) break;
      const backoff = Math.min(
        this.settings.retry_base_ms * 2 ** (attempt - 1),
        this.settings.retry_max_ms,
      );
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.clock.clearTimeout(timer);
          this.wakeBackoff = null;
          resolve();
        };
        const timer = this.clock.setTimeout(wake, backoff);
        this.wakeBackoff = wake;
      });
    }
    if (!this.closed) {
      this.counters.droppedMessages += 1;
      this.counters.droppedEvents += eventCount;
    }
    return false;
  }

  private noteDown(reason: string): void {
    const now = this.clock.now();
    this.downSince ??= now;
    if (
      this.lastDownLogAt !== null &&
      now - this.lastDownLogAt < this.settings.down_log_interval_ms
    ) {
      return;
    }
    this.lastDownLogAt = now;
    this.logger.warn(`${this.label} is not answering (${reason}); retrying with backoff`, {
      event: 'notifications.webhook_down',
      webhook: this.label,
      reason,
      failures: this.failuresSinceLog,
      queued: this.queue.length,
    });
    this.failuresSinceLog = 0;
  }
}
