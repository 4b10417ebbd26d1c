import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bodySha256Hex,
  buildCanonicalRequestText,
  buildWebSocketAuthText,
  decodeBase64Strict,
  encodeBase64,
  generateNonce,
  isValidNonce,
  NONCE_ALPHABET,
  parseTimestampHeader,
} from '../../src/signing/index.ts';
import { pooledRandomBytes } from '../../src/signing/nonce.ts';

const fields = {
  method: 'GET',
  target: '/v1/account',
  keyId: 'key_1',
  timestampMs: 1_700_000_000_000,
  nonce: 'abcdefghijklmnop',
};
const emptyHash = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

describe('canonical request input', () => {
  it('joins the seven fields with LF and no trailing LF', () => {
    expect(buildCanonicalRequestText(fields)).toBe(
      `SVC1\nGET\n/v1/account\nkey_1\n1700000000000\nabcdefghijklmnop\n${emptyHash}`,
    );
  });

  it('hashes no body, a null body and an empty body alike, and the exact bytes otherwise', () => {
    expect(bodySha256Hex(undefined)).toBe(emptyHash);
    expect(bodySha256Hex(null)).toBe(emptyHash);
    expect(bodySha256Hex(new Uint8Array())).toBe(emptyHash);
    expect(bodySha256Hex(new TextEncoder().encode('abc'))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    // Same JSON value, different bytes: different input.
    const compact = buildCanonicalRequestText({
      ...fields,
      method: 'POST',
      body: new TextEncoder().encode('{"a":1}'),
    });
    const spaced = buildCanonicalRequestText({
      ...fields,
      method: 'POST',
      body: new TextEncoder().encode('{"a": 1}'),
    });
    expect(compact).not.toBe(spaced);
  });

  it('upper-cases the method and keeps the target exactly as given', () => {
    const text = buildCanonicalRequestText({
      ...fields,
      method: 'post',
      target: '/v1/orders?b=2&a=1&a=%2F',
    });
    expect(text.split('\n').slice(1, 3)).toEqual(['POST', '/v1/orders?b=2&a=1&a=%2F']);
  });

  it('refuses fields that could break the line structure or are out of format', () => {
    const bad = [
      { method: 'GE\nT' },
      { method: '' },
      { target: 'v1/account' },
      { target: '/v1/account\nx' },
      { target: '/v1/a b' },
      { target: '/v1/a#fragment' },
      { target: '/v1/é' },
      { keyId: '' },
      { keyId: 'key 1' },
      { keyId: 'k'.repeat(129) },
      { nonce: 'short' },
      { nonce: 'a'.repeat(65) },
      { nonce: 'abcdefghijklmno+' },
      { timestampMs: -1 },
      { timestampMs: 1.5 },
      { timestampMs: Number.MAX_SAFE_INTEGER + 1 },
      { timestampMs: Number.NaN },
    ];
    for (const change of bad) {
      expect(codeOf(() => buildCanonicalRequestText({ ...fields, ...change }))).toBe(
        'SIGNING_INPUT_INVALID',
      );
    }
  });
});

describe('WebSocket auth input', () => {
  const auth = {
    challenge: 'chl_1',
    keyId: 'key_1',
    timestampMs: 5,
    nonce: 'abcdefghijklmnop',
    scopes: ['account:read', 'orders:read'],
    lastSequence: 0,
  };

  it('joins its seven fields with LF and the scopes with commas', () => {
    expect(buildWebSocketAuthText(auth)).toBe(
      'SVC1-WS\nchl_1\nkey_1\n5\nabcdefghijklmnop\naccount:read,orders:read\n0',
    );
    expect(buildWebSocketAuthText({ ...auth, scopes: [] }).split('\n')[5]).toBe('');
  });

  it('refuses a scope with a comma, a line feed in the challenge, a negative sequence', () => {
    for (const change of [
      { scopes: ['a,b'] },
      { scopes: [''] },
      { challenge: 'a\nb' },
      { challenge: '' },
      { lastSequence: -1 },
      { lastSequence: 0.5 },
    ]) {
      expect(codeOf(() => buildWebSocketAuthText({ ...auth, ...change }))).toBe(
        'SIGNING_INPUT_INVALID',
      );
    }
  });
});

describe('timestamp header', () => {
  it('accepts plain decimal milliseconds only', () => {
    expect(parseTimestampHeader('1700000000000')).toBe(1_700_000_000_000);
    expect(parseTimestampHeader('0')).toBe(0);
    for (const text of [
      '01700000000000',
      '00',
      '-1',
      '+1',
      '1.0',
      '1e12',
      ' 1',
      '1 ',
      '',
      '0x10',
    ]) {
      expect(parseTimestampHeader(text)).toBeNull();
    }
    expect(parseTimestampHeader(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseTimestampHeader('9007199254740992')).toBeNull();
    expect(parseTimestampHeader('12345678901234567')).toBeNull();
  });

  it('round-trips every safe non-negative integer', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (value) => {
        expect(parseTimestampHeader(String(value))).toBe(value);
      }),
    );
  });
});

describe('strict base64', () => {
  it('accepts exactly the canonical padded spelling', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const text = encodeBase64(bytes);
        expect(Array.from(decodeBase64Strict(text) ?? [])).toEqual(Array.from(bytes));
      }),
    );
    for (const text of [
      'AB==',
      'AAB=',
      'AA',
      'AAA',
      'AA=',
      'A===',
      'AA==\n',
      ' AA==',
      '_-8=',
      'AA==AA==',
    ]) {
      expect(decodeBase64Strict(text)).toBeNull();
    }
    expect(decodeBase64Strict('')).toEqual(new Uint8Array());
  });
});

describe('nonce generator', () => {
  it('produces valid nonces of the asked length, 32 by default', () => {
    expect(generateNonce()).toHaveLength(32);
    for (const length of [16, 17, 40, 64]) {
      const nonce = generateNonce(length);
      expect(nonce).toHaveLength(length);
      expect(isValidNonce(nonce)).toBe(true);
    }
    expect(generateNonce()).not.toBe(generateNonce());
  });

  it('draws nonces from a pool of CSPRNG output without handing a byte out twice', () => {
    // More than one pool (4 KiB) of nonces: the refill is crossed, and no nonce repeats.
    const nonces = new Set(Array.from({ length: 300 }, () => generateNonce()));
    expect(nonces.size).toBe(300);
    const first = pooledRandomBytes(64);
    const copy = Uint8Array.from(first);
    pooledRandomBytes(4096);
    // A copy: what was handed out does not change when the pool moves on or refills.
    expect(first).toEqual(copy);
    expect(pooledRandomBytes(5000)).toHaveLength(5000);
    // Uniform enough that all 64 characters turn up among 300 x 32 draws.
    expect(new Set([...nonces].join('')).size).toBe(64);
  });

  it('refuses lengths outside 16..64', () => {
    for (const length of [15, 65, 0, 20.5]) {
      expect(codeOf(() => generateNonce(length))).toBe('SIGNING_INPUT_INVALID');
    }
  });

  it('maps the 256 byte values onto the 64 characters exactly 4 times each (no bias)', () => {
    expect(new Set(NONCE_ALPHABET).size).toBe(64);
    const counts = new Map<string, number>();
    for (let start = 0; start < 256; start += 64) {
      const nonce = generateNonce(64, (size) =>
        Uint8Array.from({ length: size }, (_, index) => start + index),
      );
      for (const character of nonce) counts.set(character, (counts.get(character) ?? 0) + 1);
    }
    expect(counts.size).toBe(64);
    expect([...counts.values()].every((count) => count === 4)).toBe(true);
    expect([...counts.keys()].sort().join('')).toBe([...NONCE_ALPHABET].sort().join(''));
  });
});
