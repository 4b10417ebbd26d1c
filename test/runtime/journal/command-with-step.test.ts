/**
 * The command journaled together with the step after it (`recordCommandWithStep`: the
 * first simulation or the first send): one statement, the same row as the two steps one after the
 * other, durable across a reopen, at every durability and in the replay journal, and the command
 * still written once for life.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import type { IntentJournal } from '../../../src/runtime/journal/intent-journal.ts';
import { Journal } from '../../../src/runtime/journal/journal.ts';
import type { IntentRecord } from '../../../src/runtime/journal/records.ts';
import { ReplayJournal } from '../../../src/runtime/journal/replay-journal.ts';
import { limitBuy, placeCommand, START, stamp, tempJournalPath } from '../execution/fixtures.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

type Durability = 'full' | 'normal' | 'replay';

function open(durability: Durability, path?: string): { journal: IntentJournal; path: string } {
  const clock = new VirtualClock(START);
  if (durability === 'replay') {
    const journal = ReplayJournal.open({ now: () => clock.now() });
    cleanups.push(() => {
      if (journal.isOpen) journal.close();
    });
    return { journal, path: ':memory:' };
  }
  let file = path;
  if (file === undefined) {
    const temp = tempJournalPath();
    cleanups.push(temp.cleanup);
    file = temp.path;
  }
  const journal = Journal.open(file, { now: () => clock.now(), durability });
  cleanups.push(() => {
    if (journal.isOpen) journal.close();
  });
  return { journal, path: file };
}

/** The fields the two ways must agree on (times aside). */
function essentials(record: IntentRecord) {
  return {
    state: record.state,
    sendAttempts: record.sendAttempts,
    simulateRequestId: record.simulateRequestId,
    simulateAttempt: record.simulateAttempt,
    context: record.context,
    endpoint: record.command?.endpoint,
    path: record.command?.path,
    body: Buffer.from(record.command?.bodyBytes ?? []).toString('utf8'),
    sha: record.command?.bodySha256,
  };
}

describe.each<Durability>(['full', 'normal', 'replay'])('journal durability %s', (durability) => {
  it('journals the command with the first simulation as the two steps would', () => {
    const { journal: combined } = open(durability);
    const { journal: stepwise } = open(durability);
    const intent = stamp(limitBuy(), 1);
    const command = placeCommand(intent.requestId);
    for (const journal of [combined, stepwise]) journal.recordIntent(intent);
    combined.recordCommandWithStep(
      intent.requestId,
      command,
      {},
      {
        simulateRequestId: `${intent.requestId}:s1`,
        attempt: 1,
      },
    );
    stepwise.recordCommand(intent.requestId, command, {});
    stepwise.recordSimulation(intent.requestId, `${intent.requestId}:s1`, 1);
    const expected = essentials(stepwise.requireIntent(intent.requestId));
    expect(expected.state).toBe('simulating');
    expect(essentials(combined.requireIntent(intent.requestId))).toEqual(expected);
    expect(combined.openIntents().map(essentials)).toEqual([expected]);
    // Then the same send attempt on both: still the same rows.
    combined.recordSendAttempt(intent.requestId);
    stepwise.recordSendAttempt(intent.requestId);
    expect(essentials(combined.requireIntent(intent.requestId))).toEqual(
      essentials(stepwise.requireIntent(intent.requestId)),
    );
  });

  it('journals the command with the first send attempt as the two steps would', () => {
    const { journal: combined } = open(durability);
    const { journal: stepwise } = open(durability);
    const intent = stamp(limitBuy(), 1);
    const command = placeCommand(intent.requestId);
    for (const journal of [combined, stepwise]) journal.recordIntent(intent);
    combined.recordCommandWithStep(intent.requestId, command, { positionId: 'p-1' }, 'sending');
    stepwise.recordCommand(intent.requestId, command, { positionId: 'p-1' });
    stepwise.recordSendAttempt(intent.requestId);
    const expected = essentials(stepwise.requireIntent(intent.requestId));
    expect(expected).toMatchObject({ state: 'sending', sendAttempts: 1 });
    expect(essentials(combined.requireIntent(intent.requestId))).toEqual(expected);
    // What a restart reads (the rows, for the SQLite journal), not only the kept records.
    const [row] = combined.openIntents();
    expect(essentials(row!)).toEqual(expected);
  });

  it.each([
    ['the first simulation', { simulateRequestId: 'SIM', attempt: 1 }],
    ['the first send', 'sending'],
  ] as const)(
    'journals the intent with its command and %s as the steps one after the other would',
    (_, given) => {
      const { journal: combined } = open(durability);
      const { journal: stepwise } = open(durability);
      const intent = stamp(limitBuy(), 1);
      const command = placeCommand(intent.requestId);
      const step =
        given === 'sending' ? given : { ...given, simulateRequestId: `${intent.requestId}:s1` };
      const context = { positionId: 'p-1' };
      const first = combined.recordIntent(intent, { command, context, step });
      stepwise.recordIntent(intent);
      stepwise.recordCommandWithStep(intent.requestId, command, context, step);
      const expected = essentials(stepwise.requireIntent(intent.requestId));
      expect(first.created).toBe(true);
      expect(essentials(first.record)).toEqual(expected);
      expect(essentials(combined.requireIntent(intent.requestId))).toEqual(expected);
      // What a restart reads (the rows, for the SQLite journal), not only the kept records.
      expect(combined.openIntents().map(essentials)).toEqual([expected]);
      // The row carries the sequence: the next one is not handed out again.
      expect(combined.nextSequence(intent.strategyId)).toBe(2);
      // Journaled again under the same request id: unchanged, and the command not written twice.
      const again = combined.recordIntent(intent, { command, context: {}, step: 'sending' });
      expect(again.created).toBe(false);
      expect(essentials(again.record)).toEqual(expected);
    },
  );

  it('refuses a second command, whichever way it comes', () => {
    const { journal } = open(durability);
    const intent = stamp(limitBuy(), 1);
    const command = placeCommand(intent.requestId);
    journal.recordIntent(intent);
    journal.recordCommandWithStep(intent.requestId, command, {}, 'sending');
    expect(() =>
      journal.recordCommandWithStep(
        intent.requestId,
        command,
        {},
        { simulateRequestId: 'x:s1', attempt: 1 },
      ),
    ).toThrow(expect.objectContaining({ code: 'JOURNAL_COMMAND_EXISTS' }));
    expect(() => journal.recordCommandWithStep(intent.requestId, command, {}, 'sending')).toThrow(
      expect.objectContaining({ code: 'JOURNAL_COMMAND_EXISTS' }),
    );
    expect(journal.requireIntent(intent.requestId).sendAttempts).toBe(1);
  });
});

describe('journal file', () => {
  it('hands out sequences after both the noted ones and the journaled intents', () => {
    const { journal, path } = open('full');
    const intent = stamp(limitBuy(), 7);
    journal.noteSequence(intent.strategyId, 3);
    expect(journal.nextSequence(intent.strategyId)).toBe(4);
    journal.recordIntent(intent, {
      command: placeCommand(intent.requestId),
      context: {},
      step: { simulateRequestId: `${intent.requestId}:s1`, attempt: 1 },
    });
    expect(journal.nextSequence(intent.strategyId)).toBe(8);
    // A sequence noted below the highest journaled one changes nothing.
    journal.noteSequence(intent.strategyId, 5);
    journal.close();
    const { journal: reopened } = open('full', path);
    expect(reopened.nextSequence(intent.strategyId)).toBe(8);
    reopened.noteSequence(intent.strategyId, 9);
    expect(reopened.nextSequence(intent.strategyId)).toBe(10);
    expect(reopened.nextSequence('never-seen')).toBe(1);
  });

  it('keeps the command and its step across a reopen: what recovery reads after a crash', () => {
    const { journal, path } = open('full');
    const simulated = stamp(limitBuy(), 1);
    const sent = stamp(limitBuy(), 2);
    journal.recordIntent(simulated);
    journal.recordIntent(sent);
    journal.recordCommandWithStep(
      simulated.requestId,
      placeCommand(simulated.requestId),
      {},
      {
        simulateRequestId: `${simulated.requestId}:s1`,
        attempt: 1,
      },
    );
    journal.recordCommandWithStep(sent.requestId, placeCommand(sent.requestId), {}, 'sending');
    journal.close();
    const { journal: reopened } = open('full', path);
    expect(reopened.requireIntent(simulated.requestId)).toMatchObject({
      state: 'simulating',
      simulateAttempt: 1,
      command: { endpoint: 'placeOrder' },
    });
    expect(reopened.requireIntent(sent.requestId)).toMatchObject({
      state: 'sending',
      sendAttempts: 1,
      command: { endpoint: 'placeOrder', bodySha256: placeCommand(sent.requestId).bodySha256 },
    });
  });
});
