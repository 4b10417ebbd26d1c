import { afterEach, describe, expect, it } from 'vitest';
import { type LogFields, silentLogger } from '../../../src/core/logger.ts';
import { VirtualClock } from '../../../src/core/clock.ts';
import { DenialLog } from '../../../src/runtime/risk/denial-log.ts';
import { RiskGate } from '../../../src/runtime/risk/gate.ts';
import type { RiskSnapshot } from '../../../src/runtime/risk/view.ts';
import { market, openConfig, place, position, stamp } from './fixtures.ts';

/** 2025-01-15T10:00:00Z. */
const START = Date.UTC(2025, 0, 15, 10, 0, 0);

interface Line {
  readonly fields: Record<string, unknown>;
  readonly message: string;
}

function summaries() {
  const clock = new VirtualClock(START);
  const lines: Line[] = [];
  const log = new DenialLog({
    clock,
    intervalMs: 60_000,
    write: (fields, message) => lines.push({ fields, message }),
  });
  return { clock, lines, log };
}

const halted = { strategyId: 'mm-btc', rules: 'trading_state' };

describe('denial summaries', () => {
  it('logs the first denial, then one line per interval counting the repeats', () => {
    const { clock, lines, log } = summaries();
    expect(log.first(halted)).toBe(true);
    for (let second = 1; second <= 57; second++) {
      clock.advanceTo(START + second * 1000);
      expect(log.first(halted)).toBe(false);
    }
    expect(lines).toEqual([]);
    clock.advanceTo(START + 60_000);
    expect(lines).toEqual([
      {
        fields: {
          event: 'risk.denied_repeated',
          strategyId: 'mm-btc',
          rules: 'trading_state',
          count: 57,
          intervalSeconds: 60,
        },
        message: 'intent denied 57 more times in the last 60 s by trading_state (strategy mm-btc)',
      },
    ]);
    // Still denied: counted into the next interval, not logged in full again.
    clock.advanceTo(START + 61_000);
    expect(log.first(halted)).toBe(false);
    clock.advanceTo(START + 120_000);
    expect(lines.map((line) => line.message)).toEqual([
      'intent denied 57 more times in the last 60 s by trading_state (strategy mm-btc)',
      'intent denied 1 more time in the last 60 s by trading_state (strategy mm-btc)',
    ]);
  });

  it('forgets a kind quiet for a whole interval, so its next denial is logged in full', () => {
    const { clock, lines, log } = summaries();
    expect(log.first(halted)).toBe(true);
    clock.advanceTo(START + 60_000);
    expect(lines).toEqual([]);
    clock.advanceTo(START + 90_000);
    expect(log.first(halted)).toBe(true);
  });

  it('keeps kinds apart by strategy and by rules', () => {
    const { log } = summaries();
    expect(log.first(halted)).toBe(true);
    expect(log.first({ strategyId: 'mm-eth', rules: 'trading_state' })).toBe(true);
    expect(log.first({ strategyId: 'mm-btc', rules: 'max_orders_per_second' })).toBe(true);
    expect(log.first(halted)).toBe(false);
  });

  it('writes what is still counted when disposed, with the time that passed', () => {
    const { clock, lines, log } = summaries();
    log.first(halted);
    clock.advanceTo(START + 12_000);
    log.first(halted);
    log.first(halted);
    log.dispose();
    expect(lines.map((line) => line.message)).toEqual([
      'intent denied 2 more times in the last 12 s by trading_state (strategy mm-btc)',
    ]);
    clock.advanceTo(START + 120_000);
    expect(lines).toHaveLength(1);
  });
});

describe('the risk gate with denial summaries', () => {
  const gates: RiskGate[] = [];
  afterEach(() => {
    for (const gate of gates.splice(0)) gate.dispose();
  });

  function snapshotAt(clock: VirtualClock): RiskSnapshot {
    const btc = market({ observedAt: clock.now() });
    return {
      routeReady: true,
      markets: { [btc.marketId]: btc },
      positions: { [btc.marketId]: position(btc.marketId, '1') },
      openOrders: [],
      equity: null,
    };
  }

  it('logs a halted strategy denied every second as one line, then one per minute', () => {
    const clock = new VirtualClock(START);
    const lines: Line[] = [];
    const logger = {
      ...silentLogger,
      warn: (message: string, fields?: LogFields) => lines.push({ fields: { ...fields }, message }),
    };
    const gate = new RiskGate({ config: openConfig({}), clock, logger });
    gates.push(gate);
    gate.halt('kill switch');
    lines.length = 0;
    for (let second = 0; second < 120; second++) {
      clock.advanceTo(START + second * 1000);
      const decision = gate.evaluate(stamp(place(), second + 1), snapshotAt(clock));
      expect(decision.allowed).toBe(false);
    }
    clock.advanceTo(START + 120_000);
    expect(lines.map((line) => line.message)).toEqual([
      'intent denied by trading_state',
      'intent denied 59 more times in the last 60 s by trading_state (strategy test)',
      'intent denied 60 more times in the last 60 s by trading_state (strategy test)',
    ]);
    expect(gate.deniedIntents).toBe(120);
  });
});
