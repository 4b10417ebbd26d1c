import { describe, expect, it } from 'vitest';
import {
  buildCanonicalRequestInput,
  buildCanonicalRequestText,
  buildWebSocketAuthInput,
  buildWebSocketAuthText,
  bytesToHex,
  createNativeSigner,
  createNobleSigner,
  createRequestVerifier,
  encodeBase64,
  generateKeyPair,
  hexToBytes,
  isUsablePublicKey,
  nativeVerifySignature,
  nobleVerifySignature,
  PrivateKey,
  type Signer,
  signRequest,
  signWebSocketAuth,
  verifySignature,
} from '../../src/signing/index.ts';
import rfc8032 from './vectors/rfc8032-ed25519.json' with { type: 'json' };
import golden from './vectors/svc1-golden.json' with { type: 'json' };

const signerFactories = [
  ['native', createNativeSigner],
  ['noble', createNobleSigner],
] as const;
const verifiers = [
  ['native', nativeVerifySignature],
  ['noble', nobleVerifySignature],
] as const;

describe('RFC 8032 section 7.1 test vectors', () => {
  for (const vector of rfc8032.vectors) {
    for (const [signerName, createSigner] of signerFactories) {
      it(`${vector.name}: the ${signerName} signer derives the public key and the signature`, () => {
        const signer = createSigner(PrivateKey.fromSeed(hexToBytes(vector.secret_key_hex)));
        expect(bytesToHex(signer.publicKey)).toBe(vector.public_key_hex);
        expect(bytesToHex(signer.sign(hexToBytes(vector.message_hex)))).toBe(vector.signature_hex);
      });
    }
    for (const [verifierName, verify] of verifiers) {
      it(`${vector.name}: the ${verifierName} verifier accepts it and refuses a changed one`, () => {
        const publicKey = hexToBytes(vector.public_key_hex);
        const message = hexToBytes(vector.message_hex);
        const signature = hexToBytes(vector.signature_hex);
        expect(verify(publicKey, message, signature)).toBe(true);
        const changedSignature = Uint8Array.from(signature);
        changedSignature[0] = (changedSignature[0] as number) ^ 1;
        expect(verify(publicKey, message, changedSignature)).toBe(false);
        const longerMessage = new Uint8Array([...message, 0]);
        expect(verify(publicKey, longerMessage, signature)).toBe(false);
      });
    }
  }

  it('verification gives false, not an exception, for wrong lengths and non-points', () => {
    const vector = rfc8032.vectors[1]!;
    const publicKey = hexToBytes(vector.public_key_hex);
    const message = hexToBytes(vector.message_hex);
    const signature = hexToBytes(vector.signature_hex);
    for (const implementation of ['native', 'noble'] as const) {
      expect(verifySignature(publicKey, message, signature.subarray(0, 63), implementation)).toBe(
        false,
      );
      expect(verifySignature(publicKey.subarray(0, 31), message, signature, implementation)).toBe(
        false,
      );
      // y = 2 is not on the curve.
      const notAPoint = new Uint8Array(32);
      notAPoint[0] = 2;
      expect(verifySignature(notAPoint, message, signature, implementation)).toBe(false);
    }
  });
});

describe('golden SVC1 vectors', () => {
  const seed = hexToBytes(golden.seed_hex);
  const privateKey = PrivateKey.fromSeed(seed);
  const signers: Signer[] = [createNativeSigner(privateKey), createNobleSigner(privateKey)];

  it('use the RFC 8032 TEST 1 key, in hex and base64', () => {
    expect(golden.seed_hex).toBe(rfc8032.vectors[0]!.secret_key_hex);
    expect(encodeBase64(seed)).toBe(golden.seed_base64);
    for (const signer of signers) {
      expect(bytesToHex(signer.publicKey)).toBe(golden.public_key_hex);
      expect(encodeBase64(signer.publicKey)).toBe(golden.public_key_base64);
    }
  });

  const requestVectors = golden.vectors.filter((vector) => vector.kind === 'request');
  const webSocketVectors = golden.vectors.filter((vector) => vector.kind === 'websocket_auth');

  it('hold at least a GET with a query, a POST with a JSON body and a WebSocket auth', () => {
    expect(
      requestVectors.some((vector) => vector.method === 'GET' && vector.target?.includes('?')),
    ).toBe(true);
    expect(
      requestVectors.some(
        (vector) => vector.method === 'POST' && vector.target === '/v1/orders' && vector.body_utf8,
      ),
    ).toBe(true);
    expect(webSocketVectors.length).toBeGreaterThan(0);
  });

  for (const vector of requestVectors) {
    const body = vector.body_hex === null ? null : hexToBytes(vector.body_hex!);
    const fields = {
      method: vector.method!,
      target: vector.target!,
      keyId: vector.key_id,
      timestampMs: vector.timestamp_ms,
      nonce: vector.nonce,
      body,
    };

    it(`${vector.name}: the signing input is exactly the stored text and bytes`, () => {
      if (body !== null) expect(new TextDecoder().decode(body)).toBe(vector.body_utf8);
      expect(buildCanonicalRequestText(fields)).toBe(vector.input_text);
      expect(bytesToHex(buildCanonicalRequestInput(fields))).toBe(vector.input_hex);
      expect(vector.input_text.endsWith('\n')).toBe(false);
      expect(vector.input_text.split('\n').at(-1)).toBe(vector.body_sha256_hex);
    });

    for (const signer of signers) {
      it(`${vector.name}: the ${signer.implementation} signer gives the frozen signature and headers`, () => {
        const input = hexToBytes(vector.input_hex);
        expect(encodeBase64(signer.sign(input))).toBe(vector.signature_base64);
        expect(signRequest({ signer, ...fields })).toEqual(vector.headers);
      });
    }

    it(`${vector.name}: each implementation verifies the other's signature`, () => {
      const input = hexToBytes(vector.input_hex);
      const [native, noble] = signers as [Signer, Signer];
      const publicKey = hexToBytes(golden.public_key_hex);
      expect(bytesToHex(native.sign(input))).toBe(bytesToHex(noble.sign(input)));
      expect(nobleVerifySignature(publicKey, input, native.sign(input))).toBe(true);
      expect(nativeVerifySignature(publicKey, input, noble.sign(input))).toBe(true);
    });

    for (const [verifierName, verify] of verifiers) {
      it(`${vector.name}: the request verifier (${verifierName}) accepts the stored headers`, () => {
        const verifier = createRequestVerifier({
          lookupKey: (keyId) =>
            keyId === vector.key_id ? { publicKey: hexToBytes(golden.public_key_hex) } : null,
          now: () => vector.timestamp_ms,
          verifySignature: verify,
        });
        const result = verifier.verify({
          method: fields.method,
          target: fields.target,
          headers: vector.headers!,
          body,
        });
        expect(result).toMatchObject({ ok: true, keyId: vector.key_id });
      });
    }
  }

  for (const vector of webSocketVectors) {
    const fields = {
      challenge: vector.challenge!,
      keyId: vector.key_id,
      timestampMs: vector.timestamp_ms,
      nonce: vector.nonce,
      scopes: vector.scopes!,
      lastSequence: vector.last_sequence!,
    };

    it(`${vector.name}: the signing input is exactly the stored text and bytes`, () => {
      expect(buildWebSocketAuthText(fields)).toBe(vector.input_text);
      expect(bytesToHex(buildWebSocketAuthInput(fields))).toBe(vector.input_hex);
    });

    for (const signer of signers) {
      it(`${vector.name}: the ${signer.implementation} signer gives the frozen signature`, () => {
        expect(encodeBase64(signer.sign(hexToBytes(vector.input_hex)))).toBe(
          vector.signature_base64,
        );
        expect(signWebSocketAuth({ signer, ...fields })).toEqual({
          key_id: vector.key_id,
          timestamp: vector.timestamp_ms,
          nonce: vector.nonce,
          scopes: vector.scopes,
          last_sequence: vector.last_sequence,
          signature: vector.signature_base64,
        });
      });
    }

    for (const [verifierName, verify] of verifiers) {
      it(`${vector.name}: verifyWebSocketAuth (${verifierName}) accepts it`, () => {
        const verifier = createRequestVerifier({
          lookupKey: () => ({ publicKey: hexToBytes(golden.public_key_hex) }),
          now: () => vector.timestamp_ms,
          verifySignature: verify,
        });
        expect(
          verifier.verifyWebSocketAuth({ ...fields, signature: vector.signature_base64 }),
        ).toMatchObject({ ok: true });
      });
    }
  }
});

describe('isUsablePublicKey', () => {
  it('accepts real keys and refuses small-order points and non-points', () => {
    expect(isUsablePublicKey(generateKeyPair().publicKey)).toBe(true);
    expect(isUsablePublicKey(new Uint8Array(32))).toBe(false);
    const identity = new Uint8Array(32);
    identity[0] = 1; // the neutral element, order 1
    expect(isUsablePublicKey(identity)).toBe(false);
    expect(isUsablePublicKey(new Uint8Array(31))).toBe(false);
    expect(isUsablePublicKey(new Uint8Array(32).fill(0xff))).toBe(false);
  });
});
