/**
 * `paperbot backtest --search`: the search (src/replay/search) over the sweep's runner. Prints
 * the ranked table (or JSON with `--json`) and, with `--report`, writes the sweep comparison
 * page of every in-sample run. The same data, config and seed print the same bytes.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { PaperbotError } from '../../core/errors.ts';
import {
  type LoadedBacktestConfig,
  openReplaySource,
  recordedTimeRange,
  runBacktestSweep,
  sweepCoerce,
  type SweepMetrics,
} from '../../replay/backtest/index.ts';
import { backtestJobs } from '../../replay/backtest/queue-jobs.ts';
import { renderSweepHtml } from '../../replay/report/index.ts';
import { submitQueuedSweep, type SweepResult } from '../../replay/sweep/index.ts';
import {
  formatSearchTable,
  parseSearchSpecs,
  runSearch,
  SEARCH_METHODS,
  SEARCH_METRICS,
  type SearchMethod,
  type SearchMetric,
  searchReportInput,
} from '../../replay/search/index.ts';
import type { Evaluate } from '../../replay/search/search.ts';

/** The search's option texts as the command line gives them (also read by --robustness). */
export interface SearchOptionTexts {
  readonly budget?: string;
  readonly method?: string;
  readonly metric?: string;
}

export const SEARCH_OPTION_KEYS = ['budget', 'method', 'metric'] as const;

export interface SearchCommandOptions extends SearchOptionTexts {
  readonly specs: readonly string[];
  readonly holdout?: string;
  readonly json?: boolean;
  readonly report?: string;
  readonly concurrency?: number;
  readonly skipMissingMarkets: boolean;
  /** Run the cells as BullMQ jobs on this Redis instead of worker threads. */
  readonly queue?: string;
}

export interface SearchCommandContext {
  readonly loaded: LoadedBacktestConfig;
  /** The config document with `--seed` and `--markets` applied. */
  readonly document: unknown;
  readonly seed: string | number;
  readonly data: readonly string[] | null;
  readonly markets: readonly string[] | null;
  readonly print: (text: string) => void;
  readonly tell: (text: string) => void;
}

/** `--NAME`'s value, one of `allowed` (the fallback when absent). */
export function choice<T extends string>(
  text: string | undefined,
  allowed: readonly T[],
  name: string,
  fallback: T,
): T {
  if (text === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(text)) {
    throw new PaperbotError('INVALID_ARGUMENT', `--${name} must be one of ${allowed.join(', ')}`);
  }
  return text as T;
}

/** The recording's folders and time range, for a search or the robustness checks. */
export async function searchedRecording(context: SearchCommandContext): Promise<{
  readonly directories: readonly string[];
  readonly range: NonNullable<ReturnType<typeof recordedTimeRange>>;
}> {
  const directories = context.data ?? context.loaded.config.data;
  const source = await openReplaySource(directories, { markets: context.markets });
  const range = recordedTimeRange(source);
  if (range === null) throw new PaperbotError('INVALID_ARGUMENT', 'the recording has no records');
  return { directories, range };
}

/** Runs a search's cells as backtests: as BullMQ jobs on `--queue`, else on worker threads. */
export function backtestEvaluator(
  options: Pick<SearchCommandOptions, 'queue' | 'concurrency' | 'skipMissingMarkets'>,
  context: SearchCommandContext,
  dimensions: readonly { readonly name: string }[],
): Evaluate {
  const loaded = { ...context.loaded, document: context.document };
  return async (cells, window) =>
    options.queue !== undefined
      ? ((await submitQueuedSweep({
          url: options.queue,
          cells,
          jobOf: await backtestJobs({
            document: context.document,
            source: context.loaded.source,
            data: context.data,
            skipMissingMarkets: options.skipMissingMarkets,
            window,
          }),
        })) as SweepResult<SweepMetrics>[])
      : runBacktestSweep({
          loaded,
          axes: dimensions.map((dimension) => ({ name: dimension.name, values: [] })),
          cells,
          data: context.data,
          window,
          skipMissingMarkets: options.skipMissingMarkets,
          ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
        });
}

export async function executeSearch(
  options: SearchCommandOptions,
  context: SearchCommandContext,
): Promise<void> {
  const dimensions = parseSearchSpecs(options.specs);
  const budget = options.budget === undefined ? 20 : Number(options.budget);
  if (!/^\d+$/.test(options.budget ?? '20') || budget < 1) {
    throw new PaperbotError('INVALID_ARGUMENT', '--budget must be a positive integer');
  }
  const holdout = options.holdout === undefined ? 0.25 : Number(options.holdout);
  const method: SearchMethod = choice(options.method, SEARCH_METHODS, 'method', 'random');
  const metric: SearchMetric = choice(options.metric, SEARCH_METRICS, 'metric', 'sharpe');
  const { range } = await searchedRecording(context);
  const outcome = await runSearch({
    dimensions,
    budget,
    method,
    metric,
    holdout,
    seed: context.seed,
    range,
    coerce: sweepCoerce(context.loaded),
    evaluate: backtestEvaluator(options, context, dimensions),
  });
  if (options.json === true) {
    context.print(`${JSON.stringify(outcome, null, 2)}\n`);
  } else {
    context.print(`${formatSearchTable(outcome, dimensions)}\n`);
  }
  if (options.report !== undefined) {
    const path = resolve(options.report);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, renderSweepHtml(searchReportInput(outcome, dimensions)));
    context.tell(`comparison report written to ${path}\n`);
  }
}
