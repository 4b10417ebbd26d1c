/**
 * The bot's side of journal retention: starts the background runner with the configured policy
 * (`journal.retention`), reads live orders from the kernel, and logs each pass that moved rows.
 * Also the embedded emulator's store size, for the metrics.
 */
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from '../../core/logger.ts';
import type { Clock } from '../../core/clock.ts';
import { DATABASE_FILE } from '../../emulator/index.ts';
import type { Journal } from '../../runtime/journal/index.ts';
import type { JournalRetentionSection } from '../../runtime/journal/retention-config.ts';
import { RetentionRunner } from '../../runtime/journal/retention-runner.ts';

export interface JournalRetentionOptions {
  readonly journal: Journal;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly settings: JournalRetentionSection;
  readonly liveOrderIds: () => readonly string[];
}

/** Starts retention (unless disabled); returns its stop. */
export function startJournalRetention(options: JournalRetentionOptions): () => void {
  const { settings, journal, logger } = options;
  if (!settings.enabled) return () => undefined;
  const runner = new RetentionRunner({
    journal,
    clock: options.clock,
    policy: {
      windowMs: settings.window,
      mode: settings.mode,
      archiveDir: resolve(settings.archive_dir ?? `${journal.path}.archive`),
      batchRows: settings.batch_rows,
    },
    intervalMs: settings.interval,
    pauseMs: settings.pause,
    liveOrderIds: () => new Set(options.liveOrderIds()),
    report: (event) => {
      if ('error' in event) {
        logger.warn('journal retention pass failed', {
          event: 'journal.retention_failed',
          err: event.error,
        });
        return;
      }
      logger.info(
        `journal retention: ${event.intents} intents, ${event.orderEvents} order events, ${event.fills} fills ${settings.mode === 'archive' ? 'archived' : 'dropped'}`,
        {
          event: 'journal.retention',
          mode: settings.mode,
          intents: event.intents,
          order_events: event.orderEvents,
          fills: event.fills,
          internal_commands: event.internalCommands,
          steps: event.steps,
          archive: event.archiveFile,
        },
      );
    },
  });
  runner.start();
  return () => {
    void runner.stop();
  };
}

/** The embedded emulator's store files in `dataDir`, bytes by file (`main`, `wal`). */
export function storeFileSizes(dataDir: string): Readonly<Record<string, number>> {
  const size = (path: string) => {
    try {
      return statSync(path).size;
    } catch {
      return 0;
    }
  };
  const main = join(dataDir, DATABASE_FILE);
  return { main: size(main), wal: size(`${main}-wal`) };
}
