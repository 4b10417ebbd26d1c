/**
 * Builds the SVC1 request headers and the signed fields of the WebSocket auth frame. The body is
 * serialised once by the caller; the same bytes are hashed here and then sent unchanged.
 */
import {
  buildCanonicalRequestInput,
  buildWebSocketAuthInput,
  formatTimestamp,
  SIGNATURE_VERSION,
  type WebSocketAuthFields,
} from './canonical.ts';
import { encodeBase64 } from './encoding.ts';
import { generateNonce } from './nonce.ts';
import type { Signer } from './signer.ts';

export const HEADER_API_KEY = 'SVC-API-KEY';
export const HEADER_TIMESTAMP = 'SVC-TIMESTAMP';
export const HEADER_NONCE = 'SVC-NONCE';
export const HEADER_SIGNATURE = 'SVC-SIGNATURE';
export const HEADER_SIGNATURE_VERSION = 'SVC-SIGNATURE-VERSION';

// A type alias rather than an interface, so it fits `Record<string, string>` header parameters.
export type SignedRequestHeaders = {
  readonly 'SVC-API-KEY': string;
  readonly 'SVC-TIMESTAMP': string;
  readonly 'SVC-NONCE': string;
  readonly 'SVC-SIGNATURE': string;
  readonly 'SVC-SIGNATURE-VERSION': typeof SIGNATURE_VERSION;
};

export interface SignRequestOptions {
  readonly signer: Signer;
  readonly keyId: string;
  readonly method: string;
  /** Path, then `?` and the query string if there is one, exactly as it will be sent. */
  readonly target: string;
  /** The exact body bytes that will be sent; null or absent when there is no body. */
  readonly body?: Uint8Array | null;
  /** The body's SHA-256 when already known (a prepared command), so it is not hashed again. */
  readonly bodySha256?: string;
  /** From the caller's clock; the server refuses it outside its window (10 s by default). */
  readonly timestampMs: number;
  /** A fresh nonce per request; generated when absent. A retry needs a new one. */
  readonly nonce?: string;
}

export function signRequest(options: SignRequestOptions): SignedRequestHeaders {
  const nonce = options.nonce ?? generateNonce();
  const input = buildCanonicalRequestInput({
    method: options.method,
    target: options.target,
    keyId: options.keyId,
    timestampMs: options.timestampMs,
    nonce,
    body: options.body ?? null,
    bodySha256: options.bodySha256,
  });
  return {
    'SVC-API-KEY': options.keyId,
    'SVC-TIMESTAMP': formatTimestamp(options.timestampMs),
    'SVC-NONCE': nonce,
    'SVC-SIGNATURE': encodeBase64(options.signer.sign(input)),
    'SVC-SIGNATURE-VERSION': SIGNATURE_VERSION,
  };
}

/** The fields to sign; the nonce is generated when absent. */
export interface SignWebSocketAuthOptions extends Omit<WebSocketAuthFields, 'nonce'> {
  readonly signer: Signer;
  readonly nonce?: string;
}

/** The signed fields of the `auth` frame, in wire names; the caller adds `op` and `request_id`. */
export interface WebSocketAuthFrameFields {
  readonly key_id: string;
  readonly timestamp: number;
  readonly nonce: string;
  readonly scopes: readonly string[];
  readonly last_sequence: number;
  readonly signature: string;
}

export function signWebSocketAuth(options: SignWebSocketAuthOptions): WebSocketAuthFrameFields {
  const nonce = options.nonce ?? generateNonce();
  const input = buildWebSocketAuthInput({ ...options, nonce });
  return {
    key_id: options.keyId,
    timestamp: options.timestampMs,
    nonce,
    scopes: [...options.scopes],
    last_sequence: options.lastSequence,
    signature: encodeBase64(options.signer.sign(input)),
  };
}
