/** The small bodies of contract.md section 5 and the routes readiness items (ours to define). */
import { z } from 'zod';
import { Rfc3339Utc, RouteHealth } from './primitives.ts';

/** The interface description version; also `api_version` of GET /v1/status. */
export const API_VERSION = '1.0.0';

export const TimeResponse = z.strictObject({
  server_time: Rfc3339Utc,
  epoch_ms: z.int(),
});
export type TimeResponse = z.infer<typeof TimeResponse>;

export const ServiceStatus = z.enum(['ok', 'degraded', 'maintenance']);
export type ServiceStatus = z.infer<typeof ServiceStatus>;

/** `api_version` stays a string so that a later 1.x service still parses. */
export const StatusResponse = z.strictObject({
  status: ServiceStatus,
  environment: z.literal('practice'),
  api_version: z.string(),
  server_time: Rfc3339Utc,
});
export type StatusResponse = z.infer<typeof StatusResponse>;

export const HealthResponse = z.strictObject({ status: z.literal('ok') });
export type HealthResponse = z.infer<typeof HealthResponse>;

/** While not ready the service answers 503 with the error envelope (EXECUTION_UNAVAILABLE). */
export const ReadyResponse = z.strictObject({ ready: z.literal(true) });
export type ReadyResponse = z.infer<typeof ReadyResponse>;

/**
 * One item of GET /v1/routes/readiness. `ready` is true only when the route's health is `ready`
 * and order submission is enabled; `reasons` says why not otherwise (empty when ready).
 */
export const RouteReadiness = z.strictObject({
  route_id: z.string(),
  ready: z.boolean(),
  health: RouteHealth,
  order_submission_enabled: z.boolean(),
  reasons: z.array(z.string()),
  observed_at: Rfc3339Utc,
});
export type RouteReadiness = z.infer<typeof RouteReadiness>;

export const RouteReadinessList = z.array(RouteReadiness);
export type RouteReadinessList = z.infer<typeof RouteReadinessList>;
