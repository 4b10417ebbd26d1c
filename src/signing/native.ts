/**
 * Ed25519 through `node:crypto` (OpenSSL): the fast path. Node takes Ed25519 keys only as
 * `KeyObject`s, so raw 32-byte seeds and public keys are wrapped in the fixed DER prefixes of
 * PKCS #8 and SubjectPublicKeyInfo (RFC 8410) for the algorithm id 1.3.101.112.
 */
import {
  createPrivateKey,
  createPublicKey,
  sign as cryptoSign,
  verify as cryptoVerify,
  type KeyObject,
} from 'node:crypto';

export const ED25519_SEED_LENGTH = 32;
export const ED25519_PUBLIC_KEY_LENGTH = 32;
export const ED25519_SIGNATURE_LENGTH = 64;

const pkcs8Prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
const spkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');

export function nativePrivateKeyObject(seed: Uint8Array): KeyObject {
  if (seed.byteLength !== ED25519_SEED_LENGTH) {
    throw new RangeError('an Ed25519 seed is 32 bytes');
  }
  const der = Buffer.concat([pkcs8Prefix, seed]);
  try {
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } finally {
    der.fill(0);
  }
}

export function nativePublicKeyBytes(privateKeyObject: KeyObject): Uint8Array {
  const der = createPublicKey(privateKeyObject).export({ format: 'der', type: 'spki' });
  return new Uint8Array(der.subarray(spkiPrefix.byteLength));
}

export function nativeSign(privateKeyObject: KeyObject, message: Uint8Array): Uint8Array {
  const signature = cryptoSign(null, message, privateKeyObject);
  return new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength);
}

// Importing a public key costs about as much as a third of a verification, and a server sees the
// same few keys over and over, so imported keys are kept, up to a fixed number.
const publicKeyCacheLimit = 1024;
const publicKeyCache = new Map<string, KeyObject>();

function nativePublicKeyObject(publicKey: Uint8Array): KeyObject {
  const cacheKey = Buffer.from(
    publicKey.buffer,
    publicKey.byteOffset,
    publicKey.byteLength,
  ).toString('base64');
  const cached = publicKeyCache.get(cacheKey);
  if (cached) return cached;
  const keyObject = createPublicKey({
    key: Buffer.concat([spkiPrefix, publicKey]),
    format: 'der',
    type: 'spki',
  });
  if (publicKeyCache.size >= publicKeyCacheLimit) {
    const oldest = publicKeyCache.keys().next().value;
    if (oldest !== undefined) publicKeyCache.delete(oldest);
  }
  publicKeyCache.set(cacheKey, keyObject);
  return keyObject;
}

/** Whether a public key and a signature have Ed25519's lengths; both verifiers refuse others. */
function hasEd25519Lengths(publicKey: Uint8Array, signature: Uint8Array): boolean {
  return (
    publicKey.byteLength === ED25519_PUBLIC_KEY_LENGTH &&
    signature.byteLength === ED25519_SIGNATURE_LENGTH
  );
}

/**
 * Both verifiers' rule: false for inputs that cannot be a key or a signature at all (wrong
 * lengths, or a `verify` that throws on them), else `verify`'s verdict.
 */
export function verifyEd25519Input(
  publicKey: Uint8Array,
  signature: Uint8Array,
  verify: () => boolean,
): boolean {
  if (!hasEd25519Lengths(publicKey, signature)) return false;
  try {
    return verify();
  } catch {
    return false;
  }
}

/** False for a wrong signature and for inputs that cannot be a key or a signature at all. */
export function nativeVerify(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  return verifyEd25519Input(publicKey, signature, () =>
    cryptoVerify(null, message, nativePublicKeyObject(publicKey), signature),
  );
}
