/**
 * `paperbot backtest --robustness --search SPEC...`: the robustness report
 * (src/replay/robustness) over the sweep's runner. Every backtest (walk-forward and sensitivity
 * cells, the look-ahead check's runs on cut data) runs on the sweep pool, or as BullMQ jobs
 * with `--queue`. Prints a short summary (or the JSON with `--json`); with `--report FILE`
 * writes the HTML page there and the JSON beside it (`FILE` with `.json`). The same data,
 * config and seed print the same bytes.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { PaperbotError } from '../../core/errors.ts';
import { sweepCoerce } from '../../replay/backtest/index.ts';
import { backtestJobs } from '../../replay/backtest/queue-jobs.ts';
import {
  LOOKAHEAD_CELL_EXPORT,
  LOOKAHEAD_CELL_MODULE,
  type LookaheadCellResult,
  type LookaheadInput,
  renderRobustnessHtml,
  type RobustnessReport,
  runRobustness,
  WALK_FORWARD_MODES,
  type WalkForwardMode,
} from '../../replay/robustness/index.ts';
import {
  parseSearchSpecs,
  SEARCH_METHODS,
  SEARCH_METRICS,
  type SearchMethod,
  type SearchMetric,
} from '../../replay/search/index.ts';
import { runSweep, submitQueuedSweep, type SweepResult } from '../../replay/sweep/index.ts';
import {
  backtestEvaluator,
  choice,
  searchedRecording,
  type SearchCommandContext,
  type SearchOptionTexts,
} from './backtest-search.ts';
import { integerOption } from '../options.ts';

/** The robustness checks' option texts as the command line gives them. */
export interface RobustnessOptionTexts {
  readonly folds?: string;
  readonly windows?: string;
  readonly inSample?: string;
  readonly bootstrap?: string;
  readonly ruin?: string;
  readonly cuts?: string;
  readonly radius?: string;
}

export const ROBUSTNESS_OPTION_KEYS = [
  'folds',
  'windows',
  'inSample',
  'bootstrap',
  'ruin',
  'cuts',
  'radius',
] as const;

export interface RobustnessCommandOptions extends SearchOptionTexts, RobustnessOptionTexts {
  readonly specs: readonly string[];
  readonly json?: boolean;
  readonly report?: string;
  readonly concurrency?: number;
  readonly skipMissingMarkets: boolean;
  readonly queue?: string;
}

function integer(text: string | undefined, name: string, fallback: number): number {
  return text === undefined ? fallback : integerOption(text, name, { minimum: 0 });
}

function fraction(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d*\.?\d+$/.test(text) || !(value > 0 && value <= 1)) {
    throw new PaperbotError('INVALID_ARGUMENT', `--${name} must be a fraction above 0, at most 1`);
  }
  return value;
}

/** A few lines for the terminal: the verdicts and the headline figures. */
export function robustnessSummary(report: RobustnessReport): string {
  const wf = report.walk_forward;
  const b = report.bootstrap;
  const money = (value: number) => `${value.toFixed(2)} ${report.currency}`;
  const lines = [
    `walk-forward (${wf.mode}, ${wf.folds.length} folds): efficiency ${wf.efficiency === null ? '—' : wf.efficiency.toFixed(3)}; out-of-sample net PnL ${wf.folds.map((fold) => fold.outOfSampleNetPnl ?? '—').join(', ')}`,
    `parameters: ${JSON.stringify(report.best)}`,
    `bootstrap (${b.iterations} draws of ${b.trades} trades): final PnL median ${money(b.final_pnl.percentiles.p50)}, 95% ${money(b.final_pnl.confidence_interval[0])} … ${money(b.final_pnl.confidence_interval[1])} (backtest ${money(b.actual.final_pnl)}); max drawdown median ${(b.max_drawdown.percentiles.p50 * 100).toFixed(2)}%; ruin at -${(b.ruin.threshold * 100).toFixed(0)}%: ${(b.ruin.probability * 100).toFixed(2)}%`,
  ];
  if (report.sensitivity !== null) {
    lines.push(
      `sensitivity: ${report.sensitivity.rows.name} × ${report.sensitivity.columns.name}, ${report.sensitivity.rows.values.length}×${report.sensitivity.columns.values.length} cells`,
    );
  }
  const check = report.lookahead;
  if (check.passed) {
    lines.push(`look-ahead check: passed (${check.cuts.length} cuts)`);
  } else {
    for (const difference of check.differences) {
      lines.push(
        `look-ahead check: FAILED: strategy ${difference.strategyId} peeks: intent #${difference.position} before the cut at ${difference.cutMs} differs: with all data ${difference.full ?? '(none)'}, with the data cut ${difference.cut ?? '(none)'}`,
      );
    }
  }
  return lines.join('\n');
}

export async function executeRobustness(
  options: RobustnessCommandOptions,
  context: SearchCommandContext,
): Promise<RobustnessReport> {
  const dimensions = parseSearchSpecs(options.specs);
  const budget = integer(options.budget, 'budget', 8);
  if (budget < 1)
    throw new PaperbotError('INVALID_ARGUMENT', '--budget must be a positive integer');
  const method: SearchMethod = choice(options.method, SEARCH_METHODS, 'method', 'random');
  const metric: SearchMetric = choice(options.metric, SEARCH_METRICS, 'metric', 'net_pnl');
  const mode: WalkForwardMode = choice(options.windows, WALK_FORWARD_MODES, 'windows', 'rolling');
  const { directories, range } = await searchedRecording(context);
  const input = {
    document: context.document,
    source: context.loaded.source,
    data: context.data,
    skipMissingMarkets: options.skipMissingMarkets,
  };
  const concurrency = options.concurrency === undefined ? {} : { concurrency: options.concurrency };
  const report = await runRobustness({
    dimensions,
    budget,
    method,
    metric,
    folds: integer(options.folds, 'folds', 3),
    mode,
    inSampleShare: fraction(options.inSample, 'in-sample', 0.75),
    iterations: integer(options.bootstrap, 'bootstrap', 1000),
    ruin: fraction(options.ruin, 'ruin', 0.5),
    cuts: integer(options.cuts, 'cuts', 4),
    radius: integer(options.radius, 'radius', 2),
    seed: context.seed,
    data: directories,
    range,
    coerce: sweepCoerce(context.loaded),
    evaluate: backtestEvaluator(options, context, dimensions),
    lookahead: async (parameters, cuts) => {
      const cells = cuts.map((cutMs, index) => ({
        index,
        parameters: { cutMs },
        raw: {},
        label: cutMs === null ? 'all data' : `cut at ${cutMs}`,
      }));
      const lookaheadInput = { ...input, parameters } satisfies LookaheadInput;
      const results = (
        options.queue !== undefined
          ? await submitQueuedSweep({
              url: options.queue,
              cells,
              jobOf: await backtestJobs(lookaheadInput, undefined, 'lookahead'),
            })
          : await runSweep({
              module: LOOKAHEAD_CELL_MODULE,
              exportName: LOOKAHEAD_CELL_EXPORT,
              cells,
              input: lookaheadInput,
              ...concurrency,
            })
      ) as SweepResult<LookaheadCellResult>[];
      return results.map((result) => {
        if (result.status === 'error') {
          throw new PaperbotError(
            'ROBUSTNESS_NO_RUN',
            `the look-ahead check's run (${result.label}) failed: ${result.error.message}`,
          );
        }
        return result.value;
      });
    },
  });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  context.print(options.json === true ? json : `${robustnessSummary(report)}\n`);
  if (options.report !== undefined) {
    const path = resolve(options.report);
    const jsonPath = path.replace(/(\.html?)?$/i, '.json');
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, renderRobustnessHtml(report));
    await writeFile(jsonPath, json);
    context.tell(`robustness report written to ${path} (JSON: ${jsonPath})\n`);
  }
  return report;
}
