/**
 * The runtime's own config sections (`strategies`, `execution`, `tracker`, `reconciler`), shared
 * by the bot's config (config/bot.yaml) and the backtest's (config/backtest.yaml), so a section
 * means the same in both files, and the bot's `shutdown` section. Keys are snake_case like the rest of the YAML; the functions
 * below turn each parsed section into the settings its component takes.
 */
import { z } from 'zod';
import { isPaperbotError } from '../core/errors.ts';
import { type ConfigIssue, configIssuesOf } from './config-file.ts';
import type { ShutdownConfig } from './deadman/shutdown.ts';
import type { ExecutorConfig, OrderTrackerConfig, ReconcilerConfig } from './execution/index.ts';
import { loadStrategyDefinition } from './strategy/loader.ts';
import type { StrategyDefinition } from './strategy/types.ts';

const PositiveInteger = z.int().positive();
const NonNegativeInteger = z.int().min(0);
const STRATEGY_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;

export const StrategyEntry = z.strictObject({
  /** Stable id: part of every request and client order id, so never reuse one for another. */
  id: z.string().regex(STRATEGY_ID, 'use 1 to 40 letters, digits, "-" or "_"'),
  /** The plugin: a folder or file under `strategies_dir`. */
  name: z.string().min(1),
  /** Checked by the plugin's own schema when the config is loaded. */
  params: z.record(z.string(), z.unknown()).default({}),
});
export type StrategyEntry = z.infer<typeof StrategyEntry>;

/** A `strategies` entry with its plugin loaded and its params checked by the plugin's schema. */
export interface ResolvedStrategy {
  readonly id: string;
  readonly name: string;
  readonly definition: StrategyDefinition<unknown>;
  /** As written in the file; the kernel parses them again with the same schema. */
  readonly rawParams: Readonly<Record<string, unknown>>;
  /** Parsed by the plugin's schema (defaults filled in). */
  readonly params: unknown;
  /** The plugin's module file. */
  readonly file: string;
}

/** `strategies_dir` of a config document as written, else `strategies`. */
export function strategiesDirectoryOf(document: Readonly<Record<string, unknown>>): string {
  const directory = document.strategies_dir;
  return typeof directory === 'string' && directory !== '' ? directory : 'strategies';
}

/**
 * Loads the plugin of every sound `strategies` entry and checks its params, adding a problem to
 * `issues` for each duplicate id, plugin that does not load and param the plugin refuses.
 * Structural problems of the section are the config schema's to report.
 */
export async function resolveStrategies(
  raw: unknown,
  strategiesDirectory: string,
  issues: ConfigIssue[],
): Promise<ResolvedStrategy[]> {
  const entries = z.array(z.unknown()).safeParse(raw);
  if (!entries.success) return [];
  const resolved: ResolvedStrategy[] = [];
  const seen = new Map<string, number>();
  for (const [index, item] of entries.data.entries()) {
    const entry = StrategyEntry.safeParse(item);
    if (!entry.success) continue;
    const { id, name, params } = entry.data;
    const first = seen.get(id);
    if (first !== undefined) {
      issues.push({
        path: `strategies[${index}].id`,
        message: `duplicate id ${JSON.stringify(id)} (also strategies[${first}])`,
      });
      continue;
    }
    seen.set(id, index);
    let definition: StrategyDefinition<unknown>;
    let file: string;
    try {
      ({ definition, file } = await loadStrategyDefinition(name, { strategiesDirectory }));
    } catch (error) {
      issues.push({
        path: `strategies[${index}].name`,
        message: isPaperbotError(error) ? error.message : String(error),
      });
      continue;
    }
    const parsed = definition.params.safeParse(params, { reportInput: true });
    if (!parsed.success) {
      issues.push(
        ...configIssuesOf(parsed.error, ['strategies', index, 'params'], definition.params),
      );
      continue;
    }
    resolved.push({ id, name, definition, rawParams: params, params: parsed.data, file });
  }
  return resolved;
}

export const ExecutionSection = z.strictObject({
  default_leverage: z.int().min(1).max(200).default(1),
  default_margin_mode: z.enum(['cross', 'isolated']).default('isolated'),
  default_max_slippage_percent: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'write it as a decimal string, for example "0.5"')
    .default('0.5'),
  simulate: z
    .strictObject({
      place: z.boolean().default(true),
      amend: z.boolean().default(true),
      close_position: z.boolean().default(true),
    })
    .prefault({}),
  simulation_attempts: PositiveInteger.default(2),
  resolution_attempts: PositiveInteger.default(6),
  resolution_base_delay_ms: PositiveInteger.default(500),
  resolution_max_delay_ms: PositiveInteger.default(30_000),
  /** null: always resend a placement the venue never saw. */
  resend_max_age_ms: PositiveInteger.nullable().default(300_000),
  call_timeout_ms: PositiveInteger.nullable().default(30_000),
});
export type ExecutionSection = z.infer<typeof ExecutionSection>;

export const TrackerSection = z.strictObject({
  coalesce_ms: NonNegativeInteger.default(25),
  refresh_interval_ms: PositiveInteger.default(30_000),
  read_timeout_ms: PositiveInteger.nullable().default(15_000),
  read_retries: NonNegativeInteger.default(3),
  retry_delay_ms: PositiveInteger.default(1_000),
});
export type TrackerSection = z.infer<typeof TrackerSection>;

export const ReconcilerSection = z.strictObject({
  interval_ms: PositiveInteger.default(60_000),
  cancel_unknown_orders: z.boolean().default(false),
  retry_base_delay_ms: PositiveInteger.default(1_000),
  retry_max_delay_ms: PositiveInteger.default(30_000),
  read_timeout_ms: PositiveInteger.nullable().default(15_000),
});
export type ReconcilerSection = z.infer<typeof ReconcilerSection>;

/**
 * The clean shutdown: cancel all, confirm by reading the open orders that none is left, disarm
 * the dead-man deadline, all within `deadline_ms`; every command retried by the interface's
 * rules within `max_attempts`. When it cannot confirm, the bot exits 3 naming the orders.
 */
export const ShutdownSection = z.strictObject({
  deadline_ms: PositiveInteger.default(30_000),
  request_timeout_ms: PositiveInteger.default(10_000),
  max_attempts: PositiveInteger.default(8),
  retry_base_delay_ms: PositiveInteger.default(500),
  retry_max_delay_ms: PositiveInteger.default(5_000),
});
export type ShutdownSection = z.infer<typeof ShutdownSection>;

export function shutdownSettings(section: ShutdownSection): Partial<ShutdownConfig> {
  return {
    deadlineMs: section.deadline_ms,
    requestTimeoutMs: section.request_timeout_ms,
    maxAttempts: section.max_attempts,
    retryBaseDelayMs: section.retry_base_delay_ms,
    retryMaxDelayMs: section.retry_max_delay_ms,
  };
}

/** The executor's settings from the `execution:` section. */
export function executorSettings(section: ExecutionSection): Partial<ExecutorConfig> {
  return {
    defaultLeverage: section.default_leverage,
    defaultMarginMode: section.default_margin_mode,
    defaultMaxSlippagePercent: section.default_max_slippage_percent,
    simulate: {
      place: section.simulate.place,
      amend: section.simulate.amend,
      closePosition: section.simulate.close_position,
    },
    simulationAttempts: section.simulation_attempts,
    resolutionAttempts: section.resolution_attempts,
    resolutionBaseDelayMs: section.resolution_base_delay_ms,
    resolutionMaxDelayMs: section.resolution_max_delay_ms,
    resendMaxAgeMs: section.resend_max_age_ms,
    callTimeoutMs: section.call_timeout_ms,
  };
}

export function trackerSettings(section: TrackerSection): Partial<OrderTrackerConfig> {
  return {
    coalesceMs: section.coalesce_ms,
    refreshIntervalMs: section.refresh_interval_ms,
    readTimeoutMs: section.read_timeout_ms,
    readRetries: section.read_retries,
    retryDelayMs: section.retry_delay_ms,
  };
}

export function reconcilerSettings(section: ReconcilerSection): Partial<ReconcilerConfig> {
  return {
    intervalMs: section.interval_ms,
    cancelUnknownOrders: section.cancel_unknown_orders,
    retryBaseDelayMs: section.retry_base_delay_ms,
    retryMaxDelayMs: section.retry_max_delay_ms,
    readTimeoutMs: section.read_timeout_ms,
  };
}
