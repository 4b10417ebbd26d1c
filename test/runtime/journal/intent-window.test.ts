/**
 * A replay's journal with `intentWindow` keeps a window of intents: settled ones older than the
 * window leave, unless the runtime may still ask for them (an open intent, or one whose order
 * has not reached a terminal status).
 */
import { describe, expect, it } from 'vitest';
import { ReplayJournal } from '../../../src/runtime/journal/replay-journal.ts';
import { limitBuy, orderEvent, placeCommand, START, stamp } from '../execution/fixtures.ts';

const WINDOW = 100;
const INTENTS = 3_000;

function placed(journal: ReplayJournal, position: number) {
  const intent = stamp(limitBuy('0.010', String(42_000 + position)), position);
  journal.noteSequence('alpha', position);
  journal.recordIntent(intent);
  journal.recordCommand(intent.requestId, placeCommand(intent.requestId));
  journal.recordSendAttempt(intent.requestId);
  return intent;
}

describe('journal intent window', () => {
  it('lets settled intents of closed orders go and keeps what the runtime may ask for', () => {
    const journal = ReplayJournal.open({
      now: () => START,
      epoch: 'window12',
      intentWindow: WINDOW,
    });
    try {
      let sequence = 0;
      const requestIds: string[] = [];
      for (let position = 1; position <= INTENTS; position++) {
        const intent = placed(journal, position);
        requestIds.push(intent.requestId);
        if (position === 7) continue; // stays in flight (sending): open
        if (position % 10 === 3) {
          journal.recordRejected(intent.requestId, {
            status: 'rejected',
            code: 'X',
            message: 'no',
          });
          continue;
        }
        const orderId = `o-${position}`;
        journal.recordAccepted(intent.requestId, orderId, { status: 'accepted', orderId });
        // Order 5 keeps resting; every other order fills at once.
        const opened = orderEvent(orderId, null, 'OPEN', ++sequence);
        const filled = orderEvent(orderId, 'OPEN', 'FILLED', ++sequence);
        for (const event of position === 5 ? [opened] : [opened, filled]) {
          journal.recordOrderEvent(event);
        }
      }
      // Old settled intents of closed orders are gone, rows and lookups alike.
      expect(journal.getIntent(requestIds[0]!)).toBeUndefined();
      expect(journal.intentByOrderId('o-1')).toBeUndefined();
      expect(journal.intentByOrderId('o-2')).toBeUndefined();
      expect(journal.getIntent(requestIds[2]!)).toBeUndefined(); // rejected, no order
      // The resting order's intent and the one in flight stay, however old.
      expect(journal.intentByOrderId('o-5')?.requestId).toBe(requestIds[4]);
      expect(journal.getIntent(requestIds[6]!)?.state).toBe('sending');
      expect(journal.openIntents().map((record) => record.requestId)).toEqual([requestIds[6]]);
      expect(journal.knownOrderIds().orderIds.has('o-5')).toBe(true);
      expect(journal.knownOrderIds().orderIds.has('o-1')).toBe(false);
      // The newest window is whole.
      for (const requestId of requestIds.slice(-WINDOW)) {
        expect(journal.getIntent(requestId)).toBeDefined();
      }
      // What is held is the window plus at most one sweep's worth, not every intent.
      const held = journal.countIntents('accepted') + journal.countIntents('rejected');
      expect(held).toBeGreaterThanOrEqual(WINDOW);
      expect(held).toBeLessThan(WINDOW + 1_100);
      // Once its order closes, the resting order's intent goes at a later sweep.
      journal.recordOrderEvent(orderEvent('o-5', 'OPEN', 'CANCELLED', ++sequence));
      for (let position = INTENTS + 1; position <= INTENTS + 1_100; position++) {
        placed(journal, position);
      }
      expect(journal.intentByOrderId('o-5')).toBeUndefined();
      // New intents still journal with fresh sequences.
      expect(journal.nextSequence('alpha')).toBe(INTENTS + 1_101);
    } finally {
      journal.close();
    }
  });

  it('is refused for a size that is not a positive integer', () => {
    for (const intentWindow of [0, -1, 1.5]) {
      expect(() => ReplayJournal.open({ now: () => START, intentWindow })).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG' }),
      );
    }
  });
});
