/**
 * The body of a command checked as the service checks it, for every transport: the table's
 * schema (every issue listed), the Practice refusals of order fields (422 UNSUPPORTED_ORDER),
 * then normalization (`normalizeBody`). Bytes are parsed once here; a transport that already
 * holds a checked body hands that over instead.
 */
import { isAscii } from 'node:buffer';
import {
  type EndpointDefinition,
  type EndpointName,
  invalidJsonIssue,
  OrderRequest,
  practiceUnsupportedError,
  practiceUnsupportedField,
  type ServiceIssue,
  validateWire,
} from '../../protocol/index.ts';
import { normalizeBody } from './endpoints.ts';
import { ServerError } from './errors.ts';
import { plainOrderRequest } from './plain-order.ts';

const ORDER_BODIES: ReadonlySet<EndpointName> = new Set([
  'placeOrder',
  'simulateOrder',
  'amendOrder',
]);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bodies `plainOrderRequest` accepted: already normalized, so `finishBody` returns them. */
const plainBodies = new WeakSet<object>();

function decode(bytes: Uint8Array): string {
  // Bodies are nearly always ASCII, whose Latin-1 reading is their UTF-8 reading; anything else
  // (a byte order mark included, which the decoder drops) goes through the strict decoder.
  if (isAscii(bytes)) {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  }
  return utf8.decode(bytes);
}

function parseJson(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(decode(bytes)) };
  } catch {
    return { ok: false };
  }
}

/**
 * The parsed body (null for an endpoint without one), or the issues found; `issues` collects
 * them so a transport can list them beside its own (path and query).
 */
export function parseBody(
  endpoint: EndpointDefinition,
  bytes: Uint8Array,
  issues: ServiceIssue[],
): unknown {
  if (endpoint.body === null) {
    if (bytes.length > 0) {
      issues.push({
        type: 'extra_forbidden',
        loc: ['body'],
        msg: 'This endpoint takes no request body',
      });
    }
    return null;
  }
  if (bytes.length === 0) {
    issues.push({ type: 'missing', loc: ['body'], msg: 'Field required' });
    return null;
  }
  const json = parseJson(bytes);
  if (!json.ok) {
    issues.push(invalidJsonIssue());
    return null;
  }
  if (endpoint.body === OrderRequest) {
    const plain = plainOrderRequest(json.value);
    if (plain !== null) {
      plainBodies.add(plain);
      return plain;
    }
  }
  const parsed = validateWire(endpoint.body, json.value, 'body');
  if (parsed.success) return parsed.data;
  issues.push(...parsed.issues);
  return null;
}

/** A parsed body after the Practice refusals, normalized; throws UNSUPPORTED_ORDER. */
export function finishBody(name: EndpointName, body: unknown): unknown {
  if (body === null) return null;
  if (plainBodies.has(body as object)) return body;
  if (ORDER_BODIES.has(name)) {
    const field = practiceUnsupportedField(body);
    if (field !== null) {
      const refusal = practiceUnsupportedError(field);
      throw new ServerError(refusal.code, refusal.message, { details: { ...refusal.details } });
    }
  }
  return normalizeBody(name, body);
}
