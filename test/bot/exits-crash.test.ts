/**
 * Crash test of emulated exits with the real bot process: the bot opens a long and guards it
 * with an emulated take-profit, is killed with SIGKILL while the exit waits, and restarts on
 * the same journal. The exit must be restored before trading resumes and fire once: one
 * reduce-only order under the exit's release id at the emulator, the position flat.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.ts';
import { Journal } from '../../src/runtime/journal/index.ts';
import {
  allOrders,
  countMessages,
  delay,
  FIXTURE_STRATEGIES,
  type PacedEmulator,
  spawnBot,
  startPacedEmulator,
  writeBotConfig,
  writeEmulatorKey,
} from './helpers.ts';

let paced: PacedEmulator;
let directory: string;

beforeAll(async () => {
  paced = await startPacedEmulator();
  directory = mkdtempSync(join(tmpdir(), 'paperbot-exits-crash-'));
});

afterAll(async () => {
  await paced.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('emulated exits across a SIGKILL', () => {
  it('restores the waiting exit on restart and fires it once', async () => {
    const key = await writeEmulatorKey(paced.emulator, directory);
    const journalPath = join(directory, 'journal.sqlite');
    const configPath = writeBotConfig(directory, {
      venue: { key_file: key.path },
      strategies_dir: FIXTURE_STRATEGIES,
      strategies: [{ id: 'guard', name: 'exit-guard', params: { marketId: 'BTC-PERP' } }],
      risk: { kill_switch: { file: null, signal: null } },
      journal: { path: journalPath, durability: 'normal' },
      metrics: { enabled: false },
      market_data: { markets: ['BTC-PERP'] },
    });

    const first = spawnBot(configPath);
    const added = await first.waitFor(
      (record) => record.msg === 'emulated exit added',
      'the exit added',
    );
    const exitId = String(added.exitId);
    first.process.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(countMessages(first.records, 'emulated exit fired')).toBe(0);

    const journal = Journal.open(journalPath, { now: () => systemClock.now() });
    try {
      expect(journal.exits.live()).toMatchObject([
        { id: exitId, state: 'waiting', side: 'sell', rule: { kind: 'take_profit' } },
      ]);
    } finally {
      journal.close();
    }

    const second = spawnBot(configPath);
    const restored = await second.waitFor(
      (record) => record.msg === 'emulated exits restored',
      'the exits restored',
    );
    expect(restored).toMatchObject({ restored: 1, live: 1 });
    await second.waitFor(
      (record) => record.msg === 'emulated exit fired' && record.exitId === exitId,
      'the restored exit fired',
    );
    const releaseId = `${exitId}:x`;
    const deadline = systemClock.now() + 10_000;
    const released = () =>
      allOrders(paced.emulator, key.accountId).filter(
        (order) => order.client_order_id === releaseId,
      );
    while (released()[0]?.status !== 'FILLED' && systemClock.now() < deadline) {
      await delay(20);
    }
    second.process.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    expect(countMessages(second.records, 'emulated exit fired')).toBe(1);
    // Restored before the strategies started trading.
    const started = second.records.findIndex((record) => record.msg === 'kernel started');
    expect(started).toBeGreaterThan(second.records.indexOf(restored));
    expect(released()).toMatchObject([
      { side: 'sell', type: 'market', reduce_only: true, status: 'FILLED', request_id: releaseId },
    ]);
    const positions = paced.emulator.exchange
      .listPositions(key.accountId, { limit: 50 })
      .data.filter((position) => position.market_id === 'BTC-PERP' && position.quantity !== '0');
    expect(positions).toEqual([]);

    const after = Journal.open(journalPath, { now: () => systemClock.now() });
    try {
      expect(after.exits.live()).toEqual([]);
      expect(after.getIntent(releaseId)?.state).toBe('accepted');
    } finally {
      after.close();
    }
  }, 60_000);
});
