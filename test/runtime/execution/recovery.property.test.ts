/**
 * Crash recovery as a property: random intents, random crash points and random venue outcomes
 * (lost before or after processing, timeouts, 503s, confirmation pending, refusals, unreadable
 * request status), over several process lifetimes on one journal file. Whatever happens:
 * - at the venue, every request id carries one body for life and each intent makes at most one
 *   order (the venue is idempotent on request id, so a second order would need a second id);
 * - every journaled request id is the intent's own;
 * - once the venue answers truthfully, every intent ends settled, and consistently with the
 *   venue: accepted ones name the order the venue holds under their client order id, refused or
 *   dropped ones have none; only a refusal by the venue ends one rejected, and only an intent
 *   never sent ends denied (so an unknown one is never taken for rejected).
 */
import fc from 'fast-check';
import { BehaviorSubject, NEVER, type Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { PaperbotError } from '../../../src/core/errors.ts';
import type {
  Account,
  MutationStatus,
  Order,
  Position,
  ResponseOf,
} from '../../../src/protocol/index.ts';
import { Executor } from '../../../src/runtime/execution/executor.ts';
import { OrderTracker } from '../../../src/runtime/execution/tracker.ts';
import type { StampedIntent } from '../../../src/runtime/intents.ts';
import {
  type CommandEndpoint,
  type ExecutionVenue,
  type PreparedCommand,
  type PrivateStreamFeed,
  type ResyncSignal,
  type RiskEvent,
  type VenueCommandOf,
} from '../../../src/runtime/venue.ts';
import { prepareCommand, restoreCommand } from '../../../src/signing/index.ts';
import {
  limitBuy,
  mutationStatus,
  openJournal,
  order,
  START,
  serviceError,
  simulation,
  stamp,
  tempJournalPath,
  transportError,
} from './fixtures.ts';
import { bodyOf } from './strict-venue.ts';

/** What the venue does with one placement send. */
type SendBehaviour =
  | 'ok'
  | 'lost_before'
  | 'lost_after'
  | 'unavailable_before'
  | 'confirmation_pending_after'
  | 'refused'
  | 'crash_before'
  | 'crash_after';

/** What the venue does with one request-status read. */
type StatusBehaviour = 'truthful' | 'unreadable' | 'pending';

const sendBehaviours: readonly SendBehaviour[] = [
  'ok',
  'lost_before',
  'lost_after',
  'unavailable_before',
  'confirmation_pending_after',
  'refused',
  'crash_before',
  'crash_after',
];

/**
 * A small model of the service: idempotent on request id (same bytes return the stored order,
 * other bytes are IDEMPOTENCY_CONFLICT), orders keyed by client order id, and scripted failures.
 */
class ModelVenue implements ExecutionVenue {
  readonly privateStream: PrivateStreamFeed = {
    items$: NEVER,
    readFillsBack: () => Promise.reject(new Error('the model venue reads no fills back')),
  };
  readonly riskEvents$: Observable<RiskEvent> = NEVER;
  readonly resync$: Observable<ResyncSignal> = NEVER;

  readonly bodies = new Map<string, string>();
  readonly ordersByRequest = new Map<string, Order>();
  readonly ordersByClientId = new Map<string, Order[]>();
  readonly violations: string[] = [];
  readonly requestIdsSeen = new Set<string>();
  /** Scripts; when a script runs out the venue behaves (ok / truthful). */
  sendScript: SendBehaviour[] = [];
  statusScript: StatusBehaviour[] = [];
  crashed = false;
  private nextOrder = 1;

  prepare<E extends CommandEndpoint>(command: VenueCommandOf<E>): PreparedCommand<E> {
    return prepareCommand(command);
  }

  restore<E extends CommandEndpoint>(endpoint: E, path: string, bytes: Uint8Array) {
    return restoreCommand(endpoint, path, bytes);
  }

  private process(prepared: PreparedCommand): Order {
    const stored = this.bodies.get(prepared.requestId);
    if (stored !== undefined && stored !== prepared.bodySha256) {
      this.violations.push(`request id ${prepared.requestId} reused with other bytes`);
      throw serviceError('IDEMPOTENCY_CONFLICT');
    }
    const existing = this.ordersByRequest.get(prepared.requestId);
    if (existing !== undefined) return existing;
    this.bodies.set(prepared.requestId, prepared.bodySha256);
    const body = bodyOf(prepared);
    const clientOrderId = String(body.client_order_id);
    const created = order({
      order_id: `venue-${this.nextOrder++}`,
      client_order_id: clientOrderId,
      request_id: prepared.requestId,
    });
    this.ordersByRequest.set(prepared.requestId, created);
    const list = this.ordersByClientId.get(clientOrderId) ?? [];
    list.push(created);
    this.ordersByClientId.set(clientOrderId, list);
    return created;
  }

  async send<E extends CommandEndpoint>(prepared: PreparedCommand<E>): Promise<ResponseOf<E>> {
    if (this.crashed) return new Promise(() => {});
    if (prepared.endpoint === 'simulateOrder') {
      return simulation('READY') as ResponseOf<E>;
    }
    if (prepared.endpoint !== 'placeOrder') {
      this.violations.push(`unexpected endpoint ${prepared.endpoint}`);
      throw new PaperbotError('FAKE_UNEXPECTED_CALL', prepared.endpoint);
    }
    this.requestIdsSeen.add(prepared.requestId);
    const behaviour = this.sendScript.shift() ?? 'ok';
    switch (behaviour) {
      case 'ok':
        return this.process(prepared) as ResponseOf<E>;
      case 'lost_before':
        throw transportError('TRANSPORT_FAILURE');
      case 'lost_after':
        this.process(prepared);
        throw transportError('REQUEST_TIMEOUT');
      case 'unavailable_before':
        throw serviceError('EXECUTION_UNAVAILABLE', 503);
      case 'confirmation_pending_after':
        this.process(prepared);
        throw serviceError('ORDER_CONFIRMATION_PENDING');
      case 'refused':
        if (this.bodies.has(prepared.requestId)) return this.process(prepared) as ResponseOf<E>;
        throw serviceError('INSUFFICIENT_READY_CAPITAL');
      case 'crash_before':
        this.crashed = true;
        return new Promise(() => {});
      case 'crash_after':
        this.process(prepared);
        this.crashed = true;
        return new Promise(() => {});
    }
  }

  async getRequest(requestId: string): Promise<MutationStatus> {
    if (this.crashed) return new Promise(() => {});
    const behaviour = this.statusScript.shift() ?? 'truthful';
    if (behaviour === 'unreadable') throw transportError('TRANSPORT_FAILURE');
    const created = this.ordersByRequest.get(requestId);
    if (created === undefined) throw serviceError('ORDER_NOT_FOUND');
    if (behaviour === 'pending') return mutationStatus(requestId, 'PENDING');
    return mutationStatus(requestId, 'COMPLETED', {
      order_id: created.order_id,
      status: created.status,
    });
  }

  async getOrderByClientId(clientOrderId: string): Promise<Order> {
    if (this.crashed) return new Promise(() => {});
    const found = this.ordersByClientId.get(clientOrderId)?.[0];
    if (found === undefined) throw serviceError('ORDER_NOT_FOUND');
    return found;
  }

  async getOrder(orderId: string): Promise<Order> {
    for (const created of this.ordersByRequest.values()) {
      if (created.order_id === orderId) return created;
    }
    throw serviceError('ORDER_NOT_FOUND');
  }

  async listOpenOrders(): Promise<Order[]> {
    return [...this.ordersByRequest.values()];
  }

  async listPositions(): Promise<Position[]> {
    return [];
  }

  async getAccount(): Promise<Account> {
    throw new PaperbotError('FAKE_UNEXPECTED_CALL', 'getAccount');
  }
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

async function flushAsync(): Promise<void> {
  for (let round = 0; round < 4; round++) await new Promise((resolve) => setImmediate(resolve));
}

interface Scenario {
  readonly intents: number;
  /** The lifetime (0-based) in which each intent is submitted. */
  readonly submittedIn: readonly number[];
  readonly sends: readonly SendBehaviour[];
  readonly statuses: readonly StatusBehaviour[];
  readonly simulate: boolean;
}

const scenario: fc.Arbitrary<Scenario> = fc.integer({ min: 1, max: 4 }).chain((intents) =>
  fc.record({
    intents: fc.constant(intents),
    submittedIn: fc.array(fc.integer({ min: 0, max: 3 }), {
      minLength: intents,
      maxLength: intents,
    }),
    sends: fc.array(fc.constantFrom(...sendBehaviours), { maxLength: 12 }),
    statuses: fc.array(fc.constantFrom<StatusBehaviour>('truthful', 'unreadable', 'pending'), {
      maxLength: 12,
    }),
    simulate: fc.boolean(),
  }),
);

const MAX_LIFETIMES = 4;

async function runScenario(input: Scenario): Promise<void> {
  const temp = tempJournalPath();
  cleanups.push(temp.cleanup);
  const venue = new ModelVenue();
  venue.sendScript = [...input.sends];
  venue.statusScript = [...input.statuses];
  const intents: StampedIntent[] = Array.from({ length: input.intents }, (_, index) =>
    stamp(limitBuy(), index + 1),
  );
  const submitted = new Set<string>();
  let time = START;

  for (let lifetime = 0; lifetime <= MAX_LIFETIMES; lifetime++) {
    const last = lifetime === MAX_LIFETIMES;
    if (last) {
      // From here on the venue answers every request, and truthfully.
      venue.sendScript = [];
      venue.statusScript = [];
    }
    venue.crashed = false;
    const clock = new VirtualClock(time);
    // A process crash, not a power loss, is what is simulated: `normal` durability suffices.
    const journal = openJournal(temp.path, clock, 'normal');
    const tracker = new OrderTracker({ venue, journal, clock });
    const executor = new Executor({
      venue,
      journal,
      tracker,
      clock,
      permit$: new BehaviorSubject(true),
      config: {
        simulate: { place: input.simulate, amend: false, closePosition: false },
        resendMaxAgeMs: null,
        resolutionAttempts: 3,
        resolutionBaseDelayMs: 100,
        callTimeoutMs: 1_000,
      },
    });
    // Recovery first (it runs ahead of everything in the lane), then this lifetime's intents.
    void executor.settleOpenIntents().catch(() => undefined);
    for (const [index, intent] of intents.entries()) {
      const due = (input.submittedIn[index] ?? 0) <= lifetime || last;
      if (due && !submitted.has(intent.requestId)) {
        submitted.add(intent.requestId);
        executor.submit(intent);
      }
    }
    // Drive time until the lane is idle and no timer is left, or the venue "crashes" us.
    for (let step = 0; step < 500; step++) {
      await flushAsync();
      if (venue.crashed) break;
      const idle = await Promise.race([
        executor.idle().then(() => true),
        flushAsync().then(() => false),
      ]);
      const due = clock.nextDueAt();
      if (due === null) {
        if (idle) break;
        continue;
      }
      clock.advanceTo(due);
    }
    await flushAsync();
    time = clock.now() + 1_000;
    executor.stop();
    tracker.stop();
    journal.close();
    if (!last && !venue.crashed && lifetime >= Math.max(...input.submittedIn)) {
      // Everything was submitted and this lifetime ended without a crash: one last lifetime
      // with a truthful venue settles what is left.
      lifetime = MAX_LIFETIMES - 1;
    }
  }

  expect(venue.violations).toEqual([]);
  const clock = new VirtualClock(time);
  const journal = openJournal(temp.path, clock);
  cleanups.push(() => journal.close());
  const ids = new Set(intents.map((intent) => intent.requestId));
  for (const requestId of venue.requestIdsSeen) expect(ids.has(requestId)).toBe(true);
  for (const intent of intents) {
    const orders = venue.ordersByClientId.get(intent.requestId) ?? [];
    expect(orders.length).toBeLessThanOrEqual(1);
    const record = journal.getIntent(intent.requestId);
    expect(record?.requestId).toBe(intent.requestId);
    expect(record?.intent).toEqual(intent);
    if (record?.command !== null && record?.command !== undefined) {
      expect(
        bodyOf(restoreCommand('placeOrder', record.command.path, record.command.bodyBytes)),
      ).toMatchObject({
        request_id: intent.requestId,
        client_order_id: intent.requestId,
      });
      const atVenue = venue.bodies.get(intent.requestId);
      if (atVenue !== undefined) expect(atVenue).toBe(record.command.bodySha256);
    }
    const accepted =
      record?.state === 'accepted' ||
      (record?.state === 'resolved' && record.outcome?.resolution === 'accepted');
    expect(['accepted', 'rejected', 'denied', 'resolved']).toContain(record?.state);
    if (accepted) {
      expect(orders).toHaveLength(1);
      expect(record?.orderId).toBe(orders[0]?.order_id);
    } else {
      expect(orders).toHaveLength(0);
    }
    // Only the venue refuses: a rejected intent was sent and refused, a denied one never sent
    // (journaled by a process that stopped before sending it).
    if (record?.state === 'rejected' || (record?.state === 'resolved' && !accepted)) {
      expect(record.outcome?.code).toBe('INSUFFICIENT_READY_CAPITAL');
      expect(venue.requestIdsSeen.has(intent.requestId)).toBe(true);
    }
    if (record?.state === 'denied') {
      expect(record.outcome?.denials).toMatchObject([{ rule: 'abandoned_at_restart' }]);
      expect(venue.requestIdsSeen.has(intent.requestId)).toBe(false);
    }
  }
}

describe('crash recovery (property)', () => {
  it('never makes a second order or a second id, and settles every intent consistently', async () => {
    await fc.assert(fc.asyncProperty(scenario, runScenario), { numRuns: 100 });
  }, 120_000);
});
