/**
 * Signing under a wire profile: the request signing input and headers, and the WebSocket auth
 * frame's signing input and fields. Under `DEFAULT_WIRE_PROFILE` every function here gives what
 * the SVC1 functions of canonical.ts and headers.ts give (and calls them: the order path keeps
 * its fast path); under another profile the same fields are checked the same way, then formatted
 * and joined as the profile says.
 */
import { PaperbotError } from '../core/errors.ts';
import {
  bodySha256Hex,
  buildCanonicalRequestText,
  buildWebSocketAuthText,
  type CanonicalRequestFields,
  type WebSocketAuthFields,
  isValidChallenge,
  isValidKeyId,
  isValidMethod,
  isValidScope,
  isValidTarget,
  isValidTimestampMs,
} from './canonical.ts';
import { utf8Bytes } from './encoding.ts';
import { type SignRequestOptions, signRequest } from './headers.ts';
import type { Signer } from './signer.ts';
import {
  checkWireNonce,
  encodeSignature,
  formatWireTimestamp,
  generateWireNonce,
} from './wire-format.ts';
import type {
  InputPart,
  RequestInputField,
  WebSocketInputField,
  WireProfile,
} from './wire-profile.ts';

/** What a request's signing input is made of, SVC1's fields. No secret is among them. */
export type SigningInputRequest = CanonicalRequestFields;

/** The request signing input under `profile`, as text. Checks every field first. */
export function buildRequestSigningText(
  profile: WireProfile,
  request: SigningInputRequest,
): string {
  if (profile.isDefault) return buildCanonicalRequestText(request);
  if (!isValidMethod(request.method)) throw invalidField('method', 'must be an HTTP token');
  if (!isValidTarget(request.target)) {
    throw invalidField(
      'target',
      'must start with "/" and hold only visible ASCII characters, without "#"',
    );
  }
  checkKeyId(request.keyId);
  checkWireNonce(profile.nonce.format, request.nonce);
  const queryAt = request.target.indexOf('?');
  const values: Record<RequestInputField, () => string> = {
    version: () => profile.signatureVersion,
    method: () => request.method.toUpperCase(),
    target: () => request.target,
    path: () => (queryAt < 0 ? request.target : request.target.slice(0, queryAt)),
    query: () => (queryAt < 0 ? '' : request.target.slice(queryAt + 1)),
    key_id: () => request.keyId,
    timestamp: () => formatWireTimestamp(profile.timestamp, request.timestampMs),
    nonce: () => request.nonce,
    body_sha256: () => request.bodySha256 ?? bodySha256Hex(request.body),
  };
  return joinParts(profile.requestInput, values);
}

/**
 * The signing input of `request` under `profile`, exactly as it is signed: what `paperbot
 * doctor` shows when a venue refuses a signature. It holds the key id, the timestamp, the nonce
 * and the body's hash, never a private key or a signature.
 */
export function describeSigningInput(profile: WireProfile, request: SigningInputRequest): string {
  return buildRequestSigningText(profile, request);
}

/** `signRequest`'s options; a nonce given is in the profile's format (one is made when absent). */
export type SignRequestWithProfileOptions = SignRequestOptions;

/** The signing headers of a request under `profile`, by the profile's header names. */
export function signRequestWithProfile(
  profile: WireProfile,
  options: SignRequestWithProfileOptions,
): Record<string, string> {
  if (profile.isDefault) return signRequest(options);
  const nonce = options.nonce ?? generateWireNonce(profile.nonce.format, profile.nonce.length);
  const text = buildRequestSigningText(profile, { ...options, nonce });
  const headers: Record<string, string> = {
    [profile.headers.apiKey]: options.keyId,
    [profile.headers.timestamp]: formatWireTimestamp(profile.timestamp, options.timestampMs),
    [profile.headers.nonce]: nonce,
    [profile.headers.signature]: encodeSignature(
      profile.signatureEncoding,
      options.signer.sign(utf8Bytes(text)),
    ),
  };
  if (profile.headers.signatureVersion !== null) {
    headers[profile.headers.signatureVersion] = profile.signatureVersion;
  }
  return headers;
}

/** What a WebSocket auth signing input is made of (its scopes: the venue's names, as sent). */
export type WebSocketSigningInput = WebSocketAuthFields;

/** The WebSocket auth signing input under `profile`, as text. */
export function buildWebSocketSigningText(
  profile: WireProfile,
  fields: WebSocketSigningInput,
): string {
  if (profile.isDefault) return buildWebSocketAuthText(fields);
  if (!isValidChallenge(fields.challenge)) {
    throw invalidField('challenge', 'must be 1 to 256 visible ASCII characters');
  }
  checkKeyId(fields.keyId);
  checkWireNonce(profile.nonce.format, fields.nonce);
  fields.scopes.forEach((scope, index) => {
    if (!isValidScope(scope) || scope.includes(profile.webSocketAuth.scopeSeparator)) {
      throw invalidField(
        `scopes.${index}`,
        'must be 1 to 64 visible ASCII characters without "," or the scope separator',
      );
    }
  });
  if (!isValidTimestampMs(fields.lastSequence)) {
    throw invalidField('lastSequence', 'must be a non-negative safe integer');
  }
  const values: Record<WebSocketInputField, () => string> = {
    prefix: () => profile.webSocketAuth.prefix,
    version: () => profile.signatureVersion,
    challenge: () => fields.challenge,
    key_id: () => fields.keyId,
    timestamp: () => formatWireTimestamp(profile.timestamp, fields.timestampMs),
    nonce: () => fields.nonce,
    scopes: () => fields.scopes.join(profile.webSocketAuth.scopeSeparator),
    last_sequence: () => String(fields.lastSequence),
  };
  return joinParts(profile.webSocketAuth.input, values);
}

/** The WebSocket auth signing input of `fields` under `profile`, for diagnosis. No secret in it. */
export function describeWebSocketSigningInput(
  profile: WireProfile,
  fields: WebSocketSigningInput,
): string {
  return buildWebSocketSigningText(profile, fields);
}

export interface SignWebSocketAuthFrameOptions extends Omit<WebSocketSigningInput, 'nonce'> {
  readonly signer: Signer;
  readonly nonce?: string;
}

/**
 * The signed fields of the `auth` frame under the profile's field names; the caller adds `op`
 * and `request_id`. The timestamp is text in the profile's unit (SVC1: decimal milliseconds).
 */
export function signWebSocketAuthFrame(
  profile: WireProfile,
  options: SignWebSocketAuthFrameOptions,
): Record<string, string | number | string[]> {
  const nonce = options.nonce ?? generateWireNonce(profile.nonce.format, profile.nonce.length);
  const text = buildWebSocketSigningText(profile, { ...options, nonce });
  const names = profile.webSocketAuth.fields;
  return {
    [names.keyId]: options.keyId,
    [names.timestamp]: formatWireTimestamp(profile.timestamp, options.timestampMs),
    [names.nonce]: nonce,
    [names.scopes]: [...options.scopes],
    [names.lastSequence]: options.lastSequence,
    [names.signature]: encodeSignature(
      profile.signatureEncoding,
      options.signer.sign(utf8Bytes(text)),
    ),
  };
}

function joinParts<Field extends string>(
  parts: readonly InputPart<Field>[],
  values: Record<Field, () => string>,
): string {
  let text = '';
  for (const part of parts) text += part.kind === 'text' ? part.text : values[part.field]();
  return text;
}

function checkKeyId(keyId: string): void {
  if (!isValidKeyId(keyId))
    throw invalidField('keyId', 'must be 1 to 128 visible ASCII characters');
}

function invalidField(field: string, problem: string): PaperbotError {
  return new PaperbotError('SIGNING_INPUT_INVALID', `signing input field ${field} ${problem}`, {
    details: { field },
  });
}
