/**
 * The dashboard of a running bot, assembled: its token, its activity recorder, its routes on
 * the bot's HTTP endpoint, its controls. `bot.ts` creates it before the HTTP endpoint starts
 * (the page answers "waiting" until the kernel runs) and attaches the kernel once it exists.
 */
import { resolve } from 'node:path';
import type { Observable } from 'rxjs';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.ts';
import type { Kernel } from '../../runtime/kernel.ts';
import { ActivityRecorder } from './activity.ts';
import { createDashboardAssets } from './assets.ts';
import type { DashboardSection } from './config.ts';
import { runControl } from './controls.ts';
import { createDashboardServer, type DashboardServer } from './server.ts';
import { buildSnapshot, type DashboardStatus, type DashboardStrategyConfig } from './snapshot.ts';
import { generateToken, loadOrCreateToken } from './token.ts';

export { DashboardSection, dashboardIssues } from './config.ts';
export type { DashboardServer } from './server.ts';

export interface BotDashboardOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly section: DashboardSection;
  readonly host: string;
  readonly killFile: string | null;
  readonly strategies: readonly DashboardStrategyConfig[];
  readonly status: () => DashboardStatus | null;
  readonly kernel: () => Kernel | null;
  /** A summary of the notifications' health for the page; default none. */
  readonly notifications?: () => unknown;
}

export interface BotDashboard {
  readonly server: DashboardServer;
  readonly activity: ActivityRecorder;
  attach(
    kernel: Kernel,
    streamState$: Observable<string>,
    marks: readonly Observable<{ market_id: string; mark_price: string | null }>[],
    routeReady$?: Observable<boolean>,
  ): void;
  close(): void;
}

export function createBotDashboard(options: BotDashboardOptions): BotDashboard {
  const { section, clock, logger } = options;
  const token =
    section.token_file === null ? generateToken() : loadOrCreateToken(resolve(section.token_file));
  const activity = new ActivityRecorder(clock);
  const server = createDashboardServer({
    clock,
    host: options.host,
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
      return runControl(kernel, action, {
        killFile: options.killFile,
        logger: logger.child({ component: 'dashboard' }),
      });
    },
  });
  return {
    server,
    activity,
    attach(kernel, streamState$, marks, routeReady$) {
      activity.attach(kernel);
      activity.attachStream(streamState$);
      activity.attachMarks(marks);
      if (routeReady$ !== undefined) activity.attachRouteReady(routeReady$);
    },
    close() {
      server.close();
      activity.detach();
    },
  };
}
