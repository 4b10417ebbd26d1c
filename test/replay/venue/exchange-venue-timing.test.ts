/**
 * When the replay venue applies and answers commands: at fixed latencies several commands in
 * flight share one queue per leg, with jitter each leg waits its own drawn delay, and a caller
 * that stops waiting gets REQUEST_TIMEOUT while its command still reaches the venue.
 */
import { describe, expect, it } from 'vitest';
import type { Order } from '../../../src/protocol/index.ts';
import { LatencyModel, latencySettings } from '../../../src/replay/venue/latency.ts';
import { harness, limit, T0 } from './helpers.ts';

/** Moves the clock 1 ms at a time, so each answer's continuation sees its own time. */
async function stepBy(h: ReturnType<typeof harness>, ms: number): Promise<void> {
  for (let step = 0; step < ms; step++) await h.advance(1);
}

function timedSend(h: ReturnType<typeof harness>, requestId: string, price: string) {
  const answers: { requestId: string; at: number; status: string }[] = [];
  const prepared = h.venue.execution.prepare(limit(requestId, 'buy', price, '1'));
  const done = h.venue.execution.send(prepared).then((order) => {
    answers.push({ requestId, at: h.clock.now(), status: (order as Order).status });
  });
  return { answers, done };
}

describe('replay venue: commands in flight', () => {
  it('applies and answers commands sent at different times each after its own latencies', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    const first = timedSend(h, 'order-0001', '99');
    await stepBy(h, 3);
    const second = timedSend(h, 'order-0002', '98');
    await stepBy(h, 4);
    const third = timedSend(h, 'order-0003', '97');
    await stepBy(h, 12);
    // Applied at T0+10, T0+13 and T0+17 (order latency 10 ms): the first two are in, in order.
    expect(h.venue.execution.activeOrderIds()).toHaveLength(3);
    expect(first.answers).toEqual([]);
    await stepBy(h, 1);
    expect(first.answers).toEqual([{ requestId: 'order-0001', at: T0 + 20, status: 'PENDING' }]);
    await stepBy(h, 10);
    await Promise.all([first.done, second.done, third.done]);
    expect([...second.answers, ...third.answers]).toEqual([
      { requestId: 'order-0002', at: T0 + 23, status: 'PENDING' },
      { requestId: 'order-0003', at: T0 + 27, status: 'PENDING' },
    ]);
  });

  it('with jitter, waits each leg its own drawn delay, the draws taken in the order made', async () => {
    const latency = { order_ms: 10, response_ms: 10, event_ms: 5, read_ms: 0, jitter_ms: 9 };
    const h = harness({ latency });
    // The venue's model, drawn the same way: both orders at send, responses as they apply.
    const model = new LatencyModel(latencySettings(latency), 7);
    const orderDelays = [model.order(), model.order()];
    expect(orderDelays[0]).not.toBe(orderDelays[1]);
    const applyOrder = orderDelays[0]! <= orderDelays[1]! ? [0, 1] : [1, 0];
    const responseDelays: number[] = [];
    for (const index of applyOrder) responseDelays[index] = model.response();
    const expected = [0, 1].map((index) => T0 + orderDelays[index]! + responseDelays[index]!);

    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    const first = timedSend(h, 'order-0001', '99');
    const second = timedSend(h, 'order-0002', '98');
    await stepBy(h, 40);
    await Promise.all([first.done, second.done]);
    expect(first.answers.map((answer) => answer.at)).toEqual([expected[0]]);
    expect(second.answers.map((answer) => answer.at)).toEqual([expected[1]]);
  });

  it('rejects with REQUEST_TIMEOUT when the caller stops waiting, and still applies the command', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    const controller = new AbortController();
    const prepared = h.venue.execution.prepare(limit('order-0001', 'buy', '99', '1'));
    const answer = h.venue.execution.send(prepared, controller.signal);
    const outcome = answer.then(
      () => 'answered',
      (error: { code?: string }) => error.code,
    );
    await h.advance(5);
    controller.abort();
    expect(await outcome).toBe('REQUEST_TIMEOUT');
    await h.advance(5);
    expect(h.venue.execution.activeOrderIds()).toHaveLength(1);
    // The answer that comes after the caller gave up is dropped; the next command is answered.
    await h.advance(10);
    const next = timedSend(h, 'order-0002', '98');
    await stepBy(h, 20);
    await next.done;
    expect(next.answers).toEqual([{ requestId: 'order-0002', at: T0 + 40, status: 'PENDING' }]);
  });

  it('rejects at once a command sent with a signal already aborted', async () => {
    const h = harness();
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    const controller = new AbortController();
    controller.abort();
    const prepared = h.venue.execution.prepare(limit('order-0001', 'buy', '99', '1'));
    await expect(h.venue.execution.send(prepared, controller.signal)).rejects.toMatchObject({
      code: 'REQUEST_TIMEOUT',
    });
    await h.advance(10);
    expect(h.venue.execution.activeOrderIds()).toHaveLength(1);
  });
});
