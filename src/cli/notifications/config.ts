/**
 * The `notifications:` section of the bot config: webhooks that are told about fills,
 * trading-state changes, the kill switch, the dead-man, reconciliation differences, errors, a
 * daily summary, and the venue key (expiring soon, revoked or expired). A webhook's URL may itself be a secret (Slack's and Discord's are): it is
 * never logged, only its host.
 */
import { z } from 'zod';

export const NOTIFICATION_KINDS = [
  'fill',
  'trading_state',
  'kill_switch',
  'deadman',
  'reconciliation',
  'error',
  'daily_summary',
  'venue_key',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

const PositiveInteger = z.int().positive();

export const WebhookEntry = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  /** `json` (paperbot's own body), `slack` (`{text}`) or `discord` (`{content}`). */
  format: z.enum(['json', 'slack', 'discord']).default('json'),
  /** Which events it receives; all when omitted. */
  events: z.array(z.enum(NOTIFICATION_KINDS)).min(1).optional(),
});
export type WebhookEntry = z.infer<typeof WebhookEntry>;

export const NotificationsSection = z.strictObject({
  webhooks: z.array(WebhookEntry).default([]),
  /** Events are gathered this long into one message. */
  batch_ms: PositiveInteger.max(600_000).default(2_000),
  /** Most events in one message; the rest are counted ("and 12 more"). */
  max_batch_events: PositiveInteger.max(500).default(20),
  /** Messages per webhook per minute; beyond it events wait and are batched. */
  max_per_minute: PositiveInteger.max(600).default(20),
  /** Events waiting per webhook; beyond it the oldest are dropped, and counted. */
  queue_size: PositiveInteger.max(100_000).default(1_000),
  /** Whole request, answer included. */
  timeout_ms: PositiveInteger.max(120_000).default(5_000),
  retry_base_ms: PositiveInteger.default(1_000),
  retry_max_ms: PositiveInteger.default(60_000),
  /** Tries of one message before it is dropped (and counted). */
  max_attempts: PositiveInteger.max(100).default(5),
  /** A webhook that is down is logged at most once per this interval. */
  down_log_interval_ms: PositiveInteger.default(300_000),
  /** UTC time of the daily summary (`HH:MM`), or null for none. */
  daily_summary_at: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM, UTC')
    .nullable()
    .default('00:00'),
});
export type NotificationsSection = z.infer<typeof NotificationsSection>;
