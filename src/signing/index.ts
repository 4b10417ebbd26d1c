/** SVC1 request signing, Ed25519 signers, the server-side verifier and key files. */
export {
  bodySha256Hex,
  buildCanonicalRequestInput,
  buildCanonicalRequestText,
  buildWebSocketAuthInput,
  buildWebSocketAuthText,
  type CanonicalRequestFields,
  formatTimestamp,
  isValidKeyId,
  isValidNonce,
  isValidTarget,
  NONCE_MAX_LENGTH,
  NONCE_MIN_LENGTH,
  parseTimestampHeader,
  SIGNATURE_VERSION,
  WEBSOCKET_SIGNATURE_PREFIX,
  type WebSocketAuthFields,
} from './canonical.ts';
export { bytesToHex, decodeBase64Strict, encodeBase64, hexToBytes } from './encoding.ts';
export {
  HEADER_API_KEY,
  HEADER_NONCE,
  HEADER_SIGNATURE,
  HEADER_SIGNATURE_VERSION,
  HEADER_TIMESTAMP,
  type SignedRequestHeaders,
  type SignRequestOptions,
  type SignWebSocketAuthOptions,
  signRequest,
  signWebSocketAuth,
  type WebSocketAuthFrameFields,
} from './headers.ts';
export {
  Credential,
  type CredentialFields,
  DEFAULT_API_BASE_URL,
  DEFAULT_WS_URL,
  generateKeyPair,
  KEY_FILE_MODE,
  KEY_FILE_VERSION,
  KeyFile,
  type KeyPair,
  KeyScope,
  KNOWN_SCOPES,
  loadKeyFile,
  parseKeyFile,
  type WriteKeyFileOptions,
  writeKeyFile,
} from './key-file.ts';
export {
  type ImportedField,
  importKey,
  KEY_FIELD_ALIASES,
  type KeyImportOverrides,
  type KeyImportResult,
} from './key-import.ts';
export {
  ED25519_PUBLIC_KEY_LENGTH,
  ED25519_SEED_LENGTH,
  ED25519_SIGNATURE_LENGTH,
} from './native.ts';
export { isUsablePublicKey } from './noble.ts';
export { type PreparedCommand, preparedCommand } from './prepared.ts';
export { DEFAULT_NONCE_LENGTH, generateNonce, NONCE_ALPHABET } from './nonce.ts';
export { PrivateKey, REDACTED } from './private-key.ts';
export {
  buildRequestSigningText,
  buildWebSocketSigningText,
  describeSigningInput,
  describeWebSocketSigningInput,
  type SigningInputRequest,
  type SignRequestWithProfileOptions,
  type SignWebSocketAuthFrameOptions,
  signRequestWithProfile,
  signWebSocketAuthFrame,
  type WebSocketSigningInput,
} from './profile-signing.ts';
export {
  decodeSignatureText,
  encodeSignature,
  formatWireTimestamp,
  generateWireNonce,
  isValidWireNonce,
  parseWireTimestamp,
} from './wire-format.ts';
export {
  DEFAULT_WIRE_PROFILE,
  describeParts,
  NONCE_FORMATS,
  parseWireProfile,
  PROTOCOL_SCOPES,
  type ProtocolScope,
  protocolScopeOf,
  REQUEST_INPUT_FIELDS,
  SIGNATURE_ENCODINGS,
  TIMESTAMP_UNITS,
  WEBSOCKET_INPUT_FIELDS,
  type WireProfile,
  type WireProfileInput,
  type WireProfileIssue,
  WireProfileSchema,
  wireSettingsToCheck,
} from './wire-profile.ts';
export {
  createNativeSigner,
  createNobleSigner,
  createSigner,
  nativeVerifySignature,
  nobleVerifySignature,
  type Signer,
  type SignerImplementation,
  type VerifySignature,
  verifySignature,
} from './signer.ts';
export {
  createRequestVerifier,
  DEFAULT_MAX_NONCES_PER_KEY,
  DEFAULT_WINDOW_MS,
  type HeaderValues,
  type RefusalReason,
  type RequestToVerify,
  type RequestVerifier,
  type RequestVerifierOptions,
  type VerificationAccepted,
  type VerificationRefused,
  type VerificationResult,
  type VerifierKey,
  type VerifySignatureAsync,
  type WebSocketAuthToVerify,
} from './verifier.ts';
