/** The execution journal: write-ahead intents, ids, seen fills, the dead-man state. */
export {
  type DeadmanRecord,
  type IntentContext,
  type IntentRecord,
  type InternalCommandRecord,
  Journal,
  type JournaledCommand,
  type JournalOptions,
  type OutcomeRecord,
} from './journal.ts';
export {
  INTENT_STATES,
  INTERNAL_COMMAND_STATES,
  type IntentState,
  type InternalCommandState,
  JOURNAL_SCHEMA_VERSION,
  OPEN_INTENT_STATES,
} from './schema.ts';
