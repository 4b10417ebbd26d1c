/**
 * Idempotency of mutations on `request_id`, per account (interface rules 1 to 3).
 *
 * A mutation's content is its fingerprint: SHA-256 of the canonical JSON of the endpoint name,
 * the path parameters and the parsed body after normalization (defaults applied, numbers as
 * canonical decimal strings, object keys sorted, null and absent members alike). Two requests
 * that mean the same thing therefore match even when serialized differently (key order,
 * whitespace, `1` and `"1.0"`, an explicit default), and any change of meaning conflicts. Exact
 * body bytes would also work for this project's client, which resends the same bytes, but would
 * turn a harmless re-serialization by another client into IDEMPOTENCY_CONFLICT.
 *
 * What is stored: every outcome the engine decided, success or a refusal that cannot change on
 * its own (for example INSUFFICIENT_READY_CAPITAL). Not stored: validation failures (422),
 * retryable refusals (ROUTE_NOT_READY, EXECUTION_UNAVAILABLE, ...), and anything refused before
 * the engine (auth, rate limit), so the same request_id can be sent again once fixed.
 *
 * GET /v1/requests/{request_id} reports `PENDING` while an order the command created is still
 * PENDING (queued, not yet submitted) or an order it cancels is not yet terminal, and
 * `COMPLETED` after; `result` holds the order id and its current status.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  CommandType,
  type EndpointName,
  formatTimestamp,
  type MutationStatus,
  type Order,
  type OrderStatus,
  type PrivateEvent,
  parseTimestamp,
  TERMINAL_ORDER_STATUSES,
} from '../../protocol/index.ts';
import type { Store } from '../store/store.ts';
import { ServerError } from './errors.ts';

export const commandTypeOf: Partial<Record<EndpointName, CommandType>> = {
  placeOrder: 'order.open',
  amendOrder: 'order.amend',
  cancelOrder: 'order.cancel',
  cancelAllOrders: 'order.cancel_all',
  placeBatch: 'order.batch',
  closePosition: 'position.close',
  setCancelAllAfter: 'cancel_all_after.set',
};

export const IdempotencyRecord = z.strictObject({
  version: z.literal(1),
  account_id: z.string(),
  request_id: z.string(),
  endpoint: z.string(),
  command_type: CommandType,
  fingerprint: z.string(),
  /** The HTTP status and body answered the first time, answered again on a repeat. */
  status: z.int(),
  body: z.unknown(),
  created_at: z.int(),
  completed_at: z.int().nullable(),
});
export type IdempotencyRecord = z.infer<typeof IdempotencyRecord>;

function canonicalValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => canonicalValue(item ?? null));
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, member]) => member !== undefined && member !== null)
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
      .map(([key, member]) => [key, canonicalValue(member)] as const);
    return Object.fromEntries(entries);
  }
  return value;
}

/** JSON with sorted keys and without null or absent members. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalValue(value));
}

export function fingerprintOf(
  endpoint: EndpointName,
  pathParams: Readonly<Record<string, string>>,
  normalizedBody: unknown,
): string {
  return createHash('sha256')
    .update(canonicalJson({ endpoint, path: pathParams, body: normalizedBody }))
    .digest('hex');
}

/** Outcomes worth keeping under the request id (see the module comment). */
export function isStoredOutcome(status: number, retryable: boolean): boolean {
  if (status < 400) return true;
  return status !== 422 && !retryable;
}

type Criterion = 'left_pending' | 'terminal';

interface TrackedOrder {
  readonly orderId: string;
  readonly criterion: Criterion;
  /** The status in the stored body. */
  readonly status: OrderStatus;
}

function isOrderLike(value: unknown): value is Pick<Order, 'order_id' | 'status'> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { order_id?: unknown }).order_id === 'string' &&
    typeof (value as { status?: unknown }).status === 'string'
  );
}

function resultItems(body: unknown): unknown[] {
  const results = (body as { results?: unknown } | null)?.results;
  return Array.isArray(results) ? results : [];
}

const CREATING: ReadonlySet<CommandType> = new Set([
  'order.open',
  'order.amend',
  'position.close',
  'order.batch',
]);

function trackedOrders(record: IdempotencyRecord): TrackedOrder[] {
  if (record.status >= 400) return [];
  const criterion: Criterion = CREATING.has(record.command_type) ? 'left_pending' : 'terminal';
  const items =
    record.command_type === 'order.batch' || record.command_type === 'order.cancel_all'
      ? resultItems(record.body)
      : [record.body];
  return items.filter(isOrderLike).map((order) => ({
    orderId: order.order_id,
    criterion,
    status: order.status as OrderStatus,
  }));
}

function satisfied(criterion: Criterion, status: OrderStatus): boolean {
  return criterion === 'terminal' ? TERMINAL_ORDER_STATUSES.has(status) : status !== 'PENDING';
}

export interface OrderReader {
  /** The order's current status, or null when it cannot be read. */
  orderStatus(accountId: string, orderId: string): OrderStatus | null;
}

export class IdempotencyLedger {
  readonly #store: Store;
  readonly #orders: OrderReader;
  /**
   * Requests still PENDING, by the orders they wait on, to stamp `completed_at` when they
   * complete. The records are kept here so an order event does not read the store.
   */
  readonly #watchers = new Map<string, Map<string, IdempotencyRecord>>();

  constructor(store: Store, orders: OrderReader) {
    this.#store = store;
    this.#orders = orders;
  }

  find(accountId: string, requestId: string): IdempotencyRecord | undefined {
    const raw = this.#store.loadIdempotency(accountId, requestId);
    if (raw === undefined) return undefined;
    const parsed = IdempotencyRecord.safeParse(raw);
    return parsed.success ? parsed.data : undefined;
  }

  /** Keeps a first outcome; its completion is stamped now or when its orders move. */
  record(record: IdempotencyRecord): void {
    // The body was made by the engine just now, so its statuses are current.
    const completed = trackedOrders(record).every((tracked) =>
      satisfied(tracked.criterion, tracked.status),
    );
    const stored = completed ? { ...record, completed_at: record.created_at } : record;
    this.#store.saveIdempotency(record.account_id, record.request_id, stored);
    if (completed) return;
    for (const tracked of trackedOrders(record)) {
      const key = watchKey(record.account_id, tracked.orderId);
      const requests = this.#watchers.get(key) ?? new Map<string, IdempotencyRecord>();
      requests.set(record.request_id, record);
      this.#watchers.set(key, requests);
    }
  }

  /** Called for every private event, in sequence order. */
  observe(accountId: string, event: PrivateEvent): void {
    if (event.type !== 'authoritative_status') return;
    const requests = this.#watchers.get(watchKey(accountId, event.data.entity_id));
    if (requests === undefined) return;
    const moved = event.data.entity_id;
    for (const record of [...requests.values()]) {
      const complete = trackedOrders(record).every((tracked) =>
        satisfied(
          tracked.criterion,
          tracked.orderId === moved
            ? event.data.to_state
            : this.#currentStatus(accountId, tracked.orderId, 'UNKNOWN'),
        ),
      );
      if (!complete) continue;
      const occurredAt = parseTimestamp(event.occurred_at) ?? record.created_at;
      this.#store.saveIdempotency(accountId, record.request_id, {
        ...record,
        completed_at: occurredAt,
      });
      for (const tracked of trackedOrders(record)) {
        const trackedKey = watchKey(accountId, tracked.orderId);
        const waiting = this.#watchers.get(trackedKey);
        waiting?.delete(record.request_id);
        if (waiting?.size === 0) this.#watchers.delete(trackedKey);
      }
    }
  }

  /** GET /v1/requests/{request_id}: ORDER_NOT_FOUND when the request is unknown. */
  status(accountId: string, requestId: string, now: number): MutationStatus {
    const record = this.find(accountId, requestId);
    if (record === undefined) {
      throw new ServerError('ORDER_NOT_FOUND', `no request ${requestId} is known`, {
        details: { request_id: requestId },
      });
    }
    const complete = this.#isComplete(record);
    let completedAt = record.completed_at;
    if (complete && completedAt === null) {
      // Completed while nobody watched (before a restart): stamped when first seen.
      completedAt = now;
      this.#store.saveIdempotency(accountId, requestId, {
        ...record,
        completed_at: now,
      });
    }
    return {
      request_id: record.request_id,
      command_type: record.command_type,
      state: complete ? 'COMPLETED' : 'PENDING',
      result: this.#result(record),
      created_at: formatTimestamp(record.created_at),
      updated_at: formatTimestamp(
        complete ? (completedAt ?? record.created_at) : record.created_at,
      ),
      completed_at: complete && completedAt !== null ? formatTimestamp(completedAt) : null,
    };
  }

  #currentStatus(accountId: string, orderId: string, fallback: OrderStatus): OrderStatus {
    return this.#orders.orderStatus(accountId, orderId) ?? fallback;
  }

  #isComplete(record: IdempotencyRecord): boolean {
    return trackedOrders(record).every((tracked) =>
      satisfied(
        tracked.criterion,
        this.#currentStatus(record.account_id, tracked.orderId, 'UNKNOWN'),
      ),
    );
  }

  #result(record: IdempotencyRecord): Record<string, unknown> {
    if (record.status >= 400) {
      const error = (record.body as { error?: { code?: unknown; message?: unknown } } | null)
        ?.error;
      const refusal = {
        code: error?.code ?? 'UNKNOWN',
        message: error?.message ?? '',
      };
      return CREATING.has(record.command_type)
        ? { order_id: null, status: 'REJECTED', error: refusal }
        : { error: refusal };
    }
    const describe = (item: unknown): Record<string, unknown> => {
      if (isOrderLike(item)) {
        return {
          order_id: item.order_id,
          status: this.#currentStatus(record.account_id, item.order_id, item.status as OrderStatus),
        };
      }
      const failed = item as {
        error?: { code?: unknown; message?: unknown };
        order_id?: unknown;
        client_order_id?: unknown;
      };
      return {
        order_id: failed.order_id ?? null,
        client_order_id: failed.client_order_id ?? null,
        status: 'REJECTED',
        error: {
          code: failed.error?.code ?? 'UNKNOWN',
          message: failed.error?.message ?? '',
        },
      };
    };
    switch (record.command_type) {
      case 'order.batch':
      case 'order.cancel_all':
        return { orders: resultItems(record.body).map(describe) };
      case 'cancel_all_after.set':
        return {
          deadline_at: (record.body as { deadline_at?: unknown } | null)?.deadline_at ?? null,
        };
      default:
        return describe(record.body);
    }
  }
}

function watchKey(accountId: string, orderId: string): string {
  return `${accountId}\n${orderId}`;
}
