/**
 * The divergence report: the fills of a live session (against the emulator or the service) beside
 * the fills a backtest of the same strategy produced over the same recorded public data, and
 * where they differ.
 *
 * Fills are matched by (market, side, order key, sequence): the order key is the runtime's
 * client order id, else the intent's request id (both deterministic in the runtime, so the same
 * intent has the same id in both runs once the journal epoch is normalized, see `orderKey`);
 * the sequence numbers the fills of one key in time order (a partially filled order has
 * several). Fills without any key are matched by sequence within (market, side), which is
 * weaker, and the report says how many there were.
 *
 * Matched pairs are compared on price, quantity, fee and time, each against a tolerance
 * (default: exact, and 0 ms). Differences are backtest minus live.
 */
import { isoTimestamp } from '../../core/clock.ts';
import { type Decimal, parseDecimal, toWire, ZERO } from '../../core/decimal.ts';
import type { Fill } from '../../protocol/index.ts';
import type { RecordedEvent } from '../format/records.ts';
import { formatTable } from '../../core/text-table.ts';

export const DIVERGENCE_SCHEMA = 'paperbot.divergence-report';
export const DIVERGENCE_SCHEMA_VERSION = 1;

export interface ComparableFill {
  readonly fill_id: string;
  readonly market_id: string;
  readonly side: string;
  readonly price: string;
  readonly quantity: string;
  readonly fee: string;
  /** Epoch ms: the venue's `occurred_at` (or, for recorded fills, when they were received). */
  readonly t: number;
  readonly order_id: string | null;
  readonly client_order_id: string | null;
  readonly request_id: string | null;
}

export interface OrderIds {
  readonly clientOrderId?: string | null;
  readonly requestId?: string | null;
}

/** A protocol fill with the ids the runtime knows for its order. */
export function comparableFill(fill: Fill, ids: OrderIds = {}, t?: number): ComparableFill {
  return {
    fill_id: fill.fill_id,
    market_id: fill.market_id,
    side: fill.side,
    price: fill.price,
    quantity: fill.quantity,
    fee: fill.fee,
    t: t ?? Date.parse(fill.occurred_at),
    order_id: fill.order_id,
    client_order_id: ids.clientOrderId ?? null,
    request_id: ids.requestId ?? null,
  };
}

/**
 * The fills of a recording's private events. `idsOfOrder` maps a venue order id to the runtime's
 * ids (from its journal); fills are timed by the venue's `occurred_at`. A fill seen twice (a
 * resend after a reconnect) counts once: fills are keyed by `fill_id`.
 */
export function comparableFillsFromRecords(
  records: Iterable<RecordedEvent>,
  idsOfOrder: (orderId: string) => OrderIds | undefined = () => undefined,
): ComparableFill[] {
  const seen = new Set<string>();
  const fills: ComparableFill[] = [];
  for (const record of records) {
    if (record.k !== 'private' || record.d.type !== 'fill') continue;
    const fill = record.d.data;
    if (seen.has(fill.fill_id)) continue;
    seen.add(fill.fill_id);
    const ids = fill.order_id === null ? undefined : idsOfOrder(fill.order_id);
    fills.push(comparableFill(fill, ids));
  }
  return fills;
}

export type DifferenceField = 'price' | 'quantity' | 'fee' | 'time';

export interface MatchedFill {
  readonly market_id: string;
  readonly side: string;
  /** The order key both fills share ('' when neither had one). */
  readonly order_key: string;
  /** 1 for the first fill of this (market, side, order key), 2 for the next, ... */
  readonly sequence: number;
  readonly live: ComparableFill;
  readonly backtest: ComparableFill;
  readonly price_difference: string;
  readonly quantity_difference: string;
  readonly fee_difference: string;
  readonly time_difference_ms: number;
  /** Fields whose difference exceeds its tolerance; empty when the fills agree. */
  readonly differs: readonly DifferenceField[];
}

export interface DivergenceSummary {
  readonly live_fills: number;
  readonly backtest_fills: number;
  readonly matched: number;
  readonly identical: number;
  readonly price_differences: number;
  readonly quantity_differences: number;
  readonly fee_differences: number;
  readonly timing_differences: number;
  readonly missing_in_backtest: number;
  readonly missing_in_live: number;
  /** Fills (both sides) matched without an order key, by sequence only. */
  readonly matched_without_order_key: number;
  readonly live_quantity: string;
  readonly backtest_quantity: string;
  readonly max_absolute_time_difference_ms: number | null;
}

export interface DivergenceReport {
  readonly schema: typeof DIVERGENCE_SCHEMA;
  readonly schema_version: typeof DIVERGENCE_SCHEMA_VERSION;
  readonly tolerances: {
    readonly price: string;
    readonly quantity: string;
    readonly fee: string;
    readonly time_ms: number;
  };
  readonly summary: DivergenceSummary;
  /** Every matched pair, in live time order. */
  readonly matched: readonly MatchedFill[];
  /** Live fills with no backtest counterpart, in time order. */
  readonly missing_in_backtest: readonly ComparableFill[];
  /** Backtest fills with no live counterpart, in time order. */
  readonly missing_in_live: readonly ComparableFill[];
}

export interface DivergenceOptions {
  readonly priceTolerance?: string;
  readonly quantityTolerance?: string;
  readonly feeTolerance?: string;
  readonly timeToleranceMs?: number;
  /**
   * The key that identifies a fill's order in both runs. Default: client order id, else request
   * id, else none. Runtime ids embed the journal epoch (`<strategy>:<epoch>:<sequence>`), which
   * differs between two runs; pass a key that drops it when the runs had different journals.
   */
  readonly orderKey?: (fill: ComparableFill) => string | null;
}

function defaultOrderKey(fill: ComparableFill): string | null {
  return fill.client_order_id ?? fill.request_id ?? null;
}

interface Keyed {
  readonly key: string;
  readonly orderKey: string;
  readonly sequence: number;
  readonly fill: ComparableFill;
}

function keyed(
  fills: readonly ComparableFill[],
  orderKey: (fill: ComparableFill) => string | null,
): Keyed[] {
  const ordered = fills
    .map((fill, index) => ({ fill, index }))
    .sort((a, b) => a.fill.t - b.fill.t || a.index - b.index);
  const counts = new Map<string, number>();
  return ordered.map(({ fill }) => {
    const order = orderKey(fill) ?? '';
    const group = `${fill.market_id}\u0000${fill.side}\u0000${order}`;
    const sequence = (counts.get(group) ?? 0) + 1;
    counts.set(group, sequence);
    return {
      key: `${group}\u0000${sequence}`,
      orderKey: order,
      sequence,
      fill,
    };
  });
}

function exceeds(difference: Decimal, tolerance: Decimal): boolean {
  return difference.abs().gt(tolerance);
}

export function compareFills(
  live: readonly ComparableFill[],
  backtest: readonly ComparableFill[],
  options: DivergenceOptions = {},
): DivergenceReport {
  const orderKey = options.orderKey ?? defaultOrderKey;
  const tolerances = {
    price: parseDecimal(options.priceTolerance ?? '0'),
    quantity: parseDecimal(options.quantityTolerance ?? '0'),
    fee: parseDecimal(options.feeTolerance ?? '0'),
    timeMs: options.timeToleranceMs ?? 0,
  };
  const liveKeyed = keyed(live, orderKey);
  const backtestByKey = new Map(keyed(backtest, orderKey).map((entry) => [entry.key, entry]));
  const matched: MatchedFill[] = [];
  const missingInBacktest: ComparableFill[] = [];
  let withoutOrderKey = 0;
  for (const entry of liveKeyed) {
    const other = backtestByKey.get(entry.key);
    if (!other) {
      missingInBacktest.push(entry.fill);
      continue;
    }
    backtestByKey.delete(entry.key);
    if (entry.orderKey === '') withoutOrderKey++;
    const price = parseDecimal(other.fill.price).minus(parseDecimal(entry.fill.price));
    const quantity = parseDecimal(other.fill.quantity).minus(parseDecimal(entry.fill.quantity));
    const fee = parseDecimal(other.fill.fee).minus(parseDecimal(entry.fill.fee));
    const time = other.fill.t - entry.fill.t;
    const differs: DifferenceField[] = [];
    if (exceeds(price, tolerances.price)) differs.push('price');
    if (exceeds(quantity, tolerances.quantity)) differs.push('quantity');
    if (exceeds(fee, tolerances.fee)) differs.push('fee');
    if (Math.abs(time) > tolerances.timeMs) differs.push('time');
    matched.push({
      market_id: entry.fill.market_id,
      side: entry.fill.side,
      order_key: entry.orderKey,
      sequence: entry.sequence,
      live: entry.fill,
      backtest: other.fill,
      price_difference: toWire(price),
      quantity_difference: toWire(quantity),
      fee_difference: toWire(fee),
      time_difference_ms: time,
      differs,
    });
  }
  // What is left of the backtest's map is in its time order (Map keeps insertion order).
  const missingInLive = [...backtestByKey.values()].map((entry) => entry.fill);
  const count = (field: DifferenceField): number =>
    matched.filter((pair) => pair.differs.includes(field)).length;
  const sumQuantity = (fills: readonly ComparableFill[]): string =>
    toWire(fills.reduce((total, fill) => total.plus(parseDecimal(fill.quantity)), ZERO));
  return {
    schema: DIVERGENCE_SCHEMA,
    schema_version: DIVERGENCE_SCHEMA_VERSION,
    tolerances: {
      price: toWire(tolerances.price),
      quantity: toWire(tolerances.quantity),
      fee: toWire(tolerances.fee),
      time_ms: tolerances.timeMs,
    },
    summary: {
      live_fills: live.length,
      backtest_fills: backtest.length,
      matched: matched.length,
      identical: matched.filter((pair) => pair.differs.length === 0).length,
      price_differences: count('price'),
      quantity_differences: count('quantity'),
      fee_differences: count('fee'),
      timing_differences: count('time'),
      missing_in_backtest: missingInBacktest.length,
      missing_in_live: missingInLive.length,
      matched_without_order_key: withoutOrderKey,
      live_quantity: sumQuantity(live),
      backtest_quantity: sumQuantity(backtest),
      max_absolute_time_difference_ms:
        matched.length === 0
          ? null
          : Math.max(...matched.map((pair) => Math.abs(pair.time_difference_ms))),
    },
    matched,
    missing_in_backtest: missingInBacktest,
    missing_in_live: missingInLive,
  };
}

export function divergenceToJson(report: DivergenceReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/**
 * The report for a terminal: the summary, then one row per difference (matched pairs that
 * differ, and fills missing on either side), in time order. Identical pairs are counted, not
 * listed.
 */
export function formatDivergenceTable(report: DivergenceReport): string {
  const summary = report.summary;
  const lines = [
    `live fills ${summary.live_fills}, backtest fills ${summary.backtest_fills}, matched ${summary.matched} (identical ${summary.identical})`,
    `differences: price ${summary.price_differences}, quantity ${summary.quantity_differences}, fee ${summary.fee_differences}, timing ${summary.timing_differences}`,
    `missing in backtest ${summary.missing_in_backtest}, missing in live ${summary.missing_in_live}` +
      (summary.matched_without_order_key > 0
        ? `, matched without an order key ${summary.matched_without_order_key}`
        : ''),
  ];
  type Row = { readonly t: number; readonly cells: string[] };
  const rows: Row[] = [];
  for (const pair of report.matched) {
    if (pair.differs.length === 0) continue;
    rows.push({
      t: pair.live.t,
      cells: [
        `differs: ${pair.differs.join(',')}`,
        pair.market_id,
        pair.side,
        pair.order_key,
        String(pair.sequence),
        isoTimestamp(pair.live.t),
        String(pair.time_difference_ms),
        pair.live.price,
        pair.backtest.price,
        pair.live.quantity,
        pair.backtest.quantity,
      ],
    });
  }
  const missing = (fill: ComparableFill, status: string, liveSide: boolean): Row => ({
    t: fill.t,
    cells: [
      status,
      fill.market_id,
      fill.side,
      fill.client_order_id ?? fill.request_id ?? '',
      '',
      isoTimestamp(fill.t),
      '',
      liveSide ? fill.price : '',
      liveSide ? '' : fill.price,
      liveSide ? fill.quantity : '',
      liveSide ? '' : fill.quantity,
    ],
  });
  for (const fill of report.missing_in_backtest)
    rows.push(missing(fill, 'missing in backtest', true));
  for (const fill of report.missing_in_live) rows.push(missing(fill, 'missing in live', false));
  rows.sort((a, b) => a.t - b.t);
  if (rows.length === 0) return [...lines, 'no differences'].join('\n');
  const table = formatTable(
    [
      'status',
      'market',
      'side',
      'order',
      'seq',
      'live time',
      'Δt ms',
      'live price',
      'backtest price',
      'live qty',
      'backtest qty',
    ],
    rows.map((row) => row.cells),
  );
  return [...lines, '', table].join('\n');
}
