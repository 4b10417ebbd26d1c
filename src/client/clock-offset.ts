/**
 * The offset between the local clock and the service's, estimated from GET /v1/time. The
 * service's reading is taken to be at the midpoint of the round trip, so a symmetric delay
 * cancels out and the error is at most half the round trip.
 */
import { VenueError } from './errors.ts';

/** Contract section 1: the service accepts timestamps within +-10 s of its time by default. */
export const DEFAULT_SIGNATURE_WINDOW_MS = 10_000;

export interface ClockOffsetEstimate {
  /** Service time minus local time: add it to the local clock to get service time. */
  readonly offsetMs: number;
  readonly roundTripMs: number;
  /** Local clock time of the estimate. */
  readonly measuredAtMs: number;
}

export function estimateClockOffset(
  sentAtMs: number,
  receivedAtMs: number,
  serverEpochMs: number,
): ClockOffsetEstimate {
  const roundTripMs = Math.max(0, receivedAtMs - sentAtMs);
  const midpoint = sentAtMs + roundTripMs / 2;
  return {
    offsetMs: Math.round(serverEpochMs - midpoint),
    roundTripMs,
    measuredAtMs: receivedAtMs,
  };
}

/**
 * Refuses to sign when the estimated offset is more than `maxOffsetMs` (half the signature
 * window by default): a timestamp corrected by a wrong estimate could fall outside the window,
 * and a clock that far off means something is wrong that should be fixed, not papered over.
 */
export function assertClockUsable(estimate: ClockOffsetEstimate, maxOffsetMs: number): void {
  if (Math.abs(estimate.offsetMs) <= maxOffsetMs) return;
  throw new VenueError(
    'CLOCK_SKEW',
    `the local clock is ${Math.abs(estimate.offsetMs)} ms ${estimate.offsetMs > 0 ? 'behind' : 'ahead of'} the service's, more than the ${maxOffsetMs} ms allowed (half the signature window); fix the system clock (NTP) before trading`,
    {
      source: 'local',
      details: {
        offsetMs: estimate.offsetMs,
        maxOffsetMs,
        roundTripMs: estimate.roundTripMs,
      },
    },
  );
}
