/**
 * The bot's log lines for what tolerant reading met (src/client/reading-monitor.ts): a field
 * or enum value the project does not know, once per shape and field (value); an item left out
 * of a list and an answer refused, each naming its paths, bounded so that a broken service
 * cannot flood the log (the first 20, then every 100th, with the count).
 */
import { type Logger, withFields } from '../../core/logger.ts';
import type { Subscription } from 'rxjs';
import type { ReadingMonitor, ReadingNotice } from '../../client/index.ts';

const LOGGED_IN_FULL = 20;
const THEN_EVERY = 100;

function whereText(notice: {
  readonly where: string;
  readonly httpStatus: number | null;
  readonly serverRequestId: string | null;
}): string {
  const parts: string[] = [];
  if (notice.httpStatus !== null) parts.push(`HTTP ${notice.httpStatus}`);
  if (notice.serverRequestId !== null) parts.push(`request ${notice.serverRequestId}`);
  return parts.length === 0 ? notice.where : `${notice.where} (${parts.join(', ')})`;
}

export function logReadingNotices(monitor: ReadingMonitor, logger: Logger): Subscription {
  const log = withFields(logger, { component: 'venue' });
  let problems = 0;
  const bounded = (): boolean => {
    problems += 1;
    return problems <= LOGGED_IN_FULL || problems % THEN_EVERY === 0;
  };
  return monitor.notices$.subscribe((notice: ReadingNotice) => {
    switch (notice.kind) {
      case 'unknown_field':
        if (!notice.first) return;
        log.warn(
          `the venue sent a field the project does not know${monitor.mode === 'tolerant' ? ', kept as sent' : ''}: ${notice.shape}.${notice.field} (${notice.where}, ${notice.path})`,
          {
            event: 'venue.unknown_field',
            shape: notice.shape,
            field: notice.field,
            path: notice.path,
            where: notice.where,
          },
        );
        return;
      case 'unknown_value':
        if (!notice.first) return;
        log.warn(
          `the venue sent ${notice.shape}.${notice.field} '${notice.value}', a value the project does not know; ${
            notice.meaning === null ? 'kept as sent' : `read as '${notice.meaning}'`
          } (${notice.where}, ${notice.path})`,
          {
            event: 'venue.unknown_value',
            shape: notice.shape,
            field: notice.field,
            value: notice.value,
            meaning: notice.meaning,
            path: notice.path,
            where: notice.where,
          },
        );
        return;
      case 'skipped_item':
        if (!bounded()) return;
        log.warn(
          `${whereText(notice)}: ${notice.path} breaks the interface and was left out, the other items were applied: ${notice.problem}`,
          {
            event: 'venue.item_left_out',
            path: notice.path,
            problem: notice.problem,
            count: problems,
          },
        );
        return;
      case 'refused':
        if (!bounded()) return;
        log.warn(`refused: ${notice.problem}`, {
          event: 'venue.refused',
          where: notice.where,
          httpStatus: notice.httpStatus,
          serverRequestId: notice.serverRequestId,
          count: problems,
        });
        return;
    }
  });
}
