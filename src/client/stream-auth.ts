/**
 * The stream's authentication (contract section 4): which scopes its private channels need,
 * what the venue said the key lacks (and the channels dropped for it), and which refusals of
 * the auth frame end the stream rather than retry it.
 */
import { channelScope, type PrivateChannel, Scope } from '../protocol/index.ts';
import {
  describeParts,
  protocolScopeOf,
  type WireProfile,
  wireSettingsToCheck,
} from '../signing/index.ts';
import { isVenueError, VenueError } from './errors.ts';

/** Refusals that retrying cannot fix (revoked or expired key, clock skew): the stream fails. */
export const FATAL_CODES: ReadonlySet<string> = new Set([
  'KEY_REVOKED',
  'KEY_EXPIRED',
  'IP_NOT_ALLOWED',
  'CLOCK_SKEW',
  'CREDENTIAL_REQUIRED',
  'SCOPE_REQUIRED',
]);

/** Whether a refusal ends the stream for good rather than a reconnect. */
export function isFatalRefusal(error: VenueError): boolean {
  return FATAL_CODES.has(error.code) || isLastingSignatureRefusal(error);
}

/** Refusals of a signed auth frame that a new connection can cure: time and one-use values. */
const PASSING_SIGNATURE_REASONS: ReadonlySet<unknown> = new Set([
  'timestamp_outside_window',
  'nonce_reused',
  'nonce_capacity_exceeded',
  'challenge_expired',
  'challenge_reused',
]);

/**
 * INVALID_SIGNATURE on the auth frame for a reason that signing again the same way cannot cure
 * (a wrong key, wire profile or encoding): the stream fails rather than reconnect forever. A
 * venue that gives no reason is retried, as before.
 */
function isLastingSignatureRefusal(error: VenueError): boolean {
  const reason = error.details.reason;
  return (
    error.code === 'INVALID_SIGNATURE' &&
    error.details.during === 'auth' &&
    typeof reason === 'string' &&
    !PASSING_SIGNATURE_REASONS.has(reason)
  );
}

/** The protocol scopes `channels` need, sorted. */
function scopesOf(channels: readonly PrivateChannel[]): Scope[] {
  return [...new Set(channels.map((channel) => channelScope[channel]))].sort();
}

/**
 * A refused auth frame, marked as such (`details.during: "auth"`); INVALID_SIGNATURE names the
 * wire settings the frame depends on.
 */
export function authRefusal(error: unknown, profile: WireProfile): unknown {
  if (!isVenueError(error) || error.source === 'local') return error;
  const signature = error.code === 'INVALID_SIGNATURE';
  const settings = signature
    ? [
        `venue.wire.websocket_auth (input ${describeParts(profile.webSocketAuth.input)}, fields ${Object.values(profile.webSocketAuth.fields).join(', ')})`,
        `venue.wire.scopes (${Object.values(profile.scopes).join(', ')})`,
        ...wireSettingsToCheck(profile).filter(
          (setting) =>
            !setting.startsWith('venue.wire.request_input') &&
            !setting.startsWith('venue.wire.headers'),
        ),
      ]
    : [];
  return new VenueError(
    error.code,
    signature
      ? `${error.message}; if the key and the clock are right, check the wire settings: ${settings.join(', ')}`
      : error.message,
    {
      source: error.source,
      retryable: error.retryable,
      details: {
        ...error.details,
        during: 'auth',
        ...(signature ? { wire_settings: settings } : {}),
      },
      httpStatus: error.httpStatus,
      serverRequestId: error.serverRequestId,
      cause: error,
    },
  );
}

/**
 * The private channels a stream follows and the scopes they need. The key file's scope names
 * are not trusted to tell what the key may do: a channel whose scope the key lacks is learned
 * from the venue's SCOPE_REQUIRED answer to the auth frame, and dropped.
 */
export class StreamScopes {
  private channels: readonly PrivateChannel[];
  private needed: readonly string[];
  /** Protocol scopes the venue said the key lacks (SCOPE_REQUIRED on auth). */
  private readonly lacking = new Set<Scope>();

  constructor(channels: readonly PrivateChannel[]) {
    this.channels = channels;
    this.needed = scopesOf(channels);
  }

  /** The private channels followed. */
  get privateChannels(): readonly PrivateChannel[] {
    return this.channels;
  }

  /** The protocol scopes the channels followed need, sorted: what the auth frame asks for. */
  get scopes(): readonly string[] {
    return this.needed;
  }

  /** Protocol scopes the venue said this key lacks; their channels are not followed. */
  get lackingScopes(): readonly Scope[] {
    return [...this.lacking].sort();
  }

  /**
   * After SCOPE_REQUIRED on auth: the scopes the venue named as missing (in the profile's names,
   * mapped back) are remembered and their channels dropped, so the next session asks only for
   * what the key has. False when the answer names no scope that was asked for.
   */
  learnMissingScopes(error: VenueError, profile: WireProfile): boolean {
    const named = [error.details.missing_scopes, error.details.required_scope].flat();
    const missing = named.flatMap((name) => {
      if (typeof name !== 'string') return [];
      const scope = protocolScopeOf(profile, name) ?? Scope.safeParse(name).data ?? null;
      return scope !== null && this.needed.includes(scope) ? [scope] : [];
    });
    if (missing.length === 0) return false;
    for (const scope of missing) this.lacking.add(scope);
    this.channels = this.channels.filter((channel) => !this.lacking.has(channelScope[channel]));
    this.needed = scopesOf(this.channels);
    return true;
  }
}
