/**
 * Both sides on a wire profile that is not SVC1: a real `paperbot run` process (its profile in a
 * file named by `venue.wire`, its key file naming the scopes the venue's way) against an
 * emulator on a loopback port verifying with the same profile. The bot trades, its orders fill,
 * each fill reaches its log lines, and it stops cleanly. On a mismatched profile the emulator
 * refuses with INVALID_SIGNATURE and the bot's error names the wire settings to check.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../../src/client/index.ts';
import { systemClock } from '../../src/core/clock.ts';
import { DEFAULT_EMULATOR_CONFIG_INPUT } from '../../src/emulator/index.ts';
import { type Fill, type Order, Scope } from '../../src/protocol/index.ts';
import { parseWireProfile } from '../../src/signing/index.ts';
import {
  allOrders,
  type BotChild,
  delay,
  FIXTURE_STRATEGIES,
  type PacedEmulator,
  spawnBot,
  startPacedEmulator,
  writeBotConfig,
  writeEmulatorKey,
} from './helpers.ts';
import { NON_DEFAULT_PROFILE } from './fixtures/wire-profile.ts';

const PROFILE = NON_DEFAULT_PROFILE;
const profile = parseWireProfile(PROFILE);

let paced: PacedEmulator;
let taker: RestClient;
const directories: string[] = [];
const children: BotChild[] = [];

beforeAll(async () => {
  // No market simulation: only the orders placed here trade, so every fill is one the test made.
  paced = await startPacedEmulator({
    seed: 'wire-profile',
    wire: profile,
    config: {
      ...DEFAULT_EMULATOR_CONFIG_INPUT,
      simulation: { ...DEFAULT_EMULATOR_CONFIG_INPUT.simulation, enabled: false },
    },
  });
  taker = new RestClient({ credential: paced.emulator.createKey(), wireProfile: profile });
});

afterAll(async () => {
  // A bot a failed test left running is stopped before its venue goes away.
  for (const child of children) {
    if (child.process.exitCode === null && child.process.signalCode === null) {
      child.process.kill('SIGKILL');
      await child.exited;
    }
  }
  await taker?.close();
  await paced?.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

async function until<T>(read: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = systemClock.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (systemClock.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

function restingBids(accountId: string): Order[] {
  return allOrders(paced.emulator, accountId).filter((order) => order.status === 'OPEN');
}

function venueFills(accountId: string): Fill[] {
  return paced.emulator.exchange.listFills(accountId, { limit: 200 }).data;
}

/** A bot config on `wire`, with a key file whose scopes carry the profile's names. */
async function botConfig(wire: unknown, scopes: Scope[] = [...Scope.options]) {
  const directory = mkdtempSync(join(tmpdir(), 'paperbot-wire-'));
  directories.push(directory);
  const key = await writeEmulatorKey(paced.emulator, directory, { scopes });
  const document = JSON.parse(readFileSync(key.path, 'utf8')) as Record<string, unknown>;
  // Every scope name, the key's or not: what the key may do is the venue's to say.
  document.scopes = ['account.read', 'orders.read', 'fills.read', 'trade'];
  document.website_note = 'a field paperbot does not know';
  writeFileSync(key.path, JSON.stringify(document));
  chmodSync(key.path, 0o600);
  const wirePath = join(directory, 'wire.yaml');
  writeFileSync(wirePath, stringify(wire));
  const configPath = writeBotConfig(directory, {
    venue: { key_file: key.path, wire: wirePath },
    strategies_dir: FIXTURE_STRATEGIES,
    strategies: [
      {
        id: 'rester',
        name: 'steady-submitter',
        params: { marketId: 'BTC-PERP', intervalMs: 40, maxOpen: 3, churn: false },
      },
    ],
    risk: { kill_switch: { file: null, signal: null } },
    journal: { path: join(directory, 'journal.sqlite'), durability: 'normal' },
    metrics: { enabled: false },
    market_data: { markets: ['BTC-PERP'] },
  });
  return { configPath, accountId: key.accountId };
}

describe('paperbot run on a wire profile that is not SVC1', () => {
  it('trades, fills and stops cleanly against the emulator on the same profile', async () => {
    const { configPath, accountId } = await botConfig(PROFILE);
    const child = spawnBot(configPath);
    children.push(child);
    await child.waitFor((record) => record.event === 'bot.started', 'the start line', 30_000);
    // The key file's own field and scope names were kept, with warnings.
    const warnings = child.records.filter((record) => record.event === 'venue.key_file');
    expect(warnings.map((record) => String(record.msg)).join('\n')).toMatch(
      /1 field paperbot does not know[\s\S]*account\.read, orders\.read, fills\.read, trade/,
    );
    await until(() => (restingBids(accountId).length === 3 ? true : undefined), '3 resting bids');

    // Two bids taken: the venue's fills reach the bot over the private stream (renamed auth
    // frame, renamed scopes) and land in its fill lines once each.
    for (const [index, order] of restingBids(accountId).slice(0, 2).entries()) {
      await taker.placeOrder({
        request_id: `take-order-${index}`,
        client_order_id: `take-order-${index}`,
        market_id: 'BTC-PERP',
        side: 'sell',
        type: 'limit',
        quantity: order.quantity ?? '0',
        price: order.price ?? '0',
        time_in_force: 'IOC',
        leverage: 1,
      });
    }
    const fills = await until(() => {
      const made = venueFills(accountId);
      return made.length >= 2 ? made : undefined;
    }, 'two venue fills');
    for (const fill of fills) {
      await child.waitFor(
        (record) => record.event === 'fill' && record.fill_id === fill.fill_id,
        `the fill line of ${fill.fill_id}`,
      );
    }

    child.process.kill('SIGINT');
    expect(await child.exited).toBe(0);
    expect(child.records.find((record) => record.event === 'bot.shutdown')).toMatchObject({
      cancelled: true,
      disarmed: true,
    });
    expect(restingBids(accountId)).toEqual([]);
    const fillLines = child.records.filter((record) => record.event === 'fill');
    expect(fillLines.map((record) => record.fill_id).sort()).toEqual(
      fills.map((fill) => fill.fill_id).sort(),
    );
    expect(child.stderr()).toBe('');
  }, 60_000);

  it('is refused with INVALID_SIGNATURE on a mismatched profile, naming the settings to check', async () => {
    // One setting off: the signature's encoding.
    const { configPath } = await botConfig({ ...PROFILE, signature_encoding: 'base64url' });
    const child = spawnBot(configPath);
    children.push(child);
    expect(await child.exited).toBe(1);
    const stderr = child.stderr();
    expect(stderr).toContain('could not start: INVALID_SIGNATURE');
    expect(stderr).toContain('signature must be lower-case hex');
    expect(stderr).toContain('venue.wire.signature_encoding (base64url)');
    expect(stderr).toContain('venue.wire.websocket_auth (input {prefix} {key_id} {challenge}');
  }, 30_000);

  it('stops at start when the venue says the key lacks a scope the bot needs', async () => {
    // The key file lists fills.read, but the venue's key has no fills:read.
    const { configPath } = await botConfig(PROFILE, [
      'account:read',
      'orders:read',
      'orders:write',
    ]);
    const child = spawnBot(configPath);
    children.push(child);
    expect(await child.exited).not.toBe(0);
    const stderr = child.stderr();
    expect(stderr).toContain('could not start: SCOPE_REQUIRED');
    expect(stderr).toContain('the venue says the key lacks fills:read');
  }, 30_000);
});
