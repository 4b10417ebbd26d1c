/**
 * The one prepared command, from the journal to the wire: the runtime's serializer makes it, the
 * journal holds its bytes, the client signs and sends them, and an in-process venue takes its
 * checked body. The body is hashed once (here, or by the runtime's serializer when its bytes are
 * first read); signing uses `bodySha256` as it stands.
 */
import type { BodyOf, EndpointsWithBody } from '../protocol/index.ts';
import { bodySha256Hex } from './canonical.ts';

export interface PreparedCommand<E extends EndpointsWithBody = EndpointsWithBody> {
  readonly endpoint: E;
  /** The request path with its parameters encoded, without a prefix or a query string. */
  readonly path: string;
  /** The body's `request_id`. */
  readonly requestId: string;
  /** The checked body the bytes encode (defaults applied): handed over in process, never re-parsed. */
  readonly body: BodyOf<E>;
  /** The exact UTF-8 JSON body bytes: journaled, signed and sent, and resent unchanged. */
  readonly bodyBytes: Uint8Array;
  /** Lower-case hex SHA-256 of `bodyBytes` (the value the SVC1 signing input carries). */
  readonly bodySha256: string;
}

/** A prepared command from its parts, its bytes hashed now (restored and client-made commands). */
export function preparedCommand<E extends EndpointsWithBody>(
  parts: Omit<PreparedCommand<E>, 'bodySha256'>,
): PreparedCommand<E> {
  return Object.freeze({
    endpoint: parts.endpoint,
    path: parts.path,
    requestId: parts.requestId,
    body: parts.body,
    bodyBytes: parts.bodyBytes,
    bodySha256: bodySha256Hex(parts.bodyBytes),
  });
}
