/**
 * The value formats a wire profile chooses: timestamps (epoch ms, epoch s, RFC 3339),
 * signature encodings (base64, base64url, hex) and nonces (base64url, alphanumeric, hex, uuid).
 * Each reader is strict, for the reason encoding.ts gives: one accepted spelling per value.
 */
import { randomUUID } from 'node:crypto';
import { isoTimestamp } from '../core/clock.ts';
import { PaperbotError } from '../core/errors.ts';
import { parseTimestamp } from '../protocol/index.ts';
import {
  formatTimestamp as formatTimestampMs,
  isValidNonce,
  parseTimestampHeader,
} from './canonical.ts';
import { decodeBase64Strict, encodeBase64 } from './encoding.ts';
import { generateNonce, pooledRandomBytes } from './nonce.ts';
import type { NonceFormat, SignatureEncoding, TimestampUnit } from './wire-profile.ts';

/** The timestamp as the profile writes it, from epoch milliseconds. */
export function formatWireTimestamp(unit: TimestampUnit, timestampMs: number): string {
  const text = formatTimestampMs(timestampMs);
  if (unit === 'ms') return text;
  if (unit === 's') return String(Math.floor(timestampMs / 1000));
  return isoTimestamp(timestampMs);
}

/** Epoch milliseconds of a timestamp written in `unit`, or null when it is not one. */
export function parseWireTimestamp(unit: TimestampUnit, text: string): number | null {
  if (unit === 'ms') return parseTimestampHeader(text);
  if (unit === 's') {
    const seconds = parseTimestampHeader(text);
    return seconds === null || !Number.isSafeInteger(seconds * 1000) ? null : seconds * 1000;
  }
  return text.length <= 40 ? parseTimestamp(text) : null;
}

export function timestampUnitDescription(unit: TimestampUnit): string {
  return unit === 'ms'
    ? 'decimal epoch milliseconds without sign or leading zeros'
    : unit === 's'
      ? 'decimal epoch seconds without sign or leading zeros'
      : 'an RFC 3339 UTC date-time';
}

export function encodeSignature(encoding: SignatureEncoding, signature: Uint8Array): string {
  const bytes = Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength);
  if (encoding === 'base64') return encodeBase64(signature);
  return bytes.toString(encoding === 'hex' ? 'hex' : 'base64url');
}

const hexPattern = /^[0-9a-f]*$/;
const base64UrlPattern = /^[A-Za-z0-9_-]*$/;

/** The signature's bytes, or null when the text is not in the encoding's one spelling. */
export function decodeSignatureText(encoding: SignatureEncoding, text: string): Uint8Array | null {
  if (encoding === 'base64') return decodeBase64Strict(text);
  const pattern = encoding === 'hex' ? hexPattern : base64UrlPattern;
  if (!pattern.test(text)) return null;
  const bytes = Buffer.from(text, encoding === 'hex' ? 'hex' : 'base64url');
  if (bytes.toString(encoding === 'hex' ? 'hex' : 'base64url') !== text) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function signatureEncodingDescription(encoding: SignatureEncoding): string {
  return encoding === 'base64'
    ? 'standard padded base64'
    : encoding === 'base64url'
      ? 'unpadded base64url'
      : 'lower-case hex';
}

const HEX_DIGITS = '0123456789abcdef';
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A fresh random nonce in `format` (`length` characters; a uuid is always 36). */
export function generateWireNonce(format: NonceFormat, length: number): string {
  if (format === 'base64url') return generateNonce(length);
  if (format === 'uuid') return randomUUID();
  if (format === 'hex') {
    const bytes = pooledRandomBytes(length);
    let nonce = '';
    for (let index = 0; index < length; index++) {
      nonce += HEX_DIGITS[(bytes[index] as number) & 0x0f];
    }
    return nonce;
  }
  // 62 characters: bytes whose low six bits are 62 or 63 are drawn again, so none is favoured.
  let nonce = '';
  while (nonce.length < length) {
    const bytes = pooledRandomBytes(length);
    for (const byte of bytes) {
      const index = byte & 0x3f;
      if (index < 62 && nonce.length < length) nonce += ALPHANUMERIC[index];
    }
  }
  return nonce;
}

const noncePatterns: Readonly<Record<Exclude<NonceFormat, 'base64url'>, RegExp>> = {
  alphanumeric: /^[A-Za-z0-9]{16,64}$/,
  hex: /^[0-9a-f]{16,64}$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
};

/** True when `nonce` is written in `format` (16 to 64 characters, a uuid 36). */
export function isValidWireNonce(format: NonceFormat, nonce: string): boolean {
  return format === 'base64url' ? isValidNonce(nonce) : noncePatterns[format].test(nonce);
}

export function nonceFormatDescription(format: NonceFormat): string {
  return format === 'base64url'
    ? '16 to 64 characters of A-Z a-z 0-9 _ -'
    : format === 'alphanumeric'
      ? '16 to 64 characters of A-Z a-z 0-9'
      : format === 'hex'
        ? '16 to 64 lower-case hex digits'
        : 'a lower-case RFC 4122 UUID';
}

export function checkWireNonce(format: NonceFormat, nonce: string): void {
  if (!isValidWireNonce(format, nonce)) {
    throw new PaperbotError(
      'SIGNING_INPUT_INVALID',
      `signing input field nonce must be ${nonceFormatDescription(format)}`,
      { details: { field: 'nonce' } },
    );
  }
}
