/**
 * The kernel's measured venue: a placement's hand-over and answer times are noted once, on an
 * answer or a failure, before the executor sees it; other commands pass straight through.
 */
import { EMPTY } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { PaperbotError } from '../../../src/core/errors.ts';
import { MeasuredVenue, type PlacementTiming } from '../../../src/runtime/kernel/measured-venue.ts';
import type { ExecutionVenue, PreparedCommand } from '../../../src/runtime/venue.ts';

/** A venue whose `send` answers when told to; any other call fails the test. */
function venue() {
  const answers: { resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  const refuse = () => {
    throw new Error('unexpected venue call');
  };
  const inner = {
    privateStream: { items$: EMPTY, readFillsBack: refuse },
    riskEvents$: EMPTY,
    resync$: EMPTY,
    send: () =>
      new Promise((resolve, reject) => {
        answers.push({ resolve, reject });
      }),
    prepare: refuse,
    restore: refuse,
    getRequest: refuse,
    getOrder: refuse,
    getOrderByClientId: refuse,
    listOpenOrders: refuse,
    listPositions: refuse,
    getAccount: refuse,
  } as unknown as ExecutionVenue;
  return { inner, answers };
}

function command(endpoint: 'placeOrder' | 'cancelOrder', requestId: string): PreparedCommand {
  return { endpoint, requestId } as unknown as PreparedCommand;
}

describe('measured venue', () => {
  it('notes a placement once when answered, before its caller sees the answer', async () => {
    const clock = new VirtualClock(1_000);
    const { inner, answers } = venue();
    const timings: PlacementTiming[] = [];
    const measured = new MeasuredVenue(inner, clock, (timing) => timings.push(timing));
    const seenAt: number[] = [];
    const sent = measured.send(command('placeOrder', 'req-1')).then((answer) => {
      seenAt.push(timings.length);
      return answer;
    });
    clock.advanceTo(1_040);
    answers[0]!.resolve({ order_id: 'o-1' });
    await expect(sent).resolves.toEqual({ order_id: 'o-1' });
    expect(timings).toEqual([{ requestId: 'req-1', sentAt: 1_000, answeredAt: 1_040 }]);
    expect(seenAt).toEqual([1]);
  });

  it('notes a failed placement too and hands its error on; other commands are not noted', async () => {
    const clock = new VirtualClock(0);
    const { inner, answers } = venue();
    const timings: PlacementTiming[] = [];
    const measured = new MeasuredVenue(inner, clock, (timing) => timings.push(timing));
    const failure = new PaperbotError('REQUEST_TIMEOUT', 'no answer');
    const placed = measured.send(command('placeOrder', 'req-2'));
    const cancelled = measured.send(command('cancelOrder', 'req-3'));
    clock.advanceTo(25);
    answers[0]!.reject(failure);
    answers[1]!.resolve({ order_id: 'o-2' });
    await expect(placed).rejects.toBe(failure);
    await expect(cancelled).resolves.toEqual({ order_id: 'o-2' });
    expect(timings).toEqual([{ requestId: 'req-2', sentAt: 0, answeredAt: 25 }]);
  });
});
