/**
 * Ed25519 signers and verification behind one interface, with two implementations: `native`
 * (node:crypto, fast) and `noble` (@noble/ed25519, pure JavaScript). Both produce identical
 * signatures, because Ed25519 is deterministic; the test vectors hold each to that.
 */
import type { KeyObject } from 'node:crypto';
import { encodeBase64 } from './encoding.ts';
import { nativePrivateKeyObject, nativeSign, nativeVerify } from './native.ts';
import { noblePublicKeyBytes, nobleSign, nobleVerify } from './noble.ts';
import { inspectCustom, type PrivateKey } from './private-key.ts';

export type SignerImplementation = 'native' | 'noble';

export interface Signer {
  readonly implementation: SignerImplementation;
  /** The 32-byte Ed25519 public key matching the signing key. */
  readonly publicKey: Uint8Array;
  /** The 64-byte pure Ed25519 signature (RFC 8032) of `message`. */
  sign(message: Uint8Array): Uint8Array;
}

export type VerifySignature = (
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
) => boolean;

abstract class RedactedSigner {
  abstract readonly implementation: SignerImplementation;
  abstract readonly publicKey: Uint8Array;

  toString(): string {
    return `Signer(${this.implementation}, public key ${encodeBase64(this.publicKey)})`;
  }

  toJSON(): { implementation: SignerImplementation; public_key: string } {
    return { implementation: this.implementation, public_key: encodeBase64(this.publicKey) };
  }

  [inspectCustom](): string {
    return this.toString();
  }
}

class NativeSigner extends RedactedSigner implements Signer {
  readonly implementation = 'native';
  readonly #privateKeyObject: KeyObject;
  readonly #publicKey: Uint8Array;

  constructor(privateKey: PrivateKey) {
    super();
    const seed = privateKey.revealSeed();
    try {
      this.#privateKeyObject = nativePrivateKeyObject(seed);
    } finally {
      seed.fill(0);
    }
    this.#publicKey = privateKey.publicKey;
  }

  get publicKey(): Uint8Array {
    return Uint8Array.from(this.#publicKey);
  }

  sign(message: Uint8Array): Uint8Array {
    return nativeSign(this.#privateKeyObject, message);
  }
}

class NobleSigner extends RedactedSigner implements Signer {
  readonly implementation = 'noble';
  readonly #seed: Uint8Array;
  readonly #publicKey: Uint8Array;

  constructor(privateKey: PrivateKey) {
    super();
    this.#seed = privateKey.revealSeed();
    this.#publicKey = noblePublicKeyBytes(this.#seed);
  }

  get publicKey(): Uint8Array {
    return Uint8Array.from(this.#publicKey);
  }

  sign(message: Uint8Array): Uint8Array {
    return nobleSign(this.#seed, message);
  }
}

export function createNativeSigner(privateKey: PrivateKey): Signer {
  return new NativeSigner(privateKey);
}

export function createNobleSigner(privateKey: PrivateKey): Signer {
  return new NobleSigner(privateKey);
}

export function createSigner(
  privateKey: PrivateKey,
  implementation: SignerImplementation = 'native',
): Signer {
  return implementation === 'native' ? new NativeSigner(privateKey) : new NobleSigner(privateKey);
}

export const nativeVerifySignature: VerifySignature = nativeVerify;
export const nobleVerifySignature: VerifySignature = nobleVerify;

/**
 * True when `signature` is a valid pure Ed25519 signature of `message` under `publicKey`. Wrong
 * lengths and keys that are not curve points give false, never an exception.
 */
export function verifySignature(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  implementation: SignerImplementation = 'native',
): boolean {
  return implementation === 'native'
    ? nativeVerify(publicKey, message, signature)
    : nobleVerify(publicKey, message, signature);
}
