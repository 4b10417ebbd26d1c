/**
 * The minimal server checks SVC1 with node:crypto alone; the project's signer is used here only
 * to prove the two agree (and that a tampered, replayed or stale request is refused).
 */
import { describe, expect, it } from 'vitest';
import {
  createSigner,
  PrivateKey,
  signRequest,
  signWebSocketAuth,
} from '../../../src/signing/index.ts';
import {
  checkHttpRequest,
  checkSocketAuth,
  type KeyRecord,
  newKeyPair,
  NonceBook,
} from './svc1.ts';

const NOW = 1_790_000_000_000;

function setup() {
  const pair = newKeyPair();
  const key: KeyRecord = {
    keyId: 'key-1',
    accountId: 'acct-1',
    publicKey: pair.publicKey,
    scopes: [],
  };
  const signer = createSigner(PrivateKey.fromSeed(pair.seed));
  return { keys: new Map([[key.keyId, key]]), signer, nonces: new NonceBook(10_000) };
}

describe('minimal server SVC1 checks', () => {
  it('accepts what the project signs, once, and refuses tampering and stale timestamps', () => {
    const { keys, signer, nonces } = setup();
    const body = Buffer.from('{"request_id":"abcdefgh"}');
    const headers: Record<string, string> = {
      ...signRequest({
        signer,
        keyId: 'key-1',
        method: 'POST',
        target: '/v1/orders?x=1',
        body,
        timestampMs: NOW,
      }),
    };
    const header = (name: string) =>
      Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
    const check = (target: string, bytes: Buffer, at = NOW) =>
      checkHttpRequest({ method: 'POST', target, body: bytes, header, keys, nonces, nowMs: at });
    expect(check('/v1/orders?x=1', Buffer.from('{"request_id":"abcdefgi"}'))).toBe('bad signature');
    expect(check('/v1/orders', body)).toBe('bad signature');
    expect(check('/v1/orders?x=1', body, NOW + 10_001)).toBe('timestamp outside the window');
    expect(check('/v1/orders?x=1', body)).toMatchObject({ accountId: 'acct-1' });
    expect(check('/v1/orders?x=1', body)).toBe('nonce reused');
  });

  it('checks the WebSocket auth frame against its challenge', () => {
    const { keys, signer, nonces } = setup();
    const fields = signWebSocketAuth({
      signer,
      challenge: 'challenge-1',
      keyId: 'key-1',
      timestampMs: NOW,
      scopes: ['orders:read', 'fills:read'],
      lastSequence: 7,
    });
    const frame = { op: 'auth', request_id: 'r1', ...fields, timestamp: String(fields.timestamp) };
    const check = (challenge: string, value: Record<string, unknown>) =>
      checkSocketAuth({ frame: value, challenge, keys, nonces, nowMs: NOW });
    expect(check('challenge-2', frame)).toBe('bad signature');
    expect(check('challenge-1', { ...frame, last_sequence: 8 })).toBe('bad signature');
    expect(check('challenge-1', frame)).toMatchObject({ keyId: 'key-1' });
    expect(check('challenge-1', frame)).toBe('nonce reused');
  });
});
