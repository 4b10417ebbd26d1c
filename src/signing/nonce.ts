/** Nonces for `SVC-NONCE`: random, from the 64-character alphabet `A-Z a-z 0-9 _ -`. */
import { randomBytes } from 'node:crypto';
import { PaperbotError } from '../core/errors.ts';
import { NONCE_MAX_LENGTH, NONCE_MIN_LENGTH } from './canonical.ts';

export const NONCE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
export const DEFAULT_NONCE_LENGTH = 32;

/**
 * A random nonce of `length` characters (16 to 64; 32 gives 192 bits). The alphabet has exactly
 * 64 characters, so the low six bits of each random byte pick one with no bias and no rejection.
 * `random` is there for tests; it must return `size` uniformly random bytes.
 */
export function generateNonce(
  length: number = DEFAULT_NONCE_LENGTH,
  random: (size: number) => Uint8Array = randomBytes,
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
