/**
 * The short runs of `npm run chaos -- minimal-server-additive minimal-server-broken-events` that
 * `npm test` makes: the real bot process, reading tolerantly, against the minimal server in
 * additive mode (issue 24), then with every 5th order or fill event broken as well. Every figure
 * must be 0 and the bot must exit 0; reading strictly, as before, it does not even start.
 */
import { describe, expect, it } from 'vitest';
import { formatResult, runScenario } from './harness.ts';
import { additiveScenario } from './scenarios.ts';

const COMMON = {
  no_venue_fills: 0,
  strategy_lost_fills: 0,
  strategy_double_counted: 0,
  metric_not_log: 0,
  unknown_fields_not_counted: 0,
  unknown_field_logged_twice: 0,
  continuity_lost: 0,
  journal_unseen_fills: 0,
};

async function expectClean(breakEvery: number, extra: Record<string, number>): Promise<void> {
  const result = await runScenario(additiveScenario(4_000, breakEvery));
  const line = formatResult(result);
  expect(result.venueOrders, line).toBeGreaterThan(0);
  expect(result.venueFills, line).toBeGreaterThan(0);
  expect(
    {
      duplicates: result.duplicates,
      lost_fills: result.lost_fills,
      double_counted: result.double_counted,
      left_open: result.left_open,
      exit: result.exit,
      extra: result.extra,
    },
    `${line}\n${result.notes.join('\n')}`,
  ).toEqual({
    duplicates: 0,
    lost_fills: 0,
    double_counted: 0,
    left_open: 0,
    exit: 0,
    extra: { ...COMMON, ...extra },
  });
}

describe('chaos: the minimal server in additive mode', () => {
  it('trades; every venue fill reaches the journal, log, metric and strategy once; 0 open, exit 0', async () => {
    await expectClean(0, { refused_or_left_out: 0 });
  }, 90_000);

  it('with broken order and fill events too: each is read back, no fill lost or counted twice', async () => {
    await expectClean(5, { no_broken_event_met: 0 });
  }, 90_000);
});
