/**
 * The signing input of a request, described for a person reading an INVALID_SIGNATURE: each
 * field on its own line with its name, and the wire settings a mismatch comes from. No secret
 * is in it (the key id is an identifier; the signature and the private key are left out).
 *
 * The one place of the doctor that knows how the project signs (SVC1 today, contract section 1,
 * through `src/signing`): when signing becomes configurable (`venue.wire`), `signProbe` and
 * `describeSigningInput` are swapped for the signing module's own, for the configured profile.
 */
import {
  bodySha256Hex,
  buildCanonicalRequestText,
  type Credential,
  generateNonce,
  signRequest,
} from '../../signing/index.ts';

export interface SentRequest {
  readonly method: string;
  /** Path and query exactly as sent. */
  readonly target: string;
  readonly keyId: string;
  readonly timestampMs: number;
  readonly nonce: string;
  readonly body: Uint8Array | null;
}

export interface SigningInputDescription {
  /** The input, one field per line, named. */
  readonly lines: readonly string[];
  /** The settings that decide the input and the signature, to compare with the service's. */
  readonly settingsToCheck: readonly string[];
}

const FIELD_NAMES = ['version', 'method', 'target', 'key id', 'timestamp', 'nonce', 'body sha256'];

export function describeSigningInput(request: SentRequest): SigningInputDescription {
  const text = buildCanonicalRequestText({
    method: request.method,
    target: request.target,
    keyId: request.keyId,
    timestampMs: request.timestampMs,
    nonce: request.nonce,
    bodySha256: bodySha256Hex(request.body),
  });
  const lines = text
    .split('\n')
    .map((value, index) => `${(FIELD_NAMES[index] ?? `field ${index + 1}`).padEnd(11)} ${value}`);
  return {
    lines: ['signing input (fields joined by "\\n", signed with Ed25519, sent base64):', ...lines],
    settingsToCheck: [
      'the fields and their order',
      'the separator',
      'the timestamp unit (ms)',
      'the signature encoding (base64)',
      'the nonce format',
      'the header names (SVC-API-KEY, SVC-TIMESTAMP, SVC-NONCE, SVC-SIGNATURE)',
    ],
  };
}

/** Signs the doctor's probe request; returns the headers to send and what was signed. */
export function signProbe(
  credential: Credential,
  request: Omit<SentRequest, 'keyId' | 'nonce'>,
): { readonly headers: Record<string, string>; readonly sent: SentRequest } {
  const nonce = generateNonce();
  const headers = signRequest({
    signer: credential.createSigner('native'),
    keyId: credential.keyId,
    method: request.method,
    target: request.target,
    body: request.body,
    timestampMs: request.timestampMs,
    nonce,
  });
  return { headers: { ...headers }, sent: { ...request, keyId: credential.keyId, nonce } };
}
