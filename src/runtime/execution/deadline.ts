/**
 * A venue call that gives up waiting after a deadline on the injected clock. The call's own
 * timeout belongs to the venue; this one keeps a hung promise from holding the executor's lane
 * or a heartbeat forever. Giving up is `REQUEST_TIMEOUT`: for a mutation, an unknown outcome.
 */
import type { Clock } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';

export interface DeadlineOptions {
  /**
   * Give the call a signal that aborts when the deadline passes (for a venue whose transport
   * stops on it, `ExecutionVenue.abortable`). Otherwise the call gets none: a signal costs more
   * than an in-process venue's whole answer, and giving up is this timer's either way.
   */
  readonly abortable?: boolean;
}

export function withDeadline<T>(
  clock: Clock,
  timeoutMs: number | null,
  call: (signal: AbortSignal | undefined) => Promise<T>,
  options: DeadlineOptions = {},
): Promise<T> {
  const controller = options.abortable === true ? new AbortController() : null;
  if (timeoutMs === null) return call(controller?.signal);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = clock.setTimeout(() => {
      if (settled) return;
      settled = true;
      controller?.abort();
      reject(
        new PaperbotError('REQUEST_TIMEOUT', `no answer within ${timeoutMs} ms`, {
          details: { timeoutMs },
        }),
      );
    }, timeoutMs);
    let pending: Promise<T>;
    try {
      pending = call(controller?.signal);
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => {
        if (settled) return;
        settled = true;
        clock.clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clock.clearTimeout(timer);
        reject(error);
      },
    );
  });
}
