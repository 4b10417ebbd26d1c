/**
 * The part of `npm run chaos` that runs in `npm test`: two short scenarios, the real emulator
 * and the real bot process on loopback with the chaos proxy between them. Every figure but
 * the faults must be 0 and the bot must exit 0.
 */
import { describe, expect, it } from 'vitest';
import { formatResult, runScenario } from './harness.ts';
import { allScenarios, SMOKE_SCENARIOS } from './scenarios.ts';

const scenarios = allScenarios({ short: true }).filter((scenario) =>
  SMOKE_SCENARIOS.includes(scenario.name),
);

describe('chaos smoke (npm run chaos runs the whole suite)', () => {
  it('has its scenarios', () => {
    expect(scenarios.map((scenario) => scenario.name)).toEqual(SMOKE_SCENARIOS);
  });

  for (const scenario of scenarios) {
    it(`${scenario.name}: faults injected, nothing duplicated, lost, double-counted or left open`, async () => {
      const result = await runScenario(scenario);
      const line = formatResult(result);
      expect(result.faults, line).toBeGreaterThan(0);
      expect(result.venueOrders, line).toBeGreaterThan(0);
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
        extra: {},
      });
    }, 60_000);
  }
});
