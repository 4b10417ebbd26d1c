/**
 * SVC1 signing speed: raw Ed25519 signatures per second for both signers, verifications per
 * second (native, and noble for comparison), and the full request path (canonical input, body
 * hash, signature, headers) as a client sees it.
 */
import { Bench } from 'tinybench';
import {
  buildCanonicalRequestInput,
  createNativeSigner,
  createNobleSigner,
  createRequestVerifier,
  nativeVerifySignature,
  nobleVerifySignature,
  PrivateKey,
  signRequest,
} from '../../src/signing/index.ts';
import { printBench } from './report.ts';

export default async function (): Promise<void> {
  const privateKey = PrivateKey.fromSeed(new Uint8Array(32).fill(42));
  const native = createNativeSigner(privateKey);
  const noble = createNobleSigner(privateKey);
  const publicKey = native.publicKey;
  const body = new TextEncoder().encode(
    '{"request_id":"req_bench_0001","client_order_id":"bench-1","market_id":"BTC-USD","side":"buy","type":"limit","quantity":"0.010","leverage":2,"price":"50000.5"}',
  );
  const input = buildCanonicalRequestInput({
    method: 'POST',
    target: '/v1/orders',
    keyId: 'key_bench',
    timestampMs: 1_700_000_000_000,
    nonce: 'benchmark_nonce_0000',
    body,
  });
  const signature = native.sign(input);

  let counter = 0;
  const timestampMs = 1_700_000_000_000;
  const verifier = createRequestVerifier({
    lookupKey: () => ({ publicKey }),
    now: () => timestampMs,
    maxNoncesPerKey: 10_000_000,
  });

  const bench = new Bench({ name: 'signing', time: 1_000 });
  bench
    .add('sign, native (node:crypto)', () => {
      native.sign(input);
    })
    .add('sign, noble (@noble/ed25519)', () => {
      noble.sign(input);
    })
    .add('verify, native', () => {
      if (!nativeVerifySignature(publicKey, input, signature)) throw new Error('verify failed');
    })
    .add('verify, noble', () => {
      if (!nobleVerifySignature(publicKey, input, signature)) throw new Error('verify failed');
    })
    .add('signRequest (POST with body), native', () => {
      signRequest({
        signer: native,
        keyId: 'key_bench',
        method: 'POST',
        target: '/v1/orders',
        body,
        timestampMs,
      });
    })
    .add('signRequest + verifier.verify, native', () => {
      counter += 1;
      const headers = signRequest({
        signer: native,
        keyId: 'key_bench',
        method: 'POST',
        target: '/v1/orders',
        body,
        timestampMs,
        nonce: `bench_nonce_${String(counter).padStart(12, '0')}`,
      });
      const result = verifier.verify({ method: 'POST', target: '/v1/orders', headers, body });
      if (!result.ok) throw new Error(result.reason);
    });
  await bench.run();
  printBench(bench);
}
