/** The small bodies of contract.md section 5 and the routes readiness items (ours to define). */
import { z } from 'zod';
import { parseTimestamp, Rfc3339Utc, RouteHealth } from './primitives.ts';

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

// ---------------------------------------------------------------------------------------------
// What a client reads (contract section 7). The interface leaves these bodies open ("fields not
// shown"); the schemas above are what the emulator sends. A client reads only the fields it
// uses, keeps every other field, and refuses nothing else.

/** GET /v1/time as read: `epoch_ms` or `server_time` gives the time (`serviceTimeMs`). */
export const TimeReading = z.looseObject({
  server_time: z.string().optional(),
  epoch_ms: z.number().optional(),
});
export type TimeReading = z.infer<typeof TimeReading>;

/**
 * The service time a GET /v1/time answer gives, in epoch milliseconds: `epoch_ms` when it is a
 * finite number, else `server_time` when it is RFC 3339 UTC; null when neither can be read.
 */
export function serviceTimeMs(time: TimeReading): number | null {
  if (typeof time.epoch_ms === 'number' && Number.isFinite(time.epoch_ms)) {
    return Math.round(time.epoch_ms);
  }
  if (typeof time.server_time === 'string') {
    const parsed = Rfc3339Utc.safeParse(time.server_time);
    if (parsed.success) return parseTimestamp(parsed.data);
  }
  return null;
}

// The fields contract.md section 5 gives these open bodies are known (not reported as news);
// none is required, and each is kept as the service wrote it.
const known = z.unknown().optional();

/** GET /v1/status as read: any object; `status` is kept as the service wrote it. */
export const StatusReading = z.looseObject({
  status: known,
  environment: known,
  api_version: known,
  server_time: known,
});
export type StatusReading = z.infer<typeof StatusReading>;

/** GET /health as read: any object. */
export const HealthReading = z.looseObject({ status: known });
export type HealthReading = z.infer<typeof HealthReading>;

/** GET /ready as read: any JSON object (a 200 is the answer; 503 is the error envelope). */
export const ReadyReading = z.looseObject({ ready: known });
export type ReadyReading = z.infer<typeof ReadyReading>;

/**
 * One item of GET /v1/routes/readiness as read: any object (`readRouteReadiness`); the fields
 * it looks at and the contract's are known, none required.
 */
export const RouteReadinessItem = z.looseObject({
  route_id: known,
  ready: known,
  health: known,
  status: known,
  state: known,
  order_submission_enabled: known,
  reasons: known,
  observed_at: known,
});
export type RouteReadinessItem = z.infer<typeof RouteReadinessItem>;

export const RouteReadinessItemList = z.array(RouteReadinessItem);
export type RouteReadinessItemList = z.infer<typeof RouteReadinessItemList>;

/** The fields `readRouteReadiness` looks at for a state string, in this order. */
export const READINESS_STATE_FIELDS = ['health', 'status', 'state'] as const;

/** How one readiness item reads (`readRouteReadiness`). */
export type RouteReadinessReading =
  | {
      readonly readable: true;
      readonly routeId: string;
      readonly ready: boolean;
      /** Why not, from the item: its `reasons` strings, else the field that said no. */
      readonly reasons: readonly string[];
    }
  | {
      readonly readable: false;
      /** The item's `route_id` when it has a string one. */
      readonly routeId: string | null;
      /** Why the item cannot be read, naming the fields it has. */
      readonly problem: string;
    };

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item) => typeof item === 'string') : [];
}

/**
 * The readiness rule for an item whose fields the interface does not show:
 *
 * 1. The route is `route_id` (a string); without one the item cannot be read.
 * 2. `ready: boolean` decides when present.
 * 3. Otherwise the first string among `health`, `status`, `state` decides: `ready` (any case)
 *    is ready, any other value is not ready.
 * 4. `order_submission_enabled: false` makes a ready route not ready.
 * 5. An item with none of these cannot be read: that is an error, never a silent "not ready".
 */
export function readRouteReadiness(item: RouteReadinessItem): RouteReadinessReading {
  const fields = Object.keys(item);
  const routeId = typeof item.route_id === 'string' ? item.route_id : null;
  if (routeId === null) {
    return {
      readable: false,
      routeId: null,
      problem: `a readiness item has no string route_id (fields: ${fields.join(', ') || 'none'})`,
    };
  }
  const reasons = stringList(item.reasons);
  let ready: boolean | null = null;
  let said = '';
  if (typeof item.ready === 'boolean') {
    ready = item.ready;
    said = `ready is ${String(item.ready)}`;
  } else {
    for (const field of READINESS_STATE_FIELDS) {
      const value = item[field];
      if (typeof value !== 'string') continue;
      ready = value.toLowerCase() === 'ready';
      said = `${field} is '${value}'`;
      break;
    }
  }
  if (ready === null) {
    return {
      readable: false,
      routeId,
      problem: `the readiness item of route ${routeId} has neither a boolean ready nor a health, status or state string (fields: ${fields.join(', ')})`,
    };
  }
  if (ready && item.order_submission_enabled === false) {
    return {
      readable: true,
      routeId,
      ready: false,
      reasons: reasons.length > 0 ? reasons : ['order_submission_enabled is false'],
    };
  }
  return {
    readable: true,
    routeId,
    ready,
    reasons: ready || reasons.length > 0 ? reasons : [said],
  };
}
