/**
 * Every statement the SQLite journal (`journal.ts`) runs, prepared once when it opens: preparing
 * costs more than running, and fields are not looked up by their text.
 */
import type Database from 'better-sqlite3';
import { OPEN_INTENT_STATES } from './schema.ts';

/** The open states as literals, the partial index's own condition, so SQLite can use the index. */
const OPEN_STATES_SQL = OPEN_INTENT_STATES.map((state) => `'${state}'`).join(', ');

/**
 * @internal The journal's own: left out of the package's declarations, which could not spell
 * the statements' inferred type (better-sqlite3's namespace is private to its module).
 */
export function prepareStatements(database: Database.Database) {
  const prepare = (sql: string) => database.prepare(sql);
  return {
    // The last sequence is the higher of the one noted and the highest journaled intent's: an
    // intent carries its own sequence, so journaling it needs no second write (the UNIQUE
    // (strategy_id, sequence) index finds the highest at once).
    nextSequence: prepare(
      `SELECT MAX(
           COALESCE((SELECT last_sequence FROM strategy_sequences WHERE strategy_id = ?), 0),
           COALESCE((SELECT MAX(sequence) FROM intents WHERE strategy_id = ?), 0)
         ) AS last_sequence`,
    ),
    noteSequence: prepare(
      `INSERT INTO strategy_sequences (strategy_id, last_sequence) VALUES (?, ?)
         ON CONFLICT (strategy_id) DO UPDATE SET last_sequence = MAX(last_sequence, excluded.last_sequence)
         RETURNING last_sequence`,
    ),
    takeInternalSequence: prepare(
      `INSERT INTO internal_sequences (purpose, last_sequence) VALUES (?, 1)
         ON CONFLICT (purpose) DO UPDATE SET last_sequence = last_sequence + 1
         RETURNING last_sequence`,
    ),
    insertIntent: prepare(
      `INSERT INTO intents (request_id, strategy_id, sequence, kind, client_order_id, market_id,
           intent_json, emitted_at, state, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'journaled', ?, ?)
         ON CONFLICT (request_id) DO NOTHING`,
    ),
    // An intent with its command and the step after it (`recordIntent` with a first command).
    insertIntentWithCommand: prepare(
      `INSERT INTO intents (request_id, strategy_id, sequence, kind, client_order_id, market_id,
           intent_json, emitted_at, state, simulate_request_id, simulate_attempt,
           command_endpoint, command_path, command_body, command_sha256, send_attempts,
           context_json, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (request_id) DO NOTHING`,
    ),
    intent: prepare('SELECT * FROM intents WHERE request_id = ?'),
    intentByOrderId: prepare(
      `SELECT * FROM intents WHERE order_id = ? AND kind IN ('place', 'amend', 'close_position')
         ORDER BY rowid DESC LIMIT 1`,
    ),
    intentByClientOrderId: prepare(
      `SELECT * FROM intents WHERE client_order_id = ? AND kind IN ('place', 'amend', 'close_position')
         ORDER BY rowid DESC LIMIT 1`,
    ),
    openIntents: prepare(
      `SELECT * FROM intents WHERE state IN (${OPEN_STATES_SQL}) ORDER BY rowid`,
    ),
    countExhaustedUnknown: prepare(
      `SELECT COUNT(*) AS count FROM intents WHERE state IN (${OPEN_STATES_SQL})
         AND state = 'unknown' AND next_resolution_at IS NULL`,
    ),
    // An open state is counted on the partial index of open intents, not by a table scan.
    countOpenIntents: prepare(
      `SELECT COUNT(*) AS count FROM intents WHERE state IN (${OPEN_STATES_SQL}) AND state = ?`,
    ),
    countIntents: prepare('SELECT COUNT(*) AS count FROM intents WHERE state = ?'),
    // Scans of the partial indexes on these columns, not of the table's wide rows.
    orderIds: prepare('SELECT order_id FROM intents WHERE order_id IS NOT NULL').pluck(),
    clientOrderIds: prepare(
      'SELECT client_order_id FROM intents WHERE client_order_id IS NOT NULL',
    ).pluck(),
    // Whether an order (or client order id) is one of ours: one index probe, not a set of all.
    knowsOrderId: prepare('SELECT 1 FROM intents WHERE order_id = ? LIMIT 1').pluck(),
    knowsClientOrderId: prepare('SELECT 1 FROM intents WHERE client_order_id = ? LIMIT 1').pluck(),
    hasCommand: prepare(
      'SELECT command_endpoint IS NOT NULL AS has_command FROM intents WHERE request_id = ?',
    ),
    recordSimulation: prepare(
      `UPDATE intents SET state = 'simulating', simulate_request_id = ?, simulate_attempt = ?,
         updated_at = ? WHERE request_id = ?`,
    ),
    recordCommand: prepare(
      `UPDATE intents SET command_endpoint = ?, command_path = ?, command_body = ?,
         command_sha256 = ?, context_json = ?, updated_at = ? WHERE request_id = ?`,
    ),
    // The command with the step that follows it at once, in one statement (one commit).
    recordCommandSimulating: prepare(
      `UPDATE intents SET command_endpoint = ?, command_path = ?, command_body = ?,
         command_sha256 = ?, context_json = ?, state = 'simulating', simulate_request_id = ?,
         simulate_attempt = ?, updated_at = ? WHERE request_id = ?`,
    ),
    recordCommandSending: prepare(
      `UPDATE intents SET command_endpoint = ?, command_path = ?, command_body = ?,
         command_sha256 = ?, context_json = ?, state = 'sending',
         send_attempts = send_attempts + 1, updated_at = ? WHERE request_id = ?`,
    ),
    recordSendAttempt: prepare(
      `UPDATE intents SET state = CASE WHEN state = 'unknown' THEN 'unknown' ELSE 'sending' END,
         send_attempts = send_attempts + 1, updated_at = ? WHERE request_id = ?`,
    ),
    recordAccepted: prepare(
      `UPDATE intents SET state = 'accepted', order_id = ?,
         replaces_order_id = COALESCE(?, replaces_order_id), outcome_json = ?,
         next_resolution_at = NULL, updated_at = ? WHERE request_id = ?`,
    ),
    recordRejected: prepare(
      `UPDATE intents SET state = 'rejected', outcome_json = ?, next_resolution_at = NULL,
         updated_at = ? WHERE request_id = ?`,
    ),
    recordDenied: prepare(
      `UPDATE intents SET state = 'denied', outcome_json = ?, next_resolution_at = NULL,
         updated_at = ? WHERE request_id = ?`,
    ),
    recordUnknown: prepare(
      `UPDATE intents SET state = 'unknown', outcome_json = ?, next_resolution_at = ?,
         updated_at = ? WHERE request_id = ?`,
    ),
    recordResolutionAttempt: prepare(
      `UPDATE intents SET resolution_attempts = resolution_attempts + 1, next_resolution_at = ?,
         updated_at = ? WHERE request_id = ?`,
    ),
    recordResolved: prepare(
      `UPDATE intents SET state = 'resolved', order_id = ?,
         replaces_order_id = COALESCE(?, replaces_order_id), outcome_json = ?,
         next_resolution_at = NULL, updated_at = ? WHERE request_id = ?`,
    ),
    markFillReported: prepare(
      'UPDATE intents SET fill_reported = 1, updated_at = ? WHERE request_id = ? AND fill_reported = 0',
    ),
    markFillSeen: prepare(
      'INSERT OR IGNORE INTO seen_fills (fill_id, order_id, seen_at) VALUES (?, ?, ?)',
    ),
    hasSeenFill: prepare('SELECT 1 FROM seen_fills WHERE fill_id = ?'),
    recordFill: prepare(
      `INSERT INTO seen_fills (fill_id, order_id, seen_at, sequence, source, fill_json)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (fill_id) DO NOTHING`,
    ),
    fill: prepare('SELECT * FROM seen_fills WHERE fill_id = ?'),
    fillCount: prepare('SELECT COUNT(*) AS count FROM seen_fills').pluck(),
    lastKnownFill: prepare(
      `SELECT fill_id, json_extract(fill_json, '$.occurred_at') AS occurred_at
         FROM seen_fills ORDER BY rowid DESC LIMIT 1`,
    ),
    readCursor: prepare('SELECT last_sequence, last_event_at FROM private_cursor WHERE id = 1'),
    // The stored value is a maximum: an older sequence never moves it back.
    advanceCursor: prepare(
      `INSERT INTO private_cursor (id, last_sequence, last_event_at, updated_at) VALUES (1, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET last_sequence = excluded.last_sequence,
           last_event_at = excluded.last_event_at, updated_at = excluded.updated_at
         WHERE excluded.last_sequence > private_cursor.last_sequence`,
    ),
    recordOrderEvent: prepare(
      `INSERT INTO order_events (sequence, event_id, order_id, from_state, to_state, occurred_at,
           applied_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (sequence) DO UPDATE SET event_id = excluded.event_id,
           order_id = excluded.order_id, from_state = excluded.from_state,
           to_state = excluded.to_state, occurred_at = excluded.occurred_at,
           applied_at = excluded.applied_at`,
    ),
    orderEvents: prepare('SELECT * FROM order_events ORDER BY sequence'),
    trimOrderEvents: prepare('DELETE FROM order_events WHERE sequence <= ?'),
    restartCursor: prepare(
      `INSERT INTO private_cursor (id, last_sequence, last_event_at, updated_at)
         VALUES (1, ?, NULL, ?)
         ON CONFLICT (id) DO UPDATE SET last_sequence = excluded.last_sequence,
           last_event_at = NULL, updated_at = excluded.updated_at`,
    ),
    readFillReadBack: prepare('SELECT * FROM fill_read_back WHERE id = 1'),
    // A read-back already owed keeps its (older) stop: reading down to it covers the new gap too.
    requestFillReadBack: prepare(
      `INSERT INTO fill_read_back (id, generation, stop_fill_id, stop_occurred_at, reason,
           requested_at)
         VALUES (1, 1, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET generation = fill_read_back.generation + 1`,
    ),
    finishFillReadBack: prepare('DELETE FROM fill_read_back WHERE id = 1 AND generation = ?'),
    recordInternalCommand: prepare(
      `INSERT INTO internal_commands (request_id, purpose, command_endpoint, command_path,
           command_body, command_sha256, state, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'sending', ?, ?)`,
    ),
    finishInternalCommand: prepare(
      'UPDATE internal_commands SET state = ?, outcome_json = ?, updated_at = ? WHERE request_id = ?',
    ),
    internalCommand: prepare('SELECT * FROM internal_commands WHERE request_id = ?'),
    internalCommandIds: prepare('SELECT request_id FROM internal_commands ORDER BY rowid').pluck(),
    internalCommandIdsOf: prepare(
      'SELECT request_id FROM internal_commands WHERE purpose = ? ORDER BY rowid',
    ).pluck(),
    abandonInternalCommands: prepare(
      `UPDATE internal_commands INDEXED BY internal_commands_sending SET state = 'abandoned',
         updated_at = ? WHERE state = 'sending'`,
    ),
    readMeta: prepare('SELECT value FROM meta WHERE key = ?'),
    writeMeta: prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    readDeadman: prepare('SELECT * FROM deadman WHERE id = 1'),
    writeDeadman: prepare(
      `INSERT INTO deadman (id, armed, timeout_seconds, deadline_at, last_request_id,
           confirmed_at, fired_at, updated_at)
         VALUES (1, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET armed = excluded.armed,
           timeout_seconds = excluded.timeout_seconds, deadline_at = excluded.deadline_at,
           last_request_id = excluded.last_request_id, confirmed_at = excluded.confirmed_at,
           fired_at = excluded.fired_at, updated_at = excluded.updated_at`,
    ),
  };
}

/** @internal */
export type Statements = ReturnType<typeof prepareStatements>;

/**
 * @internal What each part of the SQLite journal works through: its file, statements and clock
 * (left out of the package's declarations, as `prepareStatements` is).
 */
export interface JournalStore {
  readonly path: string;
  readonly database: Database.Database;
  readonly sql: Statements;
  readonly now: () => number;
  /** Runs `work` in one transaction (`Journal.transaction`). */
  readonly transaction: <T>(work: () => T) => T;
}
