/**
 * Webhook delivery against a receiver on a real loopback port, on virtual time: a burst is
 * batched and rate-limited without losing or repeating an event; a receiver that is down is
 * retried with backoff, logged once per interval, and publishing never waits for it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/core/logger.ts';
import { VirtualClock } from '../../src/core/clock.ts';
import { NotificationsSection } from '../../src/cli/notifications/config.ts';
import { fillEvent, type NotificationEvent } from '../../src/cli/notifications/events.ts';
import {
  createPostJson,
  type PostJson,
  type PostResult,
} from '../../src/cli/notifications/post.ts';
import { WebhookChannel } from '../../src/cli/notifications/webhook.ts';
import { delay, type Receiver, startReceiver, until } from './receiver.ts';

const receivers: Receiver[] = [];
const channels: WebhookChannel[] = [];
afterEach(async () => {
  for (const channel of channels.splice(0)) channel.close();
  for (const receiver of receivers.splice(0)) await receiver.close();
});

function fill(n: number, at: number): NotificationEvent {
  return fillEvent(
    {
      fill_id: `fill-${n}`,
      market_id: 'BTC-PERP',
      route_id: 'r',
      side: 'buy',
      quantity: '0.001',
      price: '64000',
      fee: '0.01',
      notional: '64',
      order_id: `order-${n}`,
      is_maker: true,
      occurred_at: new Date(at).toISOString(),
    },
    at,
  );
}

class Logs {
  readonly warn: { fields: Record<string, unknown>; message: string }[] = [];
  readonly info: { fields: Record<string, unknown>; message: string }[] = [];
  readonly logger: Logger = {
    warn: (message, fields) => this.warn.push({ fields: { ...fields }, message }),
    info: (message, fields) => this.info.push({ fields: { ...fields }, message }),
    debug: (message) => {
      throw new Error(`unexpected debug line: ${message}`);
    },
    error: (message) => {
      throw new Error(`unexpected error line: ${message}`);
    },
  };
}

async function setup(settings: Record<string, unknown>) {
  const receiver = await startReceiver();
  receivers.push(receiver);
  const clock = new VirtualClock(Date.UTC(2026, 0, 5, 12));
  const section = NotificationsSection.parse({ webhooks: [{ url: receiver.url }], ...settings });
  const logs = new Logs();
  const entry = section.webhooks[0];
  if (entry === undefined) throw new Error('no webhook');
  const channel = new WebhookChannel(
    entry,
    0,
    section,
    clock,
    createPostJson(clock, section.timeout_ms),
    logs.logger,
  );
  channels.push(channel);
  return { receiver, clock, channel, logs };
}

/** Moves virtual time forward in steps, letting real I/O finish between them. */
async function advance(clock: VirtualClock, totalMs: number, stepMs = 250): Promise<void> {
  for (let moved = 0; moved < totalMs; moved += stepMs) {
    clock.advanceBy(Math.min(stepMs, totalMs - moved));
    await delay(2);
  }
}

function eventsOf(body: unknown): { fields: { fill_id: string } }[] {
  return (body as { events: { fields: { fill_id: string } }[] }).events;
}

describe('webhook delivery', () => {
  it('batches a burst, keeps to the rate limit, and loses or repeats nothing', async () => {
    const { receiver, clock, channel } = await setup({
      batch_ms: 1_000,
      max_batch_events: 50,
      max_per_minute: 3,
    });
    for (let n = 1; n <= 200; n++) channel.publish(fill(n, clock.now()));
    // Publishing only queued them: nothing was sent before the clock moved.
    await delay(20);
    expect(receiver.requests).toBe(0);
    expect(channel.counts().queued).toBe(200);

    await advance(clock, 1_000);
    await until('the first message', () => receiver.bodies.length === 1);
    await advance(clock, 30_000);
    // Three messages of 50 within the minute, then the rate limit holds the rest.
    expect(receiver.bodies.map((body) => eventsOf(body).length)).toEqual([50, 50, 50]);
    await advance(clock, 31_000);
    await until('the fourth message', () => receiver.bodies.length === 4);
    const ids = receiver.bodies.flatMap((body) => eventsOf(body).map((e) => e.fields.fill_id));
    expect(ids).toEqual(Array.from({ length: 200 }, (_, index) => `fill-${index + 1}`));
    expect(channel.counts()).toMatchObject({ sentMessages: 4, sentEvents: 200, droppedEvents: 0 });
  });

  it('retries a receiver that is down with backoff, logs it once per interval, never blocks', async () => {
    const { receiver, clock, channel, logs } = await setup({
      batch_ms: 1_000,
      retry_base_ms: 1_000,
      retry_max_ms: 4_000,
      max_attempts: 4,
      queue_size: 500,
      down_log_interval_ms: 60_000,
    });
    receiver.status = 503;
    channel.publish(fill(1, clock.now()));
    // Attempts at 1 s, then after 1, 2 and 4 s of backoff: four in all, then the message is dropped.
    await advance(clock, 1_000);
    await until('the first attempt', () => channel.counts().failedAttempts === 1);
    await advance(clock, 999);
    expect(receiver.requests).toBe(1);
    await advance(clock, 1);
    await until('the second attempt', () => channel.counts().failedAttempts === 2);
    await advance(clock, 2_000);
    await until('the third attempt', () => channel.counts().failedAttempts === 3);
    await advance(clock, 4_000);
    await until('the fourth attempt', () => channel.counts().failedAttempts === 4);
    await advance(clock, 20_000);
    expect(receiver.requests).toBe(4);
    expect(channel.counts()).toMatchObject({ failedAttempts: 4, droppedMessages: 1, down: true });
    // Four failures, one line.
    expect(logs.warn).toHaveLength(1);
    expect(logs.warn[0]?.message).toContain('webhook 1 (127.0.0.1:');
    expect(JSON.stringify(logs.warn)).not.toContain('/hook');

    // A flood while it is down: publishing stays a push, the queue stays bounded.
    for (let n = 2; n <= 5_001; n++) channel.publish(fill(n, clock.now()));
    expect(channel.counts().queued).toBeLessThanOrEqual(500);
    expect(channel.counts().droppedEvents).toBeGreaterThanOrEqual(4_500);
    // Two minutes more of failures: at most one line per interval.
    await advance(clock, 120_000, 1_000);
    expect(logs.warn.length).toBeGreaterThanOrEqual(2);
    expect(logs.warn.length).toBeLessThanOrEqual(3);

    // Back up: the next message arrives, says how many were dropped, and the recovery is logged.
    receiver.status = 200;
    await advance(clock, 10_000, 500);
    await until('a message after the recovery', () => receiver.bodies.length > 0);
    const first = receiver.bodies[0] as { dropped: number; events: unknown[] };
    expect(first.dropped).toBe(channel.counts().droppedEvents);
    expect(logs.info.some((line) => line.message.includes('answers again'))).toBe(true);
  });

  it('counts a refused connection as a failed attempt', async () => {
    const { receiver, clock, channel, logs } = await setup({
      batch_ms: 100,
      timeout_ms: 2_000,
      max_attempts: 1,
    });
    await receiver.close();
    receivers.splice(0);
    channel.publish(fill(1, clock.now()));
    await advance(clock, 100, 100);
    await until('the refusal', () => channel.counts().failedAttempts === 1);
    expect(channel.counts().droppedMessages).toBe(1);
    expect(logs.warn[0]?.fields.reason).toBe('ECONNREFUSED');
  });

  it('gives up waiting for an answer at the timeout, on the clock', async () => {
    const { receiver, clock, channel, logs } = await setup({
      batch_ms: 100,
      timeout_ms: 2_000,
      max_attempts: 1,
    });
    receiver.status = 0;
    channel.publish(fill(1, clock.now()));
    await advance(clock, 100, 100);
    await until('the request', () => receiver.requests === 1);
    await advance(clock, 1_900, 100);
    expect(channel.counts().failedAttempts).toBe(0);
    await advance(clock, 200, 100);
    await until('the timeout', () => channel.counts().failedAttempts === 1);
    expect(logs.warn[0]?.fields.reason).toBe('no answer within 2000 ms');
  });

  it('sends what is queued at shutdown without waiting for the batch timer', async () => {
    const { receiver, clock, channel } = await setup({
      batch_ms: 60_000,
      max_batch_events: 50,
      max_per_minute: 10,
    });
    for (let n = 1; n <= 120; n++) channel.publish(fill(n, clock.now()));
    // The virtual clock does not move: only the drain can send them.
    await channel.drain();
    const ids = receiver.bodies.flatMap((body) => eventsOf(body).map((e) => e.fields.fill_id));
    expect(ids).toEqual(Array.from({ length: 120 }, (_, index) => `fill-${index + 1}`));
    expect(receiver.bodies.map((body) => eventsOf(body).length)).toEqual([50, 50, 20]);
    expect(channel.counts()).toMatchObject({ queued: 0, sentEvents: 120, droppedEvents: 0 });
  });

  it('at shutdown, tries a message in backoff once more at once, and counts what it loses', async () => {
    const { receiver, clock, channel } = await setup({
      batch_ms: 100,
      retry_base_ms: 30_000,
      retry_max_ms: 30_000,
      max_attempts: 5,
      max_per_minute: 2,
    });
    receiver.status = 503;
    channel.publish(fill(1, clock.now()));
    await advance(clock, 100, 100);
    await until('the first attempt', () => channel.counts().failedAttempts === 1);
    for (let n = 2; n <= 4; n++) channel.publish(fill(n, clock.now()));
    // Without moving the clock: the message waiting 30 s of backoff is tried again now, once.
    receiver.status = 200;
    await channel.drain();
    expect(receiver.requests).toBe(2);
    expect(eventsOf(receiver.bodies[0]).map((e) => e.fields.fill_id)).toEqual(['fill-1']);
    // The rate limit (2 a minute) is spent: the three events left are counted at close.
    expect(channel.counts().queued).toBe(3);
    channel.close();
    expect(channel.counts()).toMatchObject({ queued: 0, droppedEvents: 3 });
  });

  it('counts a message answered after close as sent, not also as dropped', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 5, 12));
    const section = NotificationsSection.parse({
      webhooks: [{ url: 'http://127.0.0.1:9/hook' }],
      batch_ms: 100,
    });
    const entry = section.webhooks[0];
    if (entry === undefined) throw new Error('no webhook');
    // A fake post answered by hand: the answer arrives after the channel is closed.
    const answers: ((result: PostResult) => void)[] = [];
    const post: PostJson = () => new Promise<PostResult>((resolve) => answers.push(resolve));
    const channel = new WebhookChannel(entry, 0, section, clock, post, new Logs().logger);
    channels.push(channel);
    channel.publish(fill(1, clock.now()));
    channel.publish(fill(2, clock.now()));
    clock.advanceBy(100);
    await until('the message in flight', () => answers.length === 1);
    channel.close();
    expect(channel.counts()).toMatchObject({ droppedEvents: 2, sentEvents: 0 });
    answers[0]!({ ok: true, status: 200, error: null });
    await until('the answer', () => channel.counts().sentEvents === 2);
    expect(channel.counts()).toMatchObject({ sentMessages: 1, droppedEvents: 0, queued: 0 });
  });
});
