/**
 * Parameter sweeps of backtests (`paperbot backtest --sweep name=a,b,c`): each grid cell is a
 * full backtest of the config with some values replaced, run on a worker thread
 * (src/replay/sweep). A swept name addresses:
 *
 * - a strategy parameter: `halfSpreadTicks` (with one strategy), or `<strategy id>.<param>`;
 * - any other section of the config: `venue.slippage_bps`, `venue.latency.order_ms`,
 *   `risk.max_orders_per_second`, ... (the first segment names the section).
 *
 * Values are typed as JSON when they read as JSON (`5`, `true`, `null`, `["BTC-PERP"]`), else
 * kept as text, and checked against the strategy's schema or the config schema before any
 * worker starts: every refusal is reported at once.
 */
import { fileURLToPath } from 'node:url';
import { type ConfigProblem, explainConfigIssues } from '../../core/config-messages.ts';
import { PaperbotError } from '../../core/errors.ts';
import type { Coerce, GridCell, SweepAxis } from '../sweep/grid.ts';
import { runSweep, type SweepResult } from '../sweep/pool.ts';
import { StrategyEntry } from '../../runtime/config.ts';
import { BacktestConfig, type LoadedBacktestConfig, resolveBacktestConfig } from './config.ts';
import { runBacktest } from './runner.ts';
import { openReplaySource, type ReplayWindow, windowedSource } from './sources.ts';
import type { SweepCellFigures } from '../report/sweep-html.ts';
import { bucketed } from '../report/series.ts';
import { percentText, ratioText } from '../report/format.ts';

const SECTIONS = new Set([
  'venue',
  'risk',
  'execution',
  'tracker',
  'reconciler',
  'report',
  'seed',
  'markets',
]);

/** Where a swept name points in the config document. */
export type SweepTarget =
  | { readonly kind: 'strategy'; readonly index: number; readonly path: readonly string[] }
  | { readonly kind: 'config'; readonly path: readonly string[] };

function strategiesOf(document: unknown): { id: string; params: Record<string, unknown> }[] {
  const raw = (document as { strategies?: unknown } | null)?.strategies;
  if (!Array.isArray(raw)) return [];
  return raw.map((entry) => {
    const parsed = StrategyEntry.safeParse(entry);
    return parsed.success ? parsed.data : { id: '', params: {} };
  });
}

export function sweepTarget(name: string, document: unknown): SweepTarget {
  const segments = name.split('.');
  const strategies = strategiesOf(document);
  const byId = strategies.findIndex((strategy) => strategy.id === segments[0]);
  if (byId >= 0 && segments.length > 1) {
    return { kind: 'strategy', index: byId, path: segments.slice(1) };
  }
  if (SECTIONS.has(segments[0]!)) return { kind: 'config', path: segments };
  if (strategies.length !== 1) {
    throw new PaperbotError(
      'INVALID_SWEEP',
      `"${name}": with ${strategies.length} strategies, name one: <strategy id>.${name}`,
    );
  }
  return { kind: 'strategy', index: 0, path: segments };
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const segment of path.slice(0, -1)) {
    const next = node[segment];
    const copy: Record<string, unknown> =
      typeof next === 'object' && next !== null && !Array.isArray(next)
        ? { ...(next as Record<string, unknown>) }
        : {};
    node[segment] = copy;
    node = copy;
  }
  node[path[path.length - 1]!] = value;
}

/** The config document with each swept name set to its value (the input is not changed). */
export function withOverrides(
  document: unknown,
  parameters: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const result: Record<string, unknown> = structuredClone(
    (typeof document === 'object' && document !== null ? document : {}) as Record<string, unknown>,
  );
  for (const [name, value] of Object.entries(parameters)) {
    const target = sweepTarget(name, result);
    if (target.kind === 'config') {
      setPath(result, target.path, value);
      continue;
    }
    const strategies = result.strategies as Record<string, unknown>[];
    const entry = { ...strategies[target.index]! };
    const params = { ...((entry.params as Record<string, unknown> | undefined) ?? {}) };
    setPath(params, target.path, value);
    entry.params = params;
    strategies[target.index] = entry;
  }
  return result;
}

function typedValue(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** Types a swept value and checks it against the schema it lands in. */
export function sweepCoerce(loaded: LoadedBacktestConfig): Coerce {
  return (name, raw) => {
    const target = sweepTarget(name, loaded.document);
    const candidates = [typedValue(raw), raw].filter(
      (value, index, all) => index === 0 || value !== all[0],
    );
    let message = 'refused';
    for (const value of candidates) {
      const document = withOverrides(loaded.document, { [name]: value });
      if (target.kind === 'strategy') {
        const strategy = loaded.strategies[target.index];
        if (strategy === undefined) {
          message = 'no such strategy';
          continue;
        }
        const params = (document.strategies as { params?: unknown }[])[target.index]?.params;
        const schema = strategy.definition.params;
        const parsed = schema.safeParse(params, { reportInput: true });
        if (parsed.success) return value;
        message = problemText(explainConfigIssues(parsed.error.issues, schema), [], 'params');
      } else {
        const parsed = BacktestConfig.safeParse(document, { reportInput: true });
        if (parsed.success) return value;
        message = problemText(
          explainConfigIssues(parsed.error.issues, BacktestConfig),
          target.path,
          'the config',
        );
      }
    }
    throw new PaperbotError('INVALID_SWEEP', message);
  };
}

/**
 * A refusal in the config's own sentences (`unknown key; did you mean \`fast\`?`), led by the
 * path it concerns, preferring the problem at the swept path.
 */
function problemText(
  problems: readonly ConfigProblem[],
  sweptPath: readonly string[],
  where: string,
): string {
  const atPath = problems.find((problem) =>
    sweptPath.every((segment, index) => problem.path[index] === segment),
  );
  const problem = atPath ?? problems[0];
  if (problem === undefined) return `refused by ${where}`;
  const path = problem.path.map(String).join('.');
  return path === '' ? problem.message : `${path}: ${problem.message}`;
}

/** What each worker gets: the config document and where it came from (for messages). */
export interface SweepInput {
  readonly document: unknown;
  readonly source: string;
  /** Replaces the config's `data` when set (`--data`). */
  readonly data: readonly string[] | null;
  /** Run without strategies whose markets the data lacks (`--skip-missing-markets`). */
  readonly skipMissingMarkets?: boolean;
  /** Replay only this time window (searches: the in-sample or held-out period). */
  readonly window?: ReplayWindow | null;
}

/** Points of each cell's equity curve (the comparison report draws them small). */
export const SWEEP_EQUITY_POINTS = 120;

/**
 * One cell's result: the summary's headline figures typed as in the JSON report (counts are
 * numbers, decimals strings), and its equity curve, bounded.
 */
export type SweepMetrics = SweepCellFigures;

/** Runs one cell (called on a worker thread by the sweep pool). */
export async function runSweepCell(
  parameters: Readonly<Record<string, unknown>>,
  input: SweepInput,
): Promise<SweepMetrics> {
  const document = withOverrides(input.document, parameters);
  if (input.data !== null) document.data = [...input.data];
  const loaded = await resolveBacktestConfig(document, input.source);
  const opened = await openReplaySource(loaded.config.data, { markets: loaded.config.markets });
  const source =
    input.window === undefined || input.window === null
      ? opened
      : windowedSource(opened, input.window);
  const result = await runBacktest({
    config: loaded.config,
    strategies: loaded.strategies,
    source,
    skipMissingMarkets: input.skipMissingMarkets === true,
  });
  const summary = result.report.summary;
  // The report's equity chart (buckets from the run's start) in fewer buckets.
  const equity = bucketed(
    result.report.charts.equity.map(([t, value]) => ({ t, value })),
    SWEEP_EQUITY_POINTS,
  );
  return {
    currency: result.report.currency,
    net_pnl: summary.net_pnl,
    return: summary.return,
    sharpe: summary.sharpe,
    sortino: summary.sortino,
    sharpe_period_ms: summary.sharpe_period_ms,
    max_drawdown: summary.max_drawdown,
    fees: summary.fees,
    trades: summary.trades,
    win_rate: summary.win_rate,
    fills: summary.fills,
    equity: equity.map((point, index) => [index === 0 ? point.first : point.last, point.close]),
  };
}

/** A cell's row in the terminal table, in the report's number format (`report/format.ts`). */
export function sweepTableRow(figures: SweepMetrics): Record<string, string> {
  return {
    net_pnl: figures.net_pnl,
    return: percentText(figures.return),
    sharpe: ratioText(figures.sharpe),
    sortino: ratioText(figures.sortino),
    max_drawdown: percentText(figures.max_drawdown),
    fees: figures.fees,
    trades: String(figures.trades),
    win_rate: percentText(figures.win_rate),
    fills: String(figures.fills),
  };
}

export const SWEEP_CELL_MODULE = fileURLToPath(import.meta.url);
export const SWEEP_CELL_EXPORT = 'runSweepCell';

export interface SweepRunOptions {
  readonly loaded: LoadedBacktestConfig;
  readonly axes: readonly SweepAxis[];
  readonly cells: readonly GridCell[];
  readonly data: readonly string[] | null;
  readonly concurrency?: number;
  readonly onResult?: (result: SweepResult) => void;
  readonly skipMissingMarkets?: boolean;
  readonly window?: ReplayWindow | null;
}

export function runBacktestSweep(options: SweepRunOptions): Promise<SweepResult<SweepMetrics>[]> {
  return runSweep({
    module: SWEEP_CELL_MODULE,
    exportName: SWEEP_CELL_EXPORT,
    cells: options.cells,
    input: {
      document: options.loaded.document,
      source: options.loaded.source,
      data: options.data,
      skipMissingMarkets: options.skipMissingMarkets === true,
      ...(options.window === undefined || options.window === null
        ? {}
        : { window: options.window }),
    } satisfies SweepInput,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.onResult === undefined ? {} : { onResult: options.onResult }),
  }) as Promise<SweepResult<SweepMetrics>[]>;
}
