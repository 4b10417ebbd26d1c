/**
 * Durability `none` holds an intent's row changes in the process and writes them in batches.
 * Whatever the calls, a `none` journal must answer every call as a `normal` one does (values
 * and refusals) and end with the same rows, rowids included.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OrderIntent } from '../../../src/runtime/intents.ts';
import { Journal } from '../../../src/runtime/journal/journal.ts';
import { limitBuy, placeCommand, START, stamp } from '../execution/fixtures.ts';

type Operation =
  | { readonly kind: 'intent'; readonly index: number; readonly cancel: boolean }
  | { readonly kind: 'command'; readonly index: number }
  | { readonly kind: 'simulation'; readonly index: number; readonly attempt: number }
  | { readonly kind: 'send'; readonly index: number }
  | { readonly kind: 'accepted'; readonly index: number; readonly order: number | null }
  | { readonly kind: 'rejected' | 'denied'; readonly index: number }
  | { readonly kind: 'unknown'; readonly index: number; readonly exhausted: boolean }
  | { readonly kind: 'resolution'; readonly index: number }
  | { readonly kind: 'resolved'; readonly index: number; readonly order: number | null }
  | { readonly kind: 'fill'; readonly index: number }
  | { readonly kind: 'sequence'; readonly sequence: number }
  | { readonly kind: 'read'; readonly index: number; readonly order: number }
  | { readonly kind: 'transaction'; readonly index: number; readonly fail: boolean }
  | { readonly kind: 'tick'; readonly milliseconds: number };

const index = fc.integer({ min: 1, max: 12 });
const orderNumber = fc.option(fc.integer({ min: 1, max: 6 }), { nil: null });
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('intent' as const), index, cancel: fc.boolean() }),
  fc.record({ kind: fc.constant('command' as const), index }),
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
  fc.record({ kind: fc.constant('sequence' as const), sequence: fc.integer({ min: 1, max: 20 }) }),
  fc.record({ kind: fc.constant('read' as const), index, order: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('transaction' as const), index, fail: fc.boolean() }),
  fc.record({ kind: fc.constant('tick' as const), milliseconds: fc.integer({ min: 0, max: 50 }) }),
);

const cancelIntent: OrderIntent = { kind: 'cancel', clientOrderId: 'c-1' };

function intentOf(position: number, cancel: boolean) {
  return stamp(cancel ? cancelIntent : limitBuy('0.010', String(42_000 + position)), position);
}

/** What a call answered, or the code (or message) it was refused with. */
function outcome(call: () => unknown): unknown {
  try {
    return { value: call() };
  } catch (error) {
    const coded = error as { code?: unknown; message?: unknown };
    return { refused: coded.code ?? coded.message };
  }
}

function apply(journal: Journal, step: Operation): unknown {
  const requestId = 'index' in step ? intentOf(step.index, false).requestId : '';
  switch (step.kind) {
    case 'intent':
      return outcome(() => journal.recordIntent(intentOf(step.index, step.cancel)));
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
    case 'sequence':
      return outcome(() => journal.noteSequence('alpha', step.sequence));
    case 'read':
      return outcome(() => ({
        record: journal.getIntent(requestId) ?? null,
        byOrder: journal.intentByOrderId(`o-${step.order}`)?.requestId ?? null,
        byClient: journal.intentByClientOrderId(requestId)?.requestId ?? null,
        open: journal.openIntents().map((record) => record.requestId),
        unknown: journal.countIntents('unknown'),
        accepted: journal.countIntents('accepted'),
        exhausted: journal.countExhaustedUnknown(),
        next: journal.nextSequence('alpha'),
        orderIds: [...journal.knownOrderIds().orderIds].sort(),
        clientOrderIds: [...journal.knownOrderIds().clientOrderIds].sort(),
      }));
    case 'transaction':
      return outcome(() =>
        journal.transaction(() => {
          journal.recordIntent(intentOf(step.index, false));
          journal.recordSendAttempt(requestId);
          if (step.fail) throw new Error('rolled back');
          return journal.getIntent(requestId) ?? null;
        }),
      );
    case 'tick':
      return null;
  }
}

function tables(image: Buffer): Record<string, unknown[]> {
  const database = new Database(image);
  try {
    const dump: Record<string, unknown[]> = {};
    for (const table of ['intents', 'strategy_sequences', 'internal_sequences', 'seen_fills']) {
      dump[table] = database
        .prepare(`SELECT rowid AS row_id, * FROM ${table} ORDER BY rowid`)
        .all();
    }
    return dump;
  } finally {
    database.close();
  }
}

function run(steps: readonly Operation[], intentsBefore: number): void {
  let now = START;
  const clock = () => now;
  const normal = Journal.open(':memory:', { now: clock, epoch: 'held1234', durability: 'normal' });
  const held = Journal.open(':memory:', { now: clock, epoch: 'held1234', durability: 'none' });
  try {
    // Enough finished intents first that the recent-records cache overflows and writes rows.
    for (let position = 100; position < 100 + intentsBefore; position++) {
      for (const journal of [normal, held]) {
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
      expect(apply(held, step)).toEqual(apply(normal, step));
    }
    expect(tables(held.serialize())).toEqual(tables(normal.serialize()));
  } finally {
    normal.close();
    held.close();
  }
}

describe('journal durability none', () => {
  it('answers and writes as durability normal, whatever the calls', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), (steps) => run(steps, 0)),
      { numRuns: 150 },
    );
  });

  it('does so while the cache of recent records overflows', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), (steps) => run(steps, 300)),
      { numRuns: 8 },
    );
  });

  it('is refused for a file', () => {
    expect(() =>
      Journal.open('/tmp/never-created.sqlite', { now: () => START, durability: 'none' }),
    ).toThrow(expect.objectContaining({ code: 'JOURNAL_UNAVAILABLE' }));
  });
});
