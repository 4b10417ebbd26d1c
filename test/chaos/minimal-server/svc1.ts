/**
 * SVC1 request signing, checked with node:crypto only (contract.md sections 1, 2 and 4), so
 * that this server shares no code with the project's signing module or emulator.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  verify,
} from 'node:crypto';

const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const NONCE = /^[A-Za-z0-9_-]{16,64}$/;
const TIMESTAMP = /^[1-9][0-9]*$/;

export interface KeyRecord {
  readonly keyId: string;
  readonly accountId: string;
  readonly publicKey: KeyObject;
  readonly scopes: readonly string[];
}

export function newKeyPair(): { seed: Buffer; publicRaw: Buffer; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  // Check the raw forms round-trip before anyone relies on them.
  const seed = pkcs8.subarray(pkcs8.length - 32);
  const publicRaw = spki.subarray(spki.length - 32);
  createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  return { seed: Buffer.from(seed), publicRaw: Buffer.from(publicRaw), publicKey };
}

export function publicKeyFromRaw(raw: Buffer): KeyObject {
  return createPublicKey({
    key: Buffer.concat([SPKI_ED25519_PREFIX, raw]),
    format: 'der',
    type: 'spki',
  });
}

/** Nonces seen per key, forgotten after twice the window. */
export class NonceBook {
  readonly #seen = new Map<string, number>();
  constructor(readonly windowMs: number) {}

  /** False when the nonce was used already. */
  take(keyId: string, nonce: string, nowMs: number): boolean {
    if (this.#seen.size > 50_000) {
      for (const [entry, at] of this.#seen)
        if (at < nowMs - 2 * this.windowMs) this.#seen.delete(entry);
    }
    const entry = `${keyId}\n${nonce}`;
    const at = this.#seen.get(entry);
    if (at !== undefined && at >= nowMs - 2 * this.windowMs) return false;
    this.#seen.set(entry, nowMs);
    return true;
  }
}

function validSignature(key: KeyObject, input: string, signature: string): boolean {
  const bytes = Buffer.from(signature, 'base64');
  if (bytes.length !== 64 || bytes.toString('base64') !== signature) return false;
  return verify(null, Buffer.from(input, 'utf8'), key, bytes);
}

/** The key of a valid signed HTTP request, or the reason it is not valid. */
export function checkHttpRequest(parts: {
  readonly method: string;
  readonly target: string;
  readonly body: Buffer;
  readonly header: (name: string) => string | undefined;
  readonly keys: ReadonlyMap<string, KeyRecord>;
  readonly nonces: NonceBook;
  readonly nowMs: number;
}): KeyRecord | string {
  const keyId = parts.header('svc-api-key');
  const timestamp = parts.header('svc-timestamp');
  const nonce = parts.header('svc-nonce');
  const signature = parts.header('svc-signature');
  if (parts.header('svc-signature-version') !== 'SVC1') return 'signature version is not SVC1';
  if (
    keyId === undefined ||
    timestamp === undefined ||
    nonce === undefined ||
    signature === undefined
  ) {
    return 'a signature header is missing';
  }
  const key = parts.keys.get(keyId);
  if (key === undefined) return 'unknown key';
  if (
    !TIMESTAMP.test(timestamp) ||
    Math.abs(Number(timestamp) - parts.nowMs) > parts.nonces.windowMs
  ) {
    return 'timestamp outside the window';
  }
  if (!NONCE.test(nonce)) return 'malformed nonce';
  const input = [
    'SVC1',
    parts.method.toUpperCase(),
    parts.target,
    keyId,
    timestamp,
    nonce,
    createHash('sha256').update(parts.body).digest('hex'),
  ].join('\n');
  if (!validSignature(key.publicKey, input, signature)) return 'bad signature';
  if (!parts.nonces.take(keyId, nonce, parts.nowMs)) return 'nonce reused';
  return key;
}

/** The key of a valid WebSocket auth frame against `challenge`, or the reason it is not. */
export function checkSocketAuth(parts: {
  readonly frame: Record<string, unknown>;
  readonly challenge: string;
  readonly keys: ReadonlyMap<string, KeyRecord>;
  readonly nonces: NonceBook;
  readonly nowMs: number;
}): KeyRecord | string {
  const { frame } = parts;
  const { key_id: keyId, timestamp, nonce, scopes, last_sequence: last, signature } = frame;
  if (
    typeof keyId !== 'string' ||
    typeof nonce !== 'string' ||
    typeof signature !== 'string' ||
    !Array.isArray(scopes) ||
    !scopes.every((scope) => typeof scope === 'string') ||
    !Number.isSafeInteger(last)
  ) {
    return 'malformed auth frame';
  }
  const stamp = typeof timestamp === 'number' ? String(timestamp) : timestamp;
  if (typeof stamp !== 'string' || !TIMESTAMP.test(stamp)) return 'malformed timestamp';
  if (Math.abs(Number(stamp) - parts.nowMs) > parts.nonces.windowMs)
    return 'timestamp outside the window';
  const key = parts.keys.get(keyId);
  if (key === undefined) return 'unknown key';
  const input = [
    'SVC1-WS',
    parts.challenge,
    keyId,
    stamp,
    nonce,
    (scopes as string[]).join(','),
    String(last),
  ].join('\n');
  if (!validSignature(key.publicKey, input, signature)) return 'bad signature';
  if (!parts.nonces.take(keyId, nonce, parts.nowMs)) return 'nonce reused';
  return key;
}
