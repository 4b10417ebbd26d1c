/**
 * Retention of the live journal: settled intents, order events, fills and the runtime's own
 * finished commands older than a window leave it, archived into a rotated SQLite file (with a
 * manifest) or dropped, a small batch per step. What recovery needs never leaves: open intents
 * (journaled, simulating, sending, unknown), an intent whose order is still live, the private
 * cursor, the newest fill and the fill a read-back stops at, the strategies' sequences (noted in
 * `strategy_sequences` before their intents leave), emulated exits (their own table and pruning)
 * and the dead-man state. Rows are walked oldest first by rowid (rows are written in time
 * order), so a step reads the rows it keeps plus one batch, whatever the history.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { isoTimestamp } from '../../core/clock.ts';
import { OPEN_INTENT_STATES } from './schema.ts';

export const RETENTION_MODES = ['archive', 'drop'] as const;
export type RetentionMode = (typeof RETENTION_MODES)[number];

export interface RetentionPolicy {
  /** Rows settled longer ago than this leave the live journal. */
  readonly windowMs: number;
  readonly mode: RetentionMode;
  /** Where archive files and their manifest go (mode `archive`). */
  readonly archiveDir: string;
  /** Rows per table that leave in one step (one short transaction). */
  readonly batchRows: number;
}

/** What one step moved out, per table; `done` when nothing older than the window is left. */
export interface PruneStep {
  readonly intents: number;
  readonly orderEvents: number;
  readonly fills: number;
  readonly internalCommands: number;
  readonly archiveFile: string | null;
  readonly done: boolean;
}

/** Disk use and row counts of the journal (`paperbot_journal_*` metrics). */
export interface JournalStats {
  readonly fileBytes: number;
  readonly walBytes: number;
  readonly freePages: number;
  readonly pageSize: number;
  /** Rows per table: exact for the small tables, the rowid span for the large ones. */
  readonly rows: Readonly<Record<string, number>>;
}

/** Tables whose rows leave, with what makes a row old and how an archive tells rows apart. */
const PRUNED_TABLES = {
  intents: { key: 'request_id' },
  order_events: { key: 'sequence, event_id' },
  seen_fills: { key: 'fill_id' },
  internal_commands: { key: 'request_id' },
} as const;
type PrunedTable = keyof typeof PRUNED_TABLES;

const OPEN_STATES: ReadonlySet<string> = new Set(OPEN_INTENT_STATES);
/** Rows looked at per step, per batch row that may leave (kept rows are skipped over). */
const SCAN_FACTOR = 4;

const MANIFEST = 'manifest.json';

interface ManifestFile {
  file: string;
  created_at: string;
  updated_at: string;
  rows: Record<PrunedTable, number>;
}
interface Manifest {
  version: 1;
  journal: string;
  epoch: string;
  files: ManifestFile[];
}

interface IntentCandidate {
  rowid: number;
  request_id: string;
  state: string;
  order_id: string | null;
  created_at: number;
  updated_at: number;
}

export class JournalRetention {
  private readonly scanIntents: BetterSqlite3.Statement;
  private readonly scanEvents: BetterSqlite3.Statement;
  private readonly scanFills: BetterSqlite3.Statement;
  private readonly scanInternal: BetterSqlite3.Statement;
  private readonly fillsKept: BetterSqlite3.Statement;
  private readonly keepSequences: BetterSqlite3.Statement;
  private readonly runInTransaction: BetterSqlite3.Transaction<(work: () => void) => void>;
  /** Where each table's walk goes on from (the last rowid looked at; 0: the oldest). */
  private readonly cursors: Record<PrunedTable, number> = {
    intents: 0,
    order_events: 0,
    seen_fills: 0,
    internal_commands: 0,
  };
  /** Archived counts not yet in the manifest (`flushManifest`). */
  private readonly pendingManifest: {
    directory: string;
    name: string;
    now: number;
    counts: (readonly [PrunedTable, number])[];
  }[] = [];

  constructor(
    private readonly database: BetterSqlite3.Database,
    private readonly journalPath: string,
    private readonly epoch: string,
  ) {
    this.scanIntents = database.prepare(
      `SELECT rowid, request_id, state, order_id, created_at, updated_at FROM intents
         WHERE rowid > ? ORDER BY rowid LIMIT ?`,
    );
    this.scanEvents = database.prepare(
      `SELECT sequence AS rowid, applied_at AS at FROM order_events
         WHERE sequence > ? ORDER BY sequence LIMIT ?`,
    );
    this.scanFills = database.prepare(
      `SELECT rowid, seen_at AS at, fill_id FROM seen_fills WHERE rowid > ? ORDER BY rowid LIMIT ?`,
    );
    this.scanInternal = database.prepare(
      `SELECT rowid, updated_at AS at, state FROM internal_commands
         WHERE rowid > ? ORDER BY rowid LIMIT ?`,
    );
    this.fillsKept = database.prepare(
      `SELECT (SELECT MAX(rowid) FROM seen_fills) AS newest,
              (SELECT stop_fill_id FROM fill_read_back WHERE id = 1) AS stop_fill_id`,
    );
    this.keepSequences = database.prepare(
      `INSERT INTO strategy_sequences (strategy_id, last_sequence)
         SELECT strategy_id, MAX(sequence) FROM intents
           WHERE rowid IN (SELECT value FROM json_each(?)) GROUP BY strategy_id
         ON CONFLICT (strategy_id) DO UPDATE
           SET last_sequence = MAX(last_sequence, excluded.last_sequence)`,
    );
    this.runInTransaction = database.transaction((work: () => void) => work());
  }

  /**
   * Moves out at most `batchRows` rows per table older than `now - windowMs`, in one
   * transaction. `isLiveOrder` names orders still live (their intents stay). Returns the
   * request ids of the intents that left, so the journal forgets what it kept of them.
   */
  step(
    policy: RetentionPolicy,
    now: number,
    isLiveOrder: (orderId: string) => boolean,
  ): PruneStep & { readonly prunedRequestIds: readonly string[] } {
    const cutoff = now - policy.windowMs;
    const limit = policy.batchRows;
    const intents = this.intentsToPrune(cutoff, limit, isLiveOrder);
    const events = this.oldRows('order_events', this.scanEvents, cutoff, limit, () => true);
    const kept = this.fillsKept.get() as { newest: number | null; stop_fill_id: string | null };
    const fills = this.oldRows(
      'seen_fills',
      this.scanFills,
      cutoff,
      limit,
      (row) => row.rowid !== kept.newest && row.fill_id !== kept.stop_fill_id,
    );
    const internal = this.oldRows(
      'internal_commands',
      this.scanInternal,
      cutoff,
      limit,
      (row) => row.state !== 'sending',
    );
    const batches: [PrunedTable, number[]][] = [
      ['intents', intents.rowids],
      ['order_events', events.rowids],
      ['seen_fills', fills.rowids],
      ['internal_commands', internal.rowids],
    ];
    const moved = batches.some(([, rowids]) => rowids.length > 0);
    let archiveFile: string | null = null;
    if (moved) {
      if (policy.mode === 'archive') {
        archiveFile = this.archive(policy.archiveDir, now, batches, intents.rowids);
      } else {
        this.runInTransaction(() => this.remove(batches, intents.rowids));
      }
    }
    return {
      intents: intents.rowids.length,
      orderEvents: events.rowids.length,
      fills: fills.rowids.length,
      internalCommands: internal.rowids.length,
      archiveFile,
      done: intents.done && events.done && fills.done && internal.done,
      prunedRequestIds: intents.requestIds,
    };
  }

  /** Checkpoints the whole WAL into the file and truncates it (the lock is ours: no reader waits). */
  checkpoint(): void {
    this.database.pragma('wal_checkpoint(TRUNCATE)');
  }

  /**
   * Gives back to the file system up to `pages` free pages (a journal created with incremental
   * auto-vacuum; an older one reuses its free pages instead). Returns the pages still free.
   */
  reclaim(pages: number): number {
    if (this.reclaimsSpace()) {
      this.database.pragma(`incremental_vacuum(${Math.max(1, Math.floor(pages))})`);
    }
    return this.database.pragma('freelist_count', { simple: true }) as number;
  }

  /** Whether the file was made with incremental auto-vacuum (2), so `reclaim` shrinks it. */
  reclaimsSpace(): boolean {
    return (this.database.pragma('auto_vacuum', { simple: true }) as number) === 2;
  }

  stats(): JournalStats {
    const sizeOf = (path: string) => {
      try {
        return statSync(path).size;
      } catch {
        return 0;
      }
    };
    const span = (table: string) => {
      const row = this.database
        .prepare(`SELECT MIN(rowid) AS low, MAX(rowid) AS high FROM ${table}`)
        .get() as { low: number | null; high: number | null };
      return row.low === null || row.high === null ? 0 : row.high - row.low + 1;
    };
    const count = (table: string) =>
      this.database.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
    const memory = this.journalPath === ':memory:';
    return {
      fileBytes: memory ? 0 : sizeOf(this.journalPath),
      walBytes: memory ? 0 : sizeOf(`${this.journalPath}-wal`),
      freePages: this.database.pragma('freelist_count', { simple: true }) as number,
      pageSize: this.database.pragma('page_size', { simple: true }) as number,
      rows: {
        intents: span('intents'),
        order_events: span('order_events'),
        seen_fills: span('seen_fills'),
        internal_commands: span('internal_commands'),
        emulated_exits: count('emulated_exits'),
        strategy_sequences: count('strategy_sequences'),
      },
    };
  }

  private intentsToPrune(
    cutoff: number,
    limit: number,
    isLiveOrder: (orderId: string) => boolean,
  ): { rowids: number[]; requestIds: string[]; done: boolean } {
    const rowids: number[] = [];
    const requestIds: string[] = [];
    const done = this.walk('intents', this.scanIntents, limit, (row: IntentCandidate) => {
      // Rows are written in time order: from the first one made after the cutoff, none is old.
      if (row.created_at >= cutoff) return 'stop';
      const stays =
        OPEN_STATES.has(row.state) ||
        row.updated_at >= cutoff ||
        (row.order_id !== null && isLiveOrder(row.order_id));
      if (stays) return 'keep';
      rowids.push(row.rowid);
      requestIds.push(row.request_id);
      return rowids.length >= limit ? 'full' : 'take';
    });
    return { rowids, requestIds, done };
  }

  private oldRows(
    table: PrunedTable,
    scan: BetterSqlite3.Statement,
    cutoff: number,
    limit: number,
    mayLeave: (row: { rowid: number; at: number; fill_id?: string; state?: string }) => boolean,
  ): { rowids: number[]; done: boolean } {
    const rowids: number[] = [];
    const done = this.walk(table, scan, limit, (row: { rowid: number; at: number }) => {
      if (row.at >= cutoff) return 'stop';
      if (!mayLeave(row)) return 'keep';
      rowids.push(row.rowid);
      return rowids.length >= limit ? 'full' : 'take';
    });
    return { rowids, done };
  }

  /**
   * Walks `table` by rowid from where the last step stopped (rows kept stay behind the cursor,
   * so they are read once per pass, not once per step), at most `limit` x SCAN_FACTOR rows.
   * True when the walk reached the first row too new to go (or the end): the next step starts
   * from the oldest row again.
   */
  private walk<Row extends { rowid: number }>(
    table: PrunedTable,
    scan: BetterSqlite3.Statement,
    limit: number,
    visit: (row: Row) => 'stop' | 'keep' | 'take' | 'full',
  ): boolean {
    let scanned = 0;
    while (scanned < limit * SCAN_FACTOR) {
      const rows = scan.all(this.cursors[table], limit) as Row[];
      if (rows.length === 0) break;
      for (const row of rows) {
        const verdict = visit(row);
        if (verdict === 'stop') {
          this.cursors[table] = 0;
          return true;
        }
        this.cursors[table] = row.rowid;
        scanned += 1;
        if (verdict === 'full') return false;
      }
    }
    if (scanned < limit * SCAN_FACTOR) {
      this.cursors[table] = 0;
      return true;
    }
    return false;
  }

  private remove(batches: readonly [PrunedTable, number[]][], intentRowids: number[]): void {
    if (intentRowids.length > 0) this.keepSequences.run(JSON.stringify(intentRowids));
    for (const [table, rowids] of batches) {
      if (rowids.length === 0) continue;
      const column = table === 'order_events' ? 'sequence' : 'rowid';
      this.database
        .prepare(`DELETE FROM main.${table} WHERE ${column} IN (SELECT value FROM json_each(?))`)
        .run(JSON.stringify(rowids));
    }
  }

  /**
   * Copies the batch into the archive file of the day (UTC), then deletes it here. The copy is
   * keyed, so a crash between the two (the files commit one by one) copies again harmlessly.
   */
  private archive(
    directory: string,
    now: number,
    batches: readonly [PrunedTable, number[]][],
    intentRowids: number[],
  ): string {
    mkdirSync(directory, { recursive: true });
    const name = `${basename(this.journalPath)}.${isoTimestamp(now).slice(0, 10)}.sqlite`;
    const file = join(directory, name);
    this.database.prepare('ATTACH DATABASE ? AS archive').run(file);
    try {
      // The archive commits by WAL and syncs at checkpoints only: a step's commit is then no
      // heavier than the live journal's own (rows lost from it by a power cut are copied again,
      // since they leave the live journal in the same transaction).
      this.database.pragma('archive.journal_mode = WAL');
      this.database.pragma('archive.synchronous = NORMAL');
      this.runInTransaction(() => {
        for (const [table, rowids] of batches) {
          this.database.exec(
            `CREATE TABLE IF NOT EXISTS archive.${table} AS SELECT * FROM main.${table} WHERE 0;
             CREATE UNIQUE INDEX IF NOT EXISTS archive.${table}_key
               ON ${table} (${PRUNED_TABLES[table].key});`,
          );
          if (rowids.length === 0) continue;
          const column = table === 'order_events' ? 'sequence' : 'rowid';
          this.database
            .prepare(
              `INSERT OR IGNORE INTO archive.${table} SELECT * FROM main.${table}
                 WHERE ${column} IN (SELECT value FROM json_each(?))`,
            )
            .run(JSON.stringify(rowids));
        }
        this.remove(batches, intentRowids);
      });
    } finally {
      this.database.exec('DETACH DATABASE archive');
    }
    this.pendingManifest.push({
      directory,
      name,
      now,
      counts: batches.map(([t, r]) => [t, r.length]),
    });
    return file;
  }

  /**
   * Writes what the steps since the last call archived into the manifest (`manifest.json`,
   * written whole and renamed into place). Called at the end of a pass, not at every step.
   */
  flushManifest(): void {
    for (const entry of this.pendingManifest.splice(0)) {
      this.noteInManifest(entry.directory, entry.name, entry.now, entry.counts);
    }
  }

  private noteInManifest(
    directory: string,
    name: string,
    now: number,
    counts: readonly (readonly [PrunedTable, number])[],
  ): void {
    const path = join(directory, MANIFEST);
    let manifest: Manifest = {
      version: 1,
      journal: this.journalPath,
      epoch: this.epoch,
      files: [],
    };
    try {
      manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
    } catch {
      // No manifest yet (or an unreadable one): a new one lists the files from here on.
    }
    let entry = manifest.files.find((file) => file.file === name);
    if (entry === undefined) {
      entry = {
        file: name,
        created_at: isoTimestamp(now),
        updated_at: isoTimestamp(now),
        rows: { intents: 0, order_events: 0, seen_fills: 0, internal_commands: 0 },
      };
      manifest.files.push(entry);
    }
    entry.updated_at = isoTimestamp(now);
    for (const [table, count] of counts) entry.rows[table] += count;
    const temporary = `${path}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(temporary, path);
  }
}
