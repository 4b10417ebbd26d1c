import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createNativeSigner,
  createNobleSigner,
  createRequestVerifier,
  encodeBase64,
  generateNonce,
  PrivateKey,
  type RefusalReason,
  type RequestToVerify,
  type SignedRequestHeaders,
  signRequest,
  signWebSocketAuth,
} from '../../src/signing/index.ts';

const privateKey = PrivateKey.fromSeed(new Uint8Array(32).fill(7));
const otherKey = PrivateKey.fromSeed(new Uint8Array(32).fill(9));
const signer = createNativeSigner(privateKey);
const keyId = 'key_test';
const start = 1_700_000_000_000;
const windowMs = 10_000;

interface Setup {
  verifier: ReturnType<typeof createRequestVerifier<{ publicKey: Uint8Array; label: string }>>;
  clock: { now: number };
}

function setup(options: { maxNoncesPerKey?: number; windowMs?: number } = {}): Setup {
  const clock = { now: start };
  const keys = new Map([
    [keyId, { publicKey: privateKey.publicKey, label: 'main' }],
    ['key_other', { publicKey: otherKey.publicKey, label: 'other' }],
  ]);
  const verifier = createRequestVerifier({
    lookupKey: (id) => keys.get(id) ?? null,
    now: () => clock.now,
    windowMs: options.windowMs ?? windowMs,
    ...(options.maxNoncesPerKey === undefined ? {} : { maxNoncesPerKey: options.maxNoncesPerKey }),
  });
  return { verifier, clock };
}

const body = new TextEncoder().encode('{"request_id":"req_00000001"}');

function signed(
  overrides: Partial<{
    timestampMs: number;
    nonce: string;
    keyId: string;
    body: Uint8Array | null;
  }> = {},
): RequestToVerify & { headers: SignedRequestHeaders } {
  const request = {
    method: 'POST',
    target: '/v1/orders?dry=1',
    body: overrides.body === undefined ? body : overrides.body,
  };
  const headers = signRequest({
    signer,
    keyId: overrides.keyId ?? keyId,
    timestampMs: overrides.timestampMs ?? start,
    nonce: overrides.nonce ?? generateNonce(),
    ...request,
  });
  return { ...request, headers };
}

function withHeaders(
  request: RequestToVerify,
  change: Record<string, string | string[] | undefined>,
): RequestToVerify {
  return { ...request, headers: { ...request.headers, ...change } };
}

function reasonOf(result: { ok: boolean; reason?: RefusalReason }): RefusalReason | 'accepted' {
  return result.ok ? 'accepted' : (result.reason as RefusalReason);
}

describe('request verifier: acceptance', () => {
  it('accepts a signed request and returns the looked-up key', () => {
    const { verifier } = setup();
    const request = signed();
    const result = verifier.verify(request);
    expect(result).toEqual({
      ok: true,
      keyId,
      key: { publicKey: privateKey.publicKey, label: 'main' },
      timestampMs: start,
      nonce: request.headers['SVC-NONCE'],
    });
  });

  it('takes a header given as a one-element list as sent once', () => {
    const { verifier } = setup();
    const request = signed();
    const listed = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [name, [String(value)]]),
    );
    expect(reasonOf(verifier.verify({ ...request, headers: listed }))).toBe('accepted');
  });

  it('reads header names in any case, as Node lower-cases them', () => {
    const { verifier } = setup();
    const request = signed();
    const lowered = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]),
    );
    expect(reasonOf(verifier.verify({ ...request, headers: lowered }))).toBe('accepted');
  });

  it('accepts signatures made by the noble signer', () => {
    const { verifier } = setup();
    const headers = signRequest({
      signer: createNobleSigner(privateKey),
      keyId,
      method: 'GET',
      target: '/v1/account',
      timestampMs: start,
    });
    expect(reasonOf(verifier.verify({ method: 'GET', target: '/v1/account', headers }))).toBe(
      'accepted',
    );
  });

  it('treats a missing body and an empty body alike', () => {
    const { verifier } = setup();
    const request = signed({ body: null });
    expect(reasonOf(verifier.verify({ ...request, body: new Uint8Array() }))).toBe('accepted');
  });
});

describe('request verifier: each refusal reason', () => {
  const cases: Array<[string, (request: RequestToVerify) => RequestToVerify, RefusalReason]> = [
    [
      'missing version',
      (r) => withHeaders(r, { 'SVC-SIGNATURE-VERSION': undefined }),
      'unsupported_version',
    ],
    [
      'version SVC2',
      (r) => withHeaders(r, { 'SVC-SIGNATURE-VERSION': 'SVC2' }),
      'unsupported_version',
    ],
    [
      'version in lower case',
      (r) => withHeaders(r, { 'SVC-SIGNATURE-VERSION': 'svc1' }),
      'unsupported_version',
    ],
    ['missing key id', (r) => withHeaders(r, { 'SVC-API-KEY': undefined }), 'missing_header'],
    ['missing timestamp', (r) => withHeaders(r, { 'SVC-TIMESTAMP': undefined }), 'missing_header'],
    ['missing nonce', (r) => withHeaders(r, { 'SVC-NONCE': undefined }), 'missing_header'],
    ['missing signature', (r) => withHeaders(r, { 'SVC-SIGNATURE': undefined }), 'missing_header'],
    ['empty signature', (r) => withHeaders(r, { 'SVC-SIGNATURE': '' }), 'missing_header'],
    ['empty list of nonces', (r) => withHeaders(r, { 'SVC-NONCE': [] }), 'missing_header'],
    [
      'nonce sent twice',
      (r) => withHeaders(r, { 'SVC-NONCE': ['abcdefghijklmnop', 'abcdefghijklmnoq'] }),
      'duplicate_header',
    ],
    [
      'version sent twice',
      (r) => withHeaders(r, { 'SVC-SIGNATURE-VERSION': ['SVC1', 'SVC1'] }),
      'duplicate_header',
    ],
    [
      'same header under two spellings',
      (r) => withHeaders(r, { 'svc-nonce': String(r.headers['SVC-NONCE']) }),
      'duplicate_header',
    ],
    [
      'key id with a space',
      (r) => withHeaders(r, { 'SVC-API-KEY': 'key test' }),
      'malformed_key_id',
    ],
    [
      'timestamp with a leading zero',
      (r) => withHeaders(r, { 'SVC-TIMESTAMP': `0${start}` }),
      'malformed_timestamp',
    ],
    [
      'timestamp in seconds with a fraction',
      (r) => withHeaders(r, { 'SVC-TIMESTAMP': '1700000000.000' }),
      'malformed_timestamp',
    ],
    ['negative timestamp', (r) => withHeaders(r, { 'SVC-TIMESTAMP': '-1' }), 'malformed_timestamp'],
    [
      'timestamp beyond a safe integer',
      (r) => withHeaders(r, { 'SVC-TIMESTAMP': '99999999999999999' }),
      'malformed_timestamp',
    ],
    [
      'nonce of 15 characters',
      (r) => withHeaders(r, { 'SVC-NONCE': 'a'.repeat(15) }),
      'malformed_nonce',
    ],
    [
      'nonce of 65 characters',
      (r) => withHeaders(r, { 'SVC-NONCE': 'a'.repeat(65) }),
      'malformed_nonce',
    ],
    [
      'nonce with "."',
      (r) => withHeaders(r, { 'SVC-NONCE': 'abcdefghijklmno.' }),
      'malformed_nonce',
    ],
    [
      'signature in base64url',
      (r) =>
        withHeaders(r, {
          'SVC-SIGNATURE': String(r.headers['SVC-SIGNATURE'])
            .replace(/\+/g, '-')
            .replace(/\//g, '_')
            .replace(/=+$/, ''),
        }),
      'malformed_signature_encoding',
    ],
    [
      'signature without padding',
      (r) =>
        withHeaders(r, { 'SVC-SIGNATURE': String(r.headers['SVC-SIGNATURE']).replace(/=+$/, '') }),
      'malformed_signature_encoding',
    ],
    [
      'signature with a line break',
      (r) =>
        withHeaders(r, {
          'SVC-SIGNATURE': `${String(r.headers['SVC-SIGNATURE']).slice(0, 44)}\n${String(r.headers['SVC-SIGNATURE']).slice(44)}`,
        }),
      'malformed_signature_encoding',
    ],
    [
      'signature of 63 bytes',
      (r) => withHeaders(r, { 'SVC-SIGNATURE': encodeBase64(new Uint8Array(63)) }),
      'wrong_signature_length',
    ],
    [
      'signature of 65 bytes',
      (r) => withHeaders(r, { 'SVC-SIGNATURE': encodeBase64(new Uint8Array(65)) }),
      'wrong_signature_length',
    ],
    [
      'target without a leading slash',
      (r) => ({ ...r, target: 'v1/orders?dry=1' }),
      'malformed_request',
    ],
    ['target with a space', (r) => ({ ...r, target: '/v1/orders dry' }), 'malformed_request'],
    ['method with a space', (r) => ({ ...r, method: 'PO ST' }), 'malformed_request'],
    ['unknown key id', (r) => withHeaders(r, { 'SVC-API-KEY': 'key_nobody' }), 'unknown_key'],
    ['another key id', (r) => withHeaders(r, { 'SVC-API-KEY': 'key_other' }), 'bad_signature'],
    [
      'changed body',
      (r) => ({ ...r, body: new TextEncoder().encode('{"request_id":"req_00000002"}') }),
      'bad_signature',
    ],
    ['changed target', (r) => ({ ...r, target: '/v1/orders?dry=0' }), 'bad_signature'],
    ['changed method', (r) => ({ ...r, method: 'PUT' }), 'bad_signature'],
    [
      'signature of zeros',
      (r) => withHeaders(r, { 'SVC-SIGNATURE': encodeBase64(new Uint8Array(64)) }),
      'bad_signature',
    ],
  ];

  for (const [name, change, reason] of cases) {
    it(`${name}: ${reason}`, () => {
      const { verifier } = setup();
      expect(reasonOf(verifier.verify(change(signed())))).toBe(reason);
    });
  }

  it('refusal messages never repeat the header values', () => {
    const { verifier } = setup();
    const request = signed();
    const result = verifier.verify(withHeaders(request, { 'SVC-API-KEY': 'key_nobody' }));
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain('key_nobody');
    expect(JSON.stringify(result)).not.toContain(String(request.headers['SVC-SIGNATURE']));
  });

  it('checks the window before the key, and the key before the signature', () => {
    const { verifier, clock } = setup();
    clock.now = start + windowMs + 1;
    expect(reasonOf(verifier.verify(withHeaders(signed(), { 'SVC-API-KEY': 'key_nobody' })))).toBe(
      'timestamp_outside_window',
    );
  });
});

describe('request verifier: timestamp window', () => {
  it('accepts exactly +-windowMs and refuses one millisecond beyond, either side', () => {
    const { verifier, clock } = setup();
    clock.now = start;
    expect(reasonOf(verifier.verify(signed({ timestampMs: start - windowMs })))).toBe('accepted');
    expect(reasonOf(verifier.verify(signed({ timestampMs: start + windowMs })))).toBe('accepted');
    expect(reasonOf(verifier.verify(signed({ timestampMs: start - windowMs - 1 })))).toBe(
      'timestamp_outside_window',
    );
    expect(reasonOf(verifier.verify(signed({ timestampMs: start + windowMs + 1 })))).toBe(
      'timestamp_outside_window',
    );
  });

  it('honours a configured window', () => {
    const { verifier } = setup({ windowMs: 500 });
    expect(reasonOf(verifier.verify(signed({ timestampMs: start - 500 })))).toBe('accepted');
    expect(reasonOf(verifier.verify(signed({ timestampMs: start - 501 })))).toBe(
      'timestamp_outside_window',
    );
  });

  it('refuses a nonsensical configuration', () => {
    expect(() =>
      createRequestVerifier({ lookupKey: () => null, now: () => 0, windowMs: 0 }),
    ).toThrow(/windowMs/);
    expect(() =>
      createRequestVerifier({ lookupKey: () => null, now: () => 0, maxNoncesPerKey: 0 }),
    ).toThrow(/maxNoncesPerKey/);
  });
});

describe('request verifier: nonces', () => {
  it('refuses a replay of an accepted request', () => {
    const { verifier, clock } = setup();
    const request = signed();
    expect(reasonOf(verifier.verify(request))).toBe('accepted');
    clock.now += 1;
    expect(reasonOf(verifier.verify(request))).toBe('nonce_reused');
  });

  it('refuses the same nonce with a fresh timestamp and signature', () => {
    const { verifier, clock } = setup();
    expect(reasonOf(verifier.verify(signed({ nonce: 'n'.repeat(16) })))).toBe('accepted');
    clock.now += 5_000;
    expect(
      reasonOf(verifier.verify(signed({ nonce: 'n'.repeat(16), timestampMs: clock.now }))),
    ).toBe('nonce_reused');
  });

  it('keeps nonces per key', () => {
    const { verifier } = setup();
    const nonce = 'shared_nonce_0000';
    expect(reasonOf(verifier.verify(signed({ nonce })))).toBe('accepted');
    const other = signRequest({
      signer: createNativeSigner(otherKey),
      keyId: 'key_other',
      method: 'GET',
      target: '/v1/account',
      timestampMs: start,
      nonce,
    });
    expect(
      reasonOf(verifier.verify({ method: 'GET', target: '/v1/account', headers: other })),
    ).toBe('accepted');
  });

  it('does not record nonces of requests that fail verification', () => {
    const { verifier } = setup();
    const request = signed();
    const forged = withHeaders(request, { 'SVC-SIGNATURE': encodeBase64(new Uint8Array(64)) });
    expect(reasonOf(verifier.verify(forged))).toBe('bad_signature');
    expect(verifier.rememberedNonceCount()).toBe(0);
    expect(reasonOf(verifier.verify(request))).toBe('accepted');
  });

  it('still refuses a replay after its nonce was forgotten, by the window', () => {
    const { verifier, clock } = setup();
    // The latest timestamp the server accepts: one window ahead of its time.
    const request = signed({ timestampMs: start + windowMs });
    expect(reasonOf(verifier.verify(request))).toBe('accepted');
    clock.now = start + 2 * windowMs;
    expect(reasonOf(verifier.verify(request))).toBe('nonce_reused');
    clock.now = start + 2 * windowMs + 1;
    expect(reasonOf(verifier.verify(signed({ timestampMs: clock.now })))).toBe('accepted');
    expect(verifier.rememberedNonceCount(keyId)).toBe(1);
    expect(reasonOf(verifier.verify(request))).toBe('timestamp_outside_window');
  });

  it('keeps memory bounded by traffic in the last two windows', () => {
    const { verifier, clock } = setup({ windowMs: 100 });
    let largest = 0;
    for (let step = 0; step < 1_000; step++) {
      clock.now = start + step;
      expect(reasonOf(verifier.verify(signed({ timestampMs: clock.now })))).toBe('accepted');
      largest = Math.max(largest, verifier.rememberedNonceCount());
    }
    // One request per millisecond, kept for 200 ms after acceptance.
    expect(largest).toBe(201);
    expect(verifier.rememberedNonceCount(keyId)).toBe(201);
  });

  it('refuses every replay within retention while old nonces are dropped in bulk', () => {
    const { verifier, clock } = setup({ windowMs: 100 });
    const accepted: RequestToVerify[] = [];
    // Well past the 1,024 expired nonces after which the forgotten ones are dropped at once.
    for (let step = 0; step < 5_000; step++) {
      clock.now = start + step;
      const request = signed({ timestampMs: clock.now });
      expect(reasonOf(verifier.verify(request))).toBe('accepted');
      accepted.push(request);
      if (step % 997 === 0) {
        // Replays of requests still inside the window (100 ms) and still remembered.
        for (const back of [0, 1, 50, 100]) {
          const replay = accepted[step - back];
          if (replay !== undefined) expect(reasonOf(verifier.verify(replay))).toBe('nonce_reused');
        }
      }
    }
    expect(verifier.rememberedNonceCount(keyId)).toBe(201);
  });

  it('ignores headers other than the SVC- ones, whatever their names', () => {
    const { verifier } = setup();
    const request = withHeaders(signed(), {
      host: '127.0.0.1',
      svc: 'x',
      'svcx-nonce': 'x',
      SVC_NONCE: 'x',
      'x-svc-nonce': 'x',
    });
    expect(reasonOf(verifier.verify(request))).toBe('accepted');
  });

  it('forgets the nonces of an idle key when another key is used', () => {
    const { verifier, clock } = setup();
    for (let index = 0; index < 10; index++) verifier.verify(signed());
    expect(verifier.rememberedNonceCount(keyId)).toBe(10);
    clock.now = start + 2 * windowMs + 1;
    const other = signRequest({
      signer: createNativeSigner(otherKey),
      keyId: 'key_other',
      method: 'GET',
      target: '/v1/account',
      timestampMs: clock.now,
    });
    expect(
      reasonOf(verifier.verify({ method: 'GET', target: '/v1/account', headers: other })),
    ).toBe('accepted');
    expect(verifier.rememberedNonceCount(keyId)).toBe(0);
    expect(verifier.rememberedNonceCount()).toBe(1);
  });

  it('fails closed at the per-key cap until old nonces age out', () => {
    const { verifier, clock } = setup({ maxNoncesPerKey: 3 });
    for (let index = 0; index < 3; index++) {
      expect(reasonOf(verifier.verify(signed()))).toBe('accepted');
    }
    const refused = signed();
    expect(reasonOf(verifier.verify(refused))).toBe('nonce_capacity_exceeded');
    expect(verifier.rememberedNonceCount(keyId)).toBe(3);
    // Other keys are unaffected.
    const other = signRequest({
      signer: createNativeSigner(otherKey),
      keyId: 'key_other',
      method: 'GET',
      target: '/v1/account',
      timestampMs: start,
    });
    expect(
      reasonOf(verifier.verify({ method: 'GET', target: '/v1/account', headers: other })),
    ).toBe('accepted');
    clock.now = start + 2 * windowMs + 1;
    expect(reasonOf(verifier.verify(signed({ timestampMs: clock.now })))).toBe('accepted');
  });
});

describe('WebSocket auth verification', () => {
  const base = {
    challenge: 'chl_abc123',
    keyId,
    timestampMs: start,
    scopes: ['account:read', 'orders:read'],
    lastSequence: 17,
  };

  function signedAuth(overrides: Partial<typeof base & { nonce: string }> = {}) {
    const frame = signWebSocketAuth({ signer, ...base, ...overrides });
    return {
      challenge: overrides.challenge ?? base.challenge,
      keyId: frame.key_id,
      timestampMs: frame.timestamp,
      nonce: frame.nonce,
      scopes: frame.scopes,
      lastSequence: frame.last_sequence,
      signature: frame.signature,
    };
  }

  it('accepts a signed auth and refuses any change of a signed field', () => {
    const { verifier } = setup();
    expect(reasonOf(verifier.verifyWebSocketAuth(signedAuth()))).toBe('accepted');
    const changes = [
      { challenge: 'chl_abc124' },
      { scopes: ['account:read'] },
      { scopes: ['orders:read', 'account:read'] },
      { lastSequence: 18 },
      { timestampMs: start + 1 },
      { nonce: 'zzzzzzzzzzzzzzzz' },
    ];
    for (const change of changes) {
      expect(reasonOf(verifier.verifyWebSocketAuth({ ...signedAuth(), ...change }))).toBe(
        'bad_signature',
      );
    }
  });

  it('refuses malformed fields, the window, unknown keys and replays', () => {
    const { verifier, clock } = setup();
    const cases: Array<[Record<string, unknown>, RefusalReason]> = [
      [{ keyId: '' }, 'malformed_key_id'],
      [{ timestampMs: -5 }, 'malformed_timestamp'],
      [{ timestampMs: 1.5 }, 'malformed_timestamp'],
      [{ nonce: 'short' }, 'malformed_nonce'],
      [{ signature: 'not base64!' }, 'malformed_signature_encoding'],
      [{ signature: encodeBase64(new Uint8Array(32)) }, 'wrong_signature_length'],
      [{ challenge: 'a\nb' }, 'malformed_request'],
      [{ scopes: ['a,b'] }, 'malformed_request'],
      [{ lastSequence: -1 }, 'malformed_request'],
      [{ keyId: 'key_nobody' }, 'unknown_key'],
    ];
    for (const [change, reason] of cases) {
      const auth = { ...signedAuth(), ...change } as Parameters<
        typeof verifier.verifyWebSocketAuth
      >[0];
      expect(reasonOf(verifier.verifyWebSocketAuth(auth))).toBe(reason);
    }
    const auth = signedAuth();
    expect(reasonOf(verifier.verifyWebSocketAuth(auth))).toBe('accepted');
    expect(reasonOf(verifier.verifyWebSocketAuth(auth))).toBe('nonce_reused');
    clock.now = start + windowMs + 1;
    expect(reasonOf(verifier.verifyWebSocketAuth(signedAuth()))).toBe('timestamp_outside_window');
  });

  it('shares nonce memory with HTTP requests of the same key', () => {
    const { verifier } = setup();
    const nonce = 'one_nonce_for_both';
    expect(reasonOf(verifier.verify(signed({ nonce })))).toBe('accepted');
    expect(reasonOf(verifier.verifyWebSocketAuth(signedAuth({ nonce })))).toBe('nonce_reused');
  });
});

describe('request verifier: properties', () => {
  const requestArbitrary = fc.record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'),
    target: fc
      .array(fc.constantFrom(...'abcxyz019-_.~%/?=&'.split('')), { maxLength: 40 })
      .map((characters) => `/${characters.join('')}`),
    body: fc.oneof(fc.constant(null), fc.uint8Array({ maxLength: 200 })),
    skewMs: fc.integer({ min: -windowMs, max: windowMs }),
    nonce: fc.string({
      unit: fc.constantFrom(...'ABCxyz019_-'.split('')),
      minLength: 16,
      maxLength: 64,
    }),
  });

  function flipCharacter(text: string, index: number, mask: number): string {
    const position = index % text.length;
    return (
      text.slice(0, position) +
      String.fromCharCode(text.charCodeAt(position) ^ mask) +
      text.slice(position + 1)
    );
  }

  it('accepts whatever the signer signed', () => {
    fc.assert(
      fc.property(requestArbitrary, fc.boolean(), (request, useNoble) => {
        const { verifier } = setup();
        const headers = signRequest({
          signer: useNoble ? createNobleSigner(privateKey) : signer,
          keyId,
          method: request.method,
          target: request.target,
          body: request.body,
          timestampMs: start + request.skewMs,
          nonce: request.nonce,
        });
        const result = verifier.verify({ ...request, headers });
        expect(reasonOf(result)).toBe('accepted');
      }),
      { numRuns: 200 },
    );
  });

  it('refuses it once any byte of body, target, method, timestamp or nonce changes', () => {
    fc.assert(
      fc.property(
        requestArbitrary,
        fc.constantFrom('body', 'target', 'method', 'timestamp', 'nonce'),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (request, part, index, mask) => {
          const { verifier } = setup();
          const headers = signRequest({
            signer,
            keyId,
            method: request.method,
            target: request.target,
            body: request.body,
            timestampMs: start + request.skewMs,
            nonce: request.nonce,
          });
          let changed: RequestToVerify = { ...request, headers };
          if (part === 'body') {
            const bytes = Uint8Array.from(request.body ?? []);
            // Flipping a byte of an empty body means sending one byte.
            const changedBody =
              bytes.length === 0
                ? Uint8Array.of(mask)
                : bytes.map((byte, at) => (at === index % bytes.length ? byte ^ mask : byte));
            changed = { ...changed, body: changedBody };
          } else if (part === 'target') {
            changed = { ...changed, target: flipCharacter(request.target, index, mask) };
          } else if (part === 'method') {
            const method = flipCharacter(request.method, index, mask);
            // Methods compare upper-cased: a case flip is the same method.
            fc.pre(method.toUpperCase() !== request.method);
            changed = { ...changed, method };
          } else if (part === 'timestamp') {
            changed = withHeaders(changed, {
              'SVC-TIMESTAMP': flipCharacter(headers['SVC-TIMESTAMP'], index, mask),
            });
          } else {
            changed = withHeaders(changed, {
              'SVC-NONCE': flipCharacter(headers['SVC-NONCE'], index, mask),
            });
          }
          expect(verifier.verify(changed).ok).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });
});
