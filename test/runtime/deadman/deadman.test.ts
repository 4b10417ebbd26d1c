/**
 * The dead-man heartbeat on virtual time against a strict fake venue and a real journal file:
 * armed before trading, refreshed at most every timeout / 4 with new ids, trading stopped after
 * two failed refreshes or when the deadline could pass, reconcile-then-re-arm after a fired
 * deadline, and cancel-all-then-confirm-then-disarm on a clean shutdown (the shutdown's retries
 * are in shutdown.test.ts), and refreshes pipelined on their own lane when the venue is slow.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isoTimestamp, VirtualClock } from '../../../src/core/clock.ts';
import { type DeadmanConfig, DeadmanSwitch } from '../../../src/runtime/deadman/heartbeat.ts';
import type { Journal } from '../../../src/runtime/journal/journal.ts';
import {
  openJournal,
  order,
  START,
  serviceError,
  tempJournalPath,
  transportError,
} from '../execution/fixtures.ts';
import { bodyOf, StrictVenue } from '../execution/strict-venue.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

interface Setup {
  readonly clock: VirtualClock;
  readonly journal: Journal;
  readonly venue: StrictVenue;
  readonly deadman: DeadmanSwitch;
  readonly mayTrade: boolean[];
  readonly recoveries: { resolve: (ok: boolean) => void }[];
}

function setup(config: Partial<DeadmanConfig> = {}): Setup {
  const temp = tempJournalPath();
  cleanups.push(temp.cleanup);
  const clock = new VirtualClock(START);
  const journal = openJournal(temp.path, clock);
  const venue = new StrictVenue();
  const recoveries: { resolve: (ok: boolean) => void }[] = [];
  const deadman = new DeadmanSwitch({
    venue,
    journal,
    clock,
    config: { timeoutSeconds: 60, ...config },
    recover: () =>
      new Promise<boolean>((resolve) => {
        recoveries.push({ resolve });
      }),
  });
  const mayTrade: boolean[] = [];
  deadman.mayTrade$.subscribe((value) => mayTrade.push(value));
  cleanups.push(() => {
    deadman.stop();
    journal.close();
  });
  return { clock, journal, venue, deadman, mayTrade, recoveries };
}

/** Expects one heartbeat; the venue confirms a deadline `timeout` seconds from its now. */
function expectHeartbeat(
  s: Setup,
  timeoutSeconds: number,
  requestSequence: number,
  venueDeadlineOffsetMs = timeoutSeconds * 1000,
): void {
  const requestId = `pb-deadman:testepoch01:${requestSequence}`;
  s.venue.expect(
    'send',
    {
      answer: () => ({
        request_id: requestId,
        deadline_at:
          timeoutSeconds === 0 ? null : isoTimestamp(s.clock.now() + venueDeadlineOffsetMs),
      }),
    },
    {
      label: `heartbeat ${requestSequence}`,
      check: (call) => {
        expect(call.prepared.endpoint).toBe('setCancelAllAfter');
        expect(bodyOf(call.prepared)).toEqual({
          request_id: requestId,
          timeout_seconds: timeoutSeconds,
        });
        // Journaled before it is sent.
        expect(s.journal.getInternalCommand(requestId)?.state).toBe('sending');
      },
    },
  );
}

async function advance(s: Setup, ms: number): Promise<void> {
  s.clock.advanceBy(ms);
  await s.deadman.idle();
}

async function flushAsync(): Promise<void> {
  for (let round = 0; round < 5; round++) await new Promise((resolve) => setImmediate(resolve));
}

describe('dead-man heartbeat', () => {
  it('arms before the first order and only then lets the bot trade', async () => {
    const s = setup();
    expect(s.mayTrade).toEqual([false]);
    expectHeartbeat(s, 60, 1);
    await s.deadman.start();
    s.venue.verify();
    expect(s.mayTrade).toEqual([false, true]);
    expect(s.deadman.status).toMatchObject({
      phase: 'armed',
      deadlineAt: START + 60_000,
      lastRequestId: 'pb-deadman:testepoch01:1',
    });
    expect(s.journal.readDeadman()).toMatchObject({
      armed: true,
      deadlineAt: START + 60_000,
    });
    expect(s.journal.getInternalCommand('pb-deadman:testepoch01:1')?.state).toBe('accepted');
  });

  it('keeps trading off while arming fails, retrying with backoff', async () => {
    const s = setup({ retryBaseDelayMs: 1_000 });
    s.venue.expect('send', {
      error: serviceError('EXECUTION_UNAVAILABLE', 503),
    });
    await s.deadman.start();
    s.venue.verify();
    expect(s.mayTrade).toEqual([false]);
    await advance(s, 999);
    s.venue.verify();
    expectHeartbeat(s, 60, 2);
    await advance(s, 1);
    s.venue.verify();
    expect(s.mayTrade).toEqual([false, true]);
  });

  it('refreshes every timeout / 4 with a new request id each time', async () => {
    const s = setup();
    expectHeartbeat(s, 60, 1);
    await s.deadman.start();
    await advance(s, 14_999);
    s.venue.verify();
    for (const sequence of [2, 3, 4]) {
      expectHeartbeat(s, 60, sequence);
      await advance(s, sequence === 2 ? 1 : 15_000);
      s.venue.verify();
    }
    expect(s.deadman.status.deadlineAt).toBe(START + 45_000 + 60_000);
    expect(s.mayTrade).toEqual([false, true]);
  });

  it('refuses a refresh period longer than timeout / 4', () => {
    expect(() => setup({ timeoutSeconds: 60, refreshIntervalMs: 15_001 })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    );
  });

  it('stops trading after two failed refreshes, and resumes when one is confirmed', async () => {
    const s = setup();
    expectHeartbeat(s, 60, 1);
    await s.deadman.start();
    s.venue.expect('send', { error: transportError('TRANSPORT_FAILURE') });
    await advance(s, 15_000);
    expect(s.mayTrade).toEqual([false, true]);
    s.venue.expect('send', { error: serviceError('RATE_LIMITED') });
    await advance(s, 15_000);
    s.venue.verify();
    expect(s.mayTrade).toEqual([false, true, false]);
    expect(s.deadman.status).toMatchObject({
      phase: 'armed',
      failedRefreshes: 2,
    });
    expectHeartbeat(s, 60, 4);
    await advance(s, 15_000);
    s.venue.verify();
    expect(s.mayTrade).toEqual([false, true, false, true]);
  });

  it('stops trading when the deadline could pass, then reconciles and re-arms after it passed', async () => {
    // The venue's deadline is earlier than the bot expects (its clock runs ahead).
    const s = setup({ latencyMarginMs: 2_000 });
    expectHeartbeat(s, 60, 1, 20_000);
    await s.deadman.start();
    expect(s.deadman.status.deadlineAt).toBe(START + 20_000);
    // The refresh at 15 s hangs.
    s.venue.expect('send', { hang: true });
    s.clock.advanceBy(15_000);
    await flushAsync();
    expect(s.mayTrade).toEqual([false, true]);
    s.clock.advanceBy(2_999);
    expect(s.mayTrade).toEqual([false, true]);
    s.clock.advanceBy(1);
    expect(s.mayTrade).toEqual([false, true, false]);
    expect(s.deadman.status.reason).toContain('could pass');
    // At the deadline the bot assumes the venue cancelled: it reconciles before anything else.
    s.clock.advanceBy(2_000);
    await flushAsync();
    expect(s.deadman.status.phase).toBe('recovering');
    expect(s.recoveries).toHaveLength(1);
    s.venue.verify();
    expectHeartbeat(s, 60, 3);
    s.recoveries[0]?.resolve(true);
    // The refresh still hanging from before does not hold up the re-arm.
    await flushAsync();
    s.venue.verify();
    expect(s.deadman.status.phase).toBe('armed');
    expect(s.mayTrade).toEqual([false, true, false, true]);
  });

  it('re-arms after a triggered deadline only once reconciliation succeeded', async () => {
    const s = setup({ retryBaseDelayMs: 1_000 });
    expectHeartbeat(s, 60, 1);
    await s.deadman.start();
    s.venue.riskEventSource.next({
      version: 1,
      channel: 'risk',
      type: 'cancel_all_after.triggered',
      sequence: 9,
      event_id: '00000000-0000-4000-8000-000000000009',
      occurred_at: isoTimestamp(START + 1_000),
      data: {
        deadline_at: isoTimestamp(START + 1_000),
        triggered_at: isoTimestamp(START + 1_000),
        cancelled_order_ids: ['o-1'],
      },
    });
    expect(s.mayTrade).toEqual([false, true, false]);
    await flushAsync();
    expect(s.recoveries).toHaveLength(1);
    // Reconciliation fails: no re-arm, a retry later.
    s.recoveries[0]?.resolve(false);
    await flushAsync();
    s.venue.verify();
    s.clock.advanceBy(1_000);
    await flushAsync();
    expect(s.recoveries).toHaveLength(2);
    expectHeartbeat(s, 60, 2);
    s.recoveries[1]?.resolve(true);
    await flushAsync();
    await s.deadman.idle();
    s.venue.verify();
    expect(s.mayTrade).toEqual([false, true, false, true]);
    expect(s.journal.readDeadman()).toMatchObject({
      armed: true,
      firedAt: null,
    });
  });

  it('cancels all, then disarms, on a clean shutdown', async () => {
    const s = setup();
    expectHeartbeat(s, 60, 1);
    await s.deadman.start();
    const cancelled = order({ order_id: 'o-1', status: 'CANCELLED' });
    s.venue.expect(
      'send',
      {
        value: {
          request_id: 'pb-shutdown:testepoch01:1',
          results: [cancelled],
        },
      },
      {
        check: (call) => {
          expect(call.prepared.endpoint).toBe('cancelAllOrders');
          expect(bodyOf(call.prepared)).toEqual({
            request_id: 'pb-shutdown:testepoch01:1',
          });
        },
      },
    );
    // Confirmed by a read of the open orders before the deadline is disarmed.
    s.venue.expect('listOpenOrders', { value: [] });
    expectHeartbeat(s, 0, 2);
    const report = await s.deadman.shutdown();
    s.venue.verify();
    expect(s.venue.sends().map((prepared) => prepared.endpoint)).toEqual([
      'setCancelAllAfter',
      'cancelAllOrders',
      'setCancelAllAfter',
    ]);
    expect(report).toMatchObject({
      cancelled: true,
      confirmed: true,
      disarmed: true,
      remainingOrderIds: [],
      error: null,
    });
    expect(report.cancelAll?.results).toHaveLength(1);
    expect(s.mayTrade).toEqual([false, true, false]);
    expect(s.journal.readDeadman()).toMatchObject({
      armed: false,
      deadlineAt: null,
    });
    // Nothing is refreshed after the shutdown.
    await advance(s, 120_000);
    s.venue.verify();
  });

  it('leaves the deadline armed when the shutdown cannot confirm every order closed', async () => {
    const s = setup();
    expectHeartbeat(s, 60, 1);
    await s.deadman.start();
    // A refusal that retrying cannot mend; the read shows the order still resting.
    s.venue.expect('send', { error: serviceError('SCOPE_REQUIRED', 403) });
    s.venue.expect('listOpenOrders', { value: [order({ order_id: 'o-1' })] });
    const report = await s.deadman.shutdown();
    s.venue.verify();
    expect(report).toMatchObject({
      cancelled: false,
      confirmed: false,
      disarmed: false,
      remainingOrderIds: ['o-1'],
    });
    expect(s.journal.readDeadman()).toMatchObject({ armed: true });
  });

  it('pipelines refreshes on a slow venue: the next goes out unanswered ones aside, bounded, and the latest deadline stands', async () => {
    const s = setup({ timeoutSeconds: 20, latencyMarginMs: 3_000, maxRefreshesInFlight: 2 });
    expectHeartbeat(s, 20, 1);
    await s.deadman.start();
    // Refreshes every 5 s; the venue holds each answer until the test releases it.
    const held: { sequence: number; release: () => void }[] = [];
    const holdHeartbeat = (sequence: number) => {
      s.venue.expect(
        'send',
        {
          answer: (call) =>
            new Promise((resolve) => {
              const deadline = s.clock.now() + 20_000;
              held.push({
                sequence,
                release: () =>
                  resolve({
                    request_id: call.prepared.requestId,
                    deadline_at: isoTimestamp(deadline),
                  }),
              });
            }),
        },
        {
          check: (call) =>
            expect(bodyOf(call.prepared)).toEqual({
              request_id: `pb-deadman:testepoch01:${sequence}`,
              timeout_seconds: 20,
            }),
        },
      );
    };
    holdHeartbeat(2);
    holdHeartbeat(3);
    s.clock.advanceBy(5_000);
    await flushAsync();
    s.clock.advanceBy(5_000);
    await flushAsync();
    // Both are out although neither was answered.
    expect(held.map((entry) => entry.sequence)).toEqual([2, 3]);
    // The third finds two in flight: not sent, counted as a failed refresh.
    s.clock.advanceBy(5_000);
    await flushAsync();
    s.venue.verify();
    expect(s.deadman.status.failedRefreshes).toBe(1);
    // Answered out of order: the later deadline (sent at 10 s) stands when the older arrives.
    held[1]?.release();
    await flushAsync();
    expect(s.deadman.status.deadlineAt).toBe(START + 10_000 + 20_000);
    held[0]?.release();
    await flushAsync();
    expect(s.deadman.status).toMatchObject({
      deadlineAt: START + 10_000 + 20_000,
      lastRequestId: 'pb-deadman:testepoch01:3',
      failedRefreshes: 0,
    });
    expect(s.mayTrade).toEqual([false, true]);
  });
});
