/**
 * The kernel's measurement of placements, as an interceptor of the venue's `send`: the time a
 * placement's bytes were handed over and the time its answer (or failure) came back, noted on
 * the clock for the tick-to-place latency. Other commands, and every argument, pass unchanged.
 */
import type { Clock } from '../../core/clock.ts';
import type { SendInterceptor, VenueSend } from '../venue-send.ts';

export interface PlacementTiming {
  readonly requestId: string;
  /** Clock time the placement was handed to the venue. */
  readonly sentAt: number;
  /** Clock time its answer (or failure) came back. */
  readonly answeredAt: number;
}

export function measurePlacements(
  clock: Clock,
  onPlacement: (timing: PlacementTiming) => void,
): SendInterceptor {
  /** The callback noting a placement's timing (a function made here: cheaper under tsx). */
  const noter = (requestId: string, sentAt: number) => (): void =>
    onPlacement({ requestId, sentAt, answeredAt: clock.now() });
  return (next: VenueSend): VenueSend =>
    (prepared, signal, timeoutMs) => {
      if (prepared.endpoint !== 'placeOrder') return next(prepared, signal, timeoutMs);
      const sentAt = clock.now();
      const answer = next(prepared, signal, timeoutMs);
      // One reaction beside the caller's, registered first, so it runs before the caller sees
      // the answer: no second promise to chain the answer through.
      const noted = noter(prepared.requestId, sentAt);
      answer.then(noted, noted);
      return answer;
    };
}
