/**
 * The bodies sent to webhooks: paperbot's own JSON, or Slack's (`{text}`) and Discord's
 * (`{content}`, at most 2000 characters) incoming-webhook shapes, one line per event.
 */
import { isoTimestamp } from '../../core/clock.ts';
import type { WebhookEntry } from './config.ts';
import type { NotificationEvent } from './events.ts';

const DISCORD_LIMIT = 2_000;
const SLACK_LIMIT = 3_000;

function lines(events: readonly NotificationEvent[], dropped: number): string[] {
  const out = events.map((event) => `${isoTimestamp(event.at).slice(11, 19)} ${event.title}`);
  if (dropped > 0) out.push(`(${dropped} more events were dropped: too many to send)`);
  return out;
}

function capped(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 2)} …`;
}

export function webhookBody(
  format: WebhookEntry['format'],
  events: readonly NotificationEvent[],
  dropped: number,
): unknown {
  switch (format) {
    case 'json':
      return {
        source: 'paperbot',
        dropped,
        events: events.map((event) => ({
          kind: event.kind,
          at: isoTimestamp(event.at),
          title: event.title,
          fields: event.fields,
        })),
      };
    case 'slack':
      return { text: capped(['paperbot', ...lines(events, dropped)].join('\n'), SLACK_LIMIT) };
    case 'discord':
      return {
        username: 'paperbot',
        content: capped(lines(events, dropped).join('\n'), DISCORD_LIMIT),
      };
  }
}
