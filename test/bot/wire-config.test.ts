/**
 * `venue.wire` in the bot config: absent is SVC1; inline or in a file it is resolved and handed
 * to the client and the embedded emulator alike; a bad profile is refused with every problem
 * and its path, together with the rest of the file's problems, before anything connects.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedEmulatorOptions, resolveBotConfig } from '../../src/cli/bot/config.ts';
import { systemClock } from '../../src/core/clock.ts';
import type { PaperbotError } from '../../src/core/errors.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-wire-config-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const strategies = [{ id: 'mm', name: 'market-maker', params: {} }];

async function issuesOf(document: unknown): Promise<{ path: string; message: string }[]> {
  try {
    await resolveBotConfig(document);
  } catch (error) {
    expect((error as PaperbotError).code).toBe('INVALID_CONFIG');
    return (error as PaperbotError).details.issues as { path: string; message: string }[];
  }
  throw new Error('expected INVALID_CONFIG');
}

describe('venue.wire', () => {
  it('is SVC1 when absent, and reaches the embedded emulator', async () => {
    const loaded = await resolveBotConfig({ strategies });
    expect(loaded.wireProfile.isDefault).toBe(true);
    const inline = await resolveBotConfig({
      strategies,
      venue: { wire: { timestamp: 's', headers: { api_key: 'X-Key' } } },
    });
    expect(inline.wireProfile).toMatchObject({ isDefault: false, timestamp: 's' });
    expect(inline.wireProfile.headers.apiKey).toBe('X-Key');
    const options = embeddedEmulatorOptions(
      inline.config.venue.emulator,
      inline.emulatorConfig,
      systemClock,
      inline.wireProfile,
    );
    expect(options.wire).toBe(inline.wireProfile);
  });

  it('reads a profile file', async () => {
    const path = join(directory, 'wire.yaml');
    writeFileSync(path, 'signature_encoding: hex\nnonce:\n  format: uuid\n');
    const loaded = await resolveBotConfig({ strategies, venue: { wire: path } });
    expect(loaded.wireProfile).toMatchObject({
      signatureEncoding: 'hex',
      nonce: { format: 'uuid' },
    });
  });

  it('refuses a bad inline profile with every problem and its path, with the other problems', async () => {
    const issues = await issuesOf({
      strategies,
      metrics: { port: -1 },
      venue: {
        wire: {
          timestamp: 'minutes',
          signature_encoding: 'base32',
          headers: { api_key: 'X Key', colour: 'red' },
          request_input: { fields: ['method', 'target'] },
        },
      },
    });
    const paths = issues.map((issue) => issue.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'metrics.port',
        'venue.wire.timestamp',
        'venue.wire.signature_encoding',
        'venue.wire.headers.api_key',
        'venue.wire.headers',
        'venue.wire.request_input.fields',
      ]),
    );
  });

  it('refuses a missing or bad profile file, naming the file', async () => {
    const missing = join(directory, 'nowhere.yaml');
    expect(await issuesOf({ strategies, venue: { wire: missing } })).toEqual([
      { path: `venue.wire.(${missing})`, message: 'the file does not exist' },
    ]);
    const bad = join(directory, 'bad.yaml');
    writeFileSync(bad, 'timestamp: minutes\n');
    expect(await issuesOf({ strategies, venue: { wire: bad } })).toEqual([
      { path: `venue.wire.(${bad}).timestamp`, message: 'must be one of: ms, s, rfc3339' },
    ]);
  });
});
