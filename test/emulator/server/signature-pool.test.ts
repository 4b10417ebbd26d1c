import { describe, expect, it } from 'vitest';
import { createSignaturePool } from '../../../src/emulator/server/signature-pool.ts';
import {
  createNativeSigner,
  nativeVerifySignature,
  PrivateKey,
} from '../../../src/signing/index.ts';

const privateKey = PrivateKey.fromSeed(new Uint8Array(32).fill(3));
const otherKey = PrivateKey.fromSeed(new Uint8Array(32).fill(4));
const signer = createNativeSigner(privateKey);

describe('signature pool', () => {
  it('returns the verdicts of the native verification, for checks queued together', async () => {
    const pool = createSignaturePool(1);
    const cases = Array.from({ length: 40 }, (_, index) => {
      const message = new TextEncoder().encode(`message ${index}`);
      const signature = new Uint8Array(signer.sign(message));
      const variant = index % 4;
      if (variant === 1) signature[0] = (signature[0] ?? 0) ^ 1;
      const publicKey = variant === 2 ? otherKey.publicKey : privateKey.publicKey;
      const signed = variant === 3 ? new TextEncoder().encode('another message') : message;
      return { publicKey, message: signed, signature };
    });
    const verdicts = await Promise.all(
      cases.map((item) => pool.verify(item.publicKey, item.message, item.signature)),
    );
    expect(verdicts).toEqual(
      cases.map((item) => nativeVerifySignature(item.publicKey, item.message, item.signature)),
    );
    expect(verdicts.filter(Boolean)).toHaveLength(10);
    expect(await pool.verify(privateKey.publicKey, new Uint8Array(3), new Uint8Array(10))).toBe(
      false,
    );
  });

  it('keeps checks of different message lengths apart within one batch', async () => {
    const pool = createSignaturePool(1);
    // One batch travels as one buffer: a wrong length or offset would shift every later check.
    const cases = [0, 1, 200, 5000, 3, 70_000, 64].map((length, index) => {
      const message = new Uint8Array(length).fill(index + 1);
      const signature = new Uint8Array(signer.sign(message));
      if (index === 3) signature[10] = (signature[10] ?? 0) ^ 4;
      return { message, signature, expected: index !== 3 };
    });
    const verdicts = await Promise.all(
      cases.map((item) => pool.verify(privateKey.publicKey, item.message, item.signature)),
    );
    expect(verdicts).toEqual(cases.map((item) => item.expected));
  });
});
