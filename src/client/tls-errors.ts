/**
 * TLS failures told apart from other connection failures, with what to do about each: the
 * certificate is not trusted, is not for this host, is out of its validity, or the other side
 * does not speak TLS at all. A request that failed so never reached the service.
 */
const UNTRUSTED: ReadonlySet<string> = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REVOKED',
]);
const OUT_OF_DATE: ReadonlySet<string> = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const NOT_TLS: ReadonlySet<string> = new Set([
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_PACKET_LENGTH_TOO_LONG',
  'EPROTO',
]);

export type TlsFailureKind = 'untrusted' | 'wrong_name' | 'out_of_date' | 'not_tls';

export interface TlsFailure {
  readonly kind: TlsFailureKind;
  readonly code: string;
  /** One sentence: what is wrong and how to fix it. */
  readonly advice: string;
}

export function tlsFailureOf(code: string | undefined): TlsFailure | null {
  if (code === undefined) return null;
  if (UNTRUSTED.has(code)) {
    return {
      kind: 'untrusted',
      code,
      advice:
        "the service's TLS certificate is not signed by a trusted CA: trust its CA with venue.ca_file or NODE_EXTRA_CA_CERTS",
    };
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return {
      kind: 'wrong_name',
      code,
      advice: "the service's TLS certificate is not for this host name: check the URL's host",
    };
  }
  if (OUT_OF_DATE.has(code)) {
    return {
      kind: 'out_of_date',
      code,
      advice:
        "the service's TLS certificate is outside its validity period: check this machine's date, or tell the service",
    };
  }
  if (NOT_TLS.has(code)) {
    return {
      kind: 'not_tls',
      code,
      advice: 'the other side does not speak TLS: check the URL scheme and port (https, wss)',
    };
  }
  return null;
}
