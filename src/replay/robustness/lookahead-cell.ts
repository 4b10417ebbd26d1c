/**
 * One run of the look-ahead check on a sweep worker: the config's backtest on the data before
 * a cut (or all of it), returning every intent the strategies emitted while records were
 * replayed (bounded), with the virtual time of each.
 */
import { fileURLToPath } from 'node:url';
import { resolveBacktestConfig } from '../backtest/config.ts';
import { runBacktest } from '../backtest/runner.ts';
import { openReplaySource, windowedSource } from '../backtest/sources.ts';
import { type SweepInput, withOverrides } from '../backtest/sweep-run.ts';
import { fillsInTimeOrder, RoundTripBook } from '../report/round-trips.ts';
import type { EmittedIntent, LookaheadRun } from './lookahead.ts';

/** Intents kept per run; past it the comparison stops at the last kept one. */
export const LOOKAHEAD_INTENT_CAP = 50_000;

export interface LookaheadInput extends SweepInput {
  /** The parameters the check runs with (the best cell's, or none). */
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** A run of the check; the run on all the data is also the bootstrap's trade sequence. */
export interface LookaheadCellResult extends LookaheadRun {
  readonly currency: string;
  readonly startingBalance: number;
  /** Net PnL (fees included, funding not) of each closed round trip, in the order they closed. */
  readonly tradePnls: readonly number[];
  readonly netPnl: string;
  readonly strategy: string;
}

export async function runLookaheadCell(
  cell: { readonly cutMs: number | null },
  input: LookaheadInput,
): Promise<LookaheadCellResult> {
  const document = withOverrides(input.document, input.parameters);
  if (input.data !== null) document.data = [...input.data];
  const loaded = await resolveBacktestConfig(document, input.source);
  const opened = await openReplaySource(loaded.config.data, { markets: loaded.config.markets });
  const source =
    cell.cutMs === null ? opened : windowedSource(opened, { fromMs: -Infinity, toMs: cell.cutMs });
  const intents: EmittedIntent[] = [];
  let replaying = false;
  let truncated = false;
  let lastT: number | null = null;
  const result = await runBacktest({
    config: loaded.config,
    strategies: loaded.strategies,
    source: {
      ...source,
      batches: async function* (options) {
        for await (const batch of source.batches(options)) {
          if (batch.length > 0) lastT = batch[batch.length - 1]!.t;
          yield batch;
        }
      },
    },
    skipMissingMarkets: input.skipMissingMarkets === true,
    ...(cell.cutMs === null ? {} : { replayUntilMs: cell.cutMs - 1 }),
    onPhase: (phase) => {
      replaying = phase === 'replaying';
    },
    onIntent: (strategyId, intent, t) => {
      if (!replaying) return;
      if (intents.length >= LOOKAHEAD_INTENT_CAP) {
        truncated = true;
        return;
      }
      intents.push({ strategyId, t, intent: JSON.stringify(intent) });
    },
  });
  const tradePnls: number[] = [];
  const book = new RoundTripBook((trip) => tradePnls.push(Number(trip.netPnl.toString())));
  for (const fill of fillsInTimeOrder(result.fills)) book.add(fill);
  return {
    intents,
    lastT,
    truncated,
    currency: result.report.currency,
    startingBalance: Number(loaded.config.venue.starting_balance),
    tradePnls,
    netPnl: result.report.summary.net_pnl,
    strategy: result.report.metadata.strategy ?? '',
  };
}

export const LOOKAHEAD_CELL_MODULE = fileURLToPath(import.meta.url);
export const LOOKAHEAD_CELL_EXPORT = 'runLookaheadCell';
