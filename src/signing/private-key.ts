/**
 * The one holder of private key material. The seed lives in a private field, and every way an
 * object gets turned into text (String(), template literals, JSON.stringify, util.inspect,
 * console.log, pino) prints `[redacted]`, so a key cannot leak by being logged by accident.
 */
import { randomBytes } from 'node:crypto';
import { PaperbotError } from '../core/errors.ts';
import { decodeBase64Strict, encodeBase64 } from './encoding.ts';
import { ED25519_SEED_LENGTH, nativePrivateKeyObject, nativePublicKeyBytes } from './native.ts';

export const REDACTED = '[redacted]';
export const inspectCustom = Symbol.for('nodejs.util.inspect.custom');

export class PrivateKey {
  readonly #seed: Uint8Array;
  #publicKey: Uint8Array | undefined;

  private constructor(seed: Uint8Array) {
    this.#seed = seed;
  }

  /** Copies the 32-byte Ed25519 seed (RFC 8032 "secret key"). */
  static fromSeed(seed: Uint8Array): PrivateKey {
    if (seed.byteLength !== ED25519_SEED_LENGTH) {
      throw new PaperbotError('PRIVATE_KEY_INVALID', 'an Ed25519 private key seed is 32 bytes');
    }
    return new PrivateKey(Uint8Array.from(seed));
  }

  /** Standard padded base64 of the 32-byte seed, as in a key file. */
  static fromBase64(text: string): PrivateKey {
    const seed = decodeBase64Strict(text);
    if (seed === null || seed.byteLength !== ED25519_SEED_LENGTH) {
      throw new PaperbotError(
        'PRIVATE_KEY_INVALID',
        'a private key must be standard padded base64 of a 32-byte Ed25519 seed',
      );
    }
    const key = new PrivateKey(Uint8Array.from(seed));
    seed.fill(0);
    return key;
  }

  static generate(): PrivateKey {
    return new PrivateKey(new Uint8Array(randomBytes(ED25519_SEED_LENGTH)));
  }

  /** The matching 32-byte public key (a copy). */
  get publicKey(): Uint8Array {
    if (this.#publicKey === undefined) {
      this.#publicKey = nativePublicKeyBytes(nativePrivateKeyObject(this.#seed));
    }
    return Uint8Array.from(this.#publicKey);
  }

  /**
   * A copy of the raw seed, for a signer or the key-file writer. The name is loud on purpose:
   * anything that calls it takes over the duty of never printing the result.
   */
  revealSeed(): Uint8Array {
    return Uint8Array.from(this.#seed);
  }

  /** The seed as standard padded base64, for the key-file writer only. */
  revealSeedBase64(): string {
    const seed = this.revealSeed();
    try {
      return encodeBase64(seed);
    } finally {
      seed.fill(0);
    }
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspectCustom](): string {
    return REDACTED;
  }
}
