/**
 * The bot's configuration (`config/bot.yaml`), strict in the manner of design rule 8: unknown
 * keys are refused, and every problem of the file (its YAML, its structure, the strategies'
 * own params, an inline emulator config) is reported at once with its path, before anything
 * connects or starts. Relative paths in the file are taken from the working directory.
 *
 * Every key is documented in docs/operations.md.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import { isPaperbotError } from '../../core/errors.ts';
import {
  DEFAULT_EMULATOR_CONFIG_INPUT,
  type EmulatorConfig,
  loadEmulatorConfig,
  loadWireProfileFile,
  parseEmulatorConfig,
  type StartEmulatorOptions,
} from '../../emulator/index.ts';
import { DEFAULT_WIRE_PROFILE, parseWireProfile, type WireProfile } from '../../signing/index.ts';
import {
  type ConfigIssue,
  configIssuesOf as issuesOf,
  formatConfigPath,
  invalidConfigError,
  readConfigDocument,
} from '../../runtime/config-file.ts';
import { DurationMs, JournalRetentionSection } from '../../runtime/journal/retention-config.ts';
import {
  type DeadmanConfig,
  deadmanConfigIssues,
  defaultDeadmanConfig,
} from '../../runtime/deadman/index.ts';
import {
  ExecutionSection,
  ReconcilerSection,
  type ResolvedStrategy,
  resolveStrategies,
  ShutdownSection,
  StrategyEntry,
  strategiesDirectoryOf,
  TrackerSection,
} from '../../runtime/config.ts';
import { RiskConfig } from '../../runtime/risk/index.ts';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../logging.ts';
import { DashboardSection, dashboardIssues } from '../dashboard/config.ts';
import { parseLeadTime } from '../../runtime/venue-key.ts';
import { NotificationsSection } from '../notifications/config.ts';

export const DEFAULT_BOT_CONFIG_PATH = 'config/bot.yaml';
export const DEFAULT_METRICS_PORT = 9464;

const PositiveInteger = z.int().positive();
const NonNegativeInteger = z.int().min(0);

const EmulatorSection = z.strictObject({
  /** Seed of the embedded emulator's random choices; the emulator config's own seed when null. */
  seed: z
    .union([z.string().min(1), z.int()])
    .nullable()
    .default(null),
  /** An emulator config: the path of a YAML file, the config inline, or null for the defaults. */
  config: z
    .union([z.string().min(1), z.record(z.string(), z.unknown())])
    .nullable()
    .default(null),
  /** Keep the emulator's state in this folder (SQLite); memory only when null. */
  data_dir: z.string().min(1).nullable().default(null),
  host: z.string().min(1).default('127.0.0.1'),
  /** 0 picks a free port. */
  port: z.int().min(0).max(65_535).default(0),
});

const VenueSection = z.strictObject({
  /** A key file (`paperbot keys create`); null starts an embedded emulator with a fresh key. */
  key_file: z.string().min(1).nullable().default(null),
  emulator: EmulatorSection.prefault({}),
  /** Whole REST request, on the clock. */
  request_timeout_ms: PositiveInteger.default(10_000),
  /**
   * How long before the key file's `expires_at` to warn (log, status, dashboard, notification):
   * `30m`, `24h`, `7d`; null never warns.
   */
  key_expiry_warning: z
    .union([z.string(), z.int().min(0)])
    .nullable()
    .default('24h')
    .refine((value) => value === null || parseLeadTime(value) !== null, {
      message: 'a duration such as 30m, 24h or 7d (or null)',
    }),
  /** PEM certificates to trust for the service, besides Node's and NODE_EXTRA_CA_CERTS's. */
  ca_file: z.string().min(1).nullable().default(null),
  /**
   * How the venue's answers are read (docs/operations.md, Tolerant reading): `tolerant` keeps
   * fields it does not know; `strict` refuses them (the project's tests against the emulator).
   */
  reading: z.enum(['tolerant', 'strict']).default('tolerant'),
  /**
   * The wire profile (docs/protocol.md): the profile inline, the path of a profile file, or
   * null for the contract's SVC1. The embedded emulator verifies with the same profile.
   */
  wire: z
    .union([z.string().min(1), z.record(z.string(), z.unknown())])
    .nullable()
    .default(null),
});

/** The dead-man keys as the file spells them, for the problems `deadmanConfigIssues` finds. */
const DEADMAN_KEYS: Readonly<Record<keyof DeadmanConfig, string>> = {
  timeoutSeconds: 'timeout_seconds',
  refreshIntervalMs: 'refresh_interval_ms',
  latencyMarginMs: 'latency_margin_ms',
  maxFailedRefreshes: 'max_failed_refreshes',
  maxRefreshesInFlight: 'max_refreshes_in_flight',
  requestTimeoutMs: 'request_timeout_ms',
  retryBaseDelayMs: 'retry_base_delay_ms',
  retryMaxDelayMs: 'retry_max_delay_ms',
};

const DeadmanSection = z
  .strictObject({
    /** false runs without a cancel-all-after deadline: not advised outside tests. */
    enabled: z.boolean().default(true),
    timeout_seconds: z.int().min(1).max(86_400).default(60),
    /** null: a quarter of the timeout, which is also the most allowed. */
    refresh_interval_ms: PositiveInteger.nullable().default(null),
    /** The slowest refresh round trip to ride out; trading also stops this long before the deadline. */
    latency_margin_ms: NonNegativeInteger.default(2_000),
    max_failed_refreshes: PositiveInteger.default(2),
    /** Refreshes sent and not yet answered, at most (a slow venue gets the next one anyway). */
    max_refreshes_in_flight: PositiveInteger.default(3),
    /** null: the timeout minus the latency margin. */
    request_timeout_ms: PositiveInteger.nullable().default(null),
    retry_base_delay_ms: PositiveInteger.default(1_000),
    retry_max_delay_ms: PositiveInteger.default(30_000),
  })
  .superRefine((value, context) => {
    if (!value.enabled) return;
    const settings = deadmanSettings(value);
    if (settings === false) return;
    for (const issue of deadmanConfigIssues({ ...defaultDeadmanConfig, ...settings })) {
      context.addIssue({
        code: 'custom',
        path: [DEADMAN_KEYS[issue.field]],
        message: issue.message,
      });
    }
  });

const JournalSection = z.strictObject({
  path: z.string().min(1).default('data/journal.sqlite'),
  /** `normal` survives a crash of the process but not of the machine. */
  durability: z.enum(['full', 'normal']).default('full'),
  /** Settled rows older than a window leave the live journal (docs/operations.md). */
  retention: JournalRetentionSection.prefault({}),
});

const MetricsSection = z.strictObject({
  enabled: z.boolean().default(true),
  host: z.string().min(1).default('127.0.0.1'),
  /** 0 picks a free port (logged at start). */
  port: z.int().min(0).max(65_535).default(DEFAULT_METRICS_PORT),
  /**
   * Bound off loopback: the host names clients reach the endpoint by (checked against the Host
   * header, with the token); loopback names and the bound address are always accepted.
   */
  allowed_hosts: z.array(z.string().min(1).max(253)).max(32).default([]),
});

const LoggingSection = z
  .strictObject({
    level: z.enum(LOG_LEVELS).default('info'),
    /** `auto`: readable lines on a terminal, JSON lines otherwise (a file, a pipe). */
    format: z.enum(LOG_FORMATS).optional(),
    /** The older name: `true` is `format: pretty`, `false` is `format: json`. */
    pretty: z.boolean().optional(),
    /** Intent lines per minute at info; beyond it, the rest of the minute at debug. null: all. */
    intent_lines_max_per_minute: PositiveInteger.nullable().default(120),
    /** The summary line (intents, fills, lines at debug) every this long, at info. */
    summary_every: DurationMs.default(3_600_000),
  })
  .superRefine((value, context) => {
    if (value.format !== undefined && value.pretty !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['pretty'],
        message: 'set format or pretty, not both (pretty is the older name of format)',
      });
    }
  })
  .transform(
    ({
      level,
      format,
      pretty,
      intent_lines_max_per_minute,
      summary_every,
    }): {
      level: LogLevel;
      format: LogFormat;
      intent_lines_max_per_minute: number | null;
      summary_every: number;
    } => ({
      level,
      format: format ?? (pretty === undefined ? 'auto' : pretty ? 'pretty' : 'json'),
      intent_lines_max_per_minute,
      summary_every,
    }),
  );

const MarketDataSection = z.strictObject({
  /** Markets whose books and trades are read; null: every market the venue lists. */
  markets: z.array(z.string().min(1)).nullable().default(null),
  book_poll_ms: PositiveInteger.min(100).default(1_000),
  trades_poll_ms: PositiveInteger.min(100).default(1_000),
});

export const BotConfig = z.strictObject({
  venue: VenueSection.prefault({}),
  strategies_dir: z.string().min(1).default('strategies'),
  strategies: z.array(StrategyEntry).min(1, 'list at least one strategy'),
  risk: RiskConfig.prefault({}),
  execution: ExecutionSection.prefault({}),
  tracker: TrackerSection.prefault({}),
  reconciler: ReconcilerSection.prefault({}),
  deadman: DeadmanSection.prefault({}),
  shutdown: ShutdownSection.prefault({}),
  journal: JournalSection.prefault({}),
  metrics: MetricsSection.prefault({}),
  logging: LoggingSection.prefault({}),
  market_data: MarketDataSection.prefault({}),
  dashboard: DashboardSection.prefault({}),
  notifications: NotificationsSection.prefault({}),
});
export type BotConfig = z.infer<typeof BotConfig>;
export type BotConfigInput = z.input<typeof BotConfig>;
export { type ConfigIssue, formatConfigPath, invalidConfigError, readConfigDocument };

/** A strategy ready for the kernel: its plugin loaded and its params parsed. */
export type { ResolvedStrategy };

export interface LoadedBotConfig {
  /** Where the config came from, for logs. */
  readonly source: string;
  readonly config: BotConfig;
  readonly strategies: readonly ResolvedStrategy[];
  /** The embedded emulator's config, parsed; null when a key file is used. */
  readonly emulatorConfig: EmulatorConfig | null;
  /** `venue.wire`, checked and resolved (SVC1 when absent). */
  readonly wireProfile: WireProfile;
}

function issuesFromError(error: unknown, prefix: readonly PropertyKey[]): ConfigIssue[] {
  if (isPaperbotError(error)) {
    const listed = error.details.issues;
    if (Array.isArray(listed) && listed.length > 0) {
      return listed.map((issue: { path?: unknown; message?: unknown }) => ({
        path: formatConfigPath([
          ...prefix,
          ...(Array.isArray(issue.path) ? (issue.path as PropertyKey[]) : []),
        ]),
        message: String(issue.message),
      }));
    }
  }
  return [
    {
      path: formatConfigPath(prefix),
      message: error instanceof Error ? error.message : String(error),
    },
  ];
}

/** Loads each strategy's plugin and checks its params with the plugin's own schema. */
/**
 * Checks a config document (already parsed from YAML) completely: structure, every strategy's
 * params, the embedded emulator's config. Throws INVALID_CONFIG listing every issue.
 */
export async function resolveBotConfig(
  document: unknown,
  source = '(inline)',
): Promise<LoadedBotConfig> {
  const issues: ConfigIssue[] = [];
  const parsed = BotConfig.safeParse(document ?? {}, { reportInput: true });
  if (!parsed.success) issues.push(...issuesOf(parsed.error, [], BotConfig));
  const raw = (typeof document === 'object' && document !== null ? document : {}) as Record<
    string,
    unknown
  >;
  const strategies = await resolveStrategies(raw.strategies, strategiesDirectoryOf(raw), issues);

  // The venue section is read on its own, so an emulator config is checked even when another
  // part of the file failed.
  const venue = parsed.success ? parsed.data.venue : VenueSection.safeParse(raw.venue ?? {}).data;
  let emulatorConfig: EmulatorConfig | null = null;
  if (venue !== undefined && venue.key_file === null) {
    const inline = venue.emulator.config;
    const where = ['venue', 'emulator', 'config'];
    try {
      emulatorConfig =
        typeof inline === 'string'
          ? loadEmulatorConfig(inline)
          : parseEmulatorConfig(inline ?? DEFAULT_EMULATOR_CONFIG_INPUT);
    } catch (error) {
      issues.push(
        ...issuesFromError(error, typeof inline === 'string' ? [...where, `(${inline})`] : where),
      );
    }
  }
  let wireProfile = DEFAULT_WIRE_PROFILE;
  const wire = venue?.wire ?? null;
  if (wire !== null) {
    try {
      wireProfile = wireProfileOf(wire);
    } catch (error) {
      const where = typeof wire === 'string' ? ['venue', 'wire', `(${wire})`] : ['venue', 'wire'];
      issues.push(...issuesFromError(error, where));
    }
  }
  if (parsed.success)
    issues.push(...dashboardIssues(parsed.data.dashboard, parsed.data.metrics.host));
  if (issues.length > 0 || !parsed.success) throw invalidConfigError(source, issues);
  return { source, config: parsed.data, strategies, emulatorConfig, wireProfile };
}

/** `venue.wire` resolved: a file's profile, the inline one, or SVC1 (WIRE_PROFILE_INVALID). */
export function wireProfileOf(wire: BotConfig['venue']['wire']): WireProfile {
  if (wire === null) return DEFAULT_WIRE_PROFILE;
  return typeof wire === 'string'
    ? loadWireProfileFile(wire)
    : parseWireProfile(wire, 'venue.wire');
}

/** The options of the emulator that `venue.emulator` describes, started in this process. */
export function embeddedEmulatorOptions(
  settings: BotConfig['venue']['emulator'],
  emulatorConfig: EmulatorConfig | null,
  clock: Clock,
  wire: WireProfile = DEFAULT_WIRE_PROFILE,
): StartEmulatorOptions {
  return {
    clock,
    wire,
    ...(emulatorConfig === null ? {} : { config: emulatorConfig }),
    ...(settings.seed === null ? {} : { seed: settings.seed }),
    dataDir: settings.data_dir === null ? null : resolve(settings.data_dir),
    host: settings.host,
    port: settings.port,
  };
}

/** Reads, parses and checks a bot config file (`INVALID_CONFIG` with every issue). */
export async function loadBotConfig(path: string): Promise<LoadedBotConfig> {
  return resolveBotConfig(readConfigDocument(path), path);
}

function section<T extends z.ZodType>(
  document: Record<string, unknown>,
  key: string,
  schema: T,
  source: string,
): z.output<T> {
  const result = schema.safeParse(document[key] ?? {}, { reportInput: true });
  if (!result.success) throw invalidConfigError(source, issuesOf(result.error, [key], schema));
  return result.data;
}

/** Only the `metrics:` section of a config file (what `paperbot status` needs). */
export function readMetricsSection(path: string): BotConfig['metrics'] {
  return section(readConfigDocument(path), 'metrics', MetricsSection, path);
}

/** Only the `dashboard:` section of a config file (`paperbot status` reads its token file). */
export function readDashboardSection(path: string): BotConfig['dashboard'] {
  return section(readConfigDocument(path), 'dashboard', DashboardSection, path);
}

/** Only the `journal:` section of a config file (`paperbot status` finds the bot's address there). */
export function readJournalSection(path: string): BotConfig['journal'] {
  return section(readConfigDocument(path), 'journal', JournalSection, path);
}

/** Only the `risk:` section of a config file (what `paperbot kill` needs). */
export function readRiskSection(path: string): BotConfig['risk'] {
  return section(readConfigDocument(path), 'risk', RiskConfig, path);
}

/** The dead-man settings, or false when the section disables it. */
export function deadmanSettings(section: BotConfig['deadman']): Partial<DeadmanConfig> | false {
  if (!section.enabled) return false;
  return {
    timeoutSeconds: section.timeout_seconds,
    refreshIntervalMs: section.refresh_interval_ms,
    latencyMarginMs: section.latency_margin_ms,
    maxFailedRefreshes: section.max_failed_refreshes,
    maxRefreshesInFlight: section.max_refreshes_in_flight,
    requestTimeoutMs: section.request_timeout_ms,
    retryBaseDelayMs: section.retry_base_delay_ms,
    retryMaxDelayMs: section.retry_max_delay_ms,
  };
}
