/**
 * How the bot reaches a running service: `venue.ca_file` read (bounded, every certificate
 * checked) before anything connects, and the proxy variables checked at the same time, so a
 * bad file or variable stops the start with its name instead of failing the first request.
 */
import { resolve } from 'node:path';
import { proxySettingsOf, readCaFile, type TransportOptions } from '../../client/index.ts';

export async function venueTransportOf(venue: {
  readonly ca_file: string | null;
}): Promise<TransportOptions> {
  proxySettingsOf(process.env);
  if (venue.ca_file === null) return {};
  return { ca: await readCaFile(resolve(venue.ca_file)) };
}
