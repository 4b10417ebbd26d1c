/**
 * The runtime's own mutations (dead-man heartbeat, reconciliation cancels, shutdown cancel-all):
 * each gets a fresh id from a persisted sequence (`pb-<purpose>:<epoch>:<n>`), is journaled with
 * its bytes before it is sent, and its result is journaled after. They are not resent after a
 * restart: a newer heartbeat supersedes an older one, and the next reconciliation re-checks what
 * a cancel was meant to remove.
 */
import type { Clock } from '../../core/clock.ts';
import { isPaperbotError } from '../../core/errors.ts';
import type { ResponseOf } from '../../protocol/index.ts';
import { internalRequestId } from '../intents.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { CommandEndpoint, ExecutionVenue, PreparedCommand, VenueCommandOf } from '../venue.ts';
import { backoffDelay, classifyFailure } from './classify.ts';
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
  readonly journal: IntentJournal;
  readonly clock: Clock;
  /** Give up waiting after this long (the outcome is then unknown); null waits for the venue. */
  readonly timeoutMs: number | null;
}

/** A new internal request id for `purpose`, its command prepared and journaled before sending. */
function journalInternalCommand<E extends CommandEndpoint>(
  context: Pick<InternalCommandContext, 'venue' | 'journal'>,
  purpose: string,
  build: (requestId: string) => VenueCommandOf<E>,
): { readonly requestId: string; readonly prepared: PreparedCommand<E> } {
  const { venue, journal } = context;
  const requestId = internalRequestId(
    purpose,
    journal.epoch,
    journal.takeInternalSequence(purpose),
  );
  const prepared = venue.prepare(build(requestId));
  journal.recordInternalCommand(purpose, requestId, prepared);
  return { requestId, prepared };
}

export async function sendInternalCommand<E extends CommandEndpoint>(
  context: InternalCommandContext,
  purpose: string,
  build: (requestId: string) => VenueCommandOf<E>,
): Promise<InternalCommandResult<E>> {
  const { venue, journal, clock } = context;
  const { requestId, prepared } = journalInternalCommand(context, purpose, build);
  const sentAt = clock.now();
  try {
    const response = await withDeadline(
      clock,
      context.timeoutMs,
      (signal) => venue.send(prepared, signal, context.timeoutMs ?? undefined),
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

/** How hard one of the runtime's own commands is tried before it is given up. */
export interface RetryBudget {
  /** Nothing new is started after this clock time (epoch milliseconds). */
  readonly deadlineAt: number;
  /** Sends and recovery reads of the one command, together, at most. */
  readonly maxAttempts: number;
  /** One send or read waits at most this long (and never past the deadline, see below). */
  readonly requestTimeoutMs: number;
  /** Waits between attempts when the venue names none (Retry-After): base * 2^n, capped. */
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
}

export type RetriedCommandResult<E extends CommandEndpoint> =
  | {
      readonly ok: true;
      readonly requestId: string;
      /** Null when the outcome was recovered by request id rather than answered. */
      readonly response: ResponseOf<E> | null;
      readonly attempts: number;
    }
  | {
      readonly ok: false;
      readonly requestId: string;
      readonly attempts: number;
      readonly kind: 'rejected' | 'unknown';
      readonly code: string;
      readonly message: string;
      /** The venue said trying again would not help (`retryable: false`). */
      readonly final: boolean;
    };

/** The shortest wait a send or read is given even when the deadline has (nearly) passed. */
const MINIMUM_REQUEST_TIMEOUT_MS = 1_000;

function sleep(clock: Clock, delayMs: number): Promise<void> {
  return new Promise((resolve) => {
    clock.setTimeout(resolve, delayMs);
  });
}

function retryAfterOf(error: unknown): number | null {
  if (!isPaperbotError(error)) return null;
  const value = error.details.retryAfterMs;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/**
 * One of the runtime's own commands, tried until it is settled within `budget`, by the
 * interface's Errors rules: after a 429 it waits for Retry-After (the client reads both the
 * seconds and the HTTP-date form), a retryable refusal is sent again, and an answer left unknown
 * (timeout, broken connection, 5xx) is recovered with `GET /v1/requests/{request_id}` first and
 * resent only when the venue never saw it, with the same request id and the same body bytes. A
 * refusal marked `retryable: false` is final. The command is journaled once, before its first
 * byte, and its end once.
 */
export async function sendInternalCommandWithRetries<E extends CommandEndpoint>(
  context: Omit<InternalCommandContext, 'timeoutMs'>,
  purpose: string,
  build: (requestId: string) => VenueCommandOf<E>,
  budget: RetryBudget,
): Promise<RetriedCommandResult<E>> {
  const { venue, journal, clock } = context;
  const { requestId, prepared } = journalInternalCommand(context, purpose, build);
  const timeout = () =>
    Math.max(
      MINIMUM_REQUEST_TIMEOUT_MS,
      Math.min(budget.requestTimeoutMs, budget.deadlineAt - clock.now()),
    );
  const finish = (result: RetriedCommandResult<E>): RetriedCommandResult<E> => {
    if (journal.isOpen) {
      journal.finishInternalCommand(
        requestId,
        result.ok ? 'accepted' : result.kind,
        result.ok
          ? { status: 'accepted', attempts: result.attempts, recovered: result.response === null }
          : { status: result.kind, code: result.code, message: result.message },
      );
    }
    return result;
  };

  let attempts = 0;
  let recovering = false;
  let waitFor: number | null = null;
  let last: { kind: 'rejected' | 'unknown'; code: string; message: string } = {
    kind: 'unknown',
    code: 'NOT_SENT',
    message: 'not sent',
  };
  const giveUp = (final = false) => finish({ ok: false, requestId, attempts, ...last, final });
  for (;;) {
    if (waitFor !== null) {
      const delay = waitFor;
      waitFor = null;
      if (attempts >= budget.maxAttempts || clock.now() + delay >= budget.deadlineAt) {
        return giveUp();
      }
      await sleep(clock, delay);
    }
    const backoff = backoffDelay(attempts, budget.retryBaseDelayMs, budget.retryMaxDelayMs);
    if (recovering) {
      attempts += 1;
      try {
        const status = await withDeadline(clock, timeout(), () => venue.getRequest(requestId));
        if (status.state === 'COMPLETED') {
          return finish({ ok: true, requestId, response: null, attempts });
        }
        // Still being processed: look again later.
        waitFor = backoff;
        continue;
      } catch (error) {
        if (!isPaperbotError(error) || error.code !== 'ORDER_NOT_FOUND') {
          waitFor = backoff;
          continue;
        }
        // The venue never saw it: the same bytes under the same id may go again now.
        recovering = false;
        if (attempts >= budget.maxAttempts) return giveUp();
      }
    }
    attempts += 1;
    try {
      const limit = timeout();
      const response = await withDeadline(
        clock,
        limit,
        (signal) => venue.send(prepared, signal, limit ?? undefined),
        { abortable: venue.abortable === true },
      );
      return finish({ ok: true, requestId, response, attempts });
    } catch (error) {
      const failure = classifyFailure(error);
      last = { kind: failure.kind, code: failure.code, message: failure.message };
      // On 429 the interface says to wait for Retry-After, then try again.
      const retryable =
        isPaperbotError(error) && (error.retryable || error.code === 'RATE_LIMITED');
      const answered = failure.httpStatus !== null;
      // An answer marked not retryable is final, whatever its status; a timeout or a broken
      // connection carries no such mark and is recovered.
      if (answered && !retryable) return giveUp(true);
      if (failure.kind === 'unknown') recovering = true;
      waitFor = retryAfterOf(error) ?? backoff;
    }
  }
}
