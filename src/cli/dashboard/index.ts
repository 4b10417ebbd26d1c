/**
 * The dashboard of a running bot, assembled: its token, its activity recorder, its routes on
 * the bot's HTTP endpoint, its controls. `bot.ts` creates it before the HTTP endpoint starts
 * (the page answers "waiting" until the kernel runs) and attaches the kernel once it exists.
 */
import { resolve } from 'node:path';
import type { Observable } from 'rxjs';
import { type Logger, withFields } from '../../core/logger.ts';
import type { Clock } from '../../core/clock.ts';
import type { Kernel } from '../../runtime/kernel/index.ts';
import { KillSwitch } from '../../runtime/risk/index.ts';
import { ActivityRecorder } from './activity.ts';
import { createDashboardAssets } from './assets.ts';
import type { DashboardSection } from './config.ts';
import { runControl } from './controls.ts';
import { createDashboardServer, type DashboardServer } from './server.ts';
import { buildSnapshot, type DashboardStatus, type DashboardStrategyConfig } from './snapshot.ts';
import { generateToken, loadOrCreateToken } from './token.ts';

export { DashboardSection, dashboardIssues } from './config.ts';
export type { DashboardServer } from './server.ts';

/**
 * The endpoint's token: read from (or made in) `dashboard.token_file`, or fresh in memory. One
 * token for the whole endpoint: the access policy off loopback and the dashboard's controls.
 */
export function endpointTokenOfConfig(section: DashboardSection): string {
  return section.token_file === null
    ? generateToken()
    : loadOrCreateToken(resolve(section.token_file));
}

export interface BotDashboardOptions {
  readonly clock: Clock;
  /** The endpoint's token; default `endpointTokenOfConfig(section)`. */
  readonly token?: string;
  readonly logger: Logger;
  readonly section: DashboardSection;
  readonly killFile: string | null;
  readonly strategies: readonly DashboardStrategyConfig[];
  readonly status: () => DashboardStatus | null;
  readonly kernel: () => Kernel | null;
  /** The bot's kill switch, which the Halt, Reduce-only and Clear controls move. */
  readonly killSwitch?: (() => KillSwitch | null) | undefined;
  /** A summary of the notifications' health for the page; default none. */
  readonly notifications?: () => unknown;
}

/** The parts of the live venue the dashboard reads: marks and the routes' readiness. */
export interface DashboardLiveSource {
  readonly marketData: {
    markets(): readonly { readonly market_id: string }[];
    ticker$(marketId: string): Observable<{ market_id: string; mark_price: string | null }>;
  };
  readonly routeReady$: Observable<boolean>;
}

export interface BotDashboard {
  readonly server: DashboardServer;
  readonly activity: ActivityRecorder;
  attach(
    kernel: Kernel,
    stream: { readonly state$: Observable<string> },
    live: DashboardLiveSource,
  ): void;
  close(): void;
}

/** The dashboard from the bot's config, or null when it is off (or the endpoint is). */
export function dashboardOfConfig(
  config: {
    readonly dashboard: DashboardSection;
    readonly metrics: { readonly enabled: boolean; readonly host: string };
    readonly risk: { readonly kill_switch: { readonly file: string | null } };
  },
  strategies: readonly {
    readonly id: string;
    readonly name: string;
    readonly rawParams: unknown;
  }[],
  options: Pick<
    BotDashboardOptions,
    'clock' | 'logger' | 'status' | 'kernel' | 'notifications' | 'token' | 'killSwitch'
  >,
): BotDashboard | null {
  if (!config.metrics.enabled || !config.dashboard.enabled) return null;
  const killFile = config.risk.kill_switch.file;
  return createBotDashboard({
    ...options,
    section: config.dashboard,
    killFile: killFile === null ? null : resolve(killFile),
    strategies: strategies.map((strategy) => ({
      id: strategy.id,
      name: strategy.name,
      params: strategy.rawParams,
    })),
  });
}

export function createBotDashboard(options: BotDashboardOptions): BotDashboard {
  const { section, clock, logger } = options;
  const token = options.token ?? endpointTokenOfConfig(section);
  const activity = new ActivityRecorder(clock);
  const server = createDashboardServer({
    clock,
    token,
    readOnly: section.read_only,
    assets: createDashboardAssets(),
    intervalMs: section.update_ms,
    onTick: () => activity.sampleEquity(options.status()?.account?.total_equity ?? null),
    snapshot: () => {
      const status = options.status();
      if (status === null) return null;
      return buildSnapshot({
        now: clock.now(),
        status,
        activity: activity.snapshot(),
        strategies: options.strategies,
        readOnly: section.read_only,
        notifications: options.notifications?.() ?? null,
        day: options.kernel()?.gate.lossTrackingRecord() ?? null,
      });
    },
    control: async (action) => {
      const kernel = options.kernel();
      if (kernel === null) return { ok: false, message: 'the bot is not running' };
      const killSwitch =
        options.killSwitch?.() ??
        new KillSwitch({ file: options.killFile, clock, target: kernel.gate });
      return runControl({ killSwitch, cancelAllOrders: () => kernel.cancelAllOrders() }, action, {
        logger: withFields(logger, { component: 'dashboard' }),
      });
    },
  });
  return {
    server,
    activity,
    attach(kernel, stream, live) {
      activity.attach(kernel);
      activity.attachStream(stream.state$);
      activity.attachMarks(
        live.marketData.markets().map((market) => live.marketData.ticker$(market.market_id)),
      );
      activity.attachRouteReady(live.routeReady$);
    },
    close() {
      server.close();
      activity.detach();
    },
  };
}
