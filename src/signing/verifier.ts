/**
 * The server side of SVC1, for the emulator (and anyone checking a client). Every refusal has
 * its own reason so logs and tests can tell them apart; on the wire they all become
 * `INVALID_SIGNATURE` (contract section 1).
 *
 * Order of checks: version, presence, formats, window, key, signature, nonce. The nonce is
 * recorded only after the signature holds, so forged requests can neither burn a client's nonces
 * nor fill the nonce memory.
 */
import { PaperbotError } from '../core/errors.ts';
import {
  buildCanonicalRequestText,
  buildWebSocketAuthInput,
  type CanonicalRequestFields,
  isValidChallenge,
  isValidKeyId,
  isValidMethod,
  isValidNonce,
  isValidScope,
  isValidTarget,
  isValidTimestampMs,
  parseTimestampHeader,
  SIGNATURE_VERSION,
  type WebSocketAuthFields,
} from './canonical.ts';
import { decodeBase64Strict, utf8Bytes } from './encoding.ts';
import {
  HEADER_API_KEY,
  HEADER_NONCE,
  HEADER_SIGNATURE,
  HEADER_SIGNATURE_VERSION,
  HEADER_TIMESTAMP,
} from './headers.ts';
import { ED25519_SIGNATURE_LENGTH } from './native.ts';
import { buildRequestSigningText, buildWebSocketSigningText } from './profile-signing.ts';
import { nativeVerifySignature, type VerifySignature } from './signer.ts';
import {
  decodeSignatureText,
  isValidWireNonce,
  nonceFormatDescription,
  parseWireTimestamp,
  signatureEncodingDescription,
  timestampUnitDescription,
} from './wire-format.ts';
import { DEFAULT_WIRE_PROFILE, type WireProfile } from './wire-profile.ts';

export const DEFAULT_WINDOW_MS = 10_000;
export const DEFAULT_MAX_NONCES_PER_KEY = 50_000;

export type RefusalReason =
  /** `SVC-SIGNATURE-VERSION` missing or not `SVC1`. */
  | 'unsupported_version'
  /** One of the other four headers is missing or empty. */
  | 'missing_header'
  /** A header arrived as several separate values. */
  | 'duplicate_header'
  | 'malformed_key_id'
  /** Not decimal digits, a sign, leading zeros, or beyond a safe integer. */
  | 'malformed_timestamp'
  /** Not 16 to 64 characters of `A-Z a-z 0-9 _ -`. */
  | 'malformed_nonce'
  /** Not standard padded base64 (RFC 4648 section 4) in its one canonical spelling. */
  | 'malformed_signature_encoding'
  /** Valid base64 that does not decode to 64 bytes. */
  | 'wrong_signature_length'
  /** Method or target (or, for WebSocket auth, challenge, scopes or last sequence) unusable. */
  | 'malformed_request'
  /** Timestamp more than the window away from server time, either side. */
  | 'timestamp_outside_window'
  | 'unknown_key'
  | 'bad_signature'
  /** The nonce was already accepted for this key within twice the window. */
  | 'nonce_reused'
  /** The key already has `maxNoncesPerKey` live nonces; refused rather than forgetting one. */
  | 'nonce_capacity_exceeded';

export interface VerificationAccepted<Key> {
  readonly ok: true;
  readonly keyId: string;
  /** What `lookupKey` returned, so the caller can check scopes, expiry or revocation next. */
  readonly key: Key;
  readonly timestampMs: number;
  readonly nonce: string;
}

export interface VerificationRefused {
  readonly ok: false;
  readonly reason: RefusalReason;
  /** For logs; never holds a signature, key or header value. */
  readonly message: string;
  /** The header or field at fault, when there is one. */
  readonly field?: string;
}

export type VerificationResult<Key> = VerificationAccepted<Key> | VerificationRefused;

export interface VerifierKey {
  readonly publicKey: Uint8Array;
}

export interface RequestVerifierOptions<Key extends VerifierKey> {
  /** The key registered under `keyId`, or null when there is none. */
  readonly lookupKey: (keyId: string) => Key | null | undefined;
  /** Server time, epoch milliseconds. */
  readonly now: () => number;
  /** Accepted distance between a timestamp and server time, both sides inclusive. */
  readonly windowMs?: number;
  /** Live nonces kept per key (for twice the window) before new requests are refused. */
  readonly maxNoncesPerKey?: number;
  /** Defaults to the native (node:crypto) verification. */
  readonly verifySignature?: VerifySignature;
  /** How requests and auth frames are signed; the contract's SVC1 by default. */
  readonly profile?: WireProfile;
}

export type HeaderValues = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface RequestToVerify {
  /** As received; compared upper-cased. */
  readonly method: string;
  /** The request target exactly as received: path, then `?` and the query if any. */
  readonly target: string;
  /** Header names in any case (Node hands them over lower-cased). */
  readonly headers: HeaderValues;
  /** The exact body bytes received; null or absent when there was none. */
  readonly body?: Uint8Array | null;
}

/** The signed fields of a WebSocket `auth` frame. The caller checks the challenge is current. */
export interface WebSocketAuthToVerify extends WebSocketAuthFields {
  /** Standard padded base64 of the signature, as in the frame. */
  readonly signature: string;
}

/** A signature check that runs elsewhere (a worker thread, say); resolves false when it fails. */
export type VerifySignatureAsync = (
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
) => Promise<boolean>;

export interface RequestVerifier<Key extends VerifierKey> {
  verify(request: RequestToVerify): VerificationResult<Key>;
  /**
   * The same checks in the same order with the same results as `verify`, with the signature
   * itself checked by `verifySignature`. The nonce is remembered only after it resolves true.
   */
  verifyAsync(
    request: RequestToVerify,
    verifySignature: VerifySignatureAsync,
  ): Promise<VerificationResult<Key>>;
  verifyWebSocketAuth(auth: WebSocketAuthToVerify): VerificationResult<Key>;
  /** Nonces currently remembered, for one key or for all. */
  rememberedNonceCount(keyId?: string): number;
}

export function createRequestVerifier<Key extends VerifierKey>(
  options: RequestVerifierOptions<Key>,
): RequestVerifier<Key> {
  const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
  const maxNoncesPerKey = options.maxNoncesPerKey ?? DEFAULT_MAX_NONCES_PER_KEY;
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) {
    throw new PaperbotError('SIGNING_CONFIG_INVALID', 'windowMs must be a positive integer');
  }
  if (!Number.isSafeInteger(maxNoncesPerKey) || maxNoncesPerKey <= 0) {
    throw new PaperbotError('SIGNING_CONFIG_INVALID', 'maxNoncesPerKey must be a positive integer');
  }
  const verifySignature = options.verifySignature ?? nativeVerifySignature;
  const profile = options.profile ?? DEFAULT_WIRE_PROFILE;
  const requestFields: FieldNames = profile.isDefault
    ? headerFieldNames
    : {
        keyId: profile.headers.apiKey,
        timestamp: profile.headers.timestamp,
        nonce: profile.headers.nonce,
        signature: profile.headers.signature,
      };
  const authFields: FieldNames = profile.isDefault
    ? frameFieldNames
    : {
        keyId: profile.webSocketAuth.fields.keyId,
        timestamp: profile.webSocketAuth.fields.timestamp,
        nonce: profile.webSocketAuth.fields.nonce,
        signature: profile.webSocketAuth.fields.signature,
      };
  const profileHeaderNames = new Set(
    [
      profile.headers.apiKey,
      profile.headers.timestamp,
      profile.headers.nonce,
      profile.headers.signature,
      profile.headers.signatureVersion,
    ].flatMap((name) => (name === null ? [] : [name.toLowerCase()])),
  );
  const isProfileHeader = profile.isDefault
    ? isSigningHeaderName
    : (name: string) => profileHeaderNames.has(name.toLowerCase());
  const nonces = new NonceMemory(2 * windowMs, maxNoncesPerKey, windowMs);

  interface Candidate {
    readonly keyId: string;
    readonly timestampMs: number;
    readonly nonce: string;
    readonly signature: Uint8Array;
    readonly message: () => Uint8Array;
    readonly fields: FieldNames;
  }

  interface Checked {
    readonly key: Key;
    readonly now: number;
  }

  /** The window and the key, before the signature. */
  function checkBeforeSignature(candidate: Candidate): Checked | VerificationRefused {
    const now = options.now();
    if (Math.abs(now - candidate.timestampMs) > windowMs) {
      return refuse(
        'timestamp_outside_window',
        `timestamp is more than ${windowMs} ms from server time`,
        candidate.fields.timestamp,
      );
    }
    const key = options.lookupKey(candidate.keyId);
    if (key === null || key === undefined) {
      return refuse(
        'unknown_key',
        'no key is registered under this key id',
        candidate.fields.keyId,
      );
    }
    return { key, now };
  }

  /** The signature's verdict, then the nonce (only ever for a valid signature). */
  function checkAfterSignature(
    candidate: Candidate,
    checked: Checked,
    signatureHolds: boolean,
  ): VerificationResult<Key> {
    const { keyId, nonce, fields } = candidate;
    if (!signatureHolds) {
      return refuse(
        'bad_signature',
        'the signature does not match the signing input',
        fields.signature,
      );
    }
    const remembered = nonces.remember(keyId, nonce, checked.now);
    if (remembered === 'reused') {
      return refuse('nonce_reused', 'this nonce was already used with this key', fields.nonce);
    }
    if (remembered === 'full') {
      return refuse(
        'nonce_capacity_exceeded',
        `this key already has ${maxNoncesPerKey} recent nonces; retry after they age out`,
        fields.nonce,
      );
    }
    return { ok: true, keyId, key: checked.key, timestampMs: candidate.timestampMs, nonce };
  }

  function finish(candidate: Candidate | VerificationRefused): VerificationResult<Key> {
    if ('ok' in candidate) return candidate;
    const checked = checkBeforeSignature(candidate);
    if ('ok' in checked) return checked;
    return checkAfterSignature(
      candidate,
      checked,
      verifySignature(checked.key.publicKey, candidate.message(), candidate.signature),
    );
  }

  async function finishAsync(
    candidate: Candidate | VerificationRefused,
    verifyElsewhere: VerifySignatureAsync,
  ): Promise<VerificationResult<Key>> {
    if ('ok' in candidate) return candidate;
    const checked = checkBeforeSignature(candidate);
    if ('ok' in checked) return checked;
    let signatureHolds: boolean;
    try {
      signatureHolds = await verifyElsewhere(
        checked.key.publicKey,
        candidate.message(),
        candidate.signature,
      );
    } catch {
      signatureHolds = false;
    }
    return checkAfterSignature(candidate, checked, signatureHolds);
  }

  function candidateOfRequest(request: RequestToVerify): Candidate | VerificationRefused {
    if (!profile.isDefault) return candidateOfProfileRequest(request);
    const headers = signingHeaders(request.headers, isSigningHeaderName);
    const versionValue = headers.get(HEADER_SIGNATURE_VERSION.toLowerCase());
    const version = singleValue(versionValue);
    if (version !== SIGNATURE_VERSION) {
      if (versionValue !== undefined && version === undefined) {
        return refuse('duplicate_header', 'header sent more than once', HEADER_SIGNATURE_VERSION);
      }
      return refuse(
        'unsupported_version',
        `${HEADER_SIGNATURE_VERSION} must be ${SIGNATURE_VERSION}`,
        HEADER_SIGNATURE_VERSION,
      );
    }
    const values = signedHeaderValues(headers, SVC1_SIGNED_HEADERS);
    if ('reason' in values) return values;
    const [keyId, timestampText, nonce, signatureText] = values;
    const timestampMs = parseTimestampHeader(timestampText);
    if (timestampMs === null) {
      return refuse(
        'malformed_timestamp',
        'timestamp must be decimal epoch milliseconds without sign or leading zeros',
        HEADER_TIMESTAMP,
      );
    }
    if (!isValidNonce(nonce)) {
      return refuse(
        'malformed_nonce',
        'nonce must be 16 to 64 characters of A-Z a-z 0-9 _ -',
        HEADER_NONCE,
      );
    }
    const input = requestInput(request, keyId, timestampMs, nonce);
    return requestCandidate(
      request,
      input,
      decodeSignature(signatureText, HEADER_SIGNATURE),
      headerFieldNames,
      // Every field was checked to be ASCII above (the body enters as its hex hash), so the
      // text's Latin-1 bytes are its UTF-8 bytes, without a TextEncoder pass.
      () => Buffer.from(buildCanonicalRequestText(input), 'latin1'),
    );
  }

  /** As `candidateOfRequest`, under a profile other than SVC1. */
  function candidateOfProfileRequest(request: RequestToVerify): Candidate | VerificationRefused {
    const headers = signingHeaders(request.headers, isProfileHeader);
    const versionName = profile.headers.signatureVersion;
    if (versionName !== null) {
      const versionValue = headers.get(versionName.toLowerCase());
      const version = singleValue(versionValue);
      if (version !== profile.signatureVersion) {
        if (versionValue !== undefined && version === undefined) {
          return refuse('duplicate_header', 'header sent more than once', versionName);
        }
        return refuse(
          'unsupported_version',
          `${versionName} must be ${profile.signatureVersion}`,
          versionName,
        );
      }
    }
    const values = signedHeaderValues(headers, [
      requestFields.keyId,
      requestFields.timestamp,
      requestFields.nonce,
      requestFields.signature,
    ]);
    if ('reason' in values) return values;
    const [keyId, timestampText, nonce, signatureText] = values;
    const timestampMs = parseWireTimestamp(profile.timestamp, timestampText);
    if (timestampMs === null) {
      return refuse(
        'malformed_timestamp',
        `timestamp must be ${timestampUnitDescription(profile.timestamp)}`,
        requestFields.timestamp,
      );
    }
    if (!isValidWireNonce(profile.nonce.format, nonce)) {
      return refuse(
        'malformed_nonce',
        `nonce must be ${nonceFormatDescription(profile.nonce.format)}`,
        requestFields.nonce,
      );
    }
    const input = requestInput(request, keyId, timestampMs, nonce);
    return requestCandidate(
      request,
      input,
      decodeProfileSignature(signatureText, requestFields.signature),
      requestFields,
      () => utf8Bytes(buildRequestSigningText(profile, input)),
    );
  }

  /** The candidate once its signature decoded and its method and target are well formed. */
  function requestCandidate(
    request: RequestToVerify,
    input: CanonicalRequestFields,
    signature: Uint8Array | VerificationRefused,
    fields: FieldNames,
    message: () => Uint8Array,
  ): Candidate | VerificationRefused {
    if (!(signature instanceof Uint8Array)) return signature;
    const malformed = malformedRequestLine(request);
    if (malformed !== null) return malformed;
    const { keyId, timestampMs, nonce } = input;
    return { keyId, timestampMs, nonce, signature, message, fields };
  }

  function decodeProfileSignature(text: string, field: string): Uint8Array | VerificationRefused {
    if (profile.isDefault) return decodeSignature(text, field);
    const signature = decodeSignatureText(profile.signatureEncoding, text);
    if (signature === null) {
      return refuse(
        'malformed_signature_encoding',
        `signature must be ${signatureEncodingDescription(profile.signatureEncoding)}`,
        field,
      );
    }
    if (signature.byteLength !== ED25519_SIGNATURE_LENGTH) {
      return refuse('wrong_signature_length', 'signature must decode to 64 bytes', field);
    }
    return signature;
  }

  function verifyWebSocketAuth(auth: WebSocketAuthToVerify): VerificationResult<Key> {
    if (typeof auth.keyId !== 'string' || !isValidKeyId(auth.keyId)) {
      return refuse(
        'malformed_key_id',
        'key id must be 1 to 128 visible ASCII characters',
        authFields.keyId,
      );
    }
    if (typeof auth.timestampMs !== 'number' || !isValidTimestampMs(auth.timestampMs)) {
      return refuse(
        'malformed_timestamp',
        'timestamp must be a non-negative integer of epoch milliseconds',
        authFields.timestamp,
      );
    }
    if (typeof auth.nonce !== 'string' || !isValidWireNonce(profile.nonce.format, auth.nonce)) {
      return refuse(
        'malformed_nonce',
        `nonce must be ${nonceFormatDescription(profile.nonce.format)}`,
        authFields.nonce,
      );
    }
    if (typeof auth.signature !== 'string') {
      return refuse('malformed_signature_encoding', 'signature must be text', authFields.signature);
    }
    const signature = decodeProfileSignature(auth.signature, authFields.signature);
    if (!(signature instanceof Uint8Array)) return signature;
    if (typeof auth.challenge !== 'string' || !isValidChallenge(auth.challenge)) {
      return refuse(
        'malformed_request',
        'challenge must be 1 to 256 visible ASCII characters',
        'challenge',
      );
    }
    if (
      !Array.isArray(auth.scopes) ||
      !auth.scopes.every(
        (scope) =>
          typeof scope === 'string' &&
          isValidScope(scope) &&
          !scope.includes(profile.webSocketAuth.scopeSeparator),
      )
    ) {
      return refuse(
        'malformed_request',
        'scopes must be strings of 1 to 64 visible ASCII characters other than ","',
        profile.webSocketAuth.fields.scopes,
      );
    }
    if (typeof auth.lastSequence !== 'number' || !isValidTimestampMs(auth.lastSequence)) {
      return refuse(
        'malformed_request',
        'last_sequence must be a non-negative integer',
        profile.webSocketAuth.fields.lastSequence,
      );
    }
    return finish({
      keyId: auth.keyId,
      timestampMs: auth.timestampMs,
      nonce: auth.nonce,
      signature,
      message: () =>
        profile.isDefault
          ? buildWebSocketAuthInput(auth)
          : utf8Bytes(buildWebSocketSigningText(profile, auth)),
      fields: authFields,
    });
  }

  return {
    verify: (request) => finish(candidateOfRequest(request)),
    verifyAsync: (request, verifyElsewhere) =>
      finishAsync(candidateOfRequest(request), verifyElsewhere),
    verifyWebSocketAuth,
    rememberedNonceCount: (keyId) => nonces.count(keyId),
  };
}

interface FieldNames {
  readonly keyId: string;
  readonly timestamp: string;
  readonly nonce: string;
  readonly signature: string;
}

const headerFieldNames: FieldNames = {
  keyId: HEADER_API_KEY,
  timestamp: HEADER_TIMESTAMP,
  nonce: HEADER_NONCE,
  signature: HEADER_SIGNATURE,
};

const frameFieldNames: FieldNames = {
  keyId: 'key_id',
  timestamp: 'timestamp',
  nonce: 'nonce',
  signature: 'signature',
};

function refuse(reason: RefusalReason, message: string, field?: string): VerificationRefused {
  return field === undefined
    ? { ok: false, reason, message }
    : { ok: false, reason, message, field };
}

/** The method and target, checked alike whatever the profile signs. */
function malformedRequestLine(request: {
  readonly method: string;
  readonly target: string;
}): VerificationRefused | null {
  if (!isValidMethod(request.method)) {
    return refuse('malformed_request', 'method is not an HTTP token', 'method');
  }
  if (!isValidTarget(request.target)) {
    return refuse(
      'malformed_request',
      'target must start with "/" and hold only visible ASCII characters, without "#"',
      'target',
    );
  }
  return null;
}

function decodeSignature(text: string, field: string): Uint8Array | VerificationRefused {
  const signature = decodeBase64Strict(text);
  if (signature === null) {
    return refuse(
      'malformed_signature_encoding',
      'signature must be standard padded base64',
      field,
    );
  }
  if (signature.byteLength !== ED25519_SIGNATURE_LENGTH) {
    return refuse('wrong_signature_length', 'signature must decode to 64 bytes', field);
  }
  return signature;
}

/** The SVC1 headers of the key id, timestamp, nonce and signature, in that order. */
const SVC1_SIGNED_HEADERS = [
  HEADER_API_KEY,
  HEADER_TIMESTAMP,
  HEADER_NONCE,
  HEADER_SIGNATURE,
] as const;

type FourValues = readonly [string, string, string, string];

/**
 * The key id, timestamp, nonce and signature headers (named by the profile), each sent once and
 * not empty, the key id well formed; or the refusal naming the first that is not.
 */
function signedHeaderValues(
  headers: ReadonlyMap<string, string | readonly string[]>,
  names: FourValues,
): FourValues | VerificationRefused {
  const values: string[] = [];
  for (const name of names) {
    const value = headers.get(name.toLowerCase());
    const single = singleValue(value);
    if (value === undefined || single === '') {
      return refuse('missing_header', `${name} is missing`, name);
    }
    if (single === undefined) {
      return refuse('duplicate_header', `${name} was sent more than once`, name);
    }
    values.push(single);
  }
  if (!isValidKeyId(values[0]!)) {
    return refuse('malformed_key_id', 'key id must be 1 to 128 visible ASCII characters', names[0]);
  }
  return values as unknown as FourValues;
}

/** What the request's signing input is made of, its header fields read. */
function requestInput(
  request: RequestToVerify,
  keyId: string,
  timestampMs: number,
  nonce: string,
): CanonicalRequestFields {
  return {
    method: request.method,
    target: request.target,
    keyId,
    timestampMs,
    nonce,
    body: request.body ?? null,
  };
}

/** The value of a header sent once; undefined when it came as several values. */
function singleValue(value: string | readonly string[] | undefined): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  return value.length === 1 ? value[0] : undefined;
}

/**
 * The `SVC-` headers by lower-cased name; the others (host, content type, ...) are not read, so
 * they are not copied: a request carries a dozen of them and this runs for every request.
 */
function signingHeaders(
  headers: HeaderValues,
  isSigningHeader: (name: string) => boolean,
): Map<string, string | readonly string[]> {
  const lowered = new Map<string, string | readonly string[]>();
  for (const name in headers) {
    if (!Object.hasOwn(headers, name) || !isSigningHeader(name)) continue;
    const value = headers[name];
    if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
    const key = name.toLowerCase();
    const earlier = lowered.get(key);
    // The same header under two spellings of its name is a duplicate, not a choice.
    lowered.set(key, earlier === undefined ? value : [earlier, value].flat());
  }
  return lowered;
}

/** `SVC-...` in any case: the five signing headers all start so. */
function isSigningHeaderName(name: string): boolean {
  if (name.length < 5 || name.charCodeAt(3) !== 45) return false;
  const first = name.charCodeAt(0) | 0x20;
  const second = name.charCodeAt(1) | 0x20;
  const third = name.charCodeAt(2) | 0x20;
  return first === 115 && second === 118 && third === 99;
}

/**
 * Accepted nonces per key, each with the server time it was accepted. A nonce is kept for twice
 * the window after acceptance: its timestamp was at most one window ahead of that moment, so any
 * replay arriving later is refused by the window check and the entry is no longer needed.
 * Entries are appended in time order, so expiry pops from the front of each key's map.
 */
class NonceMemory {
  readonly #byKey = new Map<string, KeyNonces>();
  readonly #retentionMs: number;
  readonly #maxPerKey: number;
  readonly #sweepEveryMs: number;
  #lastSweepAt = Number.NEGATIVE_INFINITY;

  constructor(retentionMs: number, maxPerKey: number, sweepEveryMs: number) {
    this.#retentionMs = retentionMs;
    this.#maxPerKey = maxPerKey;
    this.#sweepEveryMs = sweepEveryMs;
  }

  remember(keyId: string, nonce: string, now: number): 'accepted' | 'reused' | 'full' {
    this.#sweepAll(now);
    let nonces = this.#byKey.get(keyId);
    if (nonces === undefined) {
      nonces = new KeyNonces();
      this.#byKey.set(keyId, nonces);
    } else {
      nonces.expire(now, this.#retentionMs);
    }
    if (nonces.has(nonce)) return 'reused';
    if (nonces.size >= this.#maxPerKey) return 'full';
    nonces.add(nonce, now);
    return 'accepted';
  }

  count(keyId?: string): number {
    if (keyId !== undefined) return this.#byKey.get(keyId)?.size ?? 0;
    let total = 0;
    for (const nonces of this.#byKey.values()) total += nonces.size;
    return total;
  }

  // Idle keys are swept too, at most once a window, so memory follows recent traffic only.
  #sweepAll(now: number): void {
    if (now - this.#lastSweepAt < this.#sweepEveryMs) return;
    this.#lastSweepAt = now;
    for (const [keyId, nonces] of this.#byKey) {
      nonces.expire(now, this.#retentionMs);
      if (nonces.size === 0) this.#byKey.delete(keyId);
    }
  }
}

/**
 * One key's nonces: a set to look them up, and the same nonces in acceptance order in a queue to
 * expire them from its head. Expiring by iterating the set from its start would walk over every
 * entry deleted since the set was last rehashed, each request again.
 */
class KeyNonces {
  readonly #accepted = new Set<string>();
  #queue: string[] = [];
  #acceptedAt: number[] = [];
  #head = 0;

  get size(): number {
    return this.#accepted.size;
  }

  has(nonce: string): boolean {
    return this.#accepted.has(nonce);
  }

  add(nonce: string, now: number): void {
    this.#accepted.add(nonce);
    this.#queue.push(nonce);
    this.#acceptedAt.push(now);
  }

  /** Forgets the oldest nonces until one was accepted within `retentionMs` of `now`. */
  expire(now: number, retentionMs: number): void {
    let head = this.#head;
    const queue = this.#queue;
    const acceptedAt = this.#acceptedAt;
    while (head < queue.length && now - acceptedAt[head]! > retentionMs) {
      this.#accepted.delete(queue[head]!);
      head += 1;
    }
    if (head >= 1024 && head * 2 >= queue.length) {
      // Drop the expired head in one go, so the queue stays about as long as the set.
      this.#queue = queue.slice(head);
      this.#acceptedAt = acceptedAt.slice(head);
      head = 0;
    }
    this.#head = head;
  }
}
