/**
 * How the bot reaches a running service: `venue.ca_file` read (bounded, every certificate
 * checked) before anything connects, and the proxy variables checked at the same time, so a
 * bad file or variable stops the start with its name instead of failing the first request.
 * The embedded emulator is reached directly, whatever the proxy variables say.
 */
import { resolve } from 'node:path';
import { proxySettingsOf, readCaFile, type TransportOptions } from '../../client/index.ts';

export async function venueTransportOf(venue: {
  readonly key_file: string | null;
  readonly ca_file: string | null;
}): Promise<TransportOptions> {
  // The embedded emulator runs in this process, on loopback: never through a proxy.
  if (venue.key_file === null) return { env: {} };
  proxySettingsOf(process.env);
  if (venue.ca_file === null) return {};
  return { ca: await readCaFile(resolve(venue.ca_file)) };
}
