/** The execution journal: write-ahead intents, ids, seen fills, the dead-man state. */
export type { IntentJournal } from './intent-journal.ts';
export { Journal, type JournalOptions } from './journal.ts';
export {
  type DeadmanRecord,
  type IntentContext,
  type IntentRecord,
  type InternalCommandRecord,
  type JournaledCommand,
  type OutcomeRecord,
} from './records.ts';
export { ReplayJournal, type ReplayJournalOptions } from './replay-journal.ts';
export {
  INTENT_STATES,
  INTERNAL_COMMAND_STATES,
  type IntentState,
  type InternalCommandState,
  JOURNAL_SCHEMA_VERSION,
  OPEN_INTENT_STATES,
} from './schema.ts';
