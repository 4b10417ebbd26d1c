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
import { hash } from 'node:crypto';
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

/** A record as the core hands it to the ledger: its fingerprint may not be hashed yet. */
export type NewIdempotencyRecord = Omit<IdempotencyRecord, 'fingerprint'> & {
  readonly fingerprint: string | LazyFingerprint;
};

// An integer-like key ("0", "42"): JSON.stringify lists these first, in numeric order.
const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,9})$/;
const MAX_ARRAY_INDEX = 4_294_967_294;

function isArrayIndex(key: string): boolean {
  return ARRAY_INDEX.test(key) && Number(key) <= MAX_ARRAY_INDEX;
}

/**
 * Object keys in the order JSON.stringify lists a plain object built from the sorted keys:
 * array-index keys first in numeric order, then the other keys sorted by code unit.
 */
function canonicalKeys(value: object): string[] {
  const keys = Object.keys(value).sort();
  if (!keys.some(isArrayIndex)) return keys;
  const indices = keys.filter(isArrayIndex).sort((left, right) => Number(left) - Number(right));
  return [...indices, ...keys.filter((key) => !isArrayIndex(key))];
}

/**
 * The canonical JSON of `value`, or undefined for what JSON leaves out of an object (undefined,
 * functions, symbols).
 */
function canonicalText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) {
    return JSON.stringify(value) as string | undefined;
  }
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) text += ',';
      text += canonicalText(value[index] ?? null) ?? 'null';
    }
    return `${text}]`;
  }
  let text = '{';
  const record = value as Record<string, unknown>;
  for (const key of canonicalKeys(value)) {
    const member = record[key];
    if (member === undefined || member === null) continue;
    const memberText = canonicalText(member);
    if (memberText === undefined) continue;
    if (text.length > 1) text += ',';
    text += `${JSON.stringify(key)}:${memberText}`;
  }
  return `${text}}`;
}

/**
 * JSON with sorted keys and without null or absent members, written in one pass: fingerprints
 * are computed for every mutation, and rebuilding sorted copies of the body cost more than the
 * hash. The text is the same as `JSON.stringify` of such a sorted copy.
 */
export function canonicalJson(value: unknown): string {
  return canonicalText(value) as string;
}

export function fingerprintOf(
  endpoint: EndpointName,
  pathParams: Readonly<Record<string, string>>,
  normalizedBody: unknown,
): string {
  return hash('sha256', canonicalJson({ endpoint, path: pathParams, body: normalizedBody }), 'hex');
}

/**
 * A command's fingerprint, hashed when first read: by a repeated request id (to compare), or by
 * a store serializing the record (`toJSON`, so the stored text holds the hex string as before).
 * A replay's window keeps records unserialized and almost never reads one back, so most
 * fingerprints of a replay are never hashed. The command's parts are the checked objects of the
 * transport, which no one changes after handing them over.
 */
export class LazyFingerprint {
  #value: string | undefined;
  #endpoint: EndpointName;
  #params: Readonly<Record<string, string>> | null;
  #body: unknown;

  constructor(endpoint: EndpointName, params: Readonly<Record<string, string>>, body: unknown) {
    this.#endpoint = endpoint;
    this.#params = params;
    this.#body = body;
  }

  get value(): string {
    if (this.#value === undefined) {
      this.#value = fingerprintOf(this.#endpoint, this.#params!, this.#body);
      // The parts are not needed any more: a kept record holds the hash only.
      this.#params = null;
      this.#body = null;
    }
    return this.#value;
  }

  toJSON(): string {
    return this.value;
  }
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

const NOTHING_TRACKED: readonly TrackedOrder[] = Object.freeze([]);

function criterionOf(record: NewIdempotencyRecord): Criterion {
  return CREATING.has(record.command_type) ? 'left_pending' : 'terminal';
}

/** Whether the record's body is one order (not a batch's or a cancel-all's results). */
function tracksOneOrder(record: NewIdempotencyRecord): boolean {
  return record.command_type !== 'order.batch' && record.command_type !== 'order.cancel_all';
}

function trackedOrders(record: NewIdempotencyRecord): readonly TrackedOrder[] {
  if (record.status >= 400) return NOTHING_TRACKED;
  const criterion = criterionOf(record);
  if (record.command_type !== 'order.batch' && record.command_type !== 'order.cancel_all') {
    const order = record.body;
    return isOrderLike(order)
      ? [{ orderId: order.order_id, criterion, status: order.status as OrderStatus }]
      : NOTHING_TRACKED;
  }
  return resultItems(record.body)
    .filter(isOrderLike)
    .map((order) => ({
      orderId: order.order_id,
      criterion,
      status: order.status as OrderStatus,
    }));
}

function satisfied(criterion: Criterion, status: OrderStatus): boolean {
  return criterion === 'terminal' ? TERMINAL_ORDER_STATUSES.has(status) : status !== 'PENDING';
}

function allSatisfied(tracked: readonly TrackedOrder[]): boolean {
  for (const order of tracked) if (!satisfied(order.criterion, order.status)) return false;
  return true;
}

export interface OrderReader {
  /** The order's current status, or null when it cannot be read. */
  orderStatus(accountId: string, orderId: string): OrderStatus | null;
}

export class IdempotencyLedger {
  readonly #store: Store;
  readonly #orders: OrderReader;
  /**
   * Requests still PENDING, by account and then by the orders they wait on, to stamp
   * `completed_at` when they complete. The records are kept here so an order event does not read
   * the store; two levels of maps, because every private event is looked up here and the ids
   * the engine hands over already carry their hashes, where a joined key would need a new one.
   * An order is almost always waited on by one request, so its requests are a short list, not a
   * map; an account's map stays when empty (accounts are few, and a placement would otherwise
   * make it anew).
   */
  readonly #watchers = new Map<string, Map<string, NewIdempotencyRecord[]>>();
  #lastOccurredText = '';
  #lastOccurredMs: number | null = null;

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

  /**
   * Runs a mutation and the `record` of its outcome so that both are stored or neither: a crash
   * between the engine's commit and the record would leave an order whose request id the
   * service forgot, and a retry of that id would place it again.
   */
  atomically<T>(work: () => T): T {
    return this.#store.atomically(work);
  }

  /**
   * Keeps a first outcome; its completion is stamped now or when its orders move. The record is
   * a new object the ledger owns from here on: its `completed_at` is stamped in place (a copy
   * per stamp was an object of ten members per command), then it is saved again.
   */
  record(record: NewIdempotencyRecord): void {
    // The body was made by the engine just now, so its statuses are current.
    if (tracksOneOrder(record)) {
      // Almost every mutation: one order, followed without building its tracked list.
      const order = record.body;
      if (
        record.status >= 400 ||
        !isOrderLike(order) ||
        satisfied(criterionOf(record), order.status as OrderStatus)
      ) {
        record.completed_at = record.created_at;
        this.#store.saveIdempotency(record.account_id, record.request_id, record);
        return;
      }
      this.#store.saveIdempotency(record.account_id, record.request_id, record);
      this.#watch(record, order.order_id);
      return;
    }
    const tracked = trackedOrders(record);
    if (allSatisfied(tracked)) {
      record.completed_at = record.created_at;
      this.#store.saveIdempotency(record.account_id, record.request_id, record);
      return;
    }
    this.#store.saveIdempotency(record.account_id, record.request_id, record);
    for (const { orderId } of tracked) this.#watch(record, orderId);
  }

  /** Stamps the record's completion when `orderId` moves (see `observe`). */
  #watch(record: NewIdempotencyRecord, orderId: string): void {
    let byOrder = this.#watchers.get(record.account_id);
    if (byOrder === undefined) {
      byOrder = new Map();
      this.#watchers.set(record.account_id, byOrder);
    }
    const requests = byOrder.get(orderId);
    if (requests === undefined) {
      byOrder.set(orderId, [record]);
    } else {
      const same = requests.findIndex((kept) => kept.request_id === record.request_id);
      if (same === -1) requests.push(record);
      else requests[same] = record;
    }
  }

  /** Called for every private event, in sequence order. */
  observe(accountId: string, event: PrivateEvent): void {
    if (event.type !== 'authoritative_status') return;
    const byOrder = this.#watchers.get(accountId);
    const requests = byOrder?.get(event.data.entity_id);
    if (byOrder === undefined || requests === undefined) return;
    const moved = event.data.entity_id;
    // Completed requests leave the list below: a list of one is visited as it is (its one entry
    // removed after the visit ends the loop), longer ones through a copy.
    for (const record of requests.length === 1 ? requests : [...requests]) {
      if (tracksOneOrder(record)) {
        // Watched under its one order, which is the one that moved.
        if (!satisfied(criterionOf(record), event.data.to_state)) continue;
        record.completed_at = this.#occurredAt(event.occurred_at) ?? record.created_at;
        this.#store.saveIdempotency(accountId, record.request_id, record);
        const at = requests.indexOf(record);
        if (at !== -1) requests.splice(at, 1);
        if (requests.length === 0) byOrder.delete(moved);
        continue;
      }
      const tracked = trackedOrders(record);
      const complete = tracked.every((order) =>
        satisfied(
          order.criterion,
          order.orderId === moved
            ? event.data.to_state
            : this.#currentStatus(accountId, order.orderId, 'UNKNOWN'),
        ),
      );
      if (!complete) continue;
      record.completed_at = this.#occurredAt(event.occurred_at) ?? record.created_at;
      this.#store.saveIdempotency(accountId, record.request_id, record);
      for (const order of tracked) {
        const waiting = byOrder.get(order.orderId);
        if (waiting === undefined) continue;
        const at = waiting.indexOf(record);
        if (at !== -1) waiting.splice(at, 1);
        if (waiting.length === 0) byOrder.delete(order.orderId);
      }
    }
  }

  /** The events of one command share their time: the last one parsed is kept. */
  #occurredAt(text: string): number | null {
    if (text !== this.#lastOccurredText) {
      this.#lastOccurredText = text;
      this.#lastOccurredMs = parseTimestamp(text);
    }
    return this.#lastOccurredMs;
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
