/**
 * The runtime's own mutations (dead-man heartbeat, reconciliation cancels, shutdown cancel-all):
 * each gets a fresh id from a persisted sequence (`pb-<purpose>:<epoch>:<n>`), is journaled with
 * its bytes before it is sent, and its result is journaled after. They are not resent after a
 * restart: a newer heartbeat supersedes an older one, and the next reconciliation re-checks what
 * a cancel was meant to remove.
 */
import type { Clock } from '../../core/clock.ts';
import type { ResponseOf } from '../../protocol/index.ts';
import { internalRequestId } from '../intents.ts';
import type { Journal } from '../journal/journal.ts';
import type { CommandEndpoint, ExecutionVenue, VenueCommandOf } from '../venue.ts';
import { classifyFailure } from './classify.ts';
import { withDeadline } from './deadline.ts';

export type InternalCommandResult<E extends CommandEndpoint> =
  | {
      readonly ok: true;
      readonly requestId: string;
      /** Epoch milliseconds just before the bytes were handed to the venue. */
      readonly sentAt: number;
      readonly response: ResponseOf<E>;
    }
  | {
      readonly ok: false;
      readonly requestId: string;
      readonly sentAt: number;
      readonly kind: 'rejected' | 'unknown';
      readonly code: string;
      readonly message: string;
    };

export interface InternalCommandContext {
  readonly venue: ExecutionVenue;
  readonly journal: Journal;
  readonly clock: Clock;
  /** Give up waiting after this long (the outcome is then unknown); null waits for the venue. */
  readonly timeoutMs: number | null;
}

export async function sendInternalCommand<E extends CommandEndpoint>(
  context: InternalCommandContext,
  purpose: string,
  build: (requestId: string) => VenueCommandOf<E>,
): Promise<InternalCommandResult<E>> {
  const { venue, journal, clock } = context;
  const requestId = internalRequestId(
    purpose,
    journal.epoch,
    journal.takeInternalSequence(purpose),
  );
  const prepared = venue.prepare(build(requestId));
  journal.recordInternalCommand(purpose, requestId, prepared);
  const sentAt = clock.now();
  try {
    const response = await withDeadline(
      clock,
      context.timeoutMs,
      (signal) => venue.send(prepared, signal),
      { abortable: venue.abortable === true },
    );
    if (journal.isOpen)
      journal.finishInternalCommand(requestId, 'accepted', {
        status: 'accepted',
      });
    return { ok: true, requestId, sentAt, response };
  } catch (error) {
    const failure = classifyFailure(error);
    if (journal.isOpen) {
      journal.finishInternalCommand(requestId, failure.kind, {
        status: failure.kind,
        code: failure.code,
        message: failure.message,
      });
    }
    return {
      ok: false,
      requestId,
      sentAt,
      kind: failure.kind,
      code: failure.code,
      message: failure.message,
    };
  }
}
