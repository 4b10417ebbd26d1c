/**
 * The wire profile (`venue.wire`): the default is the contract's SVC1 byte for byte (the golden
 * vectors, through the fast path and through the general one), each setting changes exactly
 * what it names, the verifier accepts what a signer on the same profile sends and refuses what
 * a signer on another profile sends, and a bad profile is refused with every problem and path.
 */
import { describe, expect, it } from 'vitest';
import {
  buildRequestSigningText,
  buildWebSocketSigningText,
  createNativeSigner,
  createRequestVerifier,
  DEFAULT_WIRE_PROFILE,
  decodeSignatureText,
  describeSigningInput,
  encodeBase64,
  generateWireNonce,
  hexToBytes,
  isValidWireNonce,
  parseWireProfile,
  parseWireTimestamp,
  PrivateKey,
  signRequestWithProfile,
  signWebSocketAuthFrame,
  type WireProfile,
  type WireProfileInput,
  wireSettingsToCheck,
} from '../../src/signing/index.ts';
import golden from './vectors/svc1-golden.json' with { type: 'json' };

const privateKey = PrivateKey.fromSeed(hexToBytes(golden.seed_hex));
const signer = createNativeSigner(privateKey);
const requestVectors = golden.vectors.filter((vector) => vector.kind === 'request');
const authVector = golden.vectors.find((vector) => vector.kind === 'websocket_auth')!;

/** The default's settings through the general code path (not the SVC1 fast path). */
const generalDefault: WireProfile = { ...DEFAULT_WIRE_PROFILE, isDefault: false };

function bodyOf(vector: (typeof requestVectors)[number]): Uint8Array | null {
  return vector.body_hex === null || vector.body_hex === undefined
    ? null
    : hexToBytes(vector.body_hex);
}

describe('the default profile is SVC1 byte for byte', () => {
  it('an empty profile, and one spelling out every default, are the default', () => {
    expect(parseWireProfile({}).isDefault).toBe(true);
    expect(parseWireProfile(null).isDefault).toBe(true);
    const spelled: WireProfileInput = {
      signature_version: 'SVC1',
      timestamp: 'ms',
      signature_encoding: 'base64',
      nonce: { format: 'base64url', length: 32 },
      request_input: {
        fields: ['version', 'method', 'target', 'key_id', 'timestamp', 'nonce', 'body_sha256'],
        separator: '\n',
      },
      headers: {
        api_key: 'SVC-API-KEY',
        timestamp: 'SVC-TIMESTAMP',
        nonce: 'SVC-NONCE',
        signature: 'SVC-SIGNATURE',
        signature_version: 'SVC-SIGNATURE-VERSION',
      },
      websocket_auth: {
        prefix: 'SVC1-WS',
        fields: {
          key_id: 'key_id',
          timestamp: 'timestamp',
          nonce: 'nonce',
          scopes: 'scopes',
          last_sequence: 'last_sequence',
          signature: 'signature',
        },
        input: {
          template:
            'SVC1-WS\n{challenge}\n{key_id}\n{timestamp}\n{nonce}\n{scopes}\n{last_sequence}',
        },
        scope_separator: ',',
      },
    };
    // The template spells the WebSocket input differently, so only the request side is default.
    const parsed = parseWireProfile(spelled);
    expect(buildWebSocketSigningText({ ...parsed, isDefault: false }, authFields())).toBe(
      authVector.input_text,
    );
    const { websocket_auth: _ws, ...requestOnly } = spelled;
    expect(parseWireProfile(requestOnly).isDefault).toBe(true);
  });

  for (const [name, profile] of [
    ['fast path', DEFAULT_WIRE_PROFILE],
    ['general path', generalDefault],
  ] as const) {
    it(`request vectors: the same input, signature and headers (${name})`, () => {
      for (const vector of requestVectors) {
        const request = {
          method: vector.method!,
          target: vector.target!,
          keyId: vector.key_id,
          timestampMs: vector.timestamp_ms,
          nonce: vector.nonce,
          body: bodyOf(vector),
        };
        expect(buildRequestSigningText(profile, request)).toBe(vector.input_text);
        expect(describeSigningInput(profile, request)).toBe(vector.input_text);
        expect(signRequestWithProfile(profile, { signer, ...request })).toEqual(vector.headers);
      }
    });

    it(`the WebSocket vector: the same input and frame fields (${name})`, () => {
      expect(buildWebSocketSigningText(profile, authFields())).toBe(authVector.input_text);
      expect(signWebSocketAuthFrame(profile, { signer, ...authFields() })).toEqual({
        key_id: authVector.key_id,
        timestamp: String(authVector.timestamp_ms),
        nonce: authVector.nonce,
        scopes: authVector.scopes,
        last_sequence: authVector.last_sequence,
        signature: authVector.signature_base64,
      });
    });
  }
});

function authFields() {
  return {
    challenge: authVector.challenge!,
    keyId: authVector.key_id,
    timestampMs: authVector.timestamp_ms,
    nonce: authVector.nonce,
    scopes: authVector.scopes!,
    lastSequence: authVector.last_sequence!,
  };
}

const vector = requestVectors.find((candidate) => candidate.body_hex !== null)!;
const request = {
  method: vector.method!,
  target: vector.target!,
  keyId: vector.key_id,
  timestampMs: 1_767_225_600_123,
  nonce: vector.nonce,
  body: bodyOf(vector),
};

describe('each setting changes what it names', () => {
  it('timestamp: seconds and RFC 3339, in the header and in the input', () => {
    const seconds = parseWireProfile({ timestamp: 's' });
    const signed = signRequestWithProfile(seconds, { signer, ...request });
    expect(signed['SVC-TIMESTAMP']).toBe('1767225600');
    expect(buildRequestSigningText(seconds, request).split('\n')[4]).toBe('1767225600');
    const rfc = parseWireProfile({ timestamp: 'rfc3339' });
    expect(signRequestWithProfile(rfc, { signer, ...request })['SVC-TIMESTAMP']).toBe(
      '2026-01-01T00:00:00.123Z',
    );
    expect(parseWireTimestamp('rfc3339', '2026-01-01T00:00:00.123Z')).toBe(1_767_225_600_123);
    expect(parseWireTimestamp('s', '1767225600')).toBe(1_767_225_600_000);
    expect(parseWireTimestamp('s', '01767225600')).toBeNull();
    expect(parseWireTimestamp('rfc3339', '1767225600')).toBeNull();
  });

  it('signature encoding: hex and base64url of the same signature, each with one spelling', () => {
    const base = signRequestWithProfile(DEFAULT_WIRE_PROFILE, { signer, ...request });
    const bytes = Buffer.from(base['SVC-SIGNATURE']!, 'base64');
    const hex = signRequestWithProfile(parseWireProfile({ signature_encoding: 'hex' }), {
      signer,
      ...request,
      nonce: request.nonce,
    });
    expect(hex['SVC-SIGNATURE']).toBe(bytes.toString('hex'));
    const url = signRequestWithProfile(parseWireProfile({ signature_encoding: 'base64url' }), {
      signer,
      ...request,
    });
    expect(url['SVC-SIGNATURE']).toBe(bytes.toString('base64url'));
    expect(decodeSignatureText('hex', bytes.toString('hex').toUpperCase())).toBeNull();
    expect(decodeSignatureText('base64url', `${bytes.toString('base64url')}==`)).toBeNull();
    expect(decodeSignatureText('base64', bytes.toString('base64url'))).toBeNull();
  });

  it('nonce formats: generated in the format and length, and checked', () => {
    for (const [format, pattern] of [
      ['base64url', /^[A-Za-z0-9_-]{24}$/],
      ['alphanumeric', /^[A-Za-z0-9]{24}$/],
      ['hex', /^[0-9a-f]{24}$/],
      ['uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/],
    ] as const) {
      for (let round = 0; round < 50; round++) {
        const nonce = generateWireNonce(format, 24);
        expect(nonce).toMatch(pattern);
        expect(isValidWireNonce(format, nonce)).toBe(true);
      }
    }
    expect(isValidWireNonce('hex', 'ABCDEF0123456789')).toBe(false);
    expect(isValidWireNonce('alphanumeric', 'abc_def_0123456789')).toBe(false);
    const profile = parseWireProfile({ nonce: { format: 'hex', length: 40 } });
    const signed = signRequestWithProfile(profile, { ...request, nonce: undefined, signer });
    expect(signed['SVC-NONCE']).toMatch(/^[0-9a-f]{40}$/);
    expect(() => buildRequestSigningText(profile, request)).toThrow(/nonce must be/);
  });

  it('headers: other names, and no version header at all', () => {
    const profile = parseWireProfile({
      headers: {
        api_key: 'X-Key',
        timestamp: 'X-Time',
        nonce: 'X-Nonce',
        signature: 'X-Sig',
        signature_version: null,
      },
    });
    expect(Object.keys(signRequestWithProfile(profile, { signer, ...request })).sort()).toEqual([
      'X-Key',
      'X-Nonce',
      'X-Sig',
      'X-Time',
    ]);
    const versioned = parseWireProfile({ signature_version: 'V2' });
    expect(signRequestWithProfile(versioned, { signer, ...request })['SVC-SIGNATURE-VERSION']).toBe(
      'V2',
    );
    expect(buildRequestSigningText(versioned, request).startsWith('V2\n')).toBe(true);
  });

  it('request input: fields in another order and separator, or a template', () => {
    const reordered = parseWireProfile({
      request_input: { fields: ['timestamp', 'nonce', 'method', 'path', 'query'], separator: '|' },
    });
    const [path, query] = request.target.split('?');
    expect(buildRequestSigningText(reordered, request)).toBe(
      `1767225600123|${request.nonce}|POST|${path}|${query ?? ''}`,
    );
    const templated = parseWireProfile({
      request_input: { template: '{method} {target}\n{timestamp}.{nonce}.{body_sha256} {{x}}' },
    });
    expect(buildRequestSigningText(templated, request)).toBe(
      `POST ${request.target}\n1767225600123.${request.nonce}.${vector.body_sha256_hex} {x}`,
    );
  });

  it('WebSocket auth: field names, signing input, scope separator and scope names', () => {
    const profile = parseWireProfile({
      websocket_auth: {
        prefix: 'WS-AUTH',
        fields: { key_id: 'apiKey', timestamp: 'ts', signature: 'sig', scopes: 'perms' },
        input: { fields: ['prefix', 'challenge', 'timestamp', 'nonce', 'scopes'], separator: ' ' },
        scope_separator: ' ',
      },
      scopes: { 'orders:write': 'trade', 'account:read': 'read-account' },
    });
    const fields = { ...authFields(), scopes: ['read-account', 'trade'] };
    expect(buildWebSocketSigningText(profile, fields)).toBe(
      `WS-AUTH ${fields.challenge} ${fields.timestampMs} ${fields.nonce} read-account trade`,
    );
    const frame = signWebSocketAuthFrame(profile, { signer, ...fields });
    expect(Object.keys(frame).sort()).toEqual([
      'apiKey',
      'last_sequence',
      'nonce',
      'perms',
      'sig',
      'ts',
    ]);
    expect(profile.scopes['orders:write']).toBe('trade');
    expect(profile.scopes['fills:read']).toBe('fills:read');
  });
});

describe('the verifier on a profile', () => {
  const other: WireProfileInput = {
    timestamp: 's',
    signature_encoding: 'hex',
    nonce: { format: 'alphanumeric' },
    request_input: {
      fields: ['method', 'target', 'timestamp', 'nonce', 'body_sha256'],
      separator: '|',
    },
    headers: { api_key: 'X-Key', timestamp: 'X-Time', nonce: 'X-Nonce', signature: 'X-Sig' },
  };
  const now = request.timestampMs + 500;
  const verifierOn = (profile: WireProfile) =>
    createRequestVerifier({
      lookupKey: (keyId) => (keyId === request.keyId ? { publicKey: privateKey.publicKey } : null),
      now: () => now,
      profile,
    });
  const lower = (headers: Record<string, string>) =>
    Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

  it('accepts a request signed on the same profile, once', () => {
    const profile = parseWireProfile(other);
    const verifier = verifierOn(profile);
    const headers = lower(
      signRequestWithProfile(profile, { signer, ...request, nonce: undefined }),
    );
    const toVerify = { method: 'POST', target: request.target, headers, body: request.body };
    expect(verifier.verify(toVerify)).toMatchObject({ ok: true, keyId: request.keyId });
    expect(verifier.verify(toVerify)).toMatchObject({ ok: false, reason: 'nonce_reused' });
  });

  it('refuses a request signed on another profile, by each setting', () => {
    const profile = parseWireProfile(other);
    const verifier = verifierOn(profile);
    const variants: [WireProfileInput, string][] = [
      [{}, 'missing_header'],
      [{ ...other, timestamp: 'ms' }, 'timestamp_outside_window'],
      [{ ...other, signature_encoding: 'base64' }, 'malformed_signature_encoding'],
      [{ ...other, nonce: { format: 'uuid' } }, 'malformed_nonce'],
      [
        {
          ...other,
          request_input: { template: '{method} {target} {timestamp} {nonce} {body_sha256}' },
        },
        'bad_signature',
      ],
      [{ ...other, headers: { ...other.headers, signature: 'X-Signature' } }, 'missing_header'],
      [{ ...other, signature_version: 'SVC2' }, 'unsupported_version'],
    ];
    for (const [variant, reason] of variants) {
      const headers = lower(
        signRequestWithProfile(parseWireProfile(variant), { signer, ...request, nonce: undefined }),
      );
      const result = verifier.verify({
        method: 'POST',
        target: request.target,
        headers,
        body: request.body,
      });
      expect(result, JSON.stringify(variant)).toMatchObject({ ok: false, reason });
    }
  });

  it('checks WebSocket auth fields on the profile', () => {
    const profile = parseWireProfile({ ...other, scopes: { 'fills:read': 'fills' } });
    const verifier = verifierOn(profile);
    const fields = {
      ...authFields(),
      timestampMs: now,
      nonce: generateWireNonce('alphanumeric', 32),
      scopes: ['fills'],
    };
    const frame = signWebSocketAuthFrame(profile, { signer, ...fields });
    const good = { ...fields, signature: String(frame.signature) };
    expect(verifier.verifyWebSocketAuth(good)).toMatchObject({ ok: true });
    const wrong = signWebSocketAuthFrame(DEFAULT_WIRE_PROFILE, {
      signer,
      ...fields,
      nonce: generateWireNonce('alphanumeric', 32),
    });
    expect(
      verifier.verifyWebSocketAuth({
        ...fields,
        nonce: String(wrong.nonce),
        signature: String(wrong.signature),
      }),
    ).toMatchObject({ ok: false, reason: 'malformed_signature_encoding' });
  });
});

describe('a bad profile is refused with every problem and its path', () => {
  it('lists each problem once, with its path, and quotes no unknown key value', () => {
    let error: unknown;
    try {
      parseWireProfile({
        timestamp: 'minutes',
        signature_encoding: 'base32',
        nonce: { format: 'hex', length: 8 },
        request_input: { template: '{method} {path} {colour}' },
        headers: { api_key: 'X Key', nonce: 'X-Same', signature: 'x-same', extra: 1 },
        websocket_auth: {
          fields: { key_id: 'op' },
          input: { fields: ['challenge', 'nonce'] },
        },
        scopes: { 'orders:write': 'a,b', 'orders:read': 'read', 'fills:read': 'read' },
      });
    } catch (caught) {
      error = caught;
    }
    const issues = (error as { details: { issues: { path: PropertyKey[]; message: string }[] } })
      .details.issues;
    expect((error as { code: string }).code).toBe('WIRE_PROFILE_INVALID');
    const paths = issues.map((issue) => issue.path.join('.'));
    expect(paths).toEqual(
      expect.arrayContaining([
        'timestamp',
        'signature_encoding',
        'nonce.length',
        'request_input.template',
        'headers.api_key',
        'headers',
        'websocket_auth.fields.key_id',
        'websocket_auth.input.fields',
        'scopes.orders:write',
      ]),
    );
    expect(
      issues.find((issue) => issue.path.join('.') === 'request_input.template')?.message,
    ).toContain('{colour}');
    expect(
      issues.find((issue) => issue.path.join('.') === 'websocket_auth.input.fields')?.message,
    ).toContain('timestamp');
  });

  it('refuses a profile whose input would not bind the timestamp and nonce', () => {
    expect(() => parseWireProfile({ request_input: { fields: ['method', 'target'] } })).toThrow(
      /request_input.fields: must list timestamp, nonce/,
    );
    expect(() =>
      parseWireProfile({ request_input: { fields: ['method'], template: '{method}' } }),
    ).toThrow(/not both/);
  });

  it('names repeated header and scope names', () => {
    expect(() => parseWireProfile({ headers: { nonce: 'X-A', signature: 'x-a' } })).toThrow(
      /headers.signature: the same header name as nonce/,
    );
    expect(() =>
      parseWireProfile({ scopes: { 'orders:read': 'read', 'fills:read': 'read' } }),
    ).toThrow(/scopes.fills:read: the same scope name as orders:read/);
  });
});

describe('diagnosis', () => {
  it('the signing input shown holds no secret, and the settings to check name the profile', () => {
    const profile = parseWireProfile({ timestamp: 's', signature_encoding: 'hex' });
    const text = describeSigningInput(profile, request);
    for (const secret of [
      golden.seed_hex,
      golden.seed_base64,
      encodeBase64(signer.sign(new Uint8Array())),
    ]) {
      expect(text).not.toContain(secret.slice(0, 12));
    }
    const settings = wireSettingsToCheck(profile).join('\n');
    expect(settings).toContain('venue.wire.timestamp (s)');
    expect(settings).toContain('venue.wire.signature_encoding (hex)');
    expect(settings).toContain('{version}\\n{method}');
  });
});
