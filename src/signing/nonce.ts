/** Nonces for `SVC-NONCE`: random, from the 64-character alphabet `A-Z a-z 0-9 _ -`. */
import { randomBytes, randomFillSync } from 'node:crypto';
import { PaperbotError } from '../core/errors.ts';
import { NONCE_MAX_LENGTH, NONCE_MIN_LENGTH } from './canonical.ts';

export const NONCE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
export const DEFAULT_NONCE_LENGTH = 32;

// One call into the CSPRNG costs about 24 us on a loaded machine whatever its size, so its
// output is drawn 4 KiB at a time (128 nonces) and each byte is handed out once.
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

/** `size` bytes of CSPRNG output (a copy), from the pool while it lasts. */
export function pooledRandomBytes(size: number): Uint8Array {
  if (size > POOL_SIZE) return randomBytes(size);
  if (poolOffset + size > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = new Uint8Array(pool.subarray(poolOffset, poolOffset + size));
  // Zeroed once read: no byte is handed out twice.
  pool.fill(0, poolOffset, poolOffset + size);
  poolOffset += size;
  return bytes;
}

/**
 * A random nonce of `length` characters (16 to 64; 32 gives 192 bits). The alphabet has exactly
 * 64 characters, so the low six bits of each random byte pick one with no bias and no rejection.
 * `random` is there for tests; it must return `size` uniformly random bytes.
 */
export function generateNonce(
  length: number = DEFAULT_NONCE_LENGTH,
  random: (size: number) => Uint8Array = pooledRandomBytes,
): string {
  if (!Number.isInteger(length) || length < NONCE_MIN_LENGTH || length > NONCE_MAX_LENGTH) {
    throw new PaperbotError(
      'SIGNING_INPUT_INVALID',
      `a nonce is ${NONCE_MIN_LENGTH} to ${NONCE_MAX_LENGTH} characters long`,
      { details: { field: 'length' } },
    );
  }
  const bytes = random(length);
  if (bytes.byteLength < length) {
    throw new PaperbotError('SIGNING_INPUT_INVALID', 'the random source returned too few bytes');
  }
  let nonce = '';
  for (let index = 0; index < length; index++) {
    nonce += NONCE_ALPHABET[(bytes[index] as number) & 0x3f];
  }
  return nonce;
}
