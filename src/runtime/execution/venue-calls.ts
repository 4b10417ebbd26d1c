/**
 * The executor's calls to the venue under its deadline (`callTimeoutMs`): one timer for all of
 * them (`DeadlineQueue`), or none when the deadline is off or the venue cannot hang
 * (`ExecutionVenue.cannotHang`). A command's send gets an abort signal only when the venue's
 * transport stops on one (`ExecutionVenue.abortable`).
 */
import type { Clock } from '../../core/clock.ts';
import type { ResponseOf } from '../../protocol/index.ts';
import type { CommandEndpoint, ExecutionVenue, PreparedCommand } from '../venue.ts';
import { DeadlineQueue } from './deadline.ts';

export class VenueCalls {
  private readonly deadlines: DeadlineQueue | null;

  constructor(
    readonly venue: ExecutionVenue,
    clock: Clock,
    callTimeoutMs: number | null,
  ) {
    this.deadlines =
      callTimeoutMs === null || venue.cannotHang === true
        ? null
        : new DeadlineQueue(clock, callTimeoutMs);
  }

  /** A read (or any call) that gives up at the deadline (none for a venue that cannot hang). */
  call<T>(work: () => Promise<T>): Promise<T> {
    if (this.deadlines !== null) return this.deadlines.run(work);
    try {
      return work();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Sends once, with a signal when the venue's transport stops on one. */
  send<E extends CommandEndpoint>(prepared: PreparedCommand<E>): Promise<ResponseOf<E>> {
    const venue = this.venue;
    if (this.deadlines !== null) return this.deadlines.send(venue, prepared, venue.abortable);
    // No deadline of ours, so no signal that would abort on one.
    try {
      return venue.send(prepared, undefined);
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
