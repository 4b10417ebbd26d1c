/**
 * The figures of a chaos run, from the venue's truth after the bot exited:
 *
 * - duplicates: venue orders beyond the first for one client_order_id or one request_id, plus
 *   venue orders no journaled intent knows (the bot placed something it did not mean to).
 * - lost_fills: venue fills whose fill_id no `fill` log line of any run of the bot names.
 * - double_counted: `fill` log lines beyond the first for one fill_id, over all runs (the bot
 *   counts a fill in `paperbot_fills_total` exactly where it logs it, and a restart that
 *   counts a fill again logs it again).
 * - left_open: the account's orders still active at the venue after the last run exited.
 */
import { systemClock } from '../../src/core/clock.ts';
import { Journal } from '../../src/runtime/journal/index.ts';
import { ACTIVE_STATUSES, type VenueFill, type VenueOrder } from './venue.ts';

export interface Figures {
  readonly duplicates: number;
  readonly lost_fills: number;
  readonly double_counted: number;
  readonly left_open: number;
  readonly venueOrders: number;
  readonly venueFills: number;
}

function extraCopies(values: readonly (string | null)[]): number {
  const seen = new Set<string>();
  let extra = 0;
  for (const value of values) {
    if (value === null) continue;
    if (seen.has(value)) extra += 1;
    else seen.add(value);
  }
  return extra;
}

/**
 * From the journal after the run: orders no journaled intent knows by its client order id, and
 * venue fills the journal has not marked seen (a diagnostic note; the figure is the log's).
 * Null when the journal cannot be read.
 */
function readJournal(
  orders: readonly VenueOrder[],
  fills: readonly VenueFill[],
  journalPath: string,
): { unknownOrders: number; unseenFills: number } | null {
  let journal: Journal;
  try {
    journal = Journal.open(journalPath, { now: () => systemClock.now() });
  } catch {
    return null;
  }
  try {
    return {
      unknownOrders: orders.filter(
        (order) =>
          order.client_order_id === null ||
          journal.intentByClientOrderId(order.client_order_id) === undefined,
      ).length,
      unseenFills: fills.filter((fill) => !journal.hasSeenFill(fill.fill_id)).length,
    };
  } finally {
    journal.close();
  }
}

export function countFigures(input: {
  readonly orders: readonly VenueOrder[];
  readonly fills: readonly VenueFill[];
  readonly records: readonly Record<string, unknown>[];
  readonly journalPath: string;
}): Figures & { readonly notes: string[] } {
  const notes: string[] = [];
  const { orders, fills, records } = input;
  const byClientId = extraCopies(orders.map((order) => order.client_order_id));
  const byRequestId = extraCopies(orders.map((order) => order.request_id));
  const journal = readJournal(orders, fills, input.journalPath);
  if (journal === null) notes.push('the journal could not be opened after the run');
  else {
    if (journal.unknownOrders > 0) {
      notes.push(`${journal.unknownOrders} venue orders unknown to the journal`);
    }
    if (journal.unseenFills > 0) {
      notes.push(`${journal.unseenFills} venue fills not marked seen in the journal`);
    }
  }
  const duplicates = Math.max(byClientId, byRequestId) + (journal?.unknownOrders ?? 0);

  const logged = records
    .filter((record) => record.event === 'fill' && typeof record.fill_id === 'string')
    .map((record) => record.fill_id as string);
  const loggedSet = new Set(logged);
  const lost = fills.filter((fill) => !loggedSet.has(fill.fill_id));
  if (lost.length > 0) {
    notes.push(
      `lost fill ids: ${lost
        .slice(0, 5)
        .map((fill) => fill.fill_id)
        .join(', ')}${lost.length > 5 ? ', ...' : ''}`,
    );
  }
  const doubleCounted = logged.length - loggedSet.size;
  const open = orders.filter((order) => ACTIVE_STATUSES.has(order.status));
  if (open.length > 0) {
    notes.push(`left open: ${open.map((order) => `${order.order_id} ${order.status}`).join(', ')}`);
  }
  return {
    duplicates,
    lost_fills: lost.length,
    double_counted: doubleCounted,
    left_open: open.length,
    venueOrders: orders.length,
    venueFills: fills.length,
    notes,
  };
}
