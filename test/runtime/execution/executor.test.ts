/**
 * The executor against a strict fake venue, a real journal file and virtual time: journal first,
 * simulate then place, the four outcomes, resolution of unknown intents by request id, resends
 * of the journaled bytes, amendments racing fills, and recovery after a crash.
 */
import { BehaviorSubject } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import {
  type ExecutionOutcome,
  Executor,
  type ExecutorConfig,
} from '../../../src/runtime/execution/executor.ts';
import type { Logger } from '../../../src/core/logger.ts';
import { OrderTracker } from '../../../src/runtime/execution/tracker.ts';
import type { OrderIntent } from '../../../src/runtime/intents.ts';
import type { Journal } from '../../../src/runtime/journal/journal.ts';
import {
  account,
  decode,
  fill,
  limitBuy,
  mutationStatus,
  openJournal,
  order,
  orderEvent,
  position,
  START,
  serviceError,
  simulation,
  stamp,
  tempJournalPath,
  transportError,
} from './fixtures.ts';
import { bodyOf, StrictVenue } from './strict-venue.ts';

interface Harness {
  readonly clock: VirtualClock;
  readonly journal: Journal;
  readonly venue: StrictVenue;
  readonly tracker: OrderTracker;
  readonly executor: Executor;
  readonly permit: BehaviorSubject<boolean>;
  readonly outcomes: ExecutionOutcome[];
  readonly errors: string[];
  readonly path: string;
}

const cleanups: (() => void)[] = [];

afterEach(() => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function recordingLogger(errors: string[]): Logger {
  return {
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: (message) => errors.push(message),
  };
}

function harness(
  config: Partial<ExecutorConfig> = {},
  existing?: { readonly path: string; readonly clock: VirtualClock },
): Harness {
  const clock = existing?.clock ?? new VirtualClock(START);
  let path = existing?.path;
  if (path === undefined) {
    const temp = tempJournalPath();
    path = temp.path;
    cleanups.push(temp.cleanup);
  }
  const journal = openJournal(path, clock);
  const venue = new StrictVenue();
  // The periodic account refresh is left out of these tests (see tracker.test.ts).
  const tracker = new OrderTracker({
    venue,
    journal,
    clock,
    config: { refreshIntervalMs: 3_600_000 },
  });
  tracker.start();
  const permit = new BehaviorSubject(true);
  const errors: string[] = [];
  const executor = new Executor({
    venue,
    journal,
    tracker,
    clock,
    permit$: permit,
    logger: recordingLogger(errors),
    config,
  });
  const outcomes: ExecutionOutcome[] = [];
  executor.outcomes$.subscribe((outcome) => outcomes.push(outcome));
  cleanups.push(() => {
    executor.stop();
    tracker.stop();
    journal.close();
  });
  return {
    clock,
    journal,
    venue,
    tracker,
    executor,
    permit,
    outcomes,
    errors,
    path,
  };
}

async function advance(h: Harness, ms: number): Promise<void> {
  h.clock.advanceBy(ms);
  await h.executor.idle();
  await h.tracker.idle();
  await h.executor.idle();
}

/** Lets every pending promise callback run (no time passes on any clock). */
async function flushAsync(): Promise<void> {
  for (let round = 0; round < 5; round++) await new Promise((resolve) => setImmediate(resolve));
}

const statuses = (h: Harness) => h.outcomes.map((outcome) => outcome.status);

describe('journal first, simulate, place', () => {
  it('journals the intent and the exact bytes before anything is sent', async () => {
    const h = harness();
    const intent = stamp(limitBuy(), 1);
    h.venue
      .expectSend('simulateOrder', { value: simulation('READY') }, (prepared, body) => {
        const record = h.journal.requireIntent(intent.requestId);
        expect(record.state).toBe('simulating');
        expect(record.simulateRequestId).toBe(`${intent.requestId}:s1`);
        expect(body.request_id).toBe(`${intent.requestId}:s1`);
        expect(prepared.requestId).toBe(`${intent.requestId}:s1`);
        // The placement's bytes are journaled before the simulation goes out.
        expect(record.command?.endpoint).toBe('placeOrder');
      })
      .expectSend(
        'placeOrder',
        {
          value: order({ order_id: 'o-1', client_order_id: intent.requestId }),
        },
        (prepared) => {
          const record = h.journal.requireIntent(intent.requestId);
          expect(record.state).toBe('sending');
          expect(record.sendAttempts).toBe(1);
          expect(Buffer.from(record.command?.bodyBytes ?? [])).toEqual(
            Buffer.from(prepared.bodyBytes),
          );
          expect(record.command?.bodySha256).toBe(prepared.bodySha256);
          expect(prepared.requestId).toBe(intent.requestId);
        },
      );
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.verify();
    const [placed] = h.venue.sends('placeOrder');
    expect(bodyOf(placed!)).toMatchObject({
      request_id: intent.requestId,
      client_order_id: intent.requestId,
      market_id: 'BTC-PERP',
      side: 'buy',
      type: 'limit',
      quantity: '0.01',
      price: '42000',
      leverage: 1,
      time_in_force: 'GTC',
      margin_mode: 'isolated',
    });
    expect(h.outcomes).toMatchObject([{ status: 'accepted', orderId: 'o-1', intent }]);
    expect(h.journal.requireIntent(intent.requestId)).toMatchObject({
      state: 'accepted',
      orderId: 'o-1',
    });
    expect(h.tracker.orderByClientOrderId(intent.requestId)?.order.order_id).toBe('o-1');
  });

  it("passes the intent's record along: one journal read of its request id per placement", async () => {
    const h = harness();
    const intent = stamp(limitBuy(), 1);
    h.venue.expectSend('simulateOrder', { value: simulation('READY') }).expectSend('placeOrder', {
      value: order({ order_id: 'o-1', client_order_id: intent.requestId }),
    });
    // Every read by request id is a getIntent or a requireIntent of the journal.
    const reads: string[] = [];
    const getIntent = h.journal.getIntent.bind(h.journal);
    const requireIntent = h.journal.requireIntent.bind(h.journal);
    vi.spyOn(h.journal, 'getIntent').mockImplementation((requestId) => {
      reads.push(requestId);
      return getIntent(requestId);
    });
    vi.spyOn(h.journal, 'requireIntent').mockImplementation((requestId) => {
      reads.push(requestId);
      return requireIntent(requestId);
    });
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes).toMatchObject([{ status: 'accepted', orderId: 'o-1' }]);
    // The read after the command is journaled (its bytes and context), and no other.
    expect(reads).toEqual([intent.requestId]);
  });

  /** Names the journal's writes as they happen, in `writes`. */
  function spyWrites(h: Harness): string[] {
    const writes: string[] = [];
    for (const name of [
      'recordIntent',
      'recordCommand',
      'recordSimulation',
      'recordCommandWithStep',
      'recordSendAttempt',
    ] as const) {
      const original = h.journal[name].bind(h.journal) as (...args: unknown[]) => unknown;
      vi.spyOn(h.journal, name).mockImplementation(((...args: unknown[]) => {
        writes.push(name);
        return original(...args);
      }) as never);
    }
    return writes;
  }

  it('journals the intent, its bytes and its simulation in one write, and the send attempt before the placement', async () => {
    const h = harness();
    const intent = stamp(limitBuy(), 1);
    const writes = spyWrites(h);
    h.venue
      .expectSend('simulateOrder', { value: simulation('READY') }, () => {
        expect(writes).toEqual(['recordIntent']);
        // Read from the row (this lookup skips the journal's cache): what a restart would find.
        expect(h.journal.intentByClientOrderId(intent.clientOrderId!)).toMatchObject({
          state: 'simulating',
          simulateRequestId: `${intent.requestId}:s1`,
          simulateAttempt: 1,
          command: { endpoint: 'placeOrder' },
          sendAttempts: 0,
        });
      })
      .expectSend('placeOrder', {
        value: order({ order_id: 'o-1', client_order_id: intent.requestId }),
      });
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.verify();
    expect(writes).toEqual(['recordIntent', 'recordSendAttempt']);
    expect(h.journal.requireIntent(intent.requestId)).toMatchObject({
      state: 'accepted',
      sendAttempts: 1,
      simulateAttempt: 1,
    });
    expect(h.journal.intentByClientOrderId(intent.clientOrderId!)?.command?.bodyBytes).toEqual(
      h.venue.sends('placeOrder')[0]!.bodyBytes,
    );
  });

  it('journals an intent queued behind another first, and its bytes with the simulation when it runs', async () => {
    const h = harness();
    const first = stamp(limitBuy(), 1);
    const second = stamp(limitBuy(), 2);
    const writes = spyWrites(h);
    h.venue
      .expectSend('simulateOrder', { value: simulation('READY') })
      .expectSend('placeOrder', {
        value: order({ order_id: 'o-1', client_order_id: first.requestId }),
      })
      .expectSend('simulateOrder', { value: simulation('READY') }, () => {
        expect(writes).toEqual([
          'recordIntent',
          'recordIntent',
          'recordSendAttempt',
          'recordCommandWithStep',
        ]);
        expect(h.journal.requireIntent(second.requestId)).toMatchObject({
          state: 'simulating',
          simulateAttempt: 1,
        });
      })
      .expectSend('placeOrder', {
        value: order({ order_id: 'o-2', client_order_id: second.requestId }),
      });
    h.executor.submit(first);
    // The lane is busy with the first: the second waits, journaled without its command.
    h.executor.submit(second);
    expect(h.journal.requireIntent(second.requestId)).toMatchObject({
      state: 'journaled',
      command: null,
    });
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes.map((outcome) => outcome.status)).toEqual(['accepted', 'accepted']);
  });

  it('journals a placement taken while not permitted without its command, and denies it', async () => {
    const h = harness();
    h.permit.next(false);
    const intent = stamp(limitBuy(), 1);
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.verify();
    expect(h.journal.requireIntent(intent.requestId)).toMatchObject({
      state: 'denied',
      command: null,
    });
    expect(h.outcomes).toMatchObject([{ status: 'denied' }]);
  });

  it('ends Rejected with the issues when the simulation is not READY, and places nothing', async () => {
    const h = harness();
    const issues = [{ code: 'INSUFFICIENT_MARGIN', message: 'margin too low', field: null }];
    h.venue.expectSend('simulateOrder', {
      value: simulation('REJECTED', issues),
    });
    h.executor.submit(stamp(limitBuy(), 1));
    await h.executor.idle();
    h.venue.verify();
    expect(h.venue.sends('placeOrder')).toHaveLength(0);
    expect(h.outcomes).toMatchObject([
      { status: 'rejected', code: 'SIMULATION_NOT_READY', issues },
    ]);
    expect(h.journal.requireIntent(stamp(limitBuy(), 1).requestId).state).toBe('rejected');
  });

  it("carries the venue's reasons into the message, the outcome and the journal row, bounded", async () => {
    const h = harness();
    const huge = { code: 'PRICE_BAND', message: 'far from the mark', detail: 'x'.repeat(5_000) };
    const issues = [
      { code: 'INSUFFICIENT_MARGIN', message: 'margin too low', field: 'quantity', extra: 1 },
      { type: 'value_error', msg: 'bad price', loc: ['body', 'price'] },
      huge,
      ...Array.from({ length: 10 }, (_, index) => ({ code: `MORE_${index}` })),
    ];
    h.venue.expectSend('simulateOrder', { value: simulation('REJECTED', issues) });
    const intent = stamp(limitBuy(), 1);
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.verify();
    const kept = [
      issues[0],
      issues[1],
      { truncated: true, code: 'PRICE_BAND', message: 'far from the mark' },
      ...issues.slice(3, 10),
    ];
    const message =
      'simulation decided REJECTED: INSUFFICIENT_MARGIN: margin too low (quantity); ' +
      'value_error: bad price (body.price); PRICE_BAND: far from the mark; MORE_0; MORE_1; ' +
      'MORE_2; MORE_3; MORE_4; MORE_5; MORE_6 (+3 more); nothing was placed';
    expect(h.outcomes).toEqual([
      { status: 'rejected', intent, code: 'SIMULATION_NOT_READY', message, issues: kept },
    ]);
    expect(h.journal.requireIntent(intent.requestId).outcome).toEqual({
      status: 'rejected',
      code: 'SIMULATION_NOT_READY',
      message,
      issues: kept,
    });
  });

  it('ends Rejected when the simulation is refused with a 4xx', async () => {
    const h = harness();
    h.venue.expectSend('simulateOrder', {
      error: serviceError('UNKNOWN_MARKET'),
    });
    h.executor.submit(stamp(limitBuy(), 1));
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes).toMatchObject([{ status: 'rejected', code: 'UNKNOWN_MARKET' }]);
  });

  it('simulates again with a new simulation id when the answer is unknown', async () => {
    const h = harness();
    const intent = stamp(limitBuy(), 1);
    h.venue
      .expectSend('simulateOrder', {
        error: transportError('TRANSPORT_FAILURE'),
      })
      .expectSend('simulateOrder', { value: simulation() }, (_prepared, body) => {
        expect(body.request_id).toBe(`${intent.requestId}:s2`);
      })
      .expectSend('placeOrder', { value: order({ order_id: 'o-1' }) });
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.verify();
    expect(statuses(h)).toEqual(['accepted']);
  });

  it('ends Rejected on a 4xx refusal of the placement', async () => {
    const h = harness();
    h.venue.expectSend('simulateOrder', { value: simulation() }).expectSend('placeOrder', {
      error: serviceError('INSUFFICIENT_READY_CAPITAL'),
    });
    h.executor.submit(stamp(limitBuy(), 1));
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes).toMatchObject([{ status: 'rejected', code: 'INSUFFICIENT_READY_CAPITAL' }]);
  });

  it('denies placements while the permit is closed, but still sends cancels', async () => {
    const h = harness();
    h.permit.next(false);
    const active = order({
      order_id: 'o-9',
      client_order_id: 'alpha:x:9',
      status: 'OPEN',
    });
    h.tracker.applyOrder(active);
    const cancel = stamp({ kind: 'cancel', clientOrderId: 'alpha:x:9' }, 2);
    h.venue.expectSend(
      'cancelOrder',
      { value: { ...active, status: 'CANCELLED' } },
      (prepared, body) => {
        expect(prepared.path).toBe('/v1/orders/o-9/cancel');
        expect(body).toEqual({ request_id: cancel.requestId });
      },
    );
    h.executor.submit(stamp(limitBuy(), 1));
    h.executor.submit(cancel);
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes).toMatchObject([
      { status: 'denied', denials: [{ rule: 'execution_not_ready' }] },
      { status: 'accepted', orderId: 'o-9' },
    ]);
  });

  it('never executes one request id twice', async () => {
    const h = harness({
      simulate: { place: false, amend: false, closePosition: false },
    });
    const intent = stamp(limitBuy(), 1);
    h.venue.expectSend('placeOrder', { value: order({ order_id: 'o-1' }) });
    h.executor.submit(intent);
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.verify();
    expect(statuses(h)).toEqual(['accepted']);
  });
});

describe('unknown outcomes and their resolution', () => {
  const causes = [
    ['a timeout', { hang: true as const }],
    ['a transport failure', { error: transportError('TRANSPORT_FAILURE') }],
    ['a 503', { error: serviceError('EXECUTION_UNAVAILABLE', 503) }],
    ['ORDER_CONFIRMATION_PENDING', { error: serviceError('ORDER_CONFIRMATION_PENDING') }],
  ] as const;

  for (const [name, answer] of causes) {
    it(`${name} makes the intent Unknown, resolved by GET /v1/requests/{id} COMPLETED`, async () => {
      const h = harness({ callTimeoutMs: 5_000 });
      const intent = stamp(limitBuy(), 1);
      h.venue.expectSend('simulateOrder', { value: simulation() }).expectSend('placeOrder', answer);
      h.executor.submit(intent);
      if ('hang' in answer) {
        await flushAsync();
        await advance(h, 5_000);
      }
      await h.executor.idle();
      expect(h.outcomes).toMatchObject([{ status: 'unknown', intent }]);
      expect(h.journal.requireIntent(intent.requestId).state).toBe('unknown');

      h.venue.expect(
        'getRequest',
        {
          value: mutationStatus(intent.requestId, 'COMPLETED', {
            order_id: 'o-7',
            status: 'PENDING',
          }),
        },
        { check: (call) => expect(call.requestId).toBe(intent.requestId) },
      );
      // The resolved order is read back by the tracker.
      h.venue.expect('getOrder', {
        value: order({ order_id: 'o-7', client_order_id: intent.requestId }),
      });
      await advance(h, 500);
      await advance(h, 25);
      h.venue.verify();
      expect(h.outcomes.slice(1)).toMatchObject([
        { status: 'resolved', resolution: 'accepted', orderId: 'o-7', intent },
      ]);
      expect(h.journal.requireIntent(intent.requestId)).toMatchObject({
        state: 'resolved',
        orderId: 'o-7',
      });
      expect(h.venue.sends('placeOrder')).toHaveLength(1);
      expect(h.tracker.orderByClientOrderId(intent.requestId)?.order.order_id).toBe('o-7');
    });
  }

  it('resends the same bytes under the same request id when the service never saw it', async () => {
    const h = harness();
    const intent = stamp(limitBuy(), 1);
    h.venue
      .expectSend('simulateOrder', { value: simulation() })
      .expectSend('placeOrder', { error: transportError('TRANSPORT_FAILURE') });
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue
      .expect('getRequest', { error: serviceError('ORDER_NOT_FOUND') })
      .expect(
        'getOrderByClientId',
        { error: serviceError('ORDER_NOT_FOUND') },
        {
          check: (call) => expect(call.clientOrderId).toBe(intent.requestId),
        },
      )
      .expectSend('placeOrder', {
        value: order({ order_id: 'o-2', client_order_id: intent.requestId }),
      });
    await advance(h, 500);
    h.venue.verify();
    const [first, second] = h.venue.sends('placeOrder');
    expect(second?.requestId).toBe(intent.requestId);
    expect(Buffer.from(second!.bodyBytes)).toEqual(Buffer.from(first!.bodyBytes));
    expect(second?.bodySha256).toBe(first?.bodySha256);
    expect(h.outcomes).toMatchObject([
      { status: 'unknown' },
      { status: 'resolved', resolution: 'accepted', orderId: 'o-2' },
    ]);
    expect(h.journal.requireIntent(intent.requestId).sendAttempts).toBe(2);
  });

  it('settles on the order found by client order id when the request record is missing', async () => {
    const h = harness();
    const intent = stamp(limitBuy(), 1);
    h.venue
      .expectSend('simulateOrder', { value: simulation() })
      .expectSend('placeOrder', { error: transportError('REQUEST_TIMEOUT') });
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue
      .expect('getRequest', { error: serviceError('ORDER_NOT_FOUND') })
      .expect('getOrderByClientId', {
        value: order({
          order_id: 'o-3',
          client_order_id: intent.requestId,
          status: 'OPEN',
        }),
      });
    await advance(h, 500);
    h.venue.verify();
    expect(h.venue.sends('placeOrder')).toHaveLength(1);
    expect(h.outcomes.at(-1)).toMatchObject({
      status: 'resolved',
      orderId: 'o-3',
    });
  });

  it('retries later with backoff while the request is PENDING', async () => {
    const h = harness({ resolutionBaseDelayMs: 500 });
    const intent = stamp(limitBuy(), 1);
    h.venue.expectSend('simulateOrder', { value: simulation() }).expectSend('placeOrder', {
      error: serviceError('EXECUTION_UNAVAILABLE', 503),
    });
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.expect('getRequest', {
      value: mutationStatus(intent.requestId, 'PENDING'),
    });
    await advance(h, 500);
    h.venue.verify();
    expect(h.journal.requireIntent(intent.requestId)).toMatchObject({
      state: 'unknown',
      resolutionAttempts: 1,
    });
    // The second attempt waits 1000 ms (500 * 2).
    await advance(h, 999);
    h.venue.verify();
    h.venue
      .expect('getRequest', {
        value: mutationStatus(intent.requestId, 'COMPLETED', {
          order_id: 'o-4',
        }),
      })
      .expect('getOrder', { value: order({ order_id: 'o-4' }) });
    await advance(h, 1);
    await advance(h, 25);
    h.venue.verify();
    expect(statuses(h)).toEqual(['unknown', 'resolved']);
  });

  it('reports a COMPLETED request with an error as resolved rejected', async () => {
    const h = harness();
    const intent = stamp(limitBuy(), 1);
    h.venue.expectSend('simulateOrder', { value: simulation() }).expectSend('placeOrder', {
      error: transportError('MALFORMED_RESPONSE'),
    });
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.expect('getRequest', {
      value: mutationStatus(intent.requestId, 'COMPLETED', {
        error: { code: 'INSUFFICIENT_READY_CAPITAL', message: 'no capital' },
      }),
    });
    await advance(h, 500);
    h.venue.verify();
    expect(h.outcomes.at(-1)).toMatchObject({
      status: 'resolved',
      resolution: 'rejected',
      orderId: null,
    });
  });

  it('treats IDEMPOTENCY_CONFLICT as unknown, logs it loudly and never uses another id', async () => {
    const h = harness();
    const intent = stamp(limitBuy(), 1);
    h.venue.expectSend('simulateOrder', { value: simulation() }).expectSend('placeOrder', {
      error: serviceError('IDEMPOTENCY_CONFLICT'),
    });
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.verify();
    expect(statuses(h)).toEqual(['unknown']);
    expect(h.errors.some((message) => message.includes('IDEMPOTENCY_CONFLICT'))).toBe(true);
    h.venue.expect('getRequest', {
      value: mutationStatus(intent.requestId, 'COMPLETED', { order_id: 'o-5' }),
    });
    h.venue.expect('getOrder', { value: order({ order_id: 'o-5' }) });
    await advance(h, 500);
    await advance(h, 25);
    h.venue.verify();
    expect(
      h.venue.calls.filter((call) => call.method === 'send').map((call) => call.prepared.requestId),
    ).toEqual([`${intent.requestId}:s1`, intent.requestId]);
  });

  it('gives up after the bounded attempts and reports the intent unresolved', async () => {
    const h = harness({ resolutionAttempts: 2, resolutionBaseDelayMs: 100 });
    const counts: number[] = [];
    h.executor.unresolvedCount$.subscribe((count) => counts.push(count));
    const intent = stamp(limitBuy(), 1);
    h.venue
      .expectSend('simulateOrder', { value: simulation() })
      .expectSend('placeOrder', { error: transportError('TRANSPORT_FAILURE') });
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.expect('getRequest', {
      error: transportError('TRANSPORT_FAILURE'),
    });
    await advance(h, 100);
    h.venue.expect('getRequest', {
      error: transportError('TRANSPORT_FAILURE'),
    });
    await advance(h, 200);
    h.venue.verify();
    expect(h.journal.requireIntent(intent.requestId)).toMatchObject({
      state: 'unknown',
      nextResolutionAt: null,
      resolutionAttempts: 2,
    });
    expect(counts).toEqual([0, 1]);
    // No further automatic attempt: the strict venue would fail on one.
    await advance(h, 60_000);
    h.venue.verify();
  });
});

describe('cancel, cancel-all and close', () => {
  it('cancels by the order id found from the client order id', async () => {
    const h = harness();
    const placed = order({
      order_id: 'o-1',
      client_order_id: 'alpha:testepoch01:1',
      status: 'OPEN',
    });
    h.tracker.applyOrder(placed);
    const cancel = stamp({ kind: 'cancel', clientOrderId: 'alpha:testepoch01:1' }, 2);
    h.venue.expectSend('cancelOrder', { value: { ...placed, status: 'CANCELLED' } }, (prepared) => {
      expect(prepared.path).toBe('/v1/orders/o-1/cancel');
    });
    h.executor.submit(cancel);
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes).toMatchObject([{ status: 'accepted', orderId: 'o-1' }]);
    expect(h.tracker.openOrders()).toHaveLength(0);
  });

  it("journals a cancel's bytes and its send attempt in one write, before it is sent", async () => {
    const h = harness();
    const placed = order({
      order_id: 'o-1',
      client_order_id: 'alpha:testepoch01:1',
      status: 'OPEN',
    });
    h.tracker.applyOrder(placed);
    const cancel = stamp({ kind: 'cancel', clientOrderId: 'alpha:testepoch01:1' }, 2);
    const writes: string[] = [];
    for (const name of ['recordCommand', 'recordSendAttempt', 'recordCommandWithStep'] as const) {
      const original = h.journal[name].bind(h.journal) as (...args: unknown[]) => void;
      vi.spyOn(h.journal, name).mockImplementation((...args: unknown[]) => {
        writes.push(name);
        original(...args);
      });
    }
    h.venue.expectSend('cancelOrder', { value: { ...placed, status: 'CANCELLED' } }, (prepared) => {
      const record = h.journal.requireIntent(cancel.requestId);
      expect(record.state).toBe('sending');
      expect(record.sendAttempts).toBe(1);
      expect(record.context.targetOrderId).toBe('o-1');
      expect(Buffer.from(record.command?.bodyBytes ?? [])).toEqual(Buffer.from(prepared.bodyBytes));
    });
    h.executor.submit(cancel);
    await h.executor.idle();
    h.venue.verify();
    expect(writes).toEqual(['recordCommandWithStep']);
    expect(h.outcomes).toMatchObject([{ status: 'accepted', orderId: 'o-1' }]);
    expect(h.journal.requireIntent(cancel.requestId).sendAttempts).toBe(1);
  });

  it('denies a cancel of an order nobody knows', async () => {
    const h = harness();
    h.venue.expect('getOrderByClientId', {
      error: serviceError('ORDER_NOT_FOUND'),
    });
    h.executor.submit(stamp({ kind: 'cancel', clientOrderId: 'nobody' }, 1));
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes).toMatchObject([{ status: 'denied', denials: [{ rule: 'unknown_order' }] }]);
  });

  it('cancels all on one market and applies the results', async () => {
    const h = harness();
    const open = order({ order_id: 'o-1', status: 'OPEN' });
    h.tracker.applyOrder(open);
    h.venue.expectSend(
      'cancelAllOrders',
      {
        value: { request_id: 'x', results: [{ ...open, status: 'CANCELLED' }] },
      },
      (_prepared, body) => expect(body.market_id).toBe('BTC-PERP'),
    );
    h.executor.submit(stamp({ kind: 'cancel_all', marketId: 'BTC-PERP' }, 1));
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes).toMatchObject([{ status: 'accepted', orderId: null }]);
    expect(h.tracker.openOrders()).toHaveLength(0);
  });

  it('closes a position by its id after simulating the reducing order', async () => {
    const h = harness({ quantityStep: () => '0.001' });
    const close = stamp({ kind: 'close_position', marketId: 'BTC-PERP', quantityPercent: '50' }, 1);
    h.venue
      .expect('listPositions', {
        value: [position({ quantity: '0.025', side: 'long' })],
      })
      .expectSend('simulateOrder', { value: simulation() }, (_prepared, body) => {
        expect(body).toMatchObject({
          side: 'sell',
          type: 'market',
          quantity: '0.012',
          reduce_only: true,
        });
      })
      .expectSend(
        'closePosition',
        {
          value: order({
            order_id: 'o-c',
            client_order_id: close.requestId,
            type: 'market',
          }),
        },
        (prepared, body) => {
          expect(prepared.path).toBe('/v1/positions/position-btc-1/close');
          expect(body).toEqual({
            request_id: close.requestId,
            client_order_id: close.requestId,
            quantity_percent: '50',
            max_slippage_percent: '0.5',
          });
        },
      );
    h.executor.submit(close);
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes).toMatchObject([{ status: 'accepted', orderId: 'o-c' }]);
  });
});

describe('amendments racing fills', () => {
  const placeId = 'alpha:testepoch01:1';
  const resting = (fields: Parameters<typeof order>[0]) =>
    order({
      client_order_id: placeId,
      status: 'OPEN',
      quantity: '0.01',
      ...fields,
    });

  function seed(h: Harness) {
    h.tracker.applyOrder(resting({ order_id: 'o-1' }));
  }

  const amend = (fields: Partial<Extract<OrderIntent, { kind: 'amend' }>>) =>
    stamp({ kind: 'amend', clientOrderId: placeId, ...fields }, 2);

  it('sizes the replacement from the fill read just before sending and tracks it under the intent', async () => {
    const h = harness();
    seed(h);
    const intent = amend({ price: '41900', quantity: '0.01' });
    h.venue
      .expect('getOrder', {
        value: resting({
          order_id: 'o-1',
          status: 'PARTIALLY_FILLED',
          filled_quantity: '0.004',
        }),
      })
      .expectSend('simulateOrder', { value: simulation() }, (_prepared, body) => {
        expect(body).toMatchObject({
          quantity: '0.006',
          price: '41900',
          side: 'buy',
        });
      })
      .expectSend(
        'amendOrder',
        // The venue reports the replacement under the replaced order's client order id.
        {
          value: order({
            order_id: 'o-2',
            client_order_id: placeId,
            quantity: '0.006',
            price: '41900',
          }),
        },
        (prepared, body) => {
          expect(prepared.path).toBe('/v1/orders/o-1');
          expect(body).toEqual({
            request_id: intent.requestId,
            quantity: '0.006',
            price: '41900',
          });
        },
      )
      .expect('getOrder', {
        value: resting({
          order_id: 'o-1',
          status: 'CANCELLED',
          filled_quantity: '0.004',
        }),
      });
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes).toHaveLength(1);
    const outcome = h.outcomes[0]!;
    expect(outcome).toMatchObject({ status: 'accepted', orderId: 'o-2' });
    expect(outcome.note).toContain('sized to 0.006');
    const replacement = h.tracker.orderByClientOrderId(intent.requestId);
    expect(replacement?.order.order_id).toBe('o-2');
    expect(replacement?.order.client_order_id).toBe(intent.requestId);
    expect(replacement?.venueClientOrderId).toBe(placeId);
    expect(h.journal.requireIntent(intent.requestId)).toMatchObject({
      orderId: 'o-2',
      replacesOrderId: 'o-1',
    });
  });

  it('drops the replacement when the order filled before it could be replaced', async () => {
    const h = harness();
    seed(h);
    h.venue.expect('getOrder', {
      value: resting({
        order_id: 'o-1',
        status: 'FILLED',
        filled_quantity: '0.01',
      }),
    });
    h.executor.submit(amend({ price: '41900' }));
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes).toMatchObject([
      { status: 'denied', denials: [{ rule: 'amend_target_terminal' }] },
    ]);
    expect(h.outcomes[0]?.status === 'denied' && h.outcomes[0].denials[0]?.message).toContain(
      'filled before it could be replaced',
    );
  });

  it('cancels the rest instead when the fills already reach the new size', async () => {
    const h = harness();
    seed(h);
    const intent = amend({ quantity: '0.005' });
    h.venue
      .expect('getOrder', {
        value: resting({
          order_id: 'o-1',
          status: 'PARTIALLY_FILLED',
          filled_quantity: '0.008',
        }),
      })
      .expectSend(
        'cancelOrder',
        {
          value: resting({
            order_id: 'o-1',
            status: 'CANCELLED',
            filled_quantity: '0.008',
          }),
        },
        (prepared, body) => {
          expect(prepared.path).toBe('/v1/orders/o-1/cancel');
          expect(body).toEqual({ request_id: intent.requestId });
        },
      );
    h.executor.submit(intent);
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes).toMatchObject([{ status: 'accepted', orderId: null }]);
    expect(h.outcomes[0]?.note).toContain('replacement was dropped and the rest cancelled');
  });

  it('says so when the old order filled more between the check and its cancellation', async () => {
    const h = harness({
      simulate: { place: true, amend: false, closePosition: true },
    });
    seed(h);
    h.venue
      .expect('getOrder', { value: resting({ order_id: 'o-1' }) })
      .expectSend('amendOrder', {
        value: order({ order_id: 'o-2', quantity: '0.01' }),
      })
      .expect('getOrder', {
        value: resting({
          order_id: 'o-1',
          status: 'CANCELLED',
          filled_quantity: '0.003',
        }),
      });
    h.executor.submit(amend({ price: '41000' }));
    await h.executor.idle();
    h.venue.verify();
    expect(h.outcomes[0]).toMatchObject({ status: 'accepted', orderId: 'o-2' });
    expect(h.outcomes[0]?.note).toContain('filled 0.003 more');
  });
});

describe('fills', () => {
  it('emits filled once when the tracker sees the intent order filled', async () => {
    const h = harness({
      simulate: { place: false, amend: false, closePosition: false },
    });
    const intent = stamp(limitBuy(), 1);
    h.venue.expectSend('placeOrder', {
      value: order({ order_id: 'o-1', client_order_id: intent.requestId }),
    });
    h.executor.submit(intent);
    await h.executor.idle();
    const filled = order({
      order_id: 'o-1',
      client_order_id: intent.requestId,
      status: 'FILLED',
      filled_quantity: '0.01',
      average_fill_price: '42000',
      last_event_sequence: 3,
    });
    h.venue
      .expect('getOrder', { value: filled })
      .expect('listPositions', { value: [position()] })
      .expect('getAccount', { value: account() });
    h.venue.fillSource.next(fill({ fill_id: 'f-1', order_id: 'o-1' }));
    h.venue.orderEventSource.next(orderEvent('o-1', 'OPEN', 'FILLED', 3));
    await advance(h, 25);
    h.venue.verify();
    expect(h.outcomes.map((outcome) => outcome.status)).toEqual(['accepted', 'filled']);
    expect(h.outcomes[1]).toMatchObject({
      orderId: 'o-1',
      filledQuantity: '0.01',
      averagePrice: '42000',
    });
    // The same order seen again does not report a second fill.
    h.tracker.applyOrder({ ...filled, last_event_sequence: 4 });
    expect(h.outcomes).toHaveLength(2);
  });
});

describe('crash recovery', () => {
  it('resolves an intent a crashed process left in sending with the same id and bytes', async () => {
    const first = harness({
      simulate: { place: false, amend: false, closePosition: false },
    });
    const intent = stamp(limitBuy(), 1);
    const queued = stamp(limitBuy('0.02'), 2);
    first.venue.expectSend('placeOrder', { hang: true });
    first.executor.submit(intent);
    first.executor.submit(queued);
    await flushAsync();
    first.venue.verify();
    const journaledBytes = first.journal.requireIntent(intent.requestId).command?.bodyBytes;
    expect(first.journal.requireIntent(intent.requestId).state).toBe('sending');
    expect(first.journal.requireIntent(queued.requestId).state).toBe('journaled');
    // The crash: the process is gone without another write.
    first.executor.stop();
    first.tracker.stop();
    first.journal.close();

    const second = harness({}, { path: first.path, clock: new VirtualClock(START + 10_000) });
    second.venue
      .expect(
        'getRequest',
        { error: serviceError('ORDER_NOT_FOUND') },
        {
          check: (call) => expect(call.requestId).toBe(intent.requestId),
        },
      )
      .expect('getOrderByClientId', { error: serviceError('ORDER_NOT_FOUND') })
      .expectSend(
        'placeOrder',
        {
          value: order({ order_id: 'o-1', client_order_id: intent.requestId }),
        },
        (prepared) => {
          expect(prepared.requestId).toBe(intent.requestId);
          expect(Buffer.from(prepared.bodyBytes)).toEqual(Buffer.from(journaledBytes!));
        },
      );
    const report = await second.executor.settleOpenIntents();
    second.venue.verify();
    expect(report).toEqual({
      abandoned: [queued.requestId],
      resolved: [intent.requestId],
      unresolved: [],
    });
    expect(second.outcomes).toMatchObject([
      { status: 'resolved', resolution: 'accepted', orderId: 'o-1', intent },
      {
        status: 'denied',
        intent: queued,
        denials: [{ rule: 'abandoned_at_restart' }],
      },
    ]);
    expect(decode(second.venue.sends('placeOrder')[0]!.bodyBytes)).toMatchObject({
      request_id: intent.requestId,
    });
  });

  it('does not send a stale placement late', async () => {
    const first = harness({
      simulate: { place: false, amend: false, closePosition: false },
    });
    const intent = stamp(limitBuy(), 1);
    first.venue.expectSend('placeOrder', { hang: true });
    first.executor.submit(intent);
    await flushAsync();
    first.executor.stop();
    first.tracker.stop();
    first.journal.close();

    const second = harness(
      { resendMaxAgeMs: 60_000 },
      { path: first.path, clock: new VirtualClock(START + 3_600_000) },
    );
    second.venue
      .expect('getRequest', { error: serviceError('ORDER_NOT_FOUND') })
      .expect('getOrderByClientId', { error: serviceError('ORDER_NOT_FOUND') });
    await second.executor.settleOpenIntents();
    second.venue.verify();
    expect(second.outcomes).toMatchObject([
      { status: 'resolved', resolution: 'rejected', orderId: null },
    ]);
    expect(second.journal.requireIntent(intent.requestId).outcome).toMatchObject({
      code: 'NEVER_RECEIVED',
    });
  });

  it('continues sequences after a restart', async () => {
    const first = harness({
      simulate: { place: false, amend: false, closePosition: false },
    });
    first.venue.expectSend('placeOrder', { value: order({ order_id: 'o-1' }) });
    first.executor.submit(stamp(limitBuy(), 7));
    await first.executor.idle();
    first.journal.noteSequence('alpha', 9);
    first.executor.stop();
    first.journal.close();
    const reopened = openJournal(first.path, new VirtualClock(START));
    cleanups.push(() => reopened.close());
    expect(reopened.nextSequence('alpha')).toBe(10);
    expect(reopened.nextSequence('beta')).toBe(1);
  });
});
