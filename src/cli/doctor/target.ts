/**
 * What `paperbot doctor` checks: the key file (from `--key`, or the config's `venue.key_file`),
 * the wire profile to sign with (`--wire`, or the config's `venue.wire`; SVC1 without either),
 * the CA to trust (`venue.ca_file` or `--ca-file`) and the markets to simulate an order on
 * (the config's `market_data.markets`, or `--market`; every listed market, up to a bound,
 * when neither names any). Problems here are local: nothing has connected yet.
 */
import { resolve } from 'node:path';
import type { TransportOptions } from '../../client/index.ts';
import { type Credential, DEFAULT_WIRE_PROFILE, type WireProfile } from '../../signing/index.ts';
import { loadBotConfig, wireProfileOf } from '../bot/config.ts';
import { loadVenueKeyFile } from '../bot/venue-key.ts';
import { venueTransportOf } from '../bot/venue-transport.ts';

export interface DoctorSource {
  readonly config?: string;
  readonly key?: string;
  readonly caFile?: string;
  /** A wire profile file (overrides the config's `venue.wire`). */
  readonly wire?: string;
  readonly markets?: readonly string[];
}

export interface DoctorTargetSettings {
  readonly credential: Credential;
  readonly transport: TransportOptions;
  /** How requests and the WebSocket auth frame are signed. */
  readonly wireProfile: WireProfile;
  /** Where the profile comes from, for messages: `--wire FILE`, `venue.wire` or the default. */
  readonly wireSource: string;
  /** null: the markets the venue lists. */
  readonly markets: readonly string[] | null;
  readonly requestTimeoutMs: number;
}

/** Where the target comes from, for messages. */
export function sourceLabel(source: DoctorSource): string {
  return source.key !== undefined ? `key file ${source.key}` : `config ${source.config ?? ''}`;
}

export async function loadDoctorTarget(source: DoctorSource): Promise<DoctorTargetSettings> {
  if (source.key !== undefined) {
    return {
      credential: await loadVenueKeyFile(resolve(source.key)),
      transport: await venueTransportOf({ key_file: source.key, ca_file: source.caFile ?? null }),
      ...wireOf(source, DEFAULT_WIRE_PROFILE, null),
      markets: source.markets === undefined || source.markets.length === 0 ? null : source.markets,
      requestTimeoutMs: 10_000,
    };
  }
  const loaded = await loadBotConfig(source.config as string);
  const venue = loaded.config.venue;
  if (venue.key_file === null) {
    throw new Error(
      `${source.config} has no venue.key_file: the bot would run on its embedded emulator, and there is no service to check`,
    );
  }
  return {
    credential: await loadVenueKeyFile(resolve(venue.key_file)),
    transport: await venueTransportOf({
      key_file: venue.key_file,
      ca_file: source.caFile ?? venue.ca_file,
    }),
    ...wireOf(source, loaded.wireProfile, venue.wire),
    markets:
      source.markets !== undefined && source.markets.length > 0
        ? source.markets
        : loaded.config.market_data.markets,
    requestTimeoutMs: venue.request_timeout_ms,
  };
}

/** The profile of `--wire`, else the config's (already checked by its loader), else SVC1. */
function wireOf(
  source: DoctorSource,
  configured: WireProfile,
  venueWire: unknown,
): Pick<DoctorTargetSettings, 'wireProfile' | 'wireSource'> {
  if (source.wire !== undefined) {
    return {
      wireProfile: wireProfileOf(resolve(source.wire)),
      wireSource: `--wire ${source.wire}`,
    };
  }
  if (venueWire === null) return { wireProfile: configured, wireSource: 'SVC1, the default' };
  return {
    wireProfile: configured,
    wireSource: typeof venueWire === 'string' ? `venue.wire ${venueWire}` : 'venue.wire',
  };
}
