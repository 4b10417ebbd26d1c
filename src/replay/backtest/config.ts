/**
 * The backtest configuration (`config/backtest.yaml`). Strict like the bot's (design rule 8):
 * unknown keys are refused and every problem of the file, the strategies' own params included,
 * is reported at once with its path before anything is read.
 *
 * The runtime sections (`strategies`, `risk`, `execution`, `tracker`, `reconciler`) use the
 * same keys as `config/bot.yaml`, so a section can be copied from one file to the other; the
 * dead-man switch has no section, since a replay runs without one (see src/replay/README.md).
 * `venue` is the fill model (src/replay/venue/config.ts), `report` the report's sampling.
 * Relative paths are taken from the working directory.
 */
import { z } from 'zod';
import {
  type ConfigIssue,
  configIssuesOf as issuesOf,
  invalidConfigError,
  readConfigDocument,
} from '../../runtime/config-file.ts';
import {
  ExecutionSection,
  ReconcilerSection,
  type ResolvedStrategy as LoadedStrategy,
  resolveStrategies,
  StrategyEntry,
  strategiesDirectoryOf,
  TrackerSection,
} from '../../runtime/config.ts';
import { RiskConfig } from '../../runtime/risk/index.ts';
import { ReplayVenueConfig } from '../venue/config.ts';

const PositiveInteger = z.int().positive();
const ReportSection = z.strictObject({
  /** Equity is sampled every this many milliseconds of virtual time (and at the end). */
  equity_interval_ms: PositiveInteger.default(1_000),
  /** The Sharpe ratio's period (docs/backtesting.md, "Statistics, exactly"). */
  sharpe_period_ms: PositiveInteger.default(60_000),
});

const LoggingSection = z.strictObject({
  /** Kernel logs go to stderr; a replay at `info` logs every reconciliation. */
  level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('warn'),
  /** `auto`: readable lines when stderr is a terminal, JSON lines otherwise. */
  format: z.enum(['auto', 'pretty', 'json']).default('auto'),
});

export const BacktestConfig = z.strictObject({
  /** Recorded sessions (folders with a manifest), merged by time. */
  data: z.array(z.string().min(1)).min(1, 'name at least one recorded session'),
  /** Replay only these markets; null: every market of the sessions. */
  markets: z.array(z.string().min(1)).min(1).nullable().default(null),
  /** Seeds the venue's identifiers and latency jitter: same data, config and seed, same bytes. */
  seed: z.union([z.string().min(1), z.int()]).default(1),
  strategies_dir: z.string().min(1).default('strategies'),
  strategies: z.array(StrategyEntry).min(1, 'list at least one strategy'),
  venue: ReplayVenueConfig.prefault({}),
  risk: RiskConfig.prefault({}),
  execution: ExecutionSection.prefault({}),
  tracker: TrackerSection.prefault({}),
  reconciler: ReconcilerSection.prefault({}),
  report: ReportSection.prefault({}),
  logging: LoggingSection.prefault({}),
});
export type BacktestConfig = z.infer<typeof BacktestConfig>;
export type BacktestConfigInput = z.input<typeof BacktestConfig>;
export { type ConfigIssue, readConfigDocument };

/** A strategy ready for the kernel: its plugin loaded and its params checked. */
/** A loaded strategy; one built in code (a benchmark, a test) need not name a plugin file. */
export type ResolvedStrategy = Omit<LoadedStrategy, 'file'>;

export interface LoadedBacktestConfig {
  readonly source: string;
  /** The document as read (YAML to plain data), before defaults: what sweep workers get. */
  readonly document: unknown;
  readonly config: BacktestConfig;
  readonly strategies: readonly ResolvedStrategy[];
}

/**
 * Checks a config document completely: structure, then each strategy's plugin and params.
 * Throws INVALID_CONFIG listing every issue.
 */
export async function resolveBacktestConfig(
  document: unknown,
  source = '(inline)',
): Promise<LoadedBacktestConfig> {
  const issues: ConfigIssue[] = [];
  const parsed = BacktestConfig.safeParse(document ?? {}, { reportInput: true });
  if (!parsed.success) issues.push(...issuesOf(parsed.error, [], BacktestConfig));
  const raw = (typeof document === 'object' && document !== null ? document : {}) as Record<
    string,
    unknown
  >;
  const strategies = await resolveStrategies(raw.strategies, strategiesDirectoryOf(raw), issues);
  if (issues.length > 0 || !parsed.success) throw invalidConfigError(source, issues);
  return { source, document, config: parsed.data, strategies };
}

export async function loadBacktestConfig(path: string): Promise<LoadedBacktestConfig> {
  return resolveBacktestConfig(readConfigDocument(path), path);
}
