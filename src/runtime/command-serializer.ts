/**
 * The shared command serializer of `ExecutionVenue` implementations (`venue.ts`): a command is
 * checked against its endpoint's schema (defaults applied), normalized and written as JSON text;
 * its UTF-8 bytes and their hash are made once, when first read (`LazyPreparedCommand`). Checked bodies are cached by shape, so a simulation and
 * its placement, or a quote placed again at another price, are checked once.
 */
import type { z } from 'zod';
import { isPaperbotError, PaperbotError } from '../core/errors.ts';
import {
  AmendOrderRequest,
  buildPath,
  CancelAllAfterRequest,
  CancelAllRequest,
  CancelOrderRequest,
  ClosePositionRequest,
  endpoints,
  IDENTIFIER_PATTERN,
  matchEndpoint,
  normalizeAmendOrderRequest,
  normalizeClosePositionRequest,
  normalizeOrderRequest,
  OrderRequest,
  toServiceIssues,
} from '../protocol/index.ts';
import { bodySha256Hex, preparedCommand } from '../signing/index.ts';
import { ShapeCache, shapeToken, UNCACHEABLE } from './shape-key.ts';
import type { CommandEndpoint, PreparedCommand, VenueCommand, VenueCommandOf } from './venue.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

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
 * The token of one field of a body in its shape (`shape-key.ts`): its ids stand for any valid
 * id when they would pass their schema (`RequestId`, `ClientOrderId`: length and pattern), and
 * canonical amounts for any (`isAnyAmount`); `UNCACHEABLE` when the value is not plain data or
 * an id would not pass: such bodies always get the full check.
 */
function bodyFieldToken(endpoint: CommandEndpoint, name: string, value: unknown): unknown {
  if (name === 'request_id' || name === 'client_order_id') {
    const [shortest, longest] = name === 'request_id' ? REQUEST_ID_LENGTH : CLIENT_ORDER_ID_LENGTH;
    if (
      typeof value !== 'string' ||
      value.length < shortest ||
      value.length > longest ||
      !IDENTIFIER_PATTERN.test(value)
    ) {
      return UNCACHEABLE;
    }
    return shapeToken(value, true);
  }
  return shapeToken(value, typeof value === 'string' && isAnyAmount(endpoint, name, value));
}

/** A placement and its simulation take the same body, checked and normalized the same way. */
function shapeRoot(endpoint: CommandEndpoint): CommandEndpoint {
  return endpoint === 'simulateOrder' ? 'placeOrder' : endpoint;
}

function isPlainObject(body: unknown): body is Readonly<Record<string, unknown>> {
  return (
    typeof body === 'object' && body !== null && Object.getPrototypeOf(body) === Object.prototype
  );
}

/** The template of a body of a shape checked before; undefined when none (or not cacheable). */
function cachedTemplate(endpoint: CommandEndpoint, body: unknown): BodyTemplate | undefined {
  if (!isPlainObject(body)) return undefined;
  let node = checkedBodies.child(checkedBodies.start, shapeRoot(endpoint));
  for (const name of Object.keys(body)) {
    if (node === undefined) return undefined;
    const token = bodyFieldToken(endpoint, name, body[name]);
    if (token === UNCACHEABLE) return undefined;
    node = checkedBodies.child(node, name);
    if (node !== undefined) node = checkedBodies.child(node, token);
  }
  return node?.value;
}

/** The body's shape (the path of `ShapeCache.set`), or null when it is not cacheable. */
function bodyShape(endpoint: CommandEndpoint, body: unknown): unknown[] | null {
  if (!isPlainObject(body)) return null;
  const path: unknown[] = [shapeRoot(endpoint)];
  for (const name of Object.keys(body)) {
    const token = bodyFieldToken(endpoint, name, body[name]);
    if (token === UNCACHEABLE) return null;
    path.push(name, token);
  }
  return path;
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
  /**
   * The checked body without its undefined values, keys in order: a body of this shape is a
   * copy of it with its own `fields` put in (a copy of one object keeps its layout, where
   * setting a dozen names one by one made the object anew each time).
   */
  readonly whole: Readonly<Record<string, unknown>>;
}

/**
 * Wire bodies already checked, by shape: a body's check and normalization depend on its fields,
 * not on its ids (no rule of these schemas reads them), so a simulation and its placement, or a
 * quote placed again at the same or another price, are checked once. Bounded.
 */
const checkedBodies = new ShapeCache<BodyTemplate>(1024);

/** The text of a body of `template`'s shape whose own fields hold `values`, in order. */
function fillTemplate(template: BodyTemplate, values: readonly unknown[]): string {
  const { parts } = template;
  let text = parts[0]!;
  for (let index = 0; index < values.length; index++) {
    text += JSON.stringify(values[index]) + parts[index + 1]!;
  }
  return text;
}

/** The values of the template's own fields in `body` (its ids and amounts), in order. */
function ownValues(template: BodyTemplate, body: Readonly<Record<string, unknown>>): unknown[] {
  const values: unknown[] = [];
  for (const name of template.fields) values.push(body[name]);
  return values;
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
  const template = { parts, fields, whole: definedFields(built) };
  return fillTemplate(template, ownValues(template, built)) === text ? template : null;
}

/**
 * The checked body as the object its JSON text encodes (keys in order, no undefined values):
 * what an in-process venue takes instead of parsing the bytes again.
 */
function bodyObject(
  template: BodyTemplate,
  source: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> {
  const body: Record<string, unknown> = { ...template.whole };
  for (const name of template.fields) body[name] = source[name];
  return body;
}

/** A checked body's own copy without undefined values, keys in order (as JSON has it). */
function definedFields(built: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of Object.keys(built)) {
    if (built[name] !== undefined) body[name] = built[name];
  }
  return body;
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

/**
 * The prepared command: for a body of a shape checked before, its template and own values to
 * write the text from when it is first needed (`LazyPreparedCommand`); else the text itself.
 */
function preparedOf<E extends CommandEndpoint>(command: VenueCommandOf<E>): PreparedCommand<E> {
  const template = cachedTemplate(command.endpoint, command.body);
  const source = command.body as Readonly<Record<string, unknown>>;
  if (template !== undefined) {
    return new LazyPreparedCommand(
      command.endpoint,
      commandPath(command),
      source.request_id as string,
      bodyObject(template, source) as PreparedCommand<E>['body'],
      template,
      ownValues(template, source),
    );
  }
  const built = checkedWireBody(command);
  const text = JSON.stringify(built.body);
  const shape = bodyShape(command.endpoint, command.body);
  if (shape !== null) {
    const made = templateOf(
      command.endpoint,
      source,
      built.body as Readonly<Record<string, unknown>>,
      text,
    );
    if (made !== null) checkedBodies.set(shape, made);
  }
  return new LazyPreparedCommand(
    command.endpoint,
    built.path,
    built.body.request_id,
    definedFields(built.body as Readonly<Record<string, unknown>>) as PreparedCommand<E>['body'],
    null,
    text,
  );
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
  try {
    return preparedOf(command);
  } catch (error) {
    if (isPaperbotError(error)) throw error;
    throw invalidCommand(
      command.endpoint,
      error instanceof Error ? error.message : 'the command cannot be built',
    );
  }
}

/**
 * A prepared command whose JSON text (for a body of a shape checked before), UTF-8 bytes and
 * their SHA-256 are made together when the bytes or the hash are first read, then kept: the live journal reads them before anything is sent, and a resend sends the
 * same ones; a replay, whose venue takes the checked body and whose journal is in memory, never
 * reads them. The text is final here, so the bytes are those an eager encoding would have made,
 * and they are hashed before anyone holds them (bytes altered later fail the signature check).
 * A class, frozen: an object literal with getters costs about fifteen times as much to make.
 */
class LazyPreparedCommand<E extends CommandEndpoint> implements PreparedCommand<E> {
  readonly endpoint: E;
  readonly path: string;
  readonly requestId: string;
  readonly body: PreparedCommand<E>['body'];
  /** The template the text is written from, with `#values`; null when `#text` is the text. */
  #template: BodyTemplate | null;
  #values: readonly unknown[] | string;
  #bytes: Uint8Array | undefined;
  #sha256 = '';

  /** `values`: the template's own values, or the text itself when `template` is null. */
  constructor(
    endpoint: E,
    path: string,
    requestId: string,
    body: PreparedCommand<E>['body'],
    template: BodyTemplate | null,
    values: readonly unknown[] | string,
  ) {
    this.endpoint = endpoint;
    this.path = path;
    this.requestId = requestId;
    this.body = body;
    this.#template = template;
    this.#values = values;
    Object.freeze(this);
  }

  get bodyBytes(): Uint8Array {
    return this.#bytes ?? this.#make();
  }

  get bodySha256(): string {
    if (this.#bytes === undefined) this.#make();
    return this.#sha256;
  }

  #make(): Uint8Array {
    const template = this.#template;
    const values = this.#values;
    const bytes = encoder.encode(
      template === null ? (values as string) : fillTemplate(template, values as unknown[]),
    );
    this.#template = null;
    this.#values = '';
    this.#sha256 = bodySha256Hex(bytes);
    this.#bytes = bytes;
    return bytes;
  }
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
  return preparedCommand({
    endpoint,
    path,
    requestId,
    body: body as PreparedCommand<E>['body'],
    bodyBytes: Uint8Array.from(bodyBytes),
  });
}
