/**
 * The venue a command reads from, as a config's `venue:` section says: the service of its key
 * file, or an emulator started in this process. One place for `record` and `download`, so both
 * trust the same CA, sign with the same wire profile and start the same embedded emulator.
 */
import { resolve } from 'node:path';
import { RestClient } from '../../client/index.ts';
import type { Clock } from '../../core/clock.ts';
import {
  type EmulatorConfig,
  loadEmulatorConfig,
  parseEmulatorConfig,
  type RunningEmulator,
  type StartEmulatorOptions,
} from '../../emulator/index.ts';
import type { Credential } from '../../signing/index.ts';
import { type BotConfig, embeddedEmulatorOptions, wireProfileOf } from './config.ts';
import { loadVenueKeyFile } from './venue-key.ts';
import { venueTransportOf } from './venue-transport.ts';

export interface VenueConnection {
  /** Null on an embedded emulator (its public data needs no key). */
  readonly credential: Credential | null;
  readonly emulator: RunningEmulator | null;
  readonly rest: RestClient;
  /** `emulator` on an embedded emulator or one whose routes say so; `live` otherwise. */
  kind(): Promise<'emulator' | 'live'>;
  /** The service's base URL, for a recording's manifest. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

export async function connectVenue(
  venue: BotConfig['venue'],
  clock: Clock,
  startEmulator: (options: StartEmulatorOptions) => Promise<RunningEmulator>,
): Promise<VenueConnection> {
  const wireProfile = wireProfileOf(venue.wire);
  const credential =
    venue.key_file === null ? null : await loadVenueKeyFile(resolve(venue.key_file));
  const transport = await venueTransportOf(venue);
  let emulator: RunningEmulator | null = null;
  if (credential === null) {
    const inline = venue.emulator.config;
    const emulatorConfig: EmulatorConfig | null =
      inline === null
        ? null
        : typeof inline === 'string'
          ? loadEmulatorConfig(inline)
          : parseEmulatorConfig(inline);
    emulator = await startEmulator(
      embeddedEmulatorOptions(venue.emulator, emulatorConfig, clock, wireProfile),
    );
  }
  const rest = new RestClient({
    ...(credential === null ? { baseUrl: emulator!.baseUrl } : { credential, wireProfile }),
    clock,
    requestTimeoutMs: venue.request_timeout_ms,
    transport,
  });
  return {
    credential,
    emulator,
    rest,
    baseUrl: emulator?.baseUrl ?? credential!.apiBaseUrl,
    async kind() {
      if (emulator !== null) return 'emulator';
      const routes = await rest.listRoutes();
      return routes.some((route) => route.provider === 'paperbot-emulator') ? 'emulator' : 'live';
    },
    async close() {
      await rest.close();
      await emulator?.close();
    },
  };
}
