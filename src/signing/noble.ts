/**
 * Ed25519 through `@noble/ed25519` v3: pure JavaScript, independent of OpenSSL, so it checks the
 * native path and stands in where `node:crypto` lacks Ed25519. Its synchronous API needs a
 * SHA-512 plugged in; `@noble/hashes` provides one in JavaScript too. Setting it on the shared
 * module is idempotent.
 */
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { ED25519_PUBLIC_KEY_LENGTH, ED25519_SEED_LENGTH, verifyEd25519Input } from './native.ts';

ed.hashes.sha512 = sha512;

export function noblePublicKeyBytes(seed: Uint8Array): Uint8Array {
  if (seed.byteLength !== ED25519_SEED_LENGTH) {
    throw new RangeError('an Ed25519 seed is 32 bytes');
  }
  return ed.getPublicKey(seed);
}

export function nobleSign(seed: Uint8Array, message: Uint8Array): Uint8Array {
  return ed.sign(message, seed);
}

/**
 * Verifies with RFC 8032 rules (`zip215: false`) rather than noble's ZIP-215 default, to stay
 * as close as it can to OpenSSL, which the native path uses: both refuse non-canonical encodings.
 */
export function nobleVerify(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  return verifyEd25519Input(publicKey, signature, () =>
    ed.verify(signature, message, publicKey, { zip215: false }),
  );
}

/**
 * Whether 32 bytes can serve as a signer's public key: a valid curve point that is not of small
 * order. OpenSSL accepts degenerate keys (an all-zero key "verifies" an all-zero signature), so
 * a service must refuse them when a key is registered.
 */
export function isUsablePublicKey(publicKey: Uint8Array): boolean {
  if (publicKey.byteLength !== ED25519_PUBLIC_KEY_LENGTH) return false;
  try {
    return !ed.Point.fromBytes(publicKey).isSmallOrder();
  } catch {
    return false;
  }
}
