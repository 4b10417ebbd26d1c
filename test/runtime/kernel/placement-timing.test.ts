/**
 * The kernel's placement timing, an interceptor of the venue's send: a placement's hand-over
 * and answer times are noted once, on an answer or a failure, before the executor sees it;
 * other commands, and every argument (a placement's `timeoutMs` too), pass straight through.
 */
import { EMPTY } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { PaperbotError } from '../../../src/core/errors.ts';
import {
  measurePlacements,
  type PlacementTiming,
} from '../../../src/runtime/kernel/placement-timing.ts';
import { composeSend, sendOf, withSend } from '../../../src/runtime/venue-send.ts';
import type { ExecutionVenue, PreparedCommand } from '../../../src/runtime/venue.ts';

/** A venue whose `send` answers when told to; any other call fails the test. */
function venue() {
  const answers: { resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  const calls: { signal: AbortSignal | undefined; timeoutMs: number | undefined }[] = [];
  const refuse = () => {
    throw new Error('unexpected venue call');
  };
  const inner = {
    privateStream: { items$: EMPTY, readFillsBack: refuse },
    riskEvents$: EMPTY,
    resync$: EMPTY,
    send: (_prepared: unknown, signal?: AbortSignal, timeoutMs?: number) =>
      new Promise((resolve, reject) => {
        calls.push({ signal, timeoutMs });
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
  return { inner, answers, calls };
}

function command(endpoint: 'placeOrder' | 'cancelOrder', requestId: string): PreparedCommand {
  return { endpoint, requestId } as unknown as PreparedCommand;
}

/** The venue as the kernel builds it: its send with the placement timing around it. */
function measuredVenue(
  inner: ExecutionVenue,
  clock: VirtualClock,
  timings: PlacementTiming[],
): ExecutionVenue {
  const send = composeSend(measurePlacements(clock, (timing) => timings.push(timing)));
  return withSend(inner, send(sendOf(inner)));
}

describe('placement timing', () => {
  it('notes a placement once when answered, before its caller sees the answer', async () => {
    const clock = new VirtualClock(1_000);
    const { inner, answers } = venue();
    const timings: PlacementTiming[] = [];
    const measured = measuredVenue(inner, clock, timings);
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
    const measured = measuredVenue(inner, clock, timings);
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

  it("hands a placement's signal and timeoutMs to the venue's send", async () => {
    // The measured venue this replaced called the venue with the signal alone for a placement.
    const clock = new VirtualClock(0);
    const { inner, answers, calls } = venue();
    const measured = measuredVenue(inner, clock, []);
    const signal = new AbortController().signal;
    const placed = measured.send(command('placeOrder', 'req-4'), signal, 2_500);
    const cancelled = measured.send(command('cancelOrder', 'req-5'), undefined, 700);
    expect(calls).toEqual([
      { signal, timeoutMs: 2_500 },
      { signal: undefined, timeoutMs: 700 },
    ]);
    answers[0]!.resolve({});
    answers[1]!.resolve({});
    await Promise.all([placed, cancelled]);
  });
});
