/**
 * The dead-man switch's settings and the one check of them, shared by the switch itself and the
 * bot's config file (which reports each problem under its snake_case key). A setting that would
 * let the deadline lapse on a venue as slow as the configured latency margin is refused, with the
 * arithmetic that says why.
 */
import { PaperbotError } from '../../core/errors.ts';

export interface DeadmanConfig {
  /** The cancel-all-after timeout armed at the venue, 1..86400 seconds. */
  readonly timeoutSeconds: number;
  /** Refresh period; at most timeout / 4 (the default). */
  readonly refreshIntervalMs: number | null;
  /**
   * The longest round trip a refresh may take, and how long before the confirmed deadline
   * trading stops (request latency and clock jitter).
   */
  readonly latencyMarginMs: number;
  /** Failed refreshes in a row after which trading stops. */
  readonly maxFailedRefreshes: number;
  /** Refreshes sent but not yet answered, at most; a slow venue gets the next one anyway. */
  readonly maxRefreshesInFlight: number;
  /** Stop waiting for one heartbeat request after this long; default timeout minus the margin. */
  readonly requestTimeoutMs: number | null;
  /** Retry delays of arming and of recovery after a fired deadline. */
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
}

export const defaultDeadmanConfig: DeadmanConfig = Object.freeze({
  timeoutSeconds: 60,
  refreshIntervalMs: null,
  latencyMarginMs: 2_000,
  maxFailedRefreshes: 2,
  maxRefreshesInFlight: 3,
  requestTimeoutMs: null,
  retryBaseDelayMs: 1_000,
  retryMaxDelayMs: 30_000,
});

export type ResolvedDeadmanConfig = DeadmanConfig & {
  readonly refreshIntervalMs: number;
  readonly requestTimeoutMs: number;
};

export interface DeadmanConfigIssue {
  readonly field: keyof DeadmanConfig;
  readonly message: string;
}

/** Every problem of a dead-man config at once; empty when it is sound. */
export function deadmanConfigIssues(config: DeadmanConfig): DeadmanConfigIssue[] {
  const issues: DeadmanConfigIssue[] = [];
  const timeout = config.timeoutSeconds;
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 86_400) {
    issues.push({
      field: 'timeoutSeconds',
      message: `must be an integer in 1..86400, got ${timeout}`,
    });
    return issues;
  }
  const timeoutMs = timeout * 1000;
  const ceiling = timeoutMs / 4;
  const refresh = config.refreshIntervalMs ?? ceiling;
  if (!(refresh > 0) || refresh > ceiling) {
    issues.push({
      field: 'refreshIntervalMs',
      message: `must be in (0, ${ceiling}] ms, a quarter of timeout_seconds; got ${refresh}`,
    });
  }
  const margin = config.latencyMarginMs;
  if (!(margin >= 0)) {
    issues.push({ field: 'latencyMarginMs', message: `must be >= 0, got ${margin}` });
  } else if (refresh > 0 && timeoutMs <= refresh + 2 * margin) {
    // A refresh is sent `refresh` ms after the last confirmed one and may take `margin` ms to be
    // confirmed; trading stops `margin` ms before the confirmed deadline. Both must fit inside
    // the timeout, or a venue as slow as the margin stops trading (or lets the deadline fire).
    const needed = refresh + 2 * margin;
    issues.push({
      field: 'timeoutSeconds',
      message:
        `${timeout} s cannot survive latency_margin_ms ${margin}: the next refresh is sent ` +
        `${refresh} ms after the last confirmed one and may take ${margin} ms to be confirmed, ` +
        `and trading stops ${margin} ms before the deadline, so the timeout must be longer than ` +
        `${refresh} + 2 x ${margin} = ${needed} ms; raise timeout_seconds or lower latency_margin_ms`,
    });
  }
  if (config.requestTimeoutMs !== null && !(config.requestTimeoutMs > margin)) {
    issues.push({
      field: 'requestTimeoutMs',
      message:
        `${config.requestTimeoutMs} ms must be longer than latency_margin_ms (${margin}): a ` +
        'refresh answered within the margin would be given up on, and on a network venue aborted',
    });
  }
  const inFlight = config.maxRefreshesInFlight;
  const neededInFlight = refresh > 0 && margin >= 0 ? Math.max(1, Math.ceil(margin / refresh)) : 1;
  if (!Number.isInteger(inFlight) || inFlight < neededInFlight) {
    issues.push({
      field: 'maxRefreshesInFlight',
      message:
        `must be an integer >= ${neededInFlight}: with answers up to ${margin} ms late and a ` +
        `refresh every ${refresh} ms, ${neededInFlight} can be in flight at once; got ${inFlight}`,
    });
  }
  if (!Number.isInteger(config.maxFailedRefreshes) || config.maxFailedRefreshes < 1) {
    issues.push({ field: 'maxFailedRefreshes', message: 'must be an integer >= 1' });
  }
  return issues;
}

/** Defaults filled in and checked; `INVALID_CONFIG` listing every problem otherwise. */
export function resolveDeadmanConfig(
  partial: Partial<DeadmanConfig> | undefined,
): ResolvedDeadmanConfig {
  const config = { ...defaultDeadmanConfig, ...partial };
  const issues = deadmanConfigIssues(config);
  if (issues.length > 0) {
    const problems = issues.map((issue) => `${issue.field} ${issue.message}`);
    throw new PaperbotError('INVALID_CONFIG', `dead-man switch: ${problems.join('; ')}`, {
      details: { problems },
    });
  }
  const timeoutMs = config.timeoutSeconds * 1000;
  return {
    ...config,
    refreshIntervalMs: config.refreshIntervalMs ?? timeoutMs / 4,
    requestTimeoutMs: config.requestTimeoutMs ?? timeoutMs - config.latencyMarginMs,
  };
}
