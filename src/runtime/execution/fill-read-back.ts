/**
 * The fill read-back the journal owes after a gap in the private sequence (or an event that
 * broke its schema): GET /v1/fills down to the newest fill known when the gap was found, each
 * fill applied once by `fill_id`. Up to three rounds, for requests made while one was read; a
 * failure leaves the read-back owed, for the next reconciliation. The order tracker runs it.
 */
import type { Clock } from '../../core/clock.ts';
import { isPaperbotError } from '../../core/errors.ts';
import type { Fill } from '../../protocol/index.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { FillReadBack, PrivateStreamFeed } from '../venue.ts';
import { withDeadline } from './deadline.ts';
import type { Logger } from '../../core/logger.ts';

export interface OwedFillsReading {
  readonly journal: IntentJournal;
  readonly feed: PrivateStreamFeed;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly readTimeoutMs: number | null;
  readonly maximumFills: number;
  /** False once the reader stopped: what was read is then not applied. */
  readonly running: () => boolean;
  /** Applies a fill read back; true when it was new. */
  readonly apply: (fill: Fill) => boolean;
}

/** Reads the owed fills back; true once none is owed. */
export async function readOwedFills(reading: OwedFillsReading): Promise<boolean> {
  const { journal, logger } = reading;
  for (let round = 0; round < 3; round++) {
    const owed = journal.pendingFillReadBack();
    if (owed === null) return true;
    let result: FillReadBack;
    try {
      result = await withDeadline(reading.clock, reading.readTimeoutMs, () =>
        reading.feed.readFillsBack({
          stopFillId: owed.stopFillId,
          stopOccurredAt: owed.stopOccurredAt,
          maximumFills: reading.maximumFills,
        }),
      );
    } catch (error) {
      logger.warn('fill read-back failed; retried at the next reconciliation', {
        code: isPaperbotError(error) ? error.code : 'UNEXPECTED_ERROR',
        reason: owed.reason,
      });
      return false;
    }
    if (!reading.running() || !journal.isOpen) return false;
    let added = 0;
    for (const fill of result.fills) {
      if (reading.apply(fill)) added += 1;
    }
    logger[result.complete ? 'info' : 'warn'](
      result.complete
        ? 'fills read back over REST'
        : 'fills read back over REST up to the limit; older ones were not reached',
      {
        reason: owed.reason,
        read: result.fills.length,
        added,
        stopFillId: owed.stopFillId,
      },
    );
    if (journal.finishFillReadBack(owed.generation)) return true;
  }
  return journal.pendingFillReadBack() === null;
}
