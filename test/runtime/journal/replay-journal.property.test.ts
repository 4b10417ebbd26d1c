/**
 * A replay's journal holds its intents in memory. Whatever the calls, it must answer every call
 * as the SQLite journal does (values and refusals), and end holding the same intents.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OrderIntent } from '../../../src/runtime/intents.ts';
import type { IntentJournal } from '../../../src/runtime/journal/intent-journal.ts';
import type { IntentRecord } from '../../../src/runtime/journal/records.ts';
import { Journal } from '../../../src/runtime/journal/journal.ts';
import { FILL_IDS_KEPT, ReplayJournal } from '../../../src/runtime/journal/replay-journal.ts';
import { fill, limitBuy, placeCommand, START, stamp } from '../execution/fixtures.ts';

type Operation =
  | { readonly kind: 'intent'; readonly index: number; readonly cancel: boolean }
  | { readonly kind: 'command'; readonly index: number }
  | { readonly kind: 'intentWithCommand'; readonly index: number; readonly attempt: number | null }
  | { readonly kind: 'intentRenamed'; readonly index: number }
  | { readonly kind: 'simulation'; readonly index: number; readonly attempt: number }
  | { readonly kind: 'send'; readonly index: number }
  | { readonly kind: 'accepted'; readonly index: number; readonly order: number | null }
  | { readonly kind: 'rejected' | 'denied'; readonly index: number }
  | { readonly kind: 'unknown'; readonly index: number; readonly exhausted: boolean }
  | { readonly kind: 'resolution'; readonly index: number }
  | { readonly kind: 'resolved'; readonly index: number; readonly order: number | null }
  | { readonly kind: 'fill'; readonly index: number }
  | { readonly kind: 'venueFill'; readonly fill: number; readonly sequence: number | null }
  | { readonly kind: 'sequence'; readonly sequence: number }
  | { readonly kind: 'meta'; readonly key: string; readonly value: string | null }
  | { readonly kind: 'read'; readonly index: number; readonly order: number }
  | { readonly kind: 'tick'; readonly milliseconds: number };

const index = fc.integer({ min: 1, max: 12 });
const orderNumber = fc.option(fc.integer({ min: 1, max: 6 }), { nil: null });
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('intent' as const), index, cancel: fc.boolean() }),
  fc.record({ kind: fc.constant('command' as const), index }),
  // An intent under another request id with a sequence that may be taken already.
  fc.record({ kind: fc.constant('intentRenamed' as const), index }),
  // An intent journaled with its command and the step after it: a simulation (its attempt),
  // or the send (null).
  fc.record({
    kind: fc.constant('intentWithCommand' as const),
    index,
    attempt: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
  }),
  fc.record({
    kind: fc.constant('simulation' as const),
    index,
    attempt: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({ kind: fc.constant('send' as const), index }),
  fc.record({ kind: fc.constant('accepted' as const), index, order: orderNumber }),
  fc.record({ kind: fc.constantFrom('rejected' as const, 'denied' as const), index }),
  fc.record({ kind: fc.constant('unknown' as const), index, exhausted: fc.boolean() }),
  fc.record({ kind: fc.constant('resolution' as const), index }),
  fc.record({ kind: fc.constant('resolved' as const), index, order: orderNumber }),
  fc.record({ kind: fc.constant('fill' as const), index }),
  fc.record({
    kind: fc.constant('venueFill' as const),
    fill: fc.integer({ min: 1, max: 4 }),
    sequence: fc.option(fc.integer({ min: -1, max: 20 }), { nil: null }),
  }),
  fc.record({ kind: fc.constant('sequence' as const), sequence: fc.integer({ min: 1, max: 20 }) }),
  fc.record({
    kind: fc.constant('meta' as const),
    key: fc.constantFrom('loss_tracking', 'other', 'epoch', 'created_at'),
    // null reads the key; a string writes it.
    value: fc.option(fc.constantFrom('a', 'b', '{"c":1}'), { nil: null }),
  }),
  fc.record({ kind: fc.constant('read' as const), index, order: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('tick' as const), milliseconds: fc.integer({ min: 0, max: 50 }) }),
);

const cancelIntent: OrderIntent = { kind: 'cancel', clientOrderId: 'c-1' };

function intentOf(position: number, cancel: boolean) {
  return stamp(cancel ? cancelIntent : limitBuy('0.010', String(42_000 + position)), position);
}

/**
 * What a call answered, or the code it was refused with. What the SQLite table refuses by a
 * constraint (`SQLITE_CONSTRAINT_*`) the replay journal refuses as `JOURNAL_ROW_REFUSED`.
 */
function outcome(call: () => unknown): unknown {
  try {
    return { value: call() };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT')) {
      return { refused: 'JOURNAL_ROW_REFUSED' };
    }
    return { refused: code ?? (error as Error).message };
  }
}

/**
 * A record as the runtime reads it. Its command is read field by field: the replay journal holds
 * the prepared command itself, whose bytes and hash are getters (made when first read), where
 * the SQLite journal reads back a plain copy.
 */
function readable(record: IntentRecord | undefined): unknown {
  if (record === undefined) return null;
  const command = record.command;
  return {
    ...record,
    command:
      command === null
        ? null
        : {
            endpoint: command.endpoint,
            path: command.path,
            bodyBytes: command.bodyBytes,
            bodySha256: command.bodySha256,
          },
  };
}

/** Everything the runtime can read of the intents. */
function reads(journal: IntentJournal, index: number, order: number) {
  const requestId = intentOf(index, false).requestId;
  return {
    record: readable(journal.getIntent(requestId)),
    byOrder: journal.intentByOrderId(`o-${order}`)?.requestId ?? null,
    byClient: journal.intentByClientOrderId(requestId)?.requestId ?? null,
    open: journal.openIntents().map((record) => record.requestId),
    unknown: journal.countIntents('unknown'),
    accepted: journal.countIntents('accepted'),
    exhausted: journal.countExhaustedUnknown(),
    next: journal.nextSequence('alpha'),
    orderIds: [...journal.knownOrderIds().orderIds].sort(),
    clientOrderIds: [...journal.knownOrderIds().clientOrderIds].sort(),
  };
}

function apply(journal: IntentJournal, step: Operation): unknown {
  const requestId = 'index' in step ? intentOf(step.index, false).requestId : '';
  switch (step.kind) {
    case 'intent':
      return outcome(() => {
        const { record, created } = journal.recordIntent(intentOf(step.index, step.cancel));
        return { record: readable(record), created };
      });
    case 'intentWithCommand':
      return outcome(() => {
        const { record, created } = journal.recordIntent(intentOf(step.index, false), {
          command: placeCommand(requestId),
          context: { targetOrderId: 'o-2' },
          step:
            step.attempt === null
              ? 'sending'
              : { simulateRequestId: `${requestId}:s${step.attempt}`, attempt: step.attempt },
        });
        return { record: readable(record), created };
      });
    case 'intentRenamed':
      return outcome(() => {
        const intent = intentOf(step.index, true);
        const { record, created } = journal.recordIntent({
          ...intent,
          requestId: `${intent.requestId}-renamed`,
        });
        return { record: readable(record), created };
      });
    case 'command':
      return outcome(() =>
        journal.recordCommand(requestId, placeCommand(requestId), { targetOrderId: 'o-1' }),
      );
    case 'simulation':
      return outcome(() => journal.recordSimulation(requestId, `${requestId}:s1`, step.attempt));
    case 'send':
      return outcome(() => journal.recordSendAttempt(requestId));
    case 'accepted':
      return outcome(() =>
        journal.recordAccepted(
          requestId,
          step.order === null ? null : `o-${step.order}`,
          { status: 'accepted', orderId: step.order === null ? null : `o-${step.order}` },
          step.index % 2 === 0 ? 'o-9' : null,
        ),
      );
    case 'rejected':
      return outcome(() =>
        journal.recordRejected(requestId, { status: 'rejected', code: 'X', message: 'no' }),
      );
    case 'denied':
      return outcome(() => journal.recordDenied(requestId, { status: 'denied', message: 'no' }));
    case 'unknown':
      return outcome(() =>
        journal.recordUnknown(
          requestId,
          { status: 'unknown', reason: 'timeout' },
          step.exhausted ? null : START + 500,
        ),
      );
    case 'resolution':
      return outcome(() => journal.recordResolutionAttempt(requestId, START + 900));
    case 'resolved':
      return outcome(() =>
        journal.recordResolved(
          requestId,
          step.order === null ? 'rejected' : 'accepted',
          step.order === null ? null : `o-${step.order}`,
          { status: 'resolved' },
        ),
      );
    case 'fill':
      return outcome(() => journal.markFillReported(requestId));
    case 'venueFill':
      return outcome(() => ({
        added: journal.recordFill(fill({ fill_id: `f-${step.fill}` }), {
          sequence: step.sequence,
          source: step.sequence === null ? 'rest' : 'stream',
        }),
        count: journal.fillCount(),
        cursor: journal.privateCursor(),
      }));
    case 'sequence':
      return outcome(() => journal.noteSequence('alpha', step.sequence));
    case 'meta': {
      const { key, value } = step;
      return outcome(() =>
        value === null ? journal.readMeta(key) : journal.writeMeta(key, value),
      );
    }
    case 'read':
      return outcome(() => reads(journal, step.index, step.order));
    case 'tick':
      return null;
  }
}

function run(steps: readonly Operation[], intentsBefore: number): void {
  let now = START;
  const clock = () => now;
  const sqlite = Journal.open(':memory:', { now: clock, epoch: 'replay12', durability: 'normal' });
  const replay = ReplayJournal.open({ now: clock, epoch: 'replay12' });
  try {
    // Enough finished intents first that the SQLite journal's cache of recent records overflows.
    for (let position = 100; position < 100 + intentsBefore; position++) {
      for (const journal of [sqlite, replay]) {
        const intent = intentOf(position, false);
        journal.noteSequence('alpha', position);
        journal.recordIntent(intent);
        journal.recordCommand(intent.requestId, placeCommand(intent.requestId));
        journal.recordSendAttempt(intent.requestId);
        journal.recordAccepted(intent.requestId, `o-${position}`, { status: 'accepted' });
      }
    }
    for (const step of steps) {
      if (step.kind === 'tick') now += step.milliseconds;
      expect(apply(replay, step)).toEqual(apply(sqlite, step));
    }
    for (let index = 1; index <= 12; index++) {
      expect(reads(replay, index, index % 6)).toEqual(reads(sqlite, index, index % 6));
    }
  } finally {
    sqlite.close();
    replay.close();
  }
}

describe('replay journal', () => {
  it('answers as the SQLite journal, whatever the calls', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), (steps) => run(steps, 0)),
      { numRuns: 150 },
    );
  });

  it("does so while the SQLite journal's cache of recent records overflows", () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), (steps) => run(steps, 300)),
      { numRuns: 8 },
    );
  });

  it('changes a record in place only while no caller holds it: a record read stays as it read', () => {
    let now = START;
    const journal = ReplayJournal.open({ now: () => now, epoch: 'replay12' });
    try {
      const intent = intentOf(1, false);
      const { record: journaled } = journal.recordIntent(intent);
      now += 1;
      journal.recordCommand(intent.requestId, placeCommand(intent.requestId));
      now += 1;
      journal.recordSendAttempt(intent.requestId);
      const sending = journal.requireIntent(intent.requestId);
      now += 1;
      journal.recordAccepted(intent.requestId, 'o-1', { status: 'accepted' });
      const accepted = journal.getIntent(intent.requestId)!;
      expect(journaled).toMatchObject({ state: 'journaled', command: null, updatedAt: START });
      expect(sending).toMatchObject({ state: 'sending', sendAttempts: 1, updatedAt: START + 2 });
      expect(sending.orderId).toBeNull();
      expect(accepted).toMatchObject({ state: 'accepted', orderId: 'o-1', updatedAt: START + 3 });
      expect(journal.intentByOrderId('o-1')).toBe(accepted);
      expect(journal.countIntents('accepted')).toBe(1);
      expect(journal.countIntents('sending')).toBe(0);
    } finally {
      journal.close();
    }
  });

  it('tells fills apart among a bounded window of the latest fill ids', () => {
    const journal = ReplayJournal.open({ now: () => START, epoch: 'replay12' });
    try {
      const rest = { sequence: null, source: 'rest' } as const;
      for (let index = 0; index <= FILL_IDS_KEPT; index++) {
        expect(journal.recordFill(fill({ fill_id: `f-${index}` }), rest)).toBe(true);
      }
      expect(journal.fillCount()).toBe(FILL_IDS_KEPT + 1);
      // The newest are known; the oldest left the window.
      expect(journal.recordFill(fill({ fill_id: `f-${FILL_IDS_KEPT}` }), rest)).toBe(false);
      expect(journal.recordFill(fill({ fill_id: 'f-1' }), rest)).toBe(false);
      expect(journal.recordFill(fill({ fill_id: 'f-0' }), rest)).toBe(true);
    } finally {
      journal.close();
    }
  });
});
