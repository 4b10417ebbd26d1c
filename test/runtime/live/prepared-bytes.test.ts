/**
 * Bytes once (design, "Lessons"): the bytes the journal holds for a placement are the bytes the
 * emulator receives and verifies, hashed once by the bot, and a simulation sends its prepared
 * bytes too. Every SHA-256 computed in the process is recorded with its input, so the count per
 * placement is exact: one by the bot (prepare), one by the emulator (verifying what arrived).
 */
import type * as Crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RestClient, StreamClient } from '../../../src/client/index.ts';
import { VirtualClock } from '../../../src/core/clock.ts';
import { type RunningEmulator, startEmulator } from '../../../src/emulator/index.ts';
import type { Journal } from '../../../src/runtime/journal/index.ts';
import { prepareCommand } from '../../../src/signing/index.ts';
import { LiveExecutionVenue } from '../../../src/runtime/live/index.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import {
  limitBuy,
  openJournal,
  placeCommand,
  stamp,
  tempJournalPath,
} from '../execution/fixtures.ts';

const sha256Inputs: Buffer[] = [];

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof Crypto>();
  const record = (algorithm: string, data: unknown): void => {
    if (algorithm.toLowerCase() !== 'sha256') return;
    sha256Inputs.push(
      typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data as Uint8Array),
    );
  };
  const hash = ((algorithm: string, data: never, encoding?: never) => {
    record(algorithm, data);
    return actual.hash(algorithm, data, encoding);
  }) as typeof actual.hash;
  const createHash = ((algorithm: string, options?: never) => {
    const made = actual.createHash(algorithm, options);
    const update = made.update.bind(made);
    made.update = ((data: never, encoding?: never) => {
      record(algorithm, data);
      return encoding === undefined ? update(data) : update(data, encoding);
    }) as typeof made.update;
    return made;
  }) as typeof actual.createHash;
  return { ...actual, default: { ...actual, hash, createHash }, hash, createHash };
});

const START_MS = Date.UTC(2026, 0, 5, 9, 0, 0);

interface Setup {
  readonly emulator: RunningEmulator;
  readonly rest: RestClient;
  readonly stream: StreamClient;
  readonly venue: LiveExecutionVenue;
  readonly journal: Journal;
  readonly cleanup: () => void;
}

let current: Setup | undefined;

afterEach(async () => {
  if (current === undefined) return;
  current.venue.stop();
  current.journal.close();
  current.cleanup();
  await current.stream.close();
  await current.rest.close();
  await current.emulator.close();
  current = undefined;
});

async function setup(): Promise<Setup> {
  const clock = new VirtualClock(START_MS);
  const emulator = await startEmulator({
    clock,
    seed: 9,
    rateLimit: { quota: 1_000_000, windowMs: 60_000 },
  });
  const credential = emulator.createKey();
  const rest = new RestClient({
    credential,
    clock,
    random: () => 0.5,
    requestTimeoutMs: 600_000,
    reading: 'strict',
  });
  const stream = new StreamClient({ rest, clock, random: () => 0.5 });
  const venue = new LiveExecutionVenue({ rest, stream, clock, logger: silentLogger });
  const file = tempJournalPath();
  const journal = openJournal(file.path, clock);
  current = { emulator, rest, stream, venue, journal, cleanup: file.cleanup };
  return current;
}

const sameBytes = (bytes: Uint8Array) => (input: Buffer) => input.equals(Buffer.from(bytes));

describe('one prepared command from the journal to the wire', () => {
  it('sends and signs the journaled bytes, hashed once by the bot and once by the emulator', async () => {
    const { venue, journal } = await setup();
    const stamped = stamp(limitBuy('0.001', '42000'), 1);
    journal.recordIntent(stamped);

    sha256Inputs.length = 0;
    const prepared = placeCommand(stamped.requestId);
    expect(sha256Inputs.filter(sameBytes(prepared.bodyBytes))).toHaveLength(1);
    journal.recordCommand(stamped.requestId, prepared);
    const journaled = journal.requireIntent(stamped.requestId).command;
    expect(journaled).not.toBeNull();

    const response = await venue.send(prepared);
    expect(response.request_id).toBe(stamped.requestId);
    expect(response.client_order_id).toBe(stamped.requestId);

    // The emulator hashed what it received to verify the signature, and accepted it: those
    // bytes are the journal's, byte for byte. The bot hashed them once, when preparing.
    const bodyHashes = sha256Inputs.filter(sameBytes(journaled!.bodyBytes));
    expect(bodyHashes).toHaveLength(2);
    expect(Buffer.from(journaled!.bodyBytes).equals(Buffer.from(prepared.bodyBytes))).toBe(true);
    expect(journaled!.bodySha256).toBe(prepared.bodySha256);
  });

  it('sends a simulation as its prepared bytes, hashed once by the bot', async () => {
    const { venue } = await setup();
    sha256Inputs.length = 0;
    const prepared = prepareCommand({
      endpoint: 'simulateOrder',
      body: {
        request_id: 'simulate-0001',
        client_order_id: 'simulate-0001',
        market_id: 'BTC-PERP',
        side: 'buy',
        type: 'limit',
        quantity: '0.001',
        price: '42000',
        leverage: 1,
      },
    });
    const simulation = await venue.send(prepared);
    expect(simulation.market_id).toBe('BTC-PERP');
    expect(simulation.issues).toEqual([]);
    expect(sha256Inputs.filter(sameBytes(prepared.bodyBytes))).toHaveLength(2);
  });

  it('bytes altered after they were prepared fail the emulator signature check and place nothing', async () => {
    const { venue, rest } = await setup();
    const prepared = placeCommand('altered-0001');
    prepared.bodyBytes[prepared.bodyBytes.length - 2] = 0x20;
    await expect(venue.send(prepared)).rejects.toMatchObject({
      details: expect.objectContaining({ httpStatus: 401 }),
    });
    const orders = [];
    for await (const order of rest.iterateOrders()) orders.push(order);
    expect(orders).toHaveLength(0);
  });
});
