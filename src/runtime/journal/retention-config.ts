/**
 * The `journal.retention` section of the bot's config: how long settled rows stay in the live
 * journal, and whether they are archived or dropped when they leave (`./retention.ts`).
 */
import { z } from 'zod';
import { parseDurationText } from '../../core/duration.ts';
import { RETENTION_MODES } from './retention.ts';

/** A duration: milliseconds as an integer, or a string such as `500ms`, `30s`, `10m`, `12h`, `7d`. */
export const DurationMs = z.union([z.int().min(1), z.string()]).transform((value, context) => {
  if (typeof value === 'number') return value;
  const ms = parseDurationText(value);
  if (ms === null || ms <= 0) {
    context.addIssue({
      code: 'custom',
      message: `"${value}" is not a duration (a positive number with ms, s, m, h or d: 7d, 30m)`,
    });
    return z.NEVER;
  }
  return ms;
});

export const JournalRetentionSection = z.strictObject({
  /** false: every row stays (the journal grows with uptime). */
  enabled: z.boolean().default(true),
  /** Settled rows older than this leave the live journal. */
  window: DurationMs.default(7 * 86_400_000),
  /** `archive`: into `<journal>.archive/` (one SQLite file per UTC day and a manifest); `drop`: deleted. */
  mode: z.enum(RETENTION_MODES).default('archive'),
  /** null: the journal's path with `.archive` appended. */
  archive_dir: z.string().min(1).nullable().default(null),
  /** Rows per table moved in one step (one short transaction). */
  batch_rows: z.int().min(1).max(10_000).default(200),
  /** Between two passes. */
  interval: DurationMs.default(60_000),
  /** Between two steps of a pass, so order flow runs in between. */
  pause: DurationMs.default(20),
});
export type JournalRetentionSection = z.infer<typeof JournalRetentionSection>;
