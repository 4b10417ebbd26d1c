/**
 * What a live journal measured of the venue's delays (docs/backtesting.md, "Calibrating latency
 * from live"). The journal keeps, per intent, when the strategy emitted it and when its answer
 * came (`emitted_at`, `updated_at` of an accepted intent), and per private event, when the venue
 * says it happened and when the bot had it (fills: `occurred_at`, `seen_at`; order events:
 * `occurred_at`, `applied_at`). Two kinds of sample come out:
 *
 * - event legs: bot time minus venue time of each fill and order event that came over the stream;
 * - command round trips (order plus response leg): cancels, which go out without a simulation,
 *   accepted at the first attempt, emitted while no earlier command of the same strategy was in
 *   flight, of any strategy (a command waiting behind another would count the wait). A placement's
 *   `updated_at` moves again when its fill is reported, so placements are not used.
 */
import Database from 'better-sqlite3';
import { PaperbotError } from '../../core/errors.ts';

/** One measured cancel: emitted, answered, and the order it cancelled (for a recording's time). */
export interface CancelTiming {
  readonly emittedAt: number;
  readonly answeredAt: number;
  readonly orderId: string | null;
}

export interface JournalSamples {
  /** Venue event to the bot, ms. */
  readonly eventLegs: readonly number[];
  /** Command sent to its answer received, ms. */
  readonly roundTrips: readonly number[];
  /** The cancels behind `roundTrips`, in the same order. */
  readonly cancels: readonly CancelTiming[];
  /** Intents read, and cancels left out because a command of their strategy was in flight. */
  readonly intents: number;
  readonly queuedCancels: number;
}

/** Rows read from each table at most: a journal of years still calibrates in bounded memory. */
export const MAX_JOURNAL_ROWS = 1_000_000;

interface IntentRow {
  readonly outcome_json: string | null;
  readonly kind: string;
  readonly state: string;
  readonly emitted_at: number;
  readonly updated_at: number;
  readonly send_attempts: number;
}

interface EventRow {
  readonly bot_at: number;
  readonly occurred_at: string | null;
}

/** The venue order id an accepted intent's outcome names, if any. */
function orderIdOf(outcomeJson: string | null): string | null {
  if (outcomeJson === null) return null;
  try {
    const outcome = JSON.parse(outcomeJson) as { orderId?: unknown };
    return typeof outcome.orderId === 'string' ? outcome.orderId : null;
  } catch {
    return null;
  }
}

function openJournal(path: string): Database.Database {
  try {
    return new Database(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new PaperbotError(
      'JOURNAL_UNREADABLE',
      `${path}: cannot open the journal (${error instanceof Error ? error.message : String(error)})`,
      { details: { path } },
    );
  }
}

function eventLegs(rows: Iterable<EventRow>, into: number[]): void {
  for (const row of rows) {
    if (row.occurred_at === null) continue;
    const venueAt = Date.parse(row.occurred_at);
    if (Number.isNaN(venueAt)) continue;
    into.push(row.bot_at - venueAt);
    if (into.length >= MAX_JOURNAL_ROWS) return;
  }
}

/** Reads the samples of a journal file (the bot stopped: a running bot holds it exclusively). */
export function journalSamples(path: string): JournalSamples {
  const database = openJournal(path);
  try {
    const version = database.pragma('user_version', { simple: true }) as number;
    if (version < 2) {
      throw new PaperbotError(
        'JOURNAL_SCHEMA_INVALID',
        `${path}: journal schema version ${version} keeps no event times (version 2 or later needed)`,
        { details: { path, version } },
      );
    }
    const events: number[] = [];
    eventLegs(
      database
        .prepare(
          `SELECT seen_at AS bot_at, json_extract(fill_json, '$.occurred_at') AS occurred_at
             FROM seen_fills WHERE source = 'stream' AND fill_json IS NOT NULL LIMIT ?`,
        )
        .iterate(MAX_JOURNAL_ROWS) as Iterable<EventRow>,
      events,
    );
    eventLegs(
      database
        .prepare('SELECT applied_at AS bot_at, occurred_at FROM order_events LIMIT ?')
        .iterate(MAX_JOURNAL_ROWS) as Iterable<EventRow>,
      events,
    );
    const roundTrips: number[] = [];
    const cancels: CancelTiming[] = [];
    let intents = 0;
    let queuedCancels = 0;
    // The latest answer of the commands emitted before: one emitted before it may have waited.
    let busyUntil = Number.NEGATIVE_INFINITY;
    const rows = database
      .prepare(
        `SELECT kind, state, emitted_at, updated_at, send_attempts, outcome_json FROM intents
          ORDER BY emitted_at, created_at, rowid LIMIT ?`,
      )
      .iterate(MAX_JOURNAL_ROWS) as Iterable<IntentRow>;
    for (const row of rows) {
      intents++;
      if (row.state === 'denied' || row.send_attempts === 0) continue;
      const busy = busyUntil > row.emitted_at;
      if (row.kind === 'cancel' && row.state === 'accepted' && row.send_attempts === 1) {
        if (busy) queuedCancels++;
        else {
          roundTrips.push(row.updated_at - row.emitted_at);
          cancels.push({
            emittedAt: row.emitted_at,
            answeredAt: row.updated_at,
            orderId: orderIdOf(row.outcome_json),
          });
        }
      }
      busyUntil = Math.max(busyUntil, row.updated_at);
    }
    return { eventLegs: events, roundTrips, cancels, intents, queuedCancels };
  } catch (error) {
    if (error instanceof PaperbotError) throw error;
    throw new PaperbotError(
      'JOURNAL_UNREADABLE',
      `${path}: not a paperbot journal (${error instanceof Error ? error.message : String(error)})`,
      { details: { path } },
    );
  } finally {
    database.close();
  }
}
