/**
 * The executor's venue calls: under the deadline queue for a venue that may hang (a timer, a
 * signal when the transport stops on one), with no deadline at all for one that cannot
 * (`ExecutionVenue.cannotHang`, the replay venue: no timer, no signal).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { PaperbotError } from '../../../src/core/errors.ts';
import type { ResponseOf } from '../../../src/protocol/index.ts';
import { VenueCalls } from '../../../src/runtime/execution/venue-calls.ts';
import type { CommandEndpoint, PreparedCommand } from '../../../src/runtime/venue.ts';
import { StrictVenue } from './strict-venue.ts';

/** A strict venue that keeps the signal each send was given. */
class SignalVenue extends StrictVenue {
  readonly signals: (AbortSignal | undefined)[] = [];

  constructor(
    readonly abortable: boolean,
    readonly cannotHang: boolean,
  ) {
    super();
  }

  override send<E extends CommandEndpoint>(
    prepared: PreparedCommand<E>,
    signal?: AbortSignal,
  ): Promise<ResponseOf<E>> {
    this.signals.push(signal);
    return super.send(prepared);
  }
}

function cancelAll(venue: StrictVenue): PreparedCommand<'cancelAllOrders'> {
  return venue.prepare({ endpoint: 'cancelAllOrders', body: { request_id: 'req-00000001' } });
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

let venues: StrictVenue[] = [];
afterEach(() => {
  for (const venue of venues) venue.verify();
  venues = [];
});

function venueOf(abortable: boolean, cannotHang: boolean): SignalVenue {
  const venue = new SignalVenue(abortable, cannotHang);
  venues.push(venue);
  return venue;
}

describe('venue calls', () => {
  it('puts a send to a venue that may hang under the deadline, aborting its signal', async () => {
    const clock = new VirtualClock(0);
    const venue = venueOf(true, false).expectSend('cancelAllOrders', { hang: true });
    const calls = new VenueCalls(venue, clock, 1_000);
    let failure: unknown = null;
    const sent = calls.send(cancelAll(venue)).catch((error: unknown) => {
      failure = error;
    });
    expect(clock.pendingTimers()).toBe(1);
    const signal = venue.signals[0];
    expect(signal?.aborted).toBe(false);
    clock.advanceTo(1_125);
    await sent;
    expect(failure).toBeInstanceOf(PaperbotError);
    expect((failure as PaperbotError).code).toBe('REQUEST_TIMEOUT');
    expect(signal?.aborted).toBe(true);
  });

  it('gives a send no signal when the venue does not stop on one, and hands the answer on', async () => {
    const clock = new VirtualClock(0);
    const answer = { request_id: 'req-00000001', cancelled: 0 };
    const venue = venueOf(false, false).expectSend('cancelAllOrders', { value: answer });
    const calls = new VenueCalls(venue, clock, 1_000);
    await expect(calls.send(cancelAll(venue))).resolves.toEqual(answer);
    expect(venue.signals).toEqual([undefined]);
  });

  it('sets no deadline, timer or signal for a venue that cannot hang', async () => {
    const clock = new VirtualClock(0);
    const answer = { request_id: 'req-00000001', cancelled: 0 };
    const failure = new PaperbotError('ORDER_NOT_FOUND', 'no such order');
    const venue = venueOf(true, true)
      .expectSend('cancelAllOrders', { hang: true })
      .expectSend('cancelAllOrders', { value: answer })
      .expect('getOrder', { error: failure });
    const calls = new VenueCalls(venue, clock, 1_000);
    let settled = false;
    void calls.send(cancelAll(venue)).finally(() => {
      settled = true;
    });
    expect(clock.pendingTimers()).toBe(0);
    clock.advanceTo(10_000);
    await turn();
    expect(settled).toBe(false);
    await expect(calls.send(cancelAll(venue))).resolves.toEqual(answer);
    await expect(calls.call(() => venue.getOrder('o-1'))).rejects.toBe(failure);
    expect(venue.signals).toEqual([undefined, undefined]);
    expect(clock.pendingTimers()).toBe(0);
  });
});
