/**
 * The doctor's signed probe, under the configured wire profile, and the description of what it
 * signed for a person reading an INVALID_SIGNATURE: the exact signing input the signing module
 * built (`describeSigningInput`), its fields one per line, and the wire settings a mismatch
 * comes from (`wireSettingsToCheck`), each with its value. No secret is in it (the key id is an
 * identifier; the signature and the private key are left out).
 */
import {
  bodySha256Hex,
  type Credential,
  describeParts,
  describeSigningInput,
  formatWireTimestamp,
  generateWireNonce,
  signRequestWithProfile,
  type WireProfile,
  wireSettingsToCheck,
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
  /** The input exactly as signed, then its fields one per line, named. */
  readonly lines: readonly string[];
  /** The `venue.wire` settings that decide the input and the signature, with their values. */
  readonly settingsToCheck: readonly string[];
}

export function describeSentRequest(
  profile: WireProfile,
  profileSource: string,
  request: SentRequest,
): SigningInputDescription {
  const bodySha256 = bodySha256Hex(request.body);
  const text = describeSigningInput(profile, { ...request, bodySha256 });
  const field = (name: string, value: string): string => `${name.padEnd(11)} ${value}`;
  return {
    lines: [
      field('profile', profileSource),
      field('template', describeParts(profile.requestInput)),
      // JSON string: separators, spaces and line feeds are visible exactly as signed.
      field('signed', JSON.stringify(text)),
      field('method', request.method),
      field('target', request.target),
      field('key id', request.keyId),
      field('timestamp', formatWireTimestamp(profile.timestamp, request.timestampMs)),
      field('nonce', request.nonce),
      field('body sha256', bodySha256),
      field(
        'signature',
        `Ed25519, sent ${profile.signatureEncoding} in ${profile.headers.signature}`,
      ),
    ],
    settingsToCheck: wireSettingsToCheck(profile),
  };
}

/** Signs the doctor's probe under `profile`; returns the headers to send and what was signed. */
export function signProbe(
  credential: Credential,
  profile: WireProfile,
  request: Omit<SentRequest, 'keyId' | 'nonce'>,
): { readonly headers: Record<string, string>; readonly sent: SentRequest } {
  // The nonce is made here, not by the signer, so that the description shows the one sent.
  const nonce = generateWireNonce(profile.nonce.format, profile.nonce.length);
  const headers = signRequestWithProfile(profile, {
    signer: credential.createSigner('native'),
    keyId: credential.keyId,
    method: request.method,
    target: request.target,
    body: request.body,
    timestampMs: request.timestampMs,
    nonce,
  });
  return { headers, sent: { ...request, keyId: credential.keyId, nonce } };
}
