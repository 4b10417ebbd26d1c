/**
 * The journal's SQLite schema and its migrations. The schema version lives in SQLite's
 * `user_version`; `migrations[n]` takes a journal from version n to n + 1. A journal written by
 * a newer paperbot is refused rather than guessed at.
 */
import { randomBytes } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { PaperbotError } from '../../core/errors.ts';
import { EMULATED_EXITS_SCHEMA } from './exits.ts';

export const JOURNAL_SCHEMA_VERSION = 4;

/** Every state an intent can be in; the terminal ones never change again. */
export const INTENT_STATES = [
  'journaled',
  'simulating',
  'sending',
  'accepted',
  'rejected',
  'denied',
  'unknown',
  'resolved',
] as const;
export type IntentState = (typeof INTENT_STATES)[number];

/** States in which the venue may still hold, or later learn of, the intent's command. */
export const OPEN_INTENT_STATES: readonly IntentState[] = [
  'journaled',
  'simulating',
  'sending',
  'unknown',
];

export const INTERNAL_COMMAND_STATES = [
  'sending',
  'accepted',
  'rejected',
  'unknown',
  'abandoned',
] as const;
export type InternalCommandState = (typeof INTERNAL_COMMAND_STATES)[number];

/** Where a fill came from: `stream` (the stream or the event log), `rest` (GET /v1/fills). */
export const FILL_SOURCES = ['stream', 'rest'] as const;
export type FillSource = (typeof FILL_SOURCES)[number];

const quoted = (values: readonly string[]) => values.map((value) => `'${value}'`).join(', ');

const version1 = `
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

-- The last sequence stamped per strategy, so ids continue after a restart.
CREATE TABLE strategy_sequences (
  strategy_id TEXT PRIMARY KEY,
  last_sequence INTEGER NOT NULL
) STRICT;

-- Sequences of the runtime's own commands (heartbeat, reconciliation cancels, shutdown).
CREATE TABLE internal_sequences (
  purpose TEXT PRIMARY KEY,
  last_sequence INTEGER NOT NULL
) STRICT;

CREATE TABLE intents (
  request_id TEXT PRIMARY KEY,
  strategy_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  kind TEXT NOT NULL,
  client_order_id TEXT,
  market_id TEXT,
  intent_json TEXT NOT NULL,
  emitted_at INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN (${quoted(INTENT_STATES)})),
  simulate_request_id TEXT,
  simulate_attempt INTEGER NOT NULL DEFAULT 0,
  command_endpoint TEXT,
  command_path TEXT,
  command_body BLOB,
  command_sha256 TEXT,
  send_attempts INTEGER NOT NULL DEFAULT 0,
  context_json TEXT,
  order_id TEXT,
  replaces_order_id TEXT,
  outcome_json TEXT,
  resolution_attempts INTEGER NOT NULL DEFAULT 0,
  next_resolution_at INTEGER,
  fill_reported INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (strategy_id, sequence),
  -- Bytes and their path go in together, and never without the endpoint.
  CHECK ((command_body IS NULL) = (command_endpoint IS NULL)),
  CHECK ((command_body IS NULL) = (command_path IS NULL)),
  CHECK (state NOT IN ('sending', 'unknown') OR command_body IS NOT NULL)
) STRICT;

CREATE INDEX intents_open ON intents (state)
  WHERE state IN (${quoted(OPEN_INTENT_STATES)});
CREATE INDEX intents_by_order ON intents (order_id) WHERE order_id IS NOT NULL;
CREATE INDEX intents_by_client_order ON intents (client_order_id)
  WHERE client_order_id IS NOT NULL;

CREATE TABLE internal_commands (
  request_id TEXT PRIMARY KEY,
  purpose TEXT NOT NULL,
  command_endpoint TEXT NOT NULL,
  command_path TEXT NOT NULL,
  command_body BLOB NOT NULL,
  command_sha256 TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN (${quoted(INTERNAL_COMMAND_STATES)})),
  outcome_json TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE seen_fills (
  fill_id TEXT PRIMARY KEY,
  order_id TEXT,
  seen_at INTEGER NOT NULL
) STRICT;

-- One row: the cancel-all-after deadline as last confirmed by the venue.
CREATE TABLE deadman (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  armed INTEGER NOT NULL,
  timeout_seconds INTEGER NOT NULL,
  deadline_at INTEGER,
  last_request_id TEXT,
  confirmed_at INTEGER,
  fired_at INTEGER,
  updated_at INTEGER NOT NULL
) STRICT;
`;

/**
 * Version 2: exactly-once private events. The fill rows keep the whole fill, the private
 * sequence that delivered it (null: read back over REST, or a version-1 row) and its source;
 * order state events get a ledger of their own, one row per sequence; the highest private
 * sequence applied is kept in one row, written in the same transaction as the rows an event
 * changed; a fill read-back still owed (the venue's event log did not reach back) is kept until
 * it is done. Version-1 rows stay as they are (their new columns are null).
 */
const version2 = `
ALTER TABLE seen_fills ADD COLUMN sequence INTEGER;
ALTER TABLE seen_fills ADD COLUMN source TEXT CHECK (source IN (${quoted(FILL_SOURCES)}));
ALTER TABLE seen_fills ADD COLUMN fill_json TEXT;

CREATE TABLE order_events (
  sequence INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL,
  order_id TEXT NOT NULL,
  from_state TEXT,
  to_state TEXT NOT NULL,
  occurred_at TEXT NOT NULL,
  applied_at INTEGER NOT NULL
) STRICT;
CREATE INDEX order_events_by_order ON order_events (order_id);

-- One row: the highest private sequence applied, and when the venue said that event happened.
CREATE TABLE private_cursor (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  last_sequence INTEGER NOT NULL CHECK (last_sequence >= 0),
  last_event_at TEXT,
  updated_at INTEGER NOT NULL
) STRICT;

-- One row at most: a read-back of GET /v1/fills still owed, down to the fill it stops at.
CREATE TABLE fill_read_back (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  generation INTEGER NOT NULL,
  stop_fill_id TEXT,
  stop_occurred_at TEXT,
  reason TEXT NOT NULL,
  requested_at INTEGER NOT NULL
) STRICT;
`;

/** Version 4: the runtime's own commands still `sending`, found without a scan (retention). */
const version4 = `
CREATE INDEX internal_commands_sending ON internal_commands (state) WHERE state = 'sending';
`;

export type Migration = (database: BetterSqlite3.Database) => void;

export const migrations: readonly Migration[] = [
  (database) => {
    database.exec(version1);
  },
  (database) => {
    database.exec(version2);
  },
  // The emulated exits (`./exits.ts`).
  (database) => {
    database.exec(EMULATED_EXITS_SCHEMA);
  },
  // Version 4: start-up reads of the runtime's own commands use an index, not a table scan
  // (`abandonOpenInternalCommands` runs at every start, whatever the history).
  (database) => {
    database.exec(version4);
  },
];

const EPOCH_PATTERN = /^[A-Za-z0-9_-]{4,16}$/;

/**
 * Brings a journal's schema to this version (refusing a newer one) and returns its epoch,
 * writing a new journal's epoch and creation time first.
 */
export function migrate(
  database: BetterSqlite3.Database,
  options: { readonly now: () => number; readonly epoch?: string },
): string {
  // BEGIN IMMEDIATE takes the write lock at once, which EXCLUSIVE mode then keeps until close.
  return database
    .transaction(() => {
      const version = database.pragma('user_version', {
        simple: true,
      }) as number;
      if (version > JOURNAL_SCHEMA_VERSION) {
        throw new PaperbotError(
          'JOURNAL_SCHEMA_TOO_NEW',
          `journal schema version ${version} is newer than this paperbot's ${JOURNAL_SCHEMA_VERSION}`,
          { details: { version, supported: JOURNAL_SCHEMA_VERSION } },
        );
      }
      for (let current = version; current < JOURNAL_SCHEMA_VERSION; current++) {
        const migration = migrations[current];
        if (migration === undefined) {
          throw new PaperbotError('JOURNAL_SCHEMA_INVALID', `no migration from version ${current}`);
        }
        migration(database);
        database.pragma(`user_version = ${current + 1}`);
      }
      const stored = database.prepare("SELECT value FROM meta WHERE key = 'epoch'").get() as
        { value: string } | undefined;
      if (stored !== undefined) return stored.value;
      const epoch = options.epoch ?? randomBytes(6).toString('hex');
      if (!EPOCH_PATTERN.test(epoch)) {
        throw new PaperbotError('JOURNAL_SCHEMA_INVALID', `epoch ${epoch} is not 4..16 id chars`);
      }
      const insert = database.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      insert.run('epoch', epoch);
      insert.run('created_at', String(options.now()));
      return epoch;
    })
    .immediate();
}
