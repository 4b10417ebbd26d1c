/**
 * The `dashboard:` section of the bot config. The dashboard is served on the bot's HTTP
 * endpoint (`metrics.host` / `metrics.port`); bound anywhere but loopback the endpoint needs a
 * token file (dashboard or not).
 */
import { z } from 'zod';
import type { ConfigIssue } from '../../runtime/config-file.ts';
import { isLoopbackHost } from './token.ts';

export const DashboardSection = z.strictObject({
  enabled: z.boolean().default(true),
  /** true hides the controls (halt, reduce-only, clear, cancel-all) and refuses their requests. */
  read_only: z.boolean().default(false),
  /**
   * Where the endpoint's token is kept (mode 0600; made when absent). Required when
   * `metrics.host` is not loopback (it then guards every path); otherwise null makes a fresh
   * token at each start, held in memory only (the controls use it).
   */
  token_file: z.string().min(1).nullable().default(null),
  /** How often the page gets a new snapshot. */
  update_ms: z.int().min(200).max(60_000).default(1_000),
});
export type DashboardSection = z.infer<typeof DashboardSection>;

/**
 * The checks across sections: an endpoint reachable from elsewhere must have a token file,
 * with or without the dashboard, since the token guards every path there (`/status` too).
 */
export function dashboardIssues(dashboard: DashboardSection, metricsHost: string): ConfigIssue[] {
  if (isLoopbackHost(metricsHost) || dashboard.token_file !== null) return [];
  return [
    {
      path: 'dashboard.token_file',
      message: `required when metrics.host (${metricsHost}) is not a loopback address: every path of the bot's endpoint (/status, /metrics, the dashboard) then needs a token`,
    },
  ];
}
