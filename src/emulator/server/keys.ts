/**
 * The key registry: developer keys as the emulator knows them (public key, account, scopes,
 * expiry, IP allowlist, risk limits, revocation). Only public keys are ever registered; the
 * private key stays with whoever generated it. Records persist through the engine's Store
 * (table `keys`) and are parsed back with `KeyRecord` on start.
 */
import { z } from 'zod';
import {
  DECIMAL_STRING_PATTERN,
  formatTimestamp,
  parseTimestamp,
  Rfc3339Utc,
  Scope,
} from '../../protocol/index.ts';
import {
  decodeBase64Strict,
  isUsablePublicKey,
  ED25519_PUBLIC_KEY_LENGTH,
  generateNonce,
  type VerifierKey,
} from '../../signing/index.ts';
import type { Store } from '../store/store.ts';
import { type CidrBlock, parseCidr } from './ip-allowlist.ts';

export const ALL_SCOPES: readonly Scope[] = Scope.options;

const PublicKeyText = z.string().refine(
  (text) => {
    const bytes = decodeBase64Strict(text);
    return bytes?.byteLength === ED25519_PUBLIC_KEY_LENGTH && isUsablePublicKey(bytes);
  },
  {
    error:
      'Input should be standard padded base64 of a 32-byte Ed25519 public key (a valid point, not of small order)',
    params: { type: 'value_error' },
  },
);

const CidrText = z.string().refine((text) => parseCidr(text) !== null, {
  error: 'Input should be an IPv4 or IPv6 address or CIDR block',
  params: { type: 'value_error' },
});

const PositiveDecimalText = z
  .string()
  .refine(
    (text) => DECIMAL_STRING_PATTERN.test(text) && !text.startsWith('-') && /[1-9]/.test(text),
    {
      error: 'Input should be a positive decimal string',
      params: { type: 'value_error' },
    },
  );

const DistinctScopes = z
  .array(Scope)
  .min(1)
  .refine((scopes) => new Set(scopes).size === scopes.length, {
    error: 'Scopes should be distinct',
    params: { type: 'value_error' },
  });

/** What a key is registered with (admin API body, in-process `createKey`). */
export const KeySettings = z.strictObject({
  public_key: PublicKeyText,
  scopes: DistinctScopes.default([...ALL_SCOPES]),
  expires_at: Rfc3339Utc.nullable().default(null),
  allow_ip: z.array(CidrText).max(64).default([]),
  max_order_notional: PositiveDecimalText.nullable().default(null),
  max_open_orders: z.int().min(1).max(1_000_000).nullable().default(null),
});
export type KeySettings = z.output<typeof KeySettings>;

/** A key as stored. */
export const KeyRecord = z.strictObject({
  version: z.literal(1),
  key_id: z.string(),
  account_id: z.string(),
  public_key: PublicKeyText,
  scopes: z.array(Scope),
  created_at: Rfc3339Utc,
  expires_at: Rfc3339Utc.nullable(),
  allow_ip: z.array(CidrText),
  max_order_notional: z.string().nullable(),
  max_open_orders: z.int().nullable(),
  revoked_at: Rfc3339Utc.nullable(),
  revoked_reason: z.string().nullable(),
});
export type KeyRecord = z.infer<typeof KeyRecord>;

/** A registered key, ready for the verifier and the checks after it. */
export class RegisteredKey implements VerifierKey {
  readonly record: KeyRecord;
  readonly publicKey: Uint8Array;
  readonly scopes: ReadonlySet<Scope>;
  readonly allowList: readonly CidrBlock[];
  readonly expiresAtMs: number | null;

  constructor(record: KeyRecord) {
    this.record = record;
    this.publicKey = decodeBase64Strict(record.public_key) ?? new Uint8Array();
    this.scopes = new Set(record.scopes);
    this.allowList = record.allow_ip.flatMap((text) => {
      const block = parseCidr(text);
      return block === null ? [] : [block];
    });
    this.expiresAtMs = record.expires_at === null ? null : parseTimestamp(record.expires_at);
  }

  get keyId(): string {
    return this.record.key_id;
  }

  get accountId(): string {
    return this.record.account_id;
  }

  get revoked(): boolean {
    return this.record.revoked_at !== null;
  }

  isExpired(now: number): boolean {
    return this.expiresAtMs !== null && now >= this.expiresAtMs;
  }

  /** What the engine checks orders against (RISK_LIMIT_EXCEEDED). */
  get riskLimits(): {
    maxOrderNotional: string | null;
    maxOpenOrders: number | null;
  } {
    return {
      maxOrderNotional: this.record.max_order_notional,
      maxOpenOrders: this.record.max_open_orders,
    };
  }

  /** The public view (admin API listing): everything but nothing secret, since nothing is. */
  toJSON(): KeyRecord {
    return this.record;
  }
}

export type KeyRevokedListener = (key: RegisteredKey) => void;

export class KeyRegistry {
  readonly #store: Store;
  readonly #keys = new Map<string, RegisteredKey>();
  readonly #revokedListeners: KeyRevokedListener[] = [];

  constructor(store: Store) {
    this.#store = store;
    for (const raw of store.loadKeys()) {
      const parsed = KeyRecord.safeParse(raw);
      // A record this version cannot read is left alone rather than guessed at.
      if (parsed.success) this.#keys.set(parsed.data.key_id, new RegisteredKey(parsed.data));
    }
  }

  get(keyId: string): RegisteredKey | undefined {
    return this.#keys.get(keyId);
  }

  list(): RegisteredKey[] {
    return [...this.#keys.values()];
  }

  register(accountId: string, settings: KeySettings, now: number): RegisteredKey {
    let keyId = `key_${generateNonce(20)}`;
    while (this.#keys.has(keyId)) keyId = `key_${generateNonce(20)}`;
    const record: KeyRecord = {
      version: 1,
      key_id: keyId,
      account_id: accountId,
      public_key: settings.public_key,
      scopes: [...settings.scopes],
      created_at: formatTimestamp(now),
      expires_at: settings.expires_at,
      allow_ip: [...settings.allow_ip],
      max_order_notional: settings.max_order_notional,
      max_open_orders: settings.max_open_orders,
      revoked_at: null,
      revoked_reason: null,
    };
    return this.#save(record);
  }

  /** Revokes a key; revoking a revoked key changes nothing. Undefined for an unknown key. */
  revoke(keyId: string, reason: string, now: number): RegisteredKey | undefined {
    const key = this.#keys.get(keyId);
    if (key === undefined) return undefined;
    if (key.revoked) return key;
    const revoked = this.#save({
      ...key.record,
      revoked_at: formatTimestamp(now),
      revoked_reason: reason,
    });
    for (const listener of this.#revokedListeners) listener(revoked);
    return revoked;
  }

  revokeAccountKeys(accountId: string, reason: string, now: number): RegisteredKey[] {
    const revoked: RegisteredKey[] = [];
    for (const key of this.list()) {
      if (key.accountId !== accountId || key.revoked) continue;
      const done = this.revoke(key.keyId, reason, now);
      if (done !== undefined) revoked.push(done);
    }
    return revoked;
  }

  onRevoked(listener: KeyRevokedListener): () => void {
    this.#revokedListeners.push(listener);
    return () => {
      const index = this.#revokedListeners.indexOf(listener);
      if (index >= 0) this.#revokedListeners.splice(index, 1);
    };
  }

  #save(record: KeyRecord): RegisteredKey {
    this.#store.saveKey(record.key_id, record);
    const key = new RegisteredKey(record);
    this.#keys.set(record.key_id, key);
    return key;
  }
}
