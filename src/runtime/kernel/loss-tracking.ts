/**
 * The risk gate's loss tracking (daily loss, drawdown) kept in the journal's meta values, so a
 * restart resets nothing: read at creation, written when it changed and at teardown.
 */
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { RiskGate } from '../risk/gate.ts';
import type { LossTrackingRecord } from '../risk/loss.ts';
import type { Logger } from '../../core/logger.ts';

/** Where the gate's loss tracking is kept in the journal, so a restart resets nothing. */
export const LOSS_TRACKING_META_KEY = 'risk.loss_tracking';

/** The journaled loss tracking; undefined when there is none or it is unreadable (logged). */
export function readLossTracking(
  journal: IntentJournal,
  logger: Logger,
): LossTrackingRecord | undefined {
  const text = journal.readMeta(LOSS_TRACKING_META_KEY);
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as LossTrackingRecord;
  } catch (error) {
    logger.error('the journaled loss tracking is unreadable; daily loss and drawdown start over', {
      error: error instanceof Error ? error.message : String(error),
    });
    return undefined;
  }
}

/** Writes the gate's loss tracking to the journal, when it is open. */
export function saveLossTracking(journal: IntentJournal, gate: RiskGate): void {
  if (!journal.isOpen) return;
  journal.writeMeta(LOSS_TRACKING_META_KEY, JSON.stringify(gate.lossTrackingRecord()));
}
