/**
 * The journal's table of emulated exits (`runtime/exits`): one row per exit, rewritten on every
 * state change, so a restarted bot restores the exits that were live. Finished rows are kept
 * for a while (the newest `FINISHED_ROWS_KEPT`) and then pruned.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { ExitStore } from '../exits/emulator.ts';
import { type EmulatedExit, type ExitState, LIVE_EXIT_STATES } from '../exits/types.ts';

export const EXIT_STATES: readonly ExitState[] = [
  'pending',
  'waiting',
  'triggered',
  'released',
  'cancelled',
];

const FINISHED_ROWS_KEPT = 1000;
/** Finished saves between two prunes. */
const PRUNE_EVERY = 100;

const quoted = (values: readonly string[]) => values.map((value) => `'${value}'`).join(', ');

/** The migration that adds the table (see `schema.ts`). */
export const EMULATED_EXITS_SCHEMA = `
CREATE TABLE emulated_exits (
  exit_id TEXT PRIMARY KEY,
  strategy_id TEXT NOT NULL,
  market_id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN (${quoted(EXIT_STATES)})),
  exit_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE INDEX emulated_exits_live ON emulated_exits (created_at)
  WHERE state IN (${quoted(LIVE_EXIT_STATES)});
`;

export class JournalExits {
  private readonly upsert: BetterSqlite3.Statement;
  private readonly selectLive: BetterSqlite3.Statement;
  private readonly prune: BetterSqlite3.Statement;
  private finishedSincePrune = 0;

  constructor(database: BetterSqlite3.Database) {
    this.upsert = database.prepare(
      `INSERT INTO emulated_exits
           (exit_id, strategy_id, market_id, state, exit_json, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (exit_id) DO UPDATE SET state = excluded.state,
           exit_json = excluded.exit_json, updated_at = excluded.updated_at`,
    );
    this.selectLive = database.prepare(
      `SELECT exit_json FROM emulated_exits WHERE state IN (${quoted(LIVE_EXIT_STATES)})
         ORDER BY created_at, rowid`,
    );
    this.prune = database.prepare(
      `DELETE FROM emulated_exits WHERE state NOT IN (${quoted(LIVE_EXIT_STATES)})
         AND exit_id NOT IN (SELECT exit_id FROM emulated_exits
           WHERE state NOT IN (${quoted(LIVE_EXIT_STATES)})
           ORDER BY updated_at DESC, rowid DESC LIMIT ${FINISHED_ROWS_KEPT})`,
    );
  }

  save(exit: EmulatedExit): void {
    this.upsert.run(
      exit.id,
      exit.strategyId,
      exit.marketId,
      exit.state,
      JSON.stringify(exit),
      exit.createdAt,
      exit.updatedAt,
    );
    if (LIVE_EXIT_STATES.includes(exit.state)) return;
    this.finishedSincePrune += 1;
    if (this.finishedSincePrune >= PRUNE_EVERY) {
      this.finishedSincePrune = 0;
      this.prune.run();
    }
  }

  /** Live exits, oldest first. */
  live(): EmulatedExit[] {
    const rows = this.selectLive.all() as { exit_json: string }[];
    return rows.map((row) => Object.freeze(JSON.parse(row.exit_json) as EmulatedExit));
  }
}

/** What `journalExitStore` uses of a `Journal` (named here, so this file need not import it). */
export interface ExitJournal {
  readonly isOpen: boolean;
  readonly exits: JournalExits;
  getIntent(requestId: string): unknown;
}

/** The exit emulator's store over an open journal. */
export function journalExitStore(journal: ExitJournal): ExitStore {
  return {
    save: (exit) => {
      if (journal.isOpen) journal.exits.save(exit);
    },
    live: () => (journal.isOpen ? journal.exits.live() : []),
    hasIntent: (requestId) => journal.isOpen && journal.getIntent(requestId) !== undefined,
  };
}
