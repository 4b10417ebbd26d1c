import { describe, expect, it } from 'vitest';
import {
  createNativeSigner,
  createRequestVerifier,
  nativeVerifySignature,
  PrivateKey,
  type RequestToVerify,
  signRequest,
  type VerifySignatureAsync,
} from '../../src/signing/index.ts';

const privateKey = PrivateKey.fromSeed(new Uint8Array(32).fill(7));
const signer = createNativeSigner(privateKey);
const keyId = 'key_test';
const start = 1_700_000_000_000;
const body = new TextEncoder().encode('{"request_id":"req_00000001"}');

function twin() {
  const clock = { now: start };
  const keys = new Map([[keyId, { publicKey: privateKey.publicKey }]]);
  const make = () =>
    createRequestVerifier({ lookupKey: (id) => keys.get(id) ?? null, now: () => clock.now });
  return { clock, sync: make(), async: make() };
}

function signed(options: { nonce: string; timestampMs?: number; keyId?: string }): RequestToVerify {
  const headers = signRequest({
    signer,
    keyId: options.keyId ?? keyId,
    method: 'POST',
    target: '/v1/orders',
    body,
    timestampMs: options.timestampMs ?? start,
    nonce: options.nonce,
  });
  return { method: 'POST', target: '/v1/orders', headers, body };
}

const elsewhere: VerifySignatureAsync = async (publicKey, message, signature) =>
  nativeVerifySignature(publicKey, message, signature);

describe('verifyAsync', () => {
  it('gives the results of verify, in the same order of checks, for a sequence of requests', async () => {
    const { sync, async } = twin();
    const valid = signed({ nonce: 'nonce-000000000001' });
    const tampered = { ...signed({ nonce: 'nonce-000000000002' }), body: new Uint8Array([1]) };
    const requests: RequestToVerify[] = [
      valid,
      valid,
      tampered,
      signed({ nonce: 'nonce-000000000002' }),
      signed({ nonce: 'nonce-000000000003', timestampMs: start + 60_000 }),
      signed({ nonce: 'nonce-000000000004', keyId: 'key_unknown' }),
      { ...valid, headers: { ...valid.headers, 'svc-signature-version': 'SVC2' } },
    ];
    const expected = requests.map((request) => sync.verify(request));
    const actual: unknown[] = [];
    for (const request of requests) actual.push(await async.verifyAsync(request, elsewhere));
    expect(actual).toEqual(expected);
    expect(expected.map((result) => (result.ok ? 'ok' : result.reason))).toEqual([
      'ok',
      'nonce_reused',
      'bad_signature',
      'ok',
      'timestamp_outside_window',
      'unknown_key',
      'duplicate_header',
    ]);
  });

  it('remembers the nonce only after the signature holds, and refuses when the check fails', async () => {
    const { async } = twin();
    const request = signed({ nonce: 'nonce-000000000009' });
    const refused = await async.verifyAsync(request, async () => false);
    expect(refused).toMatchObject({ ok: false, reason: 'bad_signature' });
    const thrown = await async.verifyAsync(request, () => Promise.reject(new Error('gone')));
    expect(thrown).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(async.rememberedNonceCount(keyId)).toBe(0);
    expect(await async.verifyAsync(request, elsewhere)).toMatchObject({ ok: true, keyId });
    expect(async.rememberedNonceCount(keyId)).toBe(1);
  });
});
