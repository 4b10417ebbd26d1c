/**
 * The order body of POST /v1/orders and /v1/orders/simulate checked without zod, for the body
 * every bot sends: known fields only, ids and enums as the schema wants them, amounts as
 * canonical positive decimal strings. Such a body is what `OrderRequest` parses it to (fields in
 * the schema's order, defaults added) and already what `normalizeBody` makes of it, so it is
 * both. Anything else (a number for an amount, an unknown field, a missing or wrong value, a
 * cross-field rule broken, a field the Practice service refuses) gets null, and the caller runs
 * the schema, which finds the same answer or the issues to report. Only the verdict's cost
 * differs: zod's checks of one order cost the emulator about 100 µs of a 600 µs request when
 * requests arrive one at a time (cold caches), this about a tenth of that.
 *
 * test/emulator/service/plain-order.test.ts holds it to the schema: whatever it accepts, the
 * schema accepts with the same output.
 */
import type { OrderRequest } from '../../protocol/index.ts';

const IDENTIFIER = /^[A-Za-z0-9:_-]*$/;
/** A decimal in the canonical spelling (`toDecimalString`), greater than zero. */
const CANONICAL_POSITIVE = /^(?:0\.\d*[1-9]|[1-9]\d*(?:\.\d*[1-9])?)$/;

const SIDES: ReadonlySet<unknown> = new Set(['buy', 'sell']);
const MARGIN_MODES: ReadonlySet<unknown> = new Set(['cross', 'isolated']);

/** The schema's fields, in its order; the output lists them in this order. */
const FIELDS = [
  'request_id',
  'client_order_id',
  'market_id',
  'side',
  'type',
  'quantity',
  'leverage',
  'price',
  'trigger_price',
  'time_in_force',
  'post_only',
  'reduce_only',
  'position_id',
  'margin_mode',
  'max_slippage_percent',
  'expires_at',
] as const;
const KNOWN: ReadonlySet<string> = new Set(FIELDS);

function isIdentifier(value: unknown, min: number, max: number): value is string {
  return (
    typeof value === 'string' &&
    value.length >= min &&
    value.length <= max &&
    IDENTIFIER.test(value)
  );
}

/** A canonical positive decimal string at most `maximum` (an integer), or null for no bound. */
function isPlainAmount(value: unknown, maximum: number | null): value is string {
  if (typeof value !== 'string' || !CANONICAL_POSITIVE.test(value)) return false;
  if (maximum === null) return true;
  const dot = value.indexOf('.');
  const integerDigits = dot < 0 ? value.length : dot;
  // Up to 15 digits the integer part is exact as a number; longer ones go to the schema.
  if (integerDigits > 15) return false;
  const integer = Number(dot < 0 ? value : value.slice(0, dot));
  return integer < maximum || (integer === maximum && dot < 0);
}

function isAbsentOrNull(body: Readonly<Record<string, unknown>>, field: string): boolean {
  return !(field in body) || body[field] === null;
}

/**
 * `body` as `OrderRequest` parses and `normalizeBody` normalizes it, when it is a plain order
 * (see the module comment); null when the schema must decide.
 */
export function plainOrderRequest(body: unknown): OrderRequest | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  if (Object.getPrototypeOf(body) !== Object.prototype) return null;
  const fields = body as Readonly<Record<string, unknown>>;
  for (const key of Object.keys(fields)) if (!KNOWN.has(key)) return null;
  const type = fields.type;
  if (type !== 'limit' && type !== 'market') return null;
  const timeInForce = 'time_in_force' in fields ? fields.time_in_force : 'GTC';
  if (timeInForce !== 'GTC' && timeInForce !== 'IOC') return null;
  const postOnly = 'post_only' in fields ? fields.post_only : false;
  const reduceOnly = 'reduce_only' in fields ? fields.reduce_only : false;
  const marginMode = 'margin_mode' in fields ? fields.margin_mode : 'isolated';
  const leverage = fields.leverage;
  if (
    !isIdentifier(fields.request_id, 8, 80) ||
    !isIdentifier(fields.client_order_id, 1, 100) ||
    typeof fields.market_id !== 'string' ||
    fields.market_id.length < 3 ||
    fields.market_id.length > 40 ||
    !SIDES.has(fields.side) ||
    !isPlainAmount(fields.quantity, 1_000_000_000) ||
    typeof leverage !== 'number' ||
    !Number.isInteger(leverage) ||
    leverage < 1 ||
    leverage > 200 ||
    typeof postOnly !== 'boolean' ||
    typeof reduceOnly !== 'boolean' ||
    !MARGIN_MODES.has(marginMode) ||
    // Refused by the Practice service or rare: the schema and the refusals decide.
    'trigger_price' in fields ||
    'expires_at' in fields
  ) {
    return null;
  }
  if ('position_id' in fields && fields.position_id !== null) {
    const positionId = fields.position_id;
    if (typeof positionId !== 'string' || positionId.length < 8 || positionId.length > 200) {
      return null;
    }
  }
  // The cross-field rules of `OrderRequest`, each only in its passing form.
  if (type === 'limit') {
    if (!isPlainAmount(fields.price, null)) return null;
    if (!isAbsentOrNull(fields, 'max_slippage_percent')) return null;
  } else {
    if (!isAbsentOrNull(fields, 'price')) return null;
    if (!isPlainAmount(fields.max_slippage_percent, 2)) return null;
    if (postOnly) return null;
  }
  if (postOnly && timeInForce !== 'GTC') return null;
  const parsed: Record<string, unknown> = {};
  for (const field of FIELDS) {
    if (field in fields) parsed[field] = fields[field];
    else if (field === 'time_in_force') parsed[field] = 'GTC';
    else if (field === 'post_only' || field === 'reduce_only') parsed[field] = false;
    else if (field === 'margin_mode') parsed[field] = 'isolated';
  }
  return parsed as OrderRequest;
}
