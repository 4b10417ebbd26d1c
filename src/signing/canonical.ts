/**
 * The SVC1 signing inputs (contract section 1 and section 4): the exact bytes that are signed.
 * Every field is checked before it is joined, because a field holding a line feed would let one
 * set of fields be read back as another.
 */
import { createHash, hash } from 'node:crypto';
import { PaperbotError } from '../core/errors.ts';
import { utf8Bytes } from './encoding.ts';

export const SIGNATURE_VERSION = 'SVC1';
export const WEBSOCKET_SIGNATURE_PREFIX = 'SVC1-WS';

export const NONCE_MIN_LENGTH = 16;
export const NONCE_MAX_LENGTH = 64;
export const KEY_ID_MAX_LENGTH = 128;
export const CHALLENGE_MAX_LENGTH = 256;
export const SCOPE_MAX_LENGTH = 64;

const noncePattern = /^[A-Za-z0-9_-]{16,64}$/;
const timestampPattern = /^(?:0|[1-9][0-9]*)$/;
// RFC 9110 token characters: what an HTTP method may be made of.
const methodPattern = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Visible ASCII only: a target is sent percent-encoded, never with spaces, controls or a fragment.
const targetPattern = /^\/[\x21-\x22\x24-\x7e]*$/;
const visibleAsciiPattern = /^[\x21-\x7e]+$/;
const scopePattern = /^[\x21-\x2b\x2d-\x7e]+$/;

export function isValidNonce(nonce: string): boolean {
  return noncePattern.test(nonce);
}

export function isValidKeyId(keyId: string): boolean {
  return keyId.length <= KEY_ID_MAX_LENGTH && visibleAsciiPattern.test(keyId);
}

export function isValidMethod(method: string): boolean {
  return methodPattern.test(method);
}

export function isValidTarget(target: string): boolean {
  return targetPattern.test(target);
}

export function isValidChallenge(challenge: string): boolean {
  return challenge.length <= CHALLENGE_MAX_LENGTH && visibleAsciiPattern.test(challenge);
}

export function isValidScope(scope: string): boolean {
  return scope.length <= SCOPE_MAX_LENGTH && scopePattern.test(scope);
}

export function isValidTimestampMs(timestampMs: number): boolean {
  return Number.isSafeInteger(timestampMs) && timestampMs >= 0;
}

/**
 * Parses an `SVC-TIMESTAMP` header value: decimal digits, no sign, no leading zeros, a safe
 * integer. Returns null for anything else.
 */
export function parseTimestampHeader(value: string): number | null {
  if (!timestampPattern.test(value) || value.length > 16) return null;
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : null;
}

export function formatTimestamp(timestampMs: number): string {
  if (!isValidTimestampMs(timestampMs)) {
    throw invalidField('timestampMs', 'must be a non-negative safe integer of milliseconds');
  }
  return String(timestampMs);
}

const emptyBodyHash = createHash('sha256').digest('hex');

/** Lower-case hex SHA-256 of the exact body bytes; the hash of the empty string without a body. */
export function bodySha256Hex(body: Uint8Array | null | undefined): string {
  if (body === null || body === undefined || body.byteLength === 0) return emptyBodyHash;
  // The one-shot hash: the same digest without a Hash object per request.
  return hash('sha256', body, 'hex');
}

export interface CanonicalRequestFields {
  readonly method: string;
  /** Path, then `?` and the query string if there is one, exactly as sent. */
  readonly target: string;
  readonly keyId: string;
  readonly timestampMs: number;
  readonly nonce: string;
  /** The exact body bytes sent; null or absent when there is no body. */
  readonly body?: Uint8Array | null;
  /** The body's hash when the caller has it already (a prepared command): not computed again. */
  readonly bodySha256?: string;
}

/**
 * The SVC1 request signing input as text. Methods are upper-cased here, so `post` and `POST`
 * sign the same; HTTP servers hand methods over upper-case anyway.
 */
export function buildCanonicalRequestText(fields: CanonicalRequestFields): string {
  if (!isValidMethod(fields.method)) {
    throw invalidField('method', 'must be an HTTP token');
  }
  if (!isValidTarget(fields.target)) {
    throw invalidField(
      'target',
      'must start with "/" and hold only visible ASCII characters, without "#"',
    );
  }
  checkKeyId(fields.keyId);
  checkNonce(fields.nonce);
  return [
    SIGNATURE_VERSION,
    fields.method.toUpperCase(),
    fields.target,
    fields.keyId,
    formatTimestamp(fields.timestampMs),
    fields.nonce,
    fields.bodySha256 ?? bodySha256Hex(fields.body),
  ].join('\n');
}

export function buildCanonicalRequestInput(fields: CanonicalRequestFields): Uint8Array {
  return utf8Bytes(buildCanonicalRequestText(fields));
}

export interface WebSocketAuthFields {
  /** The challenge from the server's first frame on this connection. */
  readonly challenge: string;
  readonly keyId: string;
  readonly timestampMs: number;
  readonly nonce: string;
  readonly scopes: readonly string[];
  /** The last private sequence the client processed; 0 when it has processed none. */
  readonly lastSequence: number;
}

export function buildWebSocketAuthText(fields: WebSocketAuthFields): string {
  if (!isValidChallenge(fields.challenge)) {
    throw invalidField('challenge', 'must be 1 to 256 visible ASCII characters');
  }
  checkKeyId(fields.keyId);
  checkNonce(fields.nonce);
  fields.scopes.forEach((scope, index) => {
    if (!isValidScope(scope)) {
      throw invalidField(
        `scopes.${index}`,
        'must be 1 to 64 visible ASCII characters other than ","',
      );
    }
  });
  if (!isValidTimestampMs(fields.lastSequence)) {
    throw invalidField('lastSequence', 'must be a non-negative safe integer');
  }
  return [
    WEBSOCKET_SIGNATURE_PREFIX,
    fields.challenge,
    fields.keyId,
    formatTimestamp(fields.timestampMs),
    fields.nonce,
    fields.scopes.join(','),
    String(fields.lastSequence),
  ].join('\n');
}

export function buildWebSocketAuthInput(fields: WebSocketAuthFields): Uint8Array {
  return utf8Bytes(buildWebSocketAuthText(fields));
}

function checkKeyId(keyId: string): void {
  if (!isValidKeyId(keyId)) {
    throw invalidField('keyId', 'must be 1 to 128 visible ASCII characters');
  }
}

function checkNonce(nonce: string): void {
  if (!isValidNonce(nonce)) {
    throw invalidField('nonce', 'must be 16 to 64 characters of A-Z a-z 0-9 _ -');
  }
}

function invalidField(field: string, problem: string): PaperbotError {
  return new PaperbotError('SIGNING_INPUT_INVALID', `signing input field ${field} ${problem}`, {
    details: { field },
  });
}
