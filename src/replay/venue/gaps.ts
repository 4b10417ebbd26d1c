/**
 * The `gap` records of a recording as the replay venue honours them (docs/backtesting.md,
 * "Gaps"). A gap of a market's `book` or `trade` stream (of every market when the record names
 * none) suspends that market from the gap's `t` to its next book snapshot: the recorded book is
 * unknown (withdrawn from the engine, so takers find nothing to fill on), and the queue
 * positions of the account's resting orders restart (set again from the next snapshot). Gaps of
 * the `ticker` and `private` streams are listed and affect nothing: marks come back with the next
 * ticker, and a backtest trades its own account.
 *
 * This file keeps the list: each gap, when it ended, and what it affected. The venue does the
 * suspending (`replay-venue.ts`).
 */
import type { GapRecord, RecordedStream } from '../format/records.ts';

/** Streams whose gap suspends a market. */
export const SUSPENDING_STREAMS: ReadonlySet<RecordedStream> = new Set<RecordedStream>([
  'book',
  'trade',
]);

/** Order ids listed per gap and kind; beyond it only counted. */
export const GAP_LISTED_ORDERS = 100;

/** Gaps kept in the list; beyond it only counted (`GapLog.omitted`). */
export const GAP_LISTED = 1_000;

export interface AffectedOrders {
  count: number;
  /** The first `GAP_LISTED_ORDERS` ids. */
  readonly orderIds: string[];
}

export interface ReplayGap {
  /** The market suspended, or null for a listed-only gap that names no market. */
  readonly marketId: string | null;
  readonly stream: RecordedStream;
  readonly reason: string;
  readonly startMs: number;
  /** The next snapshot of the market; null when none came (or for a listed-only gap). */
  endMs: number | null;
  /** Whether the gap suspended the market (a `book` or `trade` gap). */
  readonly suspended: boolean;
  /** Resting orders whose queue position restarted. */
  readonly restartedQueues: AffectedOrders;
  /** Orders placed while suspended that ended, when applied, without a fill (market, IOC, FOK). */
  readonly unfilledTakers: AffectedOrders;
}

function affected(): AffectedOrders {
  return { count: 0, orderIds: [] };
}

function add(into: AffectedOrders, orderId: string): void {
  into.count++;
  if (into.orderIds.length < GAP_LISTED_ORDERS) into.orderIds.push(orderId);
}

export class GapLog {
  private readonly gaps: ReplayGap[] = [];
  private readonly open = new Map<string, ReplayGap[]>();
  /** Orders placed while their market was suspended: the gap and when they were applied. */
  private readonly placed = new Map<string, { readonly gap: ReplayGap; readonly t: number }>();
  /** Gaps beyond `GAP_LISTED`. */
  omitted = 0;

  /** The gaps in recording order. */
  list(): readonly ReplayGap[] {
    return this.gaps;
  }

  suspended(marketId: string): boolean {
    return this.open.has(marketId);
  }

  /** A gap that names no market it suspends. */
  listed(record: GapRecord): void {
    this.push({
      marketId: record.m ?? null,
      stream: record.d.stream,
      reason: record.d.reason,
      startMs: record.t,
      endMs: null,
      suspended: false,
      restartedQueues: affected(),
      unfilledTakers: affected(),
    });
  }

  /** A market suspended by `record`; `restarted` are its orders whose queue restarted. */
  suspend(marketId: string, record: GapRecord, restarted: readonly string[]): void {
    const gap: ReplayGap = {
      marketId,
      stream: record.d.stream,
      reason: record.d.reason,
      startMs: record.t,
      endMs: null,
      suspended: true,
      restartedQueues: affected(),
      unfilledTakers: affected(),
    };
    for (const orderId of restarted) add(gap.restartedQueues, orderId);
    const open = this.open.get(marketId);
    if (open === undefined) this.open.set(marketId, [gap]);
    else open.push(gap);
    this.push(gap);
  }

  /** The market's next snapshot at `t`: its open gaps end. */
  resume(marketId: string, t: number): void {
    const open = this.open.get(marketId);
    if (open === undefined) return;
    for (const gap of open) gap.endMs = t;
    this.open.delete(marketId);
  }

  /** An order of a suspended market reached the engine at `t`. */
  orderPlaced(orderId: string, marketId: string, t: number): void {
    const open = this.open.get(marketId);
    if (open === undefined) return;
    this.placed.set(orderId, { gap: open[open.length - 1]!, t });
  }

  /** An order ended: a taker placed in a gap that ended as it was applied, unfilled, is listed. */
  orderEnded(orderId: string, t: number, filled: boolean): void {
    const placed = this.placed.get(orderId);
    if (placed === undefined) return;
    this.placed.delete(orderId);
    if (!filled && placed.t === t) add(placed.gap.unfilledTakers, orderId);
  }

  private push(gap: ReplayGap): void {
    if (this.gaps.length < GAP_LISTED) this.gaps.push(gap);
    else this.omitted++;
  }
}

/** The gaps as the report lists them (`ReportGap` of src/replay/report, snake case). */
export function reportedGaps(gaps: readonly ReplayGap[]) {
  return gaps.map((gap) => ({
    market_id: gap.marketId,
    stream: gap.stream,
    reason: gap.reason,
    start_ms: gap.startMs,
    end_ms: gap.endMs,
    suspended: gap.suspended,
    restarted_queues: {
      count: gap.restartedQueues.count,
      order_ids: [...gap.restartedQueues.orderIds],
    },
    unfilled_takers: {
      count: gap.unfilledTakers.count,
      order_ids: [...gap.unfilledTakers.orderIds],
    },
  }));
}
