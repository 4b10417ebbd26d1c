/**
 * The executor's calls to the venue under its deadline (`callTimeoutMs`): one timer for all of
 * them (`DeadlineQueue`), or none when the deadline is off. A command's send gets an abort
 * signal only when the venue's transport stops on one (`ExecutionVenue.abortable`).
 */
import type { Clock } from '../../core/clock.ts';
import type { ResponseOf } from '../../protocol/index.ts';
import type { CommandEndpoint, ExecutionVenue, PreparedCommand } from '../venue.ts';
import { DeadlineQueue, withDeadline } from './deadline.ts';

export class VenueCalls {
  private readonly deadlines: DeadlineQueue | null;

  constructor(
    readonly venue: ExecutionVenue,
    private readonly clock: Clock,
    callTimeoutMs: number | null,
  ) {
    this.deadlines = callTimeoutMs === null ? null : new DeadlineQueue(clock, callTimeoutMs);
  }

  /** A read (or any call) that gives up at the deadline. */
  call<T>(work: () => Promise<T>): Promise<T> {
    return this.deadlines === null
      ? withDeadline(this.clock, null, work)
      : this.deadlines.run(work);
  }

  /** Sends once, with a signal when the venue's transport stops on one. */
  send<E extends CommandEndpoint>(prepared: PreparedCommand<E>): Promise<ResponseOf<E>> {
    const venue = this.venue;
    const abortable = venue.abortable === true;
    if (this.deadlines === null) {
      return withDeadline(this.clock, null, (signal) => venue.send(prepared, signal), {
        abortable,
      });
    }
    return this.deadlines.run((signal) => venue.send(prepared, signal), abortable);
  }
}
