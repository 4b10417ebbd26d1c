/**
 * The shutdown close-out on virtual time against a strict fake venue (unexpected calls fail) and
 * a real journal file: the cancel-all meets 429 (Retry-After in seconds and as an HTTP date),
 * 503 (retryable and not), and a timed-out answer recovered by request id; it retries within the
 * deadline with the same request id and bytes, confirms with a read of the open orders, and
 * when it cannot confirm names the orders that may remain and leaves the deadline armed.
 * Refusals are made by the real client's response reading (`interpretResponse`) and the live
 * venue's error translation, so the Retry-After header is read as it is in production.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { interpretResponse } from '../../../src/client/index.ts';
import { isoTimestamp, VirtualClock } from '../../../src/core/clock.ts';
import type { EndpointName } from '../../../src/protocol/index.ts';
import { DeadmanSwitch, type ShutdownReport } from '../../../src/runtime/deadman/heartbeat.ts';
import type { ShutdownConfig } from '../../../src/runtime/deadman/shutdown.ts';
import type { Journal } from '../../../src/runtime/journal/journal.ts';
import { toVenueFailure } from '../../../src/runtime/venue-error.ts';
import type { PreparedCommand } from '../../../src/runtime/venue.ts';
import {
  EPOCH,
  mutationStatus,
  openJournal,
  order,
  START,
  serviceError,
  tempJournalPath,
} from '../execution/fixtures.ts';
import { bodyOf, StrictVenue } from '../execution/strict-venue.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const SHUTDOWN: Partial<ShutdownConfig> = {
  deadlineMs: 20_000,
  requestTimeoutMs: 2_000,
  maxAttempts: 8,
  retryBaseDelayMs: 500,
  retryMaxDelayMs: 4_000,
  maxRounds: 3,
};

interface Setup {
  readonly clock: VirtualClock;
  readonly journal: Journal;
  readonly venue: StrictVenue;
  readonly deadman: DeadmanSwitch;
  /** Clock time of each send, in order, with its endpoint and bytes. */
  readonly sent: { at: number; prepared: PreparedCommand }[];
}

async function flushAsync(): Promise<void> {
  for (let round = 0; round < 10; round++) await new Promise((resolve) => setImmediate(resolve));
}

/** Settles `work`, moving the virtual clock from timer to timer (bounded). */
async function settle<T>(clock: VirtualClock, work: Promise<T>): Promise<T> {
  let done = false;
  void work.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let step = 0; step < 200; step++) {
    await flushAsync();
    if (done) return work;
    const next = clock.nextDueAt();
    if (next === null) throw new Error('the shutdown waits on nothing the clock can move');
    clock.advanceTo(next);
  }
  throw new Error('the shutdown did not settle within 200 timer steps');
}

async function setup(): Promise<Setup> {
  const temp = tempJournalPath();
  cleanups.push(temp.cleanup);
  const clock = new VirtualClock(START);
  const journal = openJournal(temp.path, clock);
  const venue = new StrictVenue();
  const deadman = new DeadmanSwitch({
    venue,
    journal,
    clock,
    config: { timeoutSeconds: 60 },
    recover: () => Promise.reject(new Error('no recovery expected')),
  });
  cleanups.push(() => {
    deadman.stop();
    if (journal.isOpen) journal.close();
  });
  const sent: { at: number; prepared: PreparedCommand }[] = [];
  const s = { clock, journal, venue, deadman, sent };
  expectSend(s, 'setCancelAllAfter', () => ({
    request_id: `pb-deadman:${EPOCH}:1`,
    deadline_at: isoTimestamp(clock.now() + 60_000),
  }));
  await deadman.start();
  venue.verify();
  return s;
}

/** Expects one send to `endpoint`, noting when it came; `answer` may throw or return a promise. */
function expectSend(
  s: Pick<Setup, 'clock' | 'venue' | 'sent'>,
  endpoint: EndpointName,
  answer: (prepared: PreparedCommand) => unknown,
): void {
  s.venue.expect(
    'send',
    { answer: (call) => answer(call.prepared) },
    {
      label: `send ${endpoint}`,
      check: (call) => {
        expect(call.prepared.endpoint).toBe(endpoint);
        s.sent.push({ at: s.clock.now(), prepared: call.prepared });
      },
    },
  );
}

/** A refusal as the live venue reports it: the real client reads the status, headers and body. */
function refusal(
  endpoint: EndpointName,
  status: number,
  code: string,
  retryable: boolean,
  headers: Record<string, string> = {},
  serverNowMs = START,
): unknown {
  try {
    interpretResponse(
      endpoint,
      {
        status,
        headers: { 'svc-request-id': 'srv-1', ...headers },
        text: JSON.stringify({
          error: { code, message: `${code} (test)`, request_id: 'srv-1', retryable, details: {} },
        }),
      },
      { serverNowMs },
    );
  } catch (error) {
    return toVenueFailure(error);
  }
  throw new Error('expected a refusal');
}

function cancelAllAnswer(requestId: string) {
  return { request_id: requestId, results: [order({ order_id: 'o-1', status: 'CANCELLED' })] };
}

function expectDisarm(s: Setup, sequence: number): void {
  expectSend(s, 'setCancelAllAfter', (prepared) => {
    expect(bodyOf(prepared)).toEqual({
      request_id: `pb-deadman:${EPOCH}:${sequence}`,
      timeout_seconds: 0,
    });
    return { request_id: prepared.requestId, deadline_at: null };
  });
}

function cancelAllSends(s: Setup) {
  return s.sent.filter((entry) => entry.prepared.endpoint === 'cancelAllOrders');
}

function expectConfirmed(s: Setup, report: ShutdownReport): void {
  expect(report).toMatchObject({
    cancelled: true,
    confirmed: true,
    disarmed: true,
    remainingOrderIds: [],
    error: null,
  });
  expect(s.journal.readDeadman()).toMatchObject({ armed: false, deadlineAt: null });
  s.venue.verify();
}

const FIRST_CANCEL_ALL = `pb-shutdown:${EPOCH}:1`;

describe('shutdown close-out', () => {
  it('waits for Retry-After (seconds) on 429, resends the same bytes, confirms, disarms', async () => {
    const s = await setup();
    const started = s.clock.now();
    expectSend(s, 'cancelAllOrders', () => {
      throw refusal('cancelAllOrders', 429, 'RATE_LIMITED', true, { 'retry-after': '3' });
    });
    expectSend(s, 'cancelAllOrders', (prepared) => cancelAllAnswer(prepared.requestId));
    s.venue.expect('listOpenOrders', { value: [] });
    expectDisarm(s, 2);
    const report = await settle(s.clock, s.deadman.shutdown({ config: SHUTDOWN }));
    expectConfirmed(s, report);
    const sends = cancelAllSends(s);
    expect(sends.map((entry) => entry.at - started)).toEqual([0, 3_000]);
    expect(sends[1]?.prepared.requestId).toBe(FIRST_CANCEL_ALL);
    expect(sends[1]?.prepared.bodyBytes).toEqual(sends[0]?.prepared.bodyBytes);
    expect(s.journal.getInternalCommand(FIRST_CANCEL_ALL)?.state).toBe('accepted');
  });

  it('waits for Retry-After given as an HTTP date', async () => {
    const s = await setup();
    const started = s.clock.now();
    // Four seconds after the venue's now, written the HTTP way.
    const date = new Date(started + 4_000).toUTCString();
    expectSend(s, 'cancelAllOrders', () => {
      throw refusal('cancelAllOrders', 429, 'RATE_LIMITED', true, { 'retry-after': date }, started);
    });
    expectSend(s, 'cancelAllOrders', (prepared) => cancelAllAnswer(prepared.requestId));
    s.venue.expect('listOpenOrders', { value: [] });
    expectDisarm(s, 2);
    const report = await settle(s.clock, s.deadman.shutdown({ config: SHUTDOWN }));
    expectConfirmed(s, report);
    expect(cancelAllSends(s).map((entry) => entry.at - started)).toEqual([0, 4_000]);
  });

  it('recovers a retryable 503 by request id, then resends the same bytes', async () => {
    const s = await setup();
    expectSend(s, 'cancelAllOrders', () => {
      throw refusal('cancelAllOrders', 503, 'EXECUTION_UNAVAILABLE', true);
    });
    // A 5xx may have been applied: the venue is asked before anything is resent.
    s.venue.expect(
      'getRequest',
      { error: serviceError('ORDER_NOT_FOUND', 404) },
      { check: (call) => expect(call.requestId).toBe(FIRST_CANCEL_ALL) },
    );
    expectSend(s, 'cancelAllOrders', (prepared) => cancelAllAnswer(prepared.requestId));
    s.venue.expect('listOpenOrders', { value: [] });
    expectDisarm(s, 2);
    const report = await settle(s.clock, s.deadman.shutdown({ config: SHUTDOWN }));
    expectConfirmed(s, report);
    const sends = cancelAllSends(s);
    expect(sends.map((entry) => entry.prepared.requestId)).toEqual([
      FIRST_CANCEL_ALL,
      FIRST_CANCEL_ALL,
    ]);
    expect(sends[1]?.prepared.bodySha256).toBe(sends[0]?.prepared.bodySha256);
    expect(report.cancelAll?.results).toHaveLength(1);
  });

  it('does not resend after a 503 marked not retryable; names the orders still open and exits unconfirmed', async () => {
    const s = await setup();
    expectSend(s, 'cancelAllOrders', () => {
      throw refusal('cancelAllOrders', 503, 'EXECUTION_UNAVAILABLE', false);
    });
    s.venue.expect('listOpenOrders', {
      value: [order({ order_id: 'o-2' }), order({ order_id: 'o-1' })],
    });
    const report = await settle(s.clock, s.deadman.shutdown({ config: SHUTDOWN }));
    s.venue.verify();
    expect(cancelAllSends(s)).toHaveLength(1);
    expect(report).toMatchObject({
      cancelled: false,
      confirmed: false,
      disarmed: false,
      remainingOrderIds: ['o-1', 'o-2'],
      error: { code: 'EXECUTION_UNAVAILABLE' },
    });
    // The deadline stays armed: the venue cancels what is left when it passes.
    expect(s.journal.readDeadman()).toMatchObject({ armed: true });
    expect(s.deadman.status.phase).toBe('shutting_down');
  });

  it('recovers a timed-out cancel-all by request id without resending it', async () => {
    const s = await setup();
    const started = s.clock.now();
    expectSend(s, 'cancelAllOrders', () => new Promise(() => {}));
    s.venue.expect('getRequest', {
      answer: (call) => mutationStatus(call.requestId, 'COMPLETED'),
    });
    s.venue.expect('listOpenOrders', { value: [] });
    expectDisarm(s, 2);
    const report = await settle(s.clock, s.deadman.shutdown({ config: SHUTDOWN }));
    expect(report.cancelAll).toBeNull();
    expectConfirmed(s, report);
    expect(cancelAllSends(s)).toHaveLength(1);
    // Given up after the request timeout, then asked after the first backoff.
    const recovery = s.venue.calls.findIndex((call) => call.method === 'getRequest');
    expect(recovery).toBeGreaterThan(-1);
    expect(s.clock.now() - started).toBe(2_000 + 500);
  });

  it('starts another round with a new request id when an order landed after the cancel-all', async () => {
    const s = await setup();
    expectSend(s, 'cancelAllOrders', (prepared) => cancelAllAnswer(prepared.requestId));
    s.venue.expect('listOpenOrders', { value: [order({ order_id: 'late-1' })] });
    expectSend(s, 'cancelAllOrders', (prepared) => cancelAllAnswer(prepared.requestId));
    s.venue.expect('listOpenOrders', { value: [] });
    expectDisarm(s, 2);
    const report = await settle(s.clock, s.deadman.shutdown({ config: SHUTDOWN }));
    expectConfirmed(s, report);
    expect(cancelAllSends(s).map((entry) => entry.prepared.requestId)).toEqual([
      FIRST_CANCEL_ALL,
      `pb-shutdown:${EPOCH}:2`,
    ]);
  });

  it('gives up at the deadline when the venue keeps refusing, naming the orders that may remain', async () => {
    const s = await setup();
    const started = s.clock.now();
    const config = { ...SHUTDOWN, deadlineMs: 6_000, maxAttempts: 50 };
    // Every send is refused with Retry-After 1: as many as the deadline allows, no more.
    for (let index = 0; index < 6; index++) {
      expectSend(s, 'cancelAllOrders', () => {
        throw refusal('cancelAllOrders', 429, 'RATE_LIMITED', true, { 'retry-after': '1' });
      });
    }
    s.venue.expect('listOpenOrders', { value: [order({ order_id: 'o-9' })] });
    const report = await settle(
      s.clock,
      s.deadman.shutdown({ config, knownOpenOrderIds: () => ['o-9'] }),
    );
    s.venue.verify();
    expect(cancelAllSends(s).map((entry) => entry.at - started)).toEqual([
      0, 1_000, 2_000, 3_000, 4_000, 5_000,
    ]);
    expect(report).toMatchObject({
      cancelled: false,
      confirmed: false,
      disarmed: false,
      remainingOrderIds: ['o-9'],
      error: { code: 'RATE_LIMITED' },
    });
    expect(s.journal.getInternalCommand(FIRST_CANCEL_ALL)?.state).toBe('rejected');
    expect(s.journal.readDeadman()).toMatchObject({ armed: true });
  });

  it('names the orders the bot knows of when no read of the open orders succeeds', async () => {
    const s = await setup();
    const config = { ...SHUTDOWN, deadlineMs: 5_000 };
    expectSend(s, 'cancelAllOrders', () => {
      throw refusal('cancelAllOrders', 503, 'EXECUTION_UNAVAILABLE', false);
    });
    for (let index = 0; index < 4; index++) {
      s.venue.expect('listOpenOrders', { error: serviceError('EXECUTION_UNAVAILABLE', 503) });
    }
    const report = await settle(
      s.clock,
      s.deadman.shutdown({ config, knownOpenOrderIds: () => ['o-4', 'o-3'] }),
    );
    s.venue.verify();
    expect(report).toMatchObject({
      confirmed: false,
      disarmed: false,
      remainingOrderIds: ['o-3', 'o-4'],
    });
  });
});
