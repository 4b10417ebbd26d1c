/**
 * Byte and text encodings used by SVC1. Decoding is strict on purpose: a verifier that accepts
 * several spellings of the same signature or key lets two different header values mean the same
 * thing, which makes logs and replay checks disagree with what was signed.
 */

const textEncoder = new TextEncoder();

export function utf8Bytes(text: string): Uint8Array {
  return textEncoder.encode(text);
}

export function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

const hexPattern = /^(?:[0-9a-fA-F]{2})*$/;

/** Decodes an even-length hex string; throws `RangeError` on anything else. */
export function hexToBytes(hex: string): Uint8Array {
  if (!hexPattern.test(hex)) {
    throw new RangeError('expected an even-length hex string');
  }
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** Standard base64 (RFC 4648 section 4) with padding. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes standard padded base64, or returns null. Node's own decoder skips unknown characters
 * and ignores non-zero trailing bits; this one refuses both, so each byte string has exactly one
 * accepted spelling.
 */
export function decodeBase64Strict(text: string): Uint8Array | null {
  if (!base64Pattern.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
