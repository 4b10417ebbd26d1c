/**
 * The notifier on virtual time, with a recording sender: the daily summary at its UTC time,
 * each webhook only the kinds it asked for, and nothing sent after close.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.ts';
import { VirtualClock } from '../../src/core/clock.ts';
import { NotificationsSection } from '../../src/cli/notifications/config.ts';
import { Notifier } from '../../src/cli/notifications/notifier.ts';
import type { PostJson } from '../../src/cli/notifications/post.ts';

interface Sent {
  url: string;
  body: unknown;
}

function recordingPost(sent: Sent[]): PostJson {
  return (url, body) => {
    sent.push({ url, body });
    return Promise.resolve({ ok: true, status: 200, error: null });
  };
}

const silent = silentLogger;

async function settle(): Promise<void> {
  for (let n = 0; n < 5; n++) await Promise.resolve();
}

describe('the notifier', () => {
  it('sends the daily summary at its UTC time, to the webhooks that want it', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 5, 23, 0));
    const sent: Sent[] = [];
    const notifier = new Notifier({
      section: NotificationsSection.parse({
        webhooks: [
          { url: 'http://127.0.0.1:1/all', format: 'slack' },
          { url: 'http://127.0.0.1:1/fills', events: ['fill'] },
        ],
        batch_ms: 500,
        daily_summary_at: '23:30',
      }),
      clock,
      logger: silent,
      post: recordingPost(sent),
      summary: () => ({ equity: '10012.5', pnl_since_start: '12.5', fills: 7 }),
    });
    clock.advanceBy(30 * 60_000 - 1);
    await settle();
    expect(sent).toEqual([]);
    clock.advanceBy(1);
    clock.advanceBy(500);
    await settle();
    expect(sent).toEqual([
      {
        url: 'http://127.0.0.1:1/all',
        body: {
          text: 'paperbot\n23:30:00 daily summary: equity 10012.5, pnl_since_start 12.5, fills 7',
        },
      },
    ]);
    // And again a day later.
    clock.advanceBy(86_400_000);
    await settle();
    expect(sent).toHaveLength(2);
    expect(notifier.counts().map((count) => count.sentEvents)).toEqual([2, 0]);

    notifier.close();
    clock.advanceBy(2 * 86_400_000);
    await settle();
    expect(sent).toHaveLength(2);
  });

  it('drains at shutdown within its budget, and says how many events it could not send', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 5, 12, 0));
    const sent: Sent[] = [];
    // The first webhook answers; the second never does (its answer is left pending).
    const post: PostJson = (url, body) => {
      sent.push({ url, body });
      if (url.endsWith('/up')) return Promise.resolve({ ok: true, status: 200, error: null });
      return new Promise(() => undefined);
    };
    const notifier = new Notifier({
      section: NotificationsSection.parse({
        webhooks: [{ url: 'http://127.0.0.1:1/up' }, { url: 'http://127.0.0.1:1/hung' }],
        batch_ms: 60_000,
      }),
      clock,
      logger: silent,
      post,
    });
    for (let n = 1; n <= 3; n++) {
      notifier.publish({ kind: 'error', at: clock.now(), title: `event ${n}`, fields: {} });
    }
    const drained = notifier.drain(2_000);
    await settle();
    // Both were sent at once, the batch timer not waited for; the hung one holds its drain.
    expect(sent.map((message) => message.url)).toEqual([
      'http://127.0.0.1:1/up',
      'http://127.0.0.1:1/hung',
    ]);
    clock.advanceBy(2_000);
    expect(await drained).toBe(3);
    expect(notifier.counts().map((count) => [count.sentEvents, count.droppedEvents])).toEqual([
      [3, 0],
      [0, 3],
    ]);
  });
});
