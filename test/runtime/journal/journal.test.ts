/**
 * The journal on a real SQLite file: schema version, epoch, sequences, intents and their one
 * command for life, fills seen across a restart, the single-writer lock, the dead-man state.
 */
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { CHECKPOINT_EVERY_SETTLED } from '../../../src/runtime/journal/journal-intents.ts';
import { Journal } from '../../../src/runtime/journal/journal.ts';
import { JOURNAL_SCHEMA_VERSION } from '../../../src/runtime/journal/schema.ts';
import { limitBuy, placeCommand, START, stamp, tempJournalPath } from '../execution/fixtures.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function temp(): string {
  const { path, cleanup } = tempJournalPath();
  cleanups.push(cleanup);
  return path;
}

function open(path: string, clock = new VirtualClock(START), epoch?: string): Journal {
  const journal = Journal.open(path, {
    now: () => clock.now(),
    ...(epoch ? { epoch } : {}),
  });
  cleanups.push(() => journal.close());
  return journal;
}

describe('journal', () => {
  it('creates a WAL file with the current schema version and a random epoch kept for life', () => {
    const path = temp();
    const first = open(path);
    expect(first.schemaVersion).toBe(JOURNAL_SCHEMA_VERSION);
    expect(first.epoch).toMatch(/^[0-9a-f]{12}$/);
    const epoch = first.epoch;
    first.close();
    const second = open(path, new VirtualClock(START), 'ignored1');
    expect(second.epoch).toBe(epoch);
    second.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
    expect(open(temp()).epoch).not.toBe(epoch);
  });

  it('checkpoints the WAL when an intent settles, every so many, not in the writes ahead of a send', () => {
    const path = temp();
    const journal = open(path);
    const fileSize = () => statSync(path).size;
    const placeAndSettle = (sequence: number, settle: (requestId: string) => void) => {
      const intent = stamp(limitBuy(), sequence);
      journal.recordIntent(intent, {
        command: placeCommand(intent.requestId),
        context: {},
        step: { simulateRequestId: `${intent.requestId}:s1`, attempt: 1 },
      });
      journal.recordSendAttempt(intent.requestId);
      settle(intent.requestId);
    };
    const accept = (requestId: string) =>
      journal.recordAccepted(requestId, `o-${requestId}`, { status: 'accepted' });
    const reject = (requestId: string) =>
      journal.recordRejected(requestId, { status: 'rejected', code: 'NO' });
    const before = fileSize();
    for (let sequence = 1; sequence < CHECKPOINT_EVERY_SETTLED; sequence++) {
      placeAndSettle(sequence, sequence % 2 === 0 ? accept : reject);
    }
    // Everything so far is in the WAL: the file itself has not grown.
    expect(fileSize()).toBe(before);
    placeAndSettle(CHECKPOINT_EVERY_SETTLED, accept);
    const after = fileSize();
    expect(after).toBeGreaterThan(before);
    // The count starts over: the next intents stay in the WAL again.
    placeAndSettle(CHECKPOINT_EVERY_SETTLED + 1, accept);
    expect(fileSize()).toBe(after);
    expect(journal.countIntents('accepted')).toBe(CHECKPOINT_EVERY_SETTLED / 2 + 1);
  });

  it('refuses a journal written by a newer schema', () => {
    const path = temp();
    open(path).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${JOURNAL_SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => open(path)).toThrow(expect.objectContaining({ code: 'JOURNAL_SCHEMA_TOO_NEW' }));
  });

  it('refuses a second process on the same file', () => {
    const path = temp();
    open(path);
    expect(() => open(path)).toThrow(expect.objectContaining({ code: 'JOURNAL_LOCKED' }));
  });

  it('journals an intent once and keeps its first command bytes for life', () => {
    const journal = open(temp(), new VirtualClock(START), 'epoch1234');
    const intent = stamp(limitBuy(), 1);
    expect(journal.recordIntent(intent).created).toBe(true);
    expect(journal.recordIntent(intent).created).toBe(false);
    const command = placeCommand(intent.requestId);
    journal.recordCommand(intent.requestId, command, {});
    expect(() => journal.recordCommand(intent.requestId, placeCommand(intent.requestId))).toThrow(
      expect.objectContaining({ code: 'JOURNAL_COMMAND_EXISTS' }),
    );
    const record = journal.requireIntent(intent.requestId);
    expect(record).toMatchObject({
      state: 'journaled',
      strategyId: 'alpha',
      sequence: 1,
      kind: 'place',
      clientOrderId: intent.requestId,
      marketId: 'BTC-PERP',
      intent,
    });
    expect(Buffer.from(record.command!.bodyBytes)).toEqual(Buffer.from(command.bodyBytes));
    expect(journal.nextSequence('alpha')).toBe(2);
  });

  it('will not mark an intent sending without journaled bytes', () => {
    const journal = open(temp());
    const intent = stamp(limitBuy(), 1);
    journal.recordIntent(intent);
    expect(() => journal.recordSendAttempt(intent.requestId)).toThrow();
    expect(journal.requireIntent(intent.requestId).state).toBe('journaled');
  });

  it('lists open intents and counts exhausted unknown ones', () => {
    const journal = open(temp());
    const [a, b, c] = [1, 2, 3].map((sequence) => stamp(limitBuy(), sequence)) as [
      ReturnType<typeof stamp>,
      ReturnType<typeof stamp>,
      ReturnType<typeof stamp>,
    ];
    for (const intent of [a, b, c]) {
      journal.recordIntent(intent);
      journal.recordCommand(intent.requestId, placeCommand(intent.requestId));
      journal.recordSendAttempt(intent.requestId);
    }
    journal.recordAccepted(a.requestId, 'o-a', {
      status: 'accepted',
      orderId: 'o-a',
    });
    journal.recordUnknown(b.requestId, { status: 'unknown', reason: 'timeout' }, START + 500);
    journal.recordUnknown(c.requestId, { status: 'unknown', reason: 'timeout' }, null);
    expect(journal.openIntents().map((record) => record.requestId)).toEqual([
      b.requestId,
      c.requestId,
    ]);
    expect(journal.countIntents('unknown')).toBe(2);
    expect(journal.countExhaustedUnknown()).toBe(1);
    expect(journal.intentByOrderId('o-a')?.requestId).toBe(a.requestId);
    // A resend of an unknown intent keeps it unknown until the answer is in.
    journal.recordSendAttempt(b.requestId);
    expect(journal.requireIntent(b.requestId)).toMatchObject({
      state: 'unknown',
      sendAttempts: 2,
    });
  });

  it('remembers seen fills across a restart', () => {
    const path = temp();
    const first = open(path);
    expect(first.markFillSeen('f-1', 'o-1')).toBe(true);
    expect(first.markFillSeen('f-1', 'o-1')).toBe(false);
    first.close();
    const second = open(path);
    expect(second.hasSeenFill('f-1')).toBe(true);
    expect(second.markFillSeen('f-1', 'o-1')).toBe(false);
    expect(second.markFillSeen('f-2', null)).toBe(true);
  });

  it('hands out internal sequences that continue after a restart', () => {
    const path = temp();
    const first = open(path);
    expect(first.takeInternalSequence('deadman')).toBe(1);
    expect(first.takeInternalSequence('deadman')).toBe(2);
    expect(first.takeInternalSequence('reconcile')).toBe(1);
    first.close();
    expect(open(path).takeInternalSequence('deadman')).toBe(3);
  });

  it('marks internal commands left in flight by an earlier process abandoned', () => {
    const path = temp();
    const first = open(path);
    first.recordInternalCommand('deadman', 'pb-deadman:e:1', placeCommand('pb-deadman:e:1'));
    first.close();
    const second = open(path);
    expect(second.getInternalCommand('pb-deadman:e:1')?.state).toBe('abandoned');
  });

  it('keeps the dead-man state', () => {
    const path = temp();
    const first = open(path);
    expect(first.readDeadman()).toBeNull();
    first.writeDeadman({
      armed: true,
      timeoutSeconds: 60,
      deadlineAt: START + 60_000,
      lastRequestId: 'pb-deadman:e:4',
      confirmedAt: START,
      firedAt: null,
    });
    first.close();
    expect(open(path).readDeadman()).toEqual({
      armed: true,
      timeoutSeconds: 60,
      deadlineAt: START + 60_000,
      lastRequestId: 'pb-deadman:e:4',
      confirmedAt: START,
      firedAt: null,
    });
  });
});
