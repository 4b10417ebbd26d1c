/**
 * The SQLite journal's rows as better-sqlite3 reads them, one zod schema per table (design rule
 * 2: schema and type share a name), and the records built from them. The column list of the
 * intents table comes from its schema. Rows are parsed where a journal written by an earlier
 * process is read back to recover (open intents, the runtime's own commands, the dead-man
 * state); on the hot path (a record read back after it left the cache) they are taken as typed:
 * the table's own constraints (STRICT, CHECK) already hold them to these shapes.
 */
import { z } from 'zod';
import type { Fill } from '../../protocol/index.ts';
import type { StampedIntent } from '../intents.ts';
import type { CommandEndpoint } from '../venue.ts';
import type {
  DeadmanRecord,
  FillReadBackRecord,
  FillRecord,
  IntentContext,
  IntentRecord,
  InternalCommandRecord,
  JournaledCommand,
  OrderEventRecord,
  OutcomeRecord,
} from './records.ts';
import { FILL_SOURCES, INTENT_STATES, INTERNAL_COMMAND_STATES } from './schema.ts';

const integer = z.number().int();
const bytes = z.instanceof(Uint8Array);

export const IntentRow = z.strictObject({
  request_id: z.string(),
  strategy_id: z.string(),
  sequence: integer,
  kind: z.string(),
  client_order_id: z.string().nullable(),
  market_id: z.string().nullable(),
  intent_json: z.string(),
  emitted_at: integer,
  state: z.enum(INTENT_STATES),
  simulate_request_id: z.string().nullable(),
  simulate_attempt: integer,
  command_endpoint: z.string().nullable(),
  command_path: z.string().nullable(),
  command_body: bytes.nullable(),
  command_sha256: z.string().nullable(),
  send_attempts: integer,
  context_json: z.string().nullable(),
  order_id: z.string().nullable(),
  replaces_order_id: z.string().nullable(),
  outcome_json: z.string().nullable(),
  resolution_attempts: integer,
  next_resolution_at: integer.nullable(),
  fill_reported: integer,
  created_at: integer,
  updated_at: integer,
});
export type IntentRow = z.infer<typeof IntentRow>;

/** The intents table's columns, in table order. */
export const INTENT_COLUMNS = Object.keys(IntentRow.shape) as readonly (keyof IntentRow)[];

export const InternalCommandRow = z.strictObject({
  request_id: z.string(),
  purpose: z.string(),
  command_endpoint: z.string(),
  command_path: z.string(),
  command_body: bytes,
  command_sha256: z.string(),
  state: z.enum(INTERNAL_COMMAND_STATES),
  outcome_json: z.string().nullable(),
  created_at: integer,
  updated_at: integer,
});
export type InternalCommandRow = z.infer<typeof InternalCommandRow>;

export const DeadmanRow = z.strictObject({
  id: z.literal(1),
  armed: integer,
  timeout_seconds: integer,
  deadline_at: integer.nullable(),
  last_request_id: z.string().nullable(),
  confirmed_at: integer.nullable(),
  fired_at: integer.nullable(),
  updated_at: integer,
});
export type DeadmanRow = z.infer<typeof DeadmanRow>;

export const FillRow = z.strictObject({
  fill_id: z.string(),
  order_id: z.string().nullable(),
  seen_at: integer,
  sequence: integer.nullable(),
  source: z.enum(FILL_SOURCES).nullable(),
  fill_json: z.string().nullable(),
});
export type FillRow = z.infer<typeof FillRow>;

export const OrderEventRow = z.strictObject({
  sequence: integer,
  event_id: z.string(),
  order_id: z.string(),
  from_state: z.string().nullable(),
  to_state: z.string(),
  occurred_at: z.string(),
  applied_at: integer,
});
export type OrderEventRow = z.infer<typeof OrderEventRow>;

export const FillReadBackRow = z.strictObject({
  id: z.literal(1),
  generation: integer,
  stop_fill_id: z.string().nullable(),
  stop_occurred_at: z.string().nullable(),
  reason: z.string(),
  requested_at: integer,
});
export type FillReadBackRow = z.infer<typeof FillReadBackRow>;

/** A Buffer over the same memory (better-sqlite3 binds Buffers as BLOBs). */
export function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function commandOf(
  endpoint: string | null,
  path: string | null,
  body: Uint8Array | null,
  sha256: string | null,
): JournaledCommand | null {
  if (endpoint === null || path === null || body === null || sha256 === null) return null;
  return {
    endpoint: endpoint as CommandEndpoint,
    path,
    bodyBytes: new Uint8Array(body),
    bodySha256: sha256,
  };
}

export function intentFromRow(row: IntentRow): IntentRecord {
  return {
    requestId: row.request_id,
    strategyId: row.strategy_id,
    sequence: row.sequence,
    kind: row.kind as IntentRecord['kind'],
    clientOrderId: row.client_order_id,
    marketId: row.market_id,
    intent: JSON.parse(row.intent_json) as StampedIntent,
    state: row.state,
    simulateRequestId: row.simulate_request_id,
    simulateAttempt: row.simulate_attempt,
    command: commandOf(
      row.command_endpoint,
      row.command_path,
      row.command_body,
      row.command_sha256,
    ),
    sendAttempts: row.send_attempts,
    context: row.context_json === null ? {} : (JSON.parse(row.context_json) as IntentContext),
    orderId: row.order_id,
    replacesOrderId: row.replaces_order_id,
    outcome: row.outcome_json === null ? null : (JSON.parse(row.outcome_json) as OutcomeRecord),
    resolutionAttempts: row.resolution_attempts,
    nextResolutionAt: row.next_resolution_at,
    fillReported: row.fill_reported !== 0,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function internalCommandFromRow(row: InternalCommandRow): InternalCommandRecord {
  return {
    requestId: row.request_id,
    purpose: row.purpose,
    command: commandOf(
      row.command_endpoint,
      row.command_path,
      row.command_body,
      row.command_sha256,
    ) as JournaledCommand,
    state: row.state,
    outcome:
      row.outcome_json === null
        ? null
        : (JSON.parse(row.outcome_json) as Readonly<Record<string, unknown>>),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function deadmanFromRow(row: DeadmanRow): DeadmanRecord {
  return {
    armed: row.armed !== 0,
    timeoutSeconds: row.timeout_seconds,
    deadlineAt: row.deadline_at,
    lastRequestId: row.last_request_id,
    confirmedAt: row.confirmed_at,
    firedAt: row.fired_at,
  };
}

export function fillFromRow(row: FillRow): FillRecord {
  return {
    fillId: row.fill_id,
    orderId: row.order_id,
    sequence: row.sequence,
    source: row.source,
    fill: row.fill_json === null ? null : (JSON.parse(row.fill_json) as Fill),
    seenAt: row.seen_at,
  };
}

export function orderEventFromRow(row: OrderEventRow): OrderEventRecord {
  return {
    sequence: row.sequence,
    eventId: row.event_id,
    orderId: row.order_id,
    fromState: row.from_state,
    toState: row.to_state,
    occurredAt: row.occurred_at,
    appliedAt: row.applied_at,
  };
}

export function fillReadBackFromRow(row: FillReadBackRow): FillReadBackRecord {
  return {
    generation: row.generation,
    stopFillId: row.stop_fill_id,
    stopOccurredAt: row.stop_occurred_at,
    reason: row.reason,
    requestedAt: row.requested_at,
  };
}
