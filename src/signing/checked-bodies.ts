/**
 * The check-once-per-shape memory of the command serializer (`command.ts`): a body's check and
 * normalization depend on its fields, not on its ids (no rule of the body schemas reads them),
 * so a simulation and its placement, or a quote placed again at the same or another price, are
 * checked once. A body of a shape checked before is written from its template with its own ids
 * and amounts put in; the template is kept only when that gives back the checked text exactly.
 */
import { ShapeCache, shapeToken, UNCACHEABLE } from '../core/shape-key.ts';
import { IDENTIFIER_PATTERN } from '../protocol/index.ts';

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
function isAnyAmount(endpoint: string, name: string, value: string): boolean {
  if (endpoint !== 'placeOrder' && endpoint !== 'simulateOrder') return false;
  if (name === 'price') return CANONICAL_PRICE.test(value);
  if (name === 'quantity') return CANONICAL_QUANTITY.test(value);
  return false;
}

/**
 * The token of one field of a body in its shape (`core/shape-key.ts`): its ids stand for any
 * valid id when they would pass their schema (`RequestId`, `ClientOrderId`: length and
 * pattern), and canonical amounts for any (`isAnyAmount`); `UNCACHEABLE` when the value is not
 * plain data or an id would not pass: such bodies always get the full check.
 */
function bodyFieldToken(endpoint: string, name: string, value: unknown): unknown {
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
function shapeRoot(endpoint: string): string {
  return endpoint === 'simulateOrder' ? 'placeOrder' : endpoint;
}

function isPlainObject(body: unknown): body is Readonly<Record<string, unknown>> {
  return (
    typeof body === 'object' && body !== null && Object.getPrototypeOf(body) === Object.prototype
  );
}

/**
 * A checked body as JSON text with gaps: `parts[0]`, the JSON of the body's own `fields[0]`,
 * `parts[1]`, and so on. The fields are its ids, and its amounts when they stood in the key as
 * "some canonical amount" (`isAnyAmount`): the values of the body at hand go there, each
 * already known valid and normalized as it is.
 */
export interface BodyTemplate {
  readonly parts: readonly string[];
  readonly fields: readonly string[];
  /**
   * The checked body without its undefined values, keys in order: a body of this shape is a
   * copy of it with its own `fields` put in (a copy of one object keeps its layout, where
   * setting a dozen names one by one made the object anew each time).
   */
  readonly whole: Readonly<Record<string, unknown>>;
}

/** Wire bodies already checked, by shape. Bounded. */
const checkedBodies = new ShapeCache<BodyTemplate>(1024);

/** The template of a body of a shape checked before; undefined when none (or not cacheable). */
export function cachedTemplate(endpoint: string, body: unknown): BodyTemplate | undefined {
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
function bodyShape(endpoint: string, body: unknown): unknown[] | null {
  if (!isPlainObject(body)) return null;
  const path: unknown[] = [shapeRoot(endpoint)];
  for (const name of Object.keys(body)) {
    const token = bodyFieldToken(endpoint, name, body[name]);
    if (token === UNCACHEABLE) return null;
    path.push(name, token);
  }
  return path;
}

/** The text of a body of `template`'s shape whose own fields hold `values`, in order. */
export function fillTemplate(template: BodyTemplate, values: readonly unknown[]): string {
  const { parts } = template;
  let text = parts[0]!;
  for (let index = 0; index < values.length; index++) {
    text += JSON.stringify(values[index]) + parts[index + 1]!;
  }
  return text;
}

/** The values of the template's own fields in `body` (its ids and amounts), in order. */
export function ownValues(
  template: BodyTemplate,
  body: Readonly<Record<string, unknown>>,
): unknown[] {
  const values: unknown[] = [];
  for (const name of template.fields) values.push(body[name]);
  return values;
}

/**
 * The template of a body just checked, or null when filling it with that body's own values
 * would not give back `text` exactly (then the body is not cached).
 */
function templateOf(
  endpoint: string,
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

/** Keeps the template of a body just checked, when its shape is cacheable and it fits. */
export function rememberCheckedBody(
  endpoint: string,
  source: unknown,
  built: Readonly<Record<string, unknown>>,
  text: string,
): void {
  const shape = bodyShape(endpoint, source);
  if (shape === null) return;
  const made = templateOf(endpoint, source as Readonly<Record<string, unknown>>, built, text);
  if (made !== null) checkedBodies.set(shape, made);
}

/**
 * The checked body as the object its JSON text encodes (keys in order, no undefined values):
 * what an in-process venue takes instead of parsing the bytes again.
 */
export function bodyObject(
  template: BodyTemplate,
  source: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> {
  const body: Record<string, unknown> = { ...template.whole };
  for (const name of template.fields) body[name] = source[name];
  return body;
}

/** A checked body's own copy without undefined values, keys in order (as JSON has it). */
export function definedFields(built: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of Object.keys(built)) {
    if (built[name] !== undefined) body[name] = built[name];
  }
  return body;
}
