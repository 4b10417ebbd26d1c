/**
 * The divergence run: a backtest of the configured strategy over the public data of a session
 * that also recorded a live run's private events (against the emulator or the service), then
 * the live fills beside the backtest's (src/replay/report/divergence.ts).
 *
 * Fills are matched by order key. Request and client order ids are `<strategy>:<epoch>:<n>`,
 * and the epochs differ (the live journal's, the backtest's fixed one), so the key drops the
 * epoch: the strategy's n-th intent is the same intent in both runs while both made the same
 * decisions. The live side needs the live journal (`--live-journal`) to know which venue order
 * was which intent; without it, live fills are matched by sequence within market and side.
 */
import { comparableFill, comparableFillsFromRecords, compareFills } from '../report/divergence.ts';
import type { DivergenceReport, OrderIds } from '../report/divergence.ts';
import type { RecordedEvent } from '../format/records.ts';
import type { BacktestResult } from './runner.ts';
import type { ReplaySource } from './sources.ts';

/**
 * `strategy:epoch:sequence` without the epoch, and likewise the ids derived from one (an
 * emulated exit's release, `strategy:epoch:sequence:x`, or a bracket leg's,
 * `strategy:epoch:sequence:sl:x`); other ids unchanged.
 */
export function epochFreeKey(id: string | null): string | null {
  if (id === null) return null;
  const parts = id.split(':');
  return parts.length >= 3 ? [parts[0], ...parts.slice(2)].join(':') : id;
}

/** The recorded private records of a source's sessions (the live run's account). */
export async function recordedPrivateEvents(source: ReplaySource): Promise<RecordedEvent[]> {
  const records: RecordedEvent[] = [];
  for await (const batch of source.batches()) {
    for (const record of batch) if (record.k === 'private') records.push(record);
  }
  return records;
}

export interface DivergenceInput {
  /** Private records of the live run. */
  readonly liveRecords: Iterable<RecordedEvent>;
  /** The live run's ids of a venue order (from its journal); undefined when unknown. */
  readonly liveOrderIds?: (orderId: string) => OrderIds | undefined;
  readonly backtest: BacktestResult;
  readonly timeToleranceMs?: number;
}

export function divergenceOf(input: DivergenceInput): DivergenceReport {
  const live = comparableFillsFromRecords(input.liveRecords, input.liveOrderIds);
  const backtest = input.backtest.fills.map((fill) =>
    comparableFill(
      fill,
      fill.order_id === null ? {} : (input.backtest.orderIds.get(fill.order_id) ?? {}),
    ),
  );
  // Without the live side's ids, keys on one side only would match nothing: both go by sequence.
  const keyed = input.liveOrderIds !== undefined;
  return compareFills(live, backtest, {
    orderKey: (fill) => (keyed ? epochFreeKey(fill.client_order_id ?? fill.request_id) : null),
    ...(input.timeToleranceMs === undefined ? {} : { timeToleranceMs: input.timeToleranceMs }),
  });
}
