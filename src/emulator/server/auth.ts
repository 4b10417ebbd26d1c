/**
 * Request authentication: the SVC1 signature (src/signing's verifier, whose every refusal is
 * INVALID_SIGNATURE on the wire, with the reason in `details.reason`), then what the key itself
 * allows: KEY_REVOKED (revoked key or retired account), KEY_EXPIRED, IP_NOT_ALLOWED and
 * SCOPE_REQUIRED (contract section 3). The same checks serve HTTP and the WebSocket auth frame.
 */
import type { Scope } from '../../protocol/index.ts';
import {
  createRequestVerifier,
  DEFAULT_WIRE_PROFILE,
  type RequestToVerify,
  type RequestVerifier,
  type VerificationResult,
  type WebSocketAuthToVerify,
  type WireProfile,
} from '../../signing/index.ts';
import { ServerError } from '../service/errors.ts';
import { matchesAny } from './ip-allowlist.ts';
import type { KeyRegistry, RegisteredKey } from './keys.ts';
import { type SignaturePool, sharedSignaturePool } from './signature-pool.ts';

export interface AuthenticatorOptions {
  readonly registry: KeyRegistry;
  readonly now: () => number;
  /** The accepted timestamp distance (contract section 1: 10 s by default). */
  readonly signatureWindowMs?: number;
  /** False when the account behind a key was retired (reset). */
  readonly isAccountActive: (accountId: string) => boolean;
  /**
   * Where HTTP request signatures are checked: the process's worker pool by default (none on a
   * single core), or null for the main thread. The verdicts are the same either way.
   */
  readonly signaturePool?: SignaturePool | null;
  /** How requests and auth frames are signed (`--wire`); the contract's SVC1 by default. */
  readonly profile?: WireProfile;
}

export class Authenticator {
  readonly #verifier: RequestVerifier<RegisteredKey>;
  readonly #now: () => number;
  readonly #isAccountActive: (accountId: string) => boolean;
  readonly #pool: SignaturePool | null;
  /** The wire profile requests and auth frames are checked against. */
  readonly profile: WireProfile;

  constructor(options: AuthenticatorOptions) {
    this.profile = options.profile ?? DEFAULT_WIRE_PROFILE;
    this.#now = options.now;
    this.#pool =
      options.signaturePool === undefined ? sharedSignaturePool() : options.signaturePool;
    this.#isAccountActive = options.isAccountActive;
    this.#verifier = createRequestVerifier<RegisteredKey>({
      lookupKey: (keyId) => options.registry.get(keyId),
      now: options.now,
      profile: this.profile,
      ...(options.signatureWindowMs === undefined ? {} : { windowMs: options.signatureWindowMs }),
    });
  }

  /** The key of a correctly signed HTTP request that may still be used from `remoteAddress`. */
  authenticateRequest(request: RequestToVerify, remoteAddress: string | undefined): RegisteredKey {
    return this.#accept(this.#verifier.verify(request), remoteAddress);
  }

  /** True when HTTP signatures are checked on worker threads (`authenticateRequestAsync`). */
  get verifiesOnWorkers(): boolean {
    return this.#pool !== null;
  }

  /** As `authenticateRequest`, with the signature checked on the signature pool if there is one. */
  async authenticateRequestAsync(
    request: RequestToVerify,
    remoteAddress: string | undefined,
  ): Promise<RegisteredKey> {
    const pool = this.#pool;
    if (pool === null) return this.authenticateRequest(request, remoteAddress);
    const result = await this.#verifier.verifyAsync(request, (publicKey, message, signature) =>
      pool.verify(publicKey, message, signature),
    );
    return this.#accept(result, remoteAddress);
  }

  authenticateWebSocket(
    auth: WebSocketAuthToVerify,
    remoteAddress: string | undefined,
  ): RegisteredKey {
    return this.#accept(this.#verifier.verifyWebSocketAuth(auth), remoteAddress);
  }

  /** KEY_REVOKED, KEY_EXPIRED or IP_NOT_ALLOWED for a key that cannot be used now. */
  checkUsable(key: RegisteredKey, remoteAddress: string | undefined): void {
    if (key.revoked || !this.#isAccountActive(key.accountId)) {
      throw new ServerError('KEY_REVOKED', 'this key was revoked or its account is inactive', {
        details: { key_id: key.keyId },
      });
    }
    if (key.isExpired(this.#now())) {
      throw new ServerError('KEY_EXPIRED', 'this key has expired', {
        details: { key_id: key.keyId, expires_at: key.record.expires_at },
      });
    }
    if (key.allowList.length > 0 && !matchesAny(key.allowList, remoteAddress)) {
      throw new ServerError('IP_NOT_ALLOWED', 'the request comes from outside the key allowlist', {
        details: { key_id: key.keyId, source_ip: remoteAddress ?? null },
      });
    }
  }

  #accept(result: VerificationResult<RegisteredKey>, remoteAddress: string | undefined) {
    if (!result.ok) {
      throw new ServerError('INVALID_SIGNATURE', result.message, {
        details: {
          reason: result.reason,
          ...(result.field === undefined ? {} : { field: result.field }),
        },
      });
    }
    this.checkUsable(result.key, remoteAddress);
    return result.key;
  }
}

/** SCOPE_REQUIRED naming the scope as the wire profile names it (SVC1: the protocol's name). */
export function requireScope(
  key: RegisteredKey,
  scope: Scope | null,
  profile: WireProfile = DEFAULT_WIRE_PROFILE,
): void {
  if (scope === null || key.scopes.has(scope)) return;
  const name = profile.scopes[scope];
  throw new ServerError('SCOPE_REQUIRED', `this key lacks the scope ${name}`, {
    details: { required_scope: name, key_id: key.keyId },
  });
}

/**
 * An auth frame as the wire profile names it, renamed to the protocol's field names with the
 * scopes in the protocol's names, so the one strict frame schema checks it. A scope name the
 * profile does not know is left as it is (and refused by that schema, with its path). Other
 * frames, and every frame under SVC1, pass unchanged.
 */
export function protocolAuthFrame(profile: WireProfile, json: unknown): unknown {
  if (profile.isDefault || typeof json !== 'object' || json === null || Array.isArray(json)) {
    return json;
  }
  const frame = json as Record<string, unknown>;
  if (frame.op !== 'auth') return json;
  const names = profile.webSocketAuth.fields;
  const renamed: Record<string, unknown> = {};
  const wireToProtocol = new Map<string, string>([
    [names.keyId, 'key_id'],
    [names.timestamp, 'timestamp'],
    [names.nonce, 'nonce'],
    [names.scopes, 'scopes'],
    [names.lastSequence, 'last_sequence'],
    [names.signature, 'signature'],
  ]);
  for (const [name, value] of Object.entries(frame)) {
    const protocolName = wireToProtocol.get(name);
    // A protocol name the profile renamed is an unknown field here: kept under a name the
    // schema refuses, so it is not taken for the field it names.
    const target =
      protocolName ?? ([...wireToProtocol.values()].includes(name) ? `(${name})` : name);
    renamed[target] = value;
  }
  if (Array.isArray(renamed.scopes)) {
    const byVenueName = new Map(
      Object.entries(profile.scopes).map(([scope, name]) => [name, scope]),
    );
    renamed.scopes = renamed.scopes.map((scope: unknown) =>
      typeof scope === 'string' ? (byVenueName.get(scope) ?? scope) : scope,
    );
  }
  return renamed;
}

/** The venue's names of protocol scopes, as the profile names them. */
export function venueScopeNames(profile: WireProfile, scopes: readonly Scope[]): string[] {
  return scopes.map((scope) => profile.scopes[scope]);
}
