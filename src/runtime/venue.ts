/**
 * The venue as the runtime's execution side sees it. The live client (through an adapter), the
 * emulator in-process and the replay venue all implement `ExecutionVenue`, so the executor,
 * order tracker, reconciler and dead-man heartbeat never know which one they run against
 * (design: "Live trading and replay differ only in the clock and the venue").
 *
 * Mutations go in two steps. `prepare` serializes a command once; the executor writes those exact
 * bytes to the journal, then hands the same `PreparedCommand` to `send`. After a timeout or a
 * restart the executor rebuilds the command from the journal with `restore` (no serialization)
 * and resends byte for byte with the same `request_id` (design rules 5 and 6; interface Errors,
 * rule 5). A venue never retries a mutation by itself.
 *
 * This file also holds the one serializer the implementations should share
 * (`prepareVenueCommand` / `restoreVenueCommand`), so that a body journaled by one process is
 * byte-identical to what any venue would send for it.
 */
import { hash } from 'node:crypto';
import type { Observable } from 'rxjs';
import type { z } from 'zod';
import { PaperbotError } from '../core/errors.ts';
import {
  type Account,
  AmendOrderRequest,
  type AmendOrderRequestInput,
  buildPath,
  CancelAllAfterRequest,
  type CancelAllAfterTriggeredEvent,
  CancelAllRequest,
  type CancelAllRequestInput,
  CancelOrderRequest,
  ClosePositionRequest,
  type ClosePositionRequestInput,
  type EndpointName,
  endpoints,
  type Fill,
  type LiquidationEvent,
  type MutationStatus,
  IDENTIFIER_PATTERN,
  matchEndpoint,
  normalizeAmendOrderRequest,
  normalizeClosePositionRequest,
  normalizeOrderRequest,
  type Order,
  OrderRequest,
  type OrderRequestInput,
  type OrderStatusEvent,
  type Position,
  type ResponseOf,
  toServiceIssues,
} from '../protocol/index.ts';
import { fieldKey } from './shape-key.ts';

/** The endpoints the execution side sends bodies to (batch is not used by the runtime). */
export const COMMAND_ENDPOINTS = [
  'placeOrder',
  'simulateOrder',
  'amendOrder',
  'cancelOrder',
  'cancelAllOrders',
  'closePosition',
  'setCancelAllAfter',
] as const satisfies readonly EndpointName[];
export type CommandEndpoint = (typeof COMMAND_ENDPOINTS)[number];

export function isCommandEndpoint(value: string): value is CommandEndpoint {
  return (COMMAND_ENDPOINTS as readonly string[]).includes(value);
}

/** A command before serialization: the endpoint, its path parameters and its body. */
export type VenueCommand =
  | { readonly endpoint: 'placeOrder'; readonly body: OrderRequestInput }
  | { readonly endpoint: 'simulateOrder'; readonly body: OrderRequestInput }
  | {
      readonly endpoint: 'amendOrder';
      readonly params: { readonly order_id: string };
      readonly body: AmendOrderRequestInput;
    }
  | {
      readonly endpoint: 'cancelOrder';
      readonly params: { readonly order_id: string };
      readonly body: CancelOrderRequest;
    }
  | {
      readonly endpoint: 'cancelAllOrders';
      readonly body: CancelAllRequestInput;
    }
  | {
      readonly endpoint: 'closePosition';
      readonly params: { readonly position_id: string };
      readonly body: ClosePositionRequestInput;
    }
  | {
      readonly endpoint: 'setCancelAllAfter';
      readonly body: CancelAllAfterRequest;
    };

export type VenueCommandOf<E extends CommandEndpoint> = Extract<VenueCommand, { endpoint: E }>;

/** A serialized command: what is journaled, signed and sent, and resent unchanged. */
export interface PreparedCommand<E extends CommandEndpoint = CommandEndpoint> {
  readonly endpoint: E;
  /** The request path with its parameters encoded, without a query string. */
  readonly path: string;
  /** The body's `request_id`. */
  readonly requestId: string;
  /** The exact UTF-8 JSON body bytes. */
  readonly bodyBytes: Uint8Array;
  /** Lower-case hex SHA-256 of `bodyBytes` (the value the SVC1 signing input carries). */
  readonly bodySha256: string;
}

/**
 * Error codes of `send` that leave the outcome unknown: the request may or may not have been
 * processed. Service error codes (the interface's table) arrive as they are, with
 * `details.httpStatus` and `details.serverRequestId` where the venue has them.
 */
export const UNKNOWN_OUTCOME_TRANSPORT_CODES = [
  'REQUEST_TIMEOUT',
  'TRANSPORT_FAILURE',
  'MALFORMED_RESPONSE',
] as const;

/** The stream lost continuity (reconnect without a gap fill, sequence gap, auth loss). */
export interface ResyncSignal {
  readonly reason: string;
  /** Epoch milliseconds on the venue's clock when continuity was lost. */
  readonly at: number;
}

export type RiskEvent = CancelAllAfterTriggeredEvent | LiquidationEvent;

/**
 * One step of the account's private stream as the runtime applies it, in sequence order. `gap`
 * says that events between `after` and `next` will never be delivered (the venue's event log no
 * longer reaches back, or delivery resumed at the account head after a halt): fills among them
 * must be read back over REST.
 */
export type PrivateStreamItem =
  | { readonly kind: 'order'; readonly sequence: number; readonly event: OrderStatusEvent }
  | {
      readonly kind: 'fill';
      readonly sequence: number;
      readonly occurredAt: string;
      readonly fill: Fill;
    }
  /** An event the execution side does not apply (account, positions, risk, unknown types). */
  | { readonly kind: 'other'; readonly sequence: number; readonly occurredAt: string }
  | {
      readonly kind: 'gap';
      /** The last sequence delivered before the gap (null: none yet). */
      readonly after: number | null;
      /**
       * The next sequence that will be delivered (null: not known yet). At or below `after`:
       * the counter went backwards (a reset account) and starts over after `next - 1`.
       */
      readonly next: number | null;
      readonly reason: string;
    };

/** Where a read-back of GET /v1/fills stops. */
export interface FillReadBackStop {
  /** The newest fill known: reading stops once it is met (it is not returned). */
  readonly stopFillId: string | null;
  /** Fills that occurred before this time are not returned, and end the reading. */
  readonly stopOccurredAt: string | null;
  /** Most fills returned; the read ends there, reported incomplete. */
  readonly maximumFills: number;
}

export interface FillReadBack {
  /** Oldest first. */
  readonly fills: readonly Fill[];
  /** False when the read ended at `maximumFills` before reaching the stop. */
  readonly complete: boolean;
}

/**
 * The private stream with its sequences, for a venue whose events can be resumed after a
 * restart (the live service). The runtime keeps the highest sequence applied in its journal and
 * the caller resumes the stream after it; the venue hands on every event from there exactly
 * once, buffering (bounded) until the first subscriber.
 */
export interface PrivateStreamFeed {
  /** Orders, fills, other events and gaps, in sequence order; replays what arrived before. */
  readonly items$: Observable<PrivateStreamItem>;
  /** GET /v1/fills back to the stop (bounded), every page of it. */
  readFillsBack(stop: FillReadBackStop): Promise<FillReadBack>;
}

export interface ExecutionVenue {
  /**
   * True when `send` stops its transport work on an aborted signal (a network venue). Callers
   * then pass a signal that aborts when they give up waiting; to other venues they pass none
   * (giving up is the caller's own timer either way).
   */
  readonly abortable?: boolean;
  /** Validates and serializes a command once. Throws `INVALID_COMMAND` with `details.issues`. */
  prepare<E extends CommandEndpoint>(command: VenueCommandOf<E>): PreparedCommand<E>;
  /** Rebuilds a command from journaled bytes, without re-serializing them. */
  restore<E extends CommandEndpoint>(
    endpoint: E,
    path: string,
    bodyBytes: Uint8Array,
  ): PreparedCommand<E>;
  /**
   * Sends the exact bytes once (no transport retries). Resolves to the parsed success response;
   * rejects with a PaperbotError whose `code` is the service's error code (with
   * `details.httpStatus`) or one of `UNKNOWN_OUTCOME_TRANSPORT_CODES`. `timeoutMs` replaces the
   * transport's own time limit for this call: operator commands (the dead-man heartbeat, the
   * shutdown) choose theirs apart from order flow, and a slow venue must not cut them short.
   */
  send<E extends CommandEndpoint>(
    prepared: PreparedCommand<E>,
    signal?: AbortSignal,
    timeoutMs?: number,
  ): Promise<ResponseOf<E>>;

  /** GET /v1/requests/{id}; rejects with `ORDER_NOT_FOUND` when the service never saw it. */
  getRequest(requestId: string): Promise<MutationStatus>;
  getOrder(orderId: string): Promise<Order>;
  getOrderByClientId(clientOrderId: string): Promise<Order>;
  /** Every active order of the account (PENDING, SUBMITTED, OPEN, PARTIALLY_FILLED, UNKNOWN). */
  listOpenOrders(): Promise<Order[]>;
  /** Every position of the account (all pages). */
  listPositions(): Promise<Position[]>;
  getAccount(): Promise<Account>;

  /** `authoritative_status` events of the orders channel, in sequence order. */
  readonly orderEvents$: Observable<OrderStatusEvent>;
  /** Fills as the fills channel delivers them; may repeat after a reconnect. */
  readonly fills$: Observable<Fill>;
  /** Risk channel events (`cancel_all_after.triggered`, `liquidation`). */
  readonly riskEvents$: Observable<RiskEvent>;
  /** Emits whenever private-stream continuity was lost; consumers fail closed until reconciled. */
  readonly resync$: Observable<ResyncSignal>;
  /**
   * The private stream with its sequences, where the venue has one that survives a restart.
   * When present, the order tracker takes order events and fills from here (not from
   * `orderEvents$` and `fills$`) and applies each exactly once by sequence and `fill_id`.
   */
  readonly privateStream?: PrivateStreamFeed;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function sha256Hex(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'hex');
}

function invalidCommand(endpoint: CommandEndpoint, message: string, issues: unknown[] = []) {
  return new PaperbotError('INVALID_COMMAND', `${endpoint}: ${message}`, {
    details: { endpoint, issues },
  });
}

function parseBody<S extends z.ZodType>(
  schema: S,
  endpoint: CommandEndpoint,
  body: unknown,
): z.output<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw invalidCommand(
      endpoint,
      'the body does not match the endpoint contract',
      toServiceIssues(parsed.error, 'body', body),
    );
  }
  return parsed.data;
}

/**
 * The ids of a body, checked on their own (as `RequestId` and `ClientOrderId` do: length and
 * pattern), so bodies differing only in them share a key.
 */
const REQUEST_ID_LENGTH = [8, 80] as const;
const CLIENT_ORDER_ID_LENGTH = [1, 100] as const;

/**
 * Canonical positive decimal strings (no sign, no leading or trailing zeros, no bare dot, not
 * zero): `Price` accepts every one and normalizes it to itself. `Quantity` too while below its
 * bound of 1000000000 (at most nine integer digits).
 */
const CANONICAL_PRICE = /^(?:[1-9]\d*(?:\.\d*[1-9])?|0\.\d*[1-9])$/;
const CANONICAL_QUANTITY = /^(?:[1-9]\d{0,8}(?:\.\d*[1-9])?|0\.\d*[1-9])$/;

/**
 * Whether `value` can stand in the key as "some canonical amount": an order's price and quantity
 * are checked field by field (the cross-field rules only ask whether a price is present), so
 * bodies differing only in canonical amounts there pass or fail together and normalize to the
 * same body with their own amounts. A quote at a new price then needs no full check.
 */
function isAnyAmount(endpoint: CommandEndpoint, name: string, value: string): boolean {
  if (endpoint !== 'placeOrder' && endpoint !== 'simulateOrder') return false;
  if (name === 'price') return CANONICAL_PRICE.test(value);
  if (name === 'quantity') return CANONICAL_QUANTITY.test(value);
  return false;
}

/**
 * A key for everything in `body` but its ids (and canonical amounts, see `isAnyAmount`), in key
 * order, or null when the body is not plain data (strings, finite numbers, booleans, null,
 * undefined) or an id would not pass its schema (`RequestId`, `ClientOrderId`: length and
 * pattern): such bodies always get the full check.
 */
function bodyKey(endpoint: CommandEndpoint, body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  if (Object.getPrototypeOf(body) !== Object.prototype) return null;
  // A placement and its simulation take the same body, checked and normalized the same way.
  let key: string = endpoint === 'simulateOrder' ? 'placeOrder' : endpoint;
  const fields = body as Readonly<Record<string, unknown>>;
  for (const name of Object.keys(fields)) {
    const value = fields[name];
    if (name === 'request_id' || name === 'client_order_id') {
      const [shortest, longest] =
        name === 'request_id' ? REQUEST_ID_LENGTH : CLIENT_ORDER_ID_LENGTH;
      if (
        typeof value !== 'string' ||
        value.length < shortest ||
        value.length > longest ||
        !IDENTIFIER_PATTERN.test(value)
      ) {
        return null;
      }
      key += `|${name}`;
      continue;
    }
    const part = fieldKey(
      name,
      value,
      typeof value === 'string' && isAnyAmount(endpoint, name, value),
    );
    if (part === null) return null;
    key += part;
  }
  return key;
}

/**
 * A checked body as JSON text with gaps: `parts[0]`, the JSON of the body's own `fields[0]`,
 * `parts[1]`, and so on. The fields are its ids, and its amounts when they stood in the key as
 * "some canonical amount" (`isAnyAmount`): the values of the body at hand go there, each
 * already known valid and normalized as it is.
 */
interface BodyTemplate {
  readonly parts: readonly string[];
  readonly fields: readonly string[];
}

/**
 * Wire bodies already checked, by `bodyKey`: a body's check and normalization depend on its
 * fields, not on its ids (no rule of these schemas reads them), so a simulation and its
 * placement, or a quote placed again at the same or another price, are checked once. Bounded,
 * oldest out.
 */
const checkedBodies = new Map<string, BodyTemplate>();
const CHECKED_BODIES = 1024;

function fillTemplate(template: BodyTemplate, body: Readonly<Record<string, unknown>>): string {
  const { parts, fields } = template;
  let text = parts[0]!;
  for (let index = 0; index < fields.length; index++) {
    text += JSON.stringify(body[fields[index]!]) + parts[index + 1]!;
  }
  return text;
}

/**
 * The template of a body just checked, or null when filling it with that body's own values
 * would not give back `text` exactly (then the body is not cached).
 */
function templateOf(
  endpoint: CommandEndpoint,
  source: Readonly<Record<string, unknown>>,
  built: Readonly<Record<string, unknown>>,
  text: string,
): BodyTemplate | null {
  const parts: string[] = [];
  const fields: string[] = [];
  let part = '{';
  for (const name of Object.keys(built)) {
    const value = built[name];
    if (value === undefined) continue;
    if (part !== '{') part += ',';
    part += `${JSON.stringify(name)}:`;
    const given = source[name];
    const own =
      name === 'request_id' ||
      name === 'client_order_id' ||
      (typeof given === 'string' && isAnyAmount(endpoint, name, given));
    if (own) {
      parts.push(part);
      fields.push(name);
      part = '';
    } else {
      part += JSON.stringify(value);
    }
  }
  parts.push(`${part}}`);
  const template = { parts, fields };
  return fillTemplate(template, built) === text ? template : null;
}

/** The paths of endpoints without path parameters, built once. */
const fixedPaths = new Map<CommandEndpoint, string>();

function commandPath(command: VenueCommand): string {
  switch (command.endpoint) {
    case 'amendOrder':
    case 'cancelOrder':
      return buildPath(command.endpoint, { order_id: command.params.order_id });
    case 'closePosition':
      return buildPath(command.endpoint, { position_id: command.params.position_id });
    default: {
      let path = fixedPaths.get(command.endpoint);
      if (path === undefined) {
        path = buildPath(command.endpoint);
        fixedPaths.set(command.endpoint, path);
      }
      return path;
    }
  }
}

/** The command's path, its body's request id and the body's JSON text, checked. */
function wireText(command: VenueCommand): { path: string; requestId: string; text: string } {
  const key = bodyKey(command.endpoint, command.body);
  const template = key === null ? undefined : checkedBodies.get(key);
  const source = command.body as Readonly<Record<string, unknown>>;
  if (template !== undefined) {
    return {
      path: commandPath(command),
      requestId: source.request_id as string,
      text: fillTemplate(template, source),
    };
  }
  const built = checkedWireBody(command);
  const text = JSON.stringify(built.body);
  if (key !== null) {
    const made = templateOf(
      command.endpoint,
      source,
      built.body as Readonly<Record<string, unknown>>,
      text,
    );
    if (made !== null) {
      if (checkedBodies.size >= CHECKED_BODIES) {
        const oldest = checkedBodies.keys().next();
        if (oldest.done !== true) checkedBodies.delete(oldest.value);
      }
      checkedBodies.set(key, made);
    }
  }
  return { path: built.path, requestId: built.body.request_id, text };
}

function checkedWireBody(command: VenueCommand): {
  path: string;
  body: { request_id: string };
} {
  const endpoint = command.endpoint;
  switch (endpoint) {
    case 'placeOrder':
    case 'simulateOrder':
      return {
        path: buildPath(endpoint),
        body: normalizeOrderRequest(parseBody(OrderRequest, endpoint, command.body)),
      };
    case 'amendOrder':
      return {
        path: buildPath(endpoint, { order_id: command.params.order_id }),
        body: normalizeAmendOrderRequest(parseBody(AmendOrderRequest, endpoint, command.body)),
      };
    case 'cancelOrder':
      return {
        path: buildPath(endpoint, { order_id: command.params.order_id }),
        body: parseBody(CancelOrderRequest, endpoint, command.body),
      };
    case 'cancelAllOrders':
      return {
        path: buildPath(endpoint),
        body: parseBody(CancelAllRequest, endpoint, command.body),
      };
    case 'closePosition':
      return {
        path: buildPath(endpoint, { position_id: command.params.position_id }),
        body: normalizeClosePositionRequest(
          parseBody(ClosePositionRequest, endpoint, command.body),
        ),
      };
    case 'setCancelAllAfter':
      return {
        path: buildPath(endpoint),
        body: parseBody(CancelAllAfterRequest, endpoint, command.body),
      };
  }
}

/**
 * The shared serializer: validates the body against the endpoint's schema (defaults applied),
 * normalizes numbers to canonical decimal strings and encodes JSON as UTF-8, once.
 */
export function prepareVenueCommand<E extends CommandEndpoint>(
  command: VenueCommandOf<E>,
): PreparedCommand<E> {
  let built: { path: string; requestId: string; text: string };
  try {
    built = wireText(command);
  } catch (error) {
    if (error instanceof PaperbotError) throw error;
    throw invalidCommand(
      command.endpoint,
      error instanceof Error ? error.message : 'the command cannot be built',
    );
  }
  const bodyBytes = encoder.encode(built.text);
  return Object.freeze({
    endpoint: command.endpoint,
    path: built.path,
    requestId: built.requestId,
    bodyBytes,
    bodySha256: sha256Hex(bodyBytes),
  });
}

/**
 * Rebuilds a prepared command from journaled bytes. Checks that the path addresses `endpoint`
 * and that the bytes are still a valid body (a damaged journal must not be sent), but keeps the
 * bytes exactly as stored.
 */
export function restoreVenueCommand<E extends CommandEndpoint>(
  endpoint: E,
  path: string,
  bodyBytes: Uint8Array,
): PreparedCommand<E> {
  const match = matchEndpoint(endpoints[endpoint].method, path);
  if (match === null || match.name !== endpoint) {
    throw invalidCommand(endpoint, `the journaled path ${path} does not address this endpoint`);
  }
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(bodyBytes));
  } catch (error) {
    throw invalidCommand(endpoint, 'the journaled body is not UTF-8 JSON', [String(error)]);
  }
  const parsed = endpoints[endpoint].body.safeParse(body);
  if (!parsed.success) {
    throw invalidCommand(
      endpoint,
      'the journaled body no longer matches the endpoint contract',
      toServiceIssues(parsed.error, 'body', body),
    );
  }
  const requestId = (body as { request_id?: unknown }).request_id;
  if (typeof requestId !== 'string') {
    throw invalidCommand(endpoint, 'the journaled body has no request_id');
  }
  const bytes = Uint8Array.from(bodyBytes);
  return Object.freeze({
    endpoint,
    path,
    requestId,
    bodyBytes: bytes,
    bodySha256: sha256Hex(bytes),
  });
}
