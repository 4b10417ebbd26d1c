/**
 * The look-ahead check on a recorded emulator session: the three shipped strategies pass, and
 * a strategy that reads the next record is named with the first intent that differs.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import { runBacktest } from '../../../src/replay/backtest/runner.ts';
import {
  memorySource,
  openReplaySource,
  recordedTimeRange,
  windowedSource,
} from '../../../src/replay/backtest/sources.ts';
import type { RecordedEvent } from '../../../src/replay/format/records.ts';
import {
  checkLookahead,
  type EmittedIntent,
  type LookaheadRun,
  runLookaheadCell,
} from '../../../src/replay/robustness/index.ts';
import { MARKET_MAKER_PARAMS, RISK, recordSession, temporaryFolder } from '../backtest/helpers.ts';
import { peekingStrategy, sharedData } from './peeking-strategy.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;
let range: { firstT: number; lastT: number };

beforeAll(async () => {
  folder = await temporaryFolder('lookahead');
  session = join(folder.path, 'session');
  await recordSession(session, { durationMs: 120_000, marketIds: ['BTC-PERP'] });
  range = recordedTimeRange(await openReplaySource([session]))!;
}, 60_000);

afterAll(async () => {
  await folder?.remove();
});

const EXAMPLES = {
  data: ['(set below)'],
  seed: 1,
  markets: ['BTC-PERP'],
  strategies: [
    { id: 'mm', name: 'market-maker', params: { ...MARKET_MAKER_PARAMS } },
    {
      id: 'trend',
      name: 'trend-follower',
      params: {
        markets: ['BTC-PERP'],
        source: 'ticker',
        fastPeriod: 3,
        slowPeriod: 8,
        enterOnStart: true,
      },
    },
    { id: 'grid', name: 'grid', params: { markets: ['BTC-PERP'], levels: 2, spacingTicks: 20 } },
  ],
  risk: RISK,
  logging: { level: 'silent' },
};

describe('the look-ahead check', () => {
  it('passes the three shipped strategies, comparing their intents before every cut', async () => {
    const document = { ...EXAMPLES, data: [session] };
    let full: LookaheadRun | undefined;
    const outcome = await checkLookahead(range, 3, async (cuts) => {
      const runs = await Promise.all(
        cuts.map((cutMs) =>
          runLookaheadCell({ cutMs }, { document, source: '(test)', data: null, parameters: {} }),
        ),
      );
      full = runs[0];
      return runs;
    });
    // Each of the three emitted intents to compare.
    expect(new Set(full!.intents.map((intent) => intent.strategyId))).toEqual(
      new Set(['mm', 'trend', 'grid']),
    );
    expect(outcome.differences).toEqual([]);
    expect(outcome.passed).toBe(true);
    expect(outcome.cuts).toHaveLength(3);
    // Intents were there to compare, and more of them before later cuts.
    expect(outcome.compared[0]).toBeGreaterThan(0);
    expect(outcome.compared[2]).toBeGreaterThan(outcome.compared[0]!);
  }, 120_000);

  it('names a strategy that reads the next record, with the first intent that differs', async () => {
    const loaded = await resolveBacktestConfig({ ...EXAMPLES, data: [session] });
    const opened = await openReplaySource([session], { markets: ['BTC-PERP'] });
    const runOn = async (cutMs: number | null): Promise<LookaheadRun> => {
      const source = cutMs === null ? opened : windowedSource(opened, { fromMs: 0, toMs: cutMs });
      const records: RecordedEvent[] = [];
      for await (const batch of source.batches()) records.push(...batch);
      // The records the replay delivers and the strategy reads ahead in: one array.
      sharedData.records = records;
      const intents: EmittedIntent[] = [];
      let replaying = false;
      await runBacktest({
        config: loaded.config,
        strategies: [
          loaded.strategies[0]!,
          {
            id: 'peeker',
            name: 'peeking',
            definition: peekingStrategy,
            rawParams: { market: 'BTC-PERP' },
            params: { market: 'BTC-PERP' },
          },
        ],
        source: memorySource({
          markets: opened.markets,
          bookDepth: opened.bookDepth,
          records,
        }),
        ...(cutMs === null ? {} : { replayUntilMs: cutMs - 1 }),
        onPhase: (phase) => {
          replaying = phase === 'replaying';
        },
        onIntent: (strategyId, intent, t) => {
          if (replaying) intents.push({ strategyId, t, intent: JSON.stringify(intent) });
        },
      });
      return { intents, lastT: records.at(-1)!.t, truncated: false };
    };
    const outcome = await checkLookahead(range, 2, async (cuts) => {
      const runs: LookaheadRun[] = [];
      for (const cutMs of cuts) runs.push(await runOn(cutMs));
      return runs;
    });
    expect(outcome.passed).toBe(false);
    // Only the peeker is named; the market maker beside it passes.
    expect(outcome.differences.map((difference) => difference.strategyId)).toEqual(['peeker']);
    const [first] = outcome.differences;
    expect(first!.cutMs).toBe(outcome.cuts[0]);
    // With all the data it quoted at the next mark; with the data cut there was no next mark.
    expect(JSON.parse(first!.full!)).toMatchObject({ kind: 'place', marketId: 'BTC-PERP' });
    expect(first!.cut).toBeNull();
  }, 120_000);
});
