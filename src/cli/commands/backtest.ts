/**
 * `paperbot backtest`: replays recorded sessions through the kernel on virtual time and reports
 * (docs/backtesting.md). Three forms:
 *
 * - a backtest: prints the summary (or, with `--json`, the JSON report); `--report FILE` writes
 *   the self-contained HTML page and `--csv DIR` every trade, fill and equity sample as CSV
 *   (written while the run goes: the report itself keeps only the first and last of them),
 *   `--parquet DIR` the same as Parquet files, and the paths written are printed (on stderr with `--json`, so stdout stays one JSON document);
 * - `--sweep name=a,b,c` (repeatable): the grid of backtests on worker threads, one table row
 *   (or JSON object) per cell; `--report FILE` writes the comparison page, `--parquet DIR`
 *   `sweep.parquet`, one row per cell;
 * - `--divergence <session>`: a backtest over the session's public data, compared with the
 *   fills its private events recorded from a live run (`--live-journal` maps them to intents).
 *
 * A progress bar is drawn on stderr when stdout is a terminal. The same data, config and seed
 * print the same bytes.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type Command, CommanderError, Option } from 'commander';
import { systemClock } from '../../core/clock.ts';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import {
  type BacktestResult,
  divergenceOf,
  formatBacktestSummary,
  loadBacktestConfig,
  openReplaySource,
  recordedPrivateEvents,
  runBacktest,
  runBacktestSweep,
  type SweepMetrics,
  sweepCoerce,
  sweepTableRow,
} from '../../replay/backtest/index.ts';
import { describeDamage } from '../../replay/format/index.ts';
import { buildGrid, formatSweepTable, parseSweepSpecs } from '../../replay/sweep/index.ts';
import {
  createProgress,
  divergenceToJson,
  formatDivergenceTable,
  type BacktestReport,
  type OrderIds,
  renderReportHtml,
  renderSweepHtml,
  reportToJson,
  openReportCsv,
  type ReportCsv,
  openReportParquet,
  type ReportParquet,
  type SweepReportRow,
  teeReportFiles,
  writeSweepParquet,
} from '../../replay/report/index.ts';
import { Journal } from '../../runtime/journal/index.ts';
import {
  executeRobustness,
  ROBUSTNESS_OPTION_KEYS,
  type RobustnessOptionTexts,
} from './backtest-robustness.ts';
import {
  executeSearch,
  SEARCH_OPTION_KEYS,
  type SearchCommandContext,
  type SearchOptionTexts,
} from './backtest-search.ts';
import { givenOptions, integerOption } from '../options.ts';
import { backtestJobs } from '../../replay/backtest/queue-jobs.ts';
import { submitQueuedSweep as runQueuedSweep, type SweepResult } from '../../replay/sweep/index.ts';
import { fromPino, type Logger, silentLogger } from '../../core/logger.ts';
import { createLogger, type LogFormat, logFormatOption } from '../logging.ts';
import { defineCommand } from './define-command.ts';

export const DEFAULT_BACKTEST_CONFIG_PATH = 'config/backtest.yaml';

/** Exit codes of `paperbot backtest`. */
export const BACKTEST_EXIT = { ok: 0, failed: 1, invalidArguments: 2 } as const;

export interface BacktestCommandDependencies {
  readonly print: (text: string) => void;
  readonly printError: (text: string) => void;
  /** Whether stdout is a terminal (progress bars are drawn only then). */
  readonly interactive: boolean;
  /** The kernel's logger (stderr, the shape of every command's logs). */
  readonly logger: (level: string, format: LogFormat) => Logger;
}

const defaultDependencies: BacktestCommandDependencies = {
  print: (text) => {
    process.stdout.write(text);
  },
  printError: (text) => {
    process.stderr.write(text);
  },
  interactive: process.stdout.isTTY === true,
  logger: (level, format) =>
    level === 'silent'
      ? silentLogger
      : fromPino(
          createLogger({ name: 'paperbot-backtest', level, format, clock: systemClock, fd: 2 }),
        ),
};

interface BacktestOptions extends SearchOptionTexts, RobustnessOptionTexts {
  readonly config: string;
  readonly data?: string[];
  readonly markets?: string;
  readonly seed?: string;
  readonly json?: boolean;
  readonly report?: string;
  readonly csv?: string;
  readonly parquet?: string;
  readonly skipMissingMarkets?: boolean;
  readonly sweep?: string[];
  readonly search?: string[];
  readonly holdout?: string;
  readonly robustness?: boolean;
  readonly workers?: string;
  readonly queue?: string;
  readonly divergence?: string;
  readonly liveJournal?: string;
  readonly timeTolerance?: string;
  readonly cache: 'auto' | 'off' | 'rebuild';
  readonly allowDamaged?: boolean;
  readonly logFormat?: LogFormat;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function splitList(values: readonly string[] | undefined): string[] | null {
  if (values === undefined) return null;
  return values.flatMap((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  );
}

/** What --search and --robustness share: output, and where and how widely the cells run. */
function cellRunOptions(options: BacktestOptions): {
  readonly json?: boolean;
  readonly report?: string;
  readonly queue?: string;
  readonly concurrency?: number;
  readonly skipMissingMarkets: boolean;
} {
  const concurrency =
    options.workers === undefined ? undefined : integerOption(options.workers, 'workers');
  return {
    ...givenOptions(options, ['json', 'report', 'queue']),
    ...(concurrency === undefined ? {} : { concurrency }),
    skipMissingMarkets: options.skipMissingMarkets === true,
  };
}

/** Reads the live run's journal for the ids of its venue orders. */
function liveOrderIdsFrom(path: string): {
  lookup: (orderId: string) => OrderIds | undefined;
  close: () => void;
} {
  if (!existsSync(path)) {
    throw new PaperbotError('INVALID_ARGUMENT', `--live-journal ${path}: no such file`);
  }
  const journal = Journal.open(resolve(path), { now: () => 0, durability: 'normal' });
  return {
    lookup: (orderId) => {
      const record = journal.intentByOrderId(orderId);
      return record === undefined
        ? undefined
        : { clientOrderId: record.clientOrderId, requestId: record.requestId };
    },
    close: () => journal.close(),
  };
}

/** Writes a page, creating its folder when missing; returns the absolute path. */
async function writePage(file: string, text: string): Promise<string> {
  const path = resolve(file);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  return path;
}

/**
 * How the run went, judged from outside: records replayed, intents emitted, the CPU time of the
 * replay (user + system, from before the replay to after the report) and the process's peak
 * RSS. `events` and `intents` repeat from run to run; `cpu_ms` and `max_rss_mb` do not.
 */
export interface RunFigures {
  readonly events: number;
  readonly intents: number;
  readonly cpu_ms: number;
  readonly max_rss_mb: number;
}

function runFigures(result: BacktestResult, cpu: NodeJS.CpuUsage): RunFigures {
  return {
    events: result.records,
    intents: result.counters.intents,
    cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    // resourceUsage().maxRSS is in kilobytes.
    max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}

/**
 * The JSON report with a last `run` field (RunFigures). Everything before `run` is the report,
 * byte for byte; `run` is outside the report's schema, the one part of stdout that varies.
 */
function reportWithRunToJson(report: BacktestReport, run: RunFigures): string {
  return reportToJson({ ...report, run } as BacktestReport);
}

async function execute(
  options: BacktestOptions,
  dependencies: BacktestCommandDependencies,
): Promise<void> {
  const loaded = await loadBacktestConfig(options.config);
  const seed =
    options.seed === undefined
      ? loaded.config.seed
      : /^-?\d{1,15}$/.test(options.seed)
        ? Number(options.seed)
        : options.seed;
  const dataOverride = splitList(options.data);
  const marketsOverride = splitList(options.markets === undefined ? undefined : [options.markets]);
  const config = {
    ...loaded.config,
    seed,
    ...(marketsOverride === null ? {} : { markets: marketsOverride }),
  };

  /** Where written files are named: stdout, or stderr when stdout carries JSON. */
  const tell = (text: string) =>
    options.json === true ? dependencies.printError(text) : dependencies.print(text);

  // What a search and a robustness run read: the config with `--seed` and `--markets` applied.
  const searchContext: SearchCommandContext = {
    loaded,
    document: {
      ...(loaded.document as Record<string, unknown>),
      seed,
      ...(marketsOverride === null ? {} : { markets: marketsOverride }),
    },
    seed,
    data: dataOverride,
    markets: config.markets,
    print: dependencies.print,
    tell,
  };
  if (options.robustness === true) {
    if (options.sweep !== undefined || options.divergence !== undefined) {
      throw new PaperbotError(
        'INVALID_ARGUMENT',
        '--robustness cannot be combined with --sweep or --divergence',
      );
    }
    if (options.search === undefined || options.search.length === 0) {
      throw new PaperbotError(
        'INVALID_ARGUMENT',
        '--robustness needs the parameter space: one --search name=low..high[:step] or name=a,b,c per parameter',
      );
    }
    await executeRobustness(
      {
        specs: options.search,
        ...givenOptions(options, [...SEARCH_OPTION_KEYS, ...ROBUSTNESS_OPTION_KEYS]),
        ...cellRunOptions(options),
      },
      searchContext,
    );
    return;
  }

  if (options.search !== undefined && options.search.length > 0) {
    if (options.sweep !== undefined || options.divergence !== undefined) {
      throw new PaperbotError(
        'INVALID_ARGUMENT',
        '--search cannot be combined with --sweep or --divergence',
      );
    }
    if (options.parquet !== undefined) {
      throw new PaperbotError(
        'INVALID_ARGUMENT',
        '--parquet writes one run or the cells of a --sweep; with --search, use --json',
      );
    }
    await executeSearch(
      {
        specs: options.search,
        ...givenOptions(options, [...SEARCH_OPTION_KEYS, 'holdout']),
        ...cellRunOptions(options),
      },
      searchContext,
    );
    return;
  }

  if (options.sweep !== undefined && options.sweep.length > 0) {
    if (options.divergence !== undefined) {
      throw new PaperbotError('INVALID_ARGUMENT', '--sweep and --divergence cannot be combined');
    }
    if (options.csv !== undefined) {
      throw new PaperbotError(
        'INVALID_ARGUMENT',
        '--csv writes one run; with --sweep, use --json for every cell, or --report for the comparison page',
      );
    }
    const axes = parseSweepSpecs(options.sweep);
    const cells = buildGrid(axes, { coerce: sweepCoerce(loaded) });
    const document = {
      ...(loaded.document as Record<string, unknown>),
      seed,
      ...(marketsOverride === null ? {} : { markets: marketsOverride }),
    };
    const progress = createProgress({
      total: cells.length,
      label: 'sweep',
      unit: 'runs',
      stdoutIsTerminal: dependencies.interactive,
    });
    const concurrency =
      options.workers === undefined ? undefined : integerOption(options.workers, 'workers');
    let results;
    try {
      results =
        options.queue !== undefined
          ? ((await runQueuedSweep({
              url: options.queue,
              cells,
              jobOf: await backtestJobs({
                document,
                source: loaded.source,
                data: dataOverride,
                skipMissingMarkets: options.skipMissingMarkets === true,
              }),
              onResult: () => progress.increment(),
            })) as SweepResult<SweepMetrics>[])
          : await runBacktestSweep({
              loaded: { ...loaded, document },
              axes,
              cells,
              data: dataOverride,
              ...(concurrency === undefined ? {} : { concurrency }),
              skipMissingMarkets: options.skipMissingMarkets === true,
              onResult: () => progress.increment(),
            });
    } finally {
      progress.stop();
    }
    if (options.json === true) {
      dependencies.print(`${JSON.stringify(results, null, 2)}\n`);
    } else {
      dependencies.print(`${formatSweepTable<SweepMetrics>(axes, results, sweepTableRow)}\n`);
    }
    const rows: SweepReportRow[] = results.map((result) => ({
      parameters: result.raw,
      figures: result.status === 'ok' ? result.value : null,
      error: result.status === 'ok' ? null : `${result.error.code}: ${result.error.message}`,
    }));
    if (options.report !== undefined) {
      const path = await writePage(
        options.report,
        renderSweepHtml({
          title: `Sweep: ${axes.map((axis) => axis.name).join(' × ')}`,
          axes: axes.map((axis) => axis.name),
          rows,
        }),
      );
      tell(`comparison report written to ${path}\n`);
    }
    if (options.parquet !== undefined) {
      const path = writeSweepParquet(
        options.parquet,
        axes.map((axis) => axis.name),
        rows,
      );
      tell(`Parquet written to ${path}\n`);
    }
    if (results.some((result) => result.status === 'error')) {
      throw new PaperbotError('SWEEP_CELLS_FAILED', 'some sweep cells failed (see the table)');
    }
    return;
  }

  const data =
    options.divergence !== undefined ? [options.divergence] : (dataOverride ?? config.data);
  const source = await openReplaySource(data, {
    markets: config.markets,
    cache: options.cache,
    damage: options.allowDamaged === true ? 'skip' : 'refuse',
  });
  if (options.divergence !== undefined && !source.hasPrivateEvents) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `--divergence ${options.divergence}: the session recorded no private events (record it with a key)`,
    );
  }
  const progress = createProgress({
    total: source.expectedRecords,
    label: 'replay',
    unit: 'events',
    stdoutIsTerminal: dependencies.interactive,
  });
  let result: BacktestResult;
  // Every fill, trade and equity sample is written while the run goes, not kept for the end.
  const csv: ReportCsv | null = options.csv === undefined ? null : openReportCsv(options.csv);
  const parquet: ReportParquet | null =
    options.parquet === undefined ? null : openReportParquet(options.parquet);
  let csvPaths: string[] = [];
  let parquetPaths: string[] = [];
  const cpuBefore = process.cpuUsage();
  try {
    result = await runBacktest({
      config,
      strategies: loaded.strategies,
      source,
      logger: dependencies.logger(config.logging.level, options.logFormat ?? config.logging.format),
      onProgress: (delivered) => progress.update(delivered),
      skipMissingMarkets: options.skipMissingMarkets === true,
      reportFiles: teeReportFiles([csv, parquet].filter((files) => files !== null)),
    });
  } finally {
    progress.stop();
    csvPaths = csv?.close() ?? [];
    parquetPaths = parquet?.close() ?? [];
  }
  // What the sessions' checks found (skipped records, notes such as a version 1 recording):
  // on stderr, so a JSON report on stdout stays one document; the report holds the damage too.
  for (const line of source.damage().flatMap(describeDamage)) {
    dependencies.printError(`${line}\n`);
  }
  const run = runFigures(result, process.cpuUsage(cpuBefore));
  const written: string[] = [];
  if (options.report !== undefined) {
    const path = await writePage(options.report, renderReportHtml(result.report));
    written.push(`report written to ${path}`);
  }
  if (csv !== null) written.push(`CSV written to ${csvPaths.join(', ')}`);
  if (parquet !== null) written.push(`Parquet written to ${parquetPaths.join(', ')}`);
  if (options.divergence !== undefined) {
    const journal =
      options.liveJournal === undefined ? null : liveOrderIdsFrom(options.liveJournal);
    try {
      const report = divergenceOf({
        liveRecords: await recordedPrivateEvents(source),
        ...(journal === null ? {} : { liveOrderIds: journal.lookup }),
        backtest: result,
        ...(options.timeTolerance === undefined
          ? {}
          : {
              timeToleranceMs: integerOption(options.timeTolerance, 'time-tolerance', {
                minimum: 0,
              }),
            }),
      });
      dependencies.print(
        options.json === true ? divergenceToJson(report) : `${formatDivergenceTable(report)}\n`,
      );
    } finally {
      journal?.close();
    }
    for (const line of written) tell(`${line}\n`);
    return;
  }
  dependencies.print(
    options.json === true ? reportWithRunToJson(result.report, run) : formatBacktestSummary(result),
  );
  for (const line of written) tell(`${line}\n`);
}

export function registerBacktestCommand(
  program: Command,
  dependencies: Partial<BacktestCommandDependencies> = {},
): Command {
  const { command, dependencies: resolved } = defineCommand(
    program,
    'backtest',
    'Replay recorded sessions through the strategies, risk gate and executor on virtual time, and report.',
    defaultDependencies,
    dependencies,
  );
  return command
    .option('--config <file>', 'backtest config', DEFAULT_BACKTEST_CONFIG_PATH)
    .addOption(
      new Option(
        '--data <dirs>',
        'recorded session folders (repeatable, or comma-separated); replaces data:',
      ).argParser(collect),
    )
    .option('--markets <ids>', 'replay only these markets (comma-separated)')
    .option('--seed <seed>', 'replaces the config seed')
    .option('--json', 'print the JSON report (or the divergence or sweep results as JSON)')
    .option(
      '--report <file>',
      'write the HTML report here (with --sweep: the comparison of every cell)',
    )
    .option('--csv <dir>', 'write trades.csv, fills.csv and equity.csv into this folder')
    .option(
      '--parquet <dir>',
      'write trades.parquet, fills.parquet and equity.parquet (with --sweep: sweep.parquet) into this folder',
    )
    .option(
      '--skip-missing-markets',
      'run without strategies whose markets the data lacks (named in the report) instead of refusing',
    )
    .addOption(
      new Option('--sweep <spec>', 'name=a,b,c: a parameter grid axis (repeatable)').argParser(
        collect,
      ),
    )
    .addOption(
      new Option(
        '--search <spec>',
        'name=low..high[:step] or name=a,b,c: a search dimension (repeatable)',
      ).argParser(collect),
    )
    .option('--budget <n>', 'with --search: in-sample backtest runs to spend (default 20)')
    .option('--method <method>', 'with --search: random (default) or halving')
    .option('--metric <metric>', 'with --search: sharpe (default), net_pnl or return_over_drawdown')
    .option('--holdout <fraction>', 'with --search: the end of the data held out (default 0.25)')
    .option(
      '--robustness',
      'with --search: the robustness report (walk-forward, bootstrap, sensitivity, look-ahead check); --report FILE writes its page and JSON',
    )
    .option('--folds <n>', 'with --robustness: walk-forward folds (default 3)')
    .option(
      '--windows <mode>',
      'with --robustness: rolling (default) or anchored walk-forward windows',
    )
    .option(
      '--in-sample <fraction>',
      'with --robustness: in-sample share of each rolling fold (default 0.75)',
    )
    .option(
      '--bootstrap <n>',
      'with --robustness: bootstrap draws of the trade sequence (default 1000)',
    )
    .option(
      '--ruin <fraction>',
      'with --robustness: loss of the starting balance counted as ruin (default 0.5)',
    )
    .option('--cuts <n>', 'with --robustness: cut points of the look-ahead check (default 4)')
    .option(
      '--radius <n>',
      'with --robustness: sensitivity steps either side of the best value (default 2)',
    )
    .option(
      '--queue <url>',
      'with --sweep or --search: run the cells as BullMQ jobs on this Redis (redis://HOST:PORT) for `paperbot worker`s',
    )
    .option('--workers <n>', 'sweep worker threads (default: one per core, at most one per cell)')
    .option('--divergence <dir>', 'compare with the live fills recorded in this session')
    .option(
      '--live-journal <file>',
      "with --divergence: the live run's journal, to match fills by intent",
    )
    .option('--time-tolerance <ms>', 'with --divergence: fill times this close count as equal', '0')
    .addOption(
      new Option(
        '--cache <mode>',
        'the decoding cache beside each events file: auto (use or build), off, rebuild',
      )
        .choices(['auto', 'off', 'rebuild'])
        .default('auto'),
    )
    .option(
      '--allow-damaged',
      'replay a recording that is not what its manifest claims: skip its damaged records and say so in the report',
    )
    .addOption(logFormatOption())
    .action(async (options: BacktestOptions) => {
      try {
        await execute(options, resolved);
      } catch (error) {
        const invalid =
          isPaperbotError(error) &&
          [
            'INVALID_ARGUMENT',
            'INVALID_CONFIG',
            'INVALID_SWEEP',
            'BACKTEST_MISSING_MARKET',
          ].includes(error.code);
        const message = error instanceof Error ? error.message : String(error);
        resolved.printError(`paperbot backtest: ${message}\n`);
        throw new CommanderError(
          invalid ? BACKTEST_EXIT.invalidArguments : BACKTEST_EXIT.failed,
          'paperbot.backtest',
          message,
        );
      }
    });
}
