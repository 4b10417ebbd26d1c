/**
 * Trigger logic: unit cases for the edges (a tick exactly at the level, a gap through it,
 * activation) and fast-check properties (a trailing level only moves in the position's
 * favour; OCO never releases two exits of one group).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimal, toWire } from '../../../src/core/decimal.ts';
import type { Side } from '../../../src/runtime/intents.ts';
import { resolveOco } from '../../../src/runtime/exits/oco.ts';
import {
  distanceToTrigger,
  evaluate,
  initialTrailing,
  observedPrice,
  triggerLevel,
} from '../../../src/runtime/exits/trigger.ts';
import type { TrailingState, TriggerRule } from '../../../src/runtime/exits/types.ts';

const stop = (price: string): TriggerRule => ({ kind: 'stop', price });
const takeProfit = (price: string): TriggerRule => ({ kind: 'take_profit', price });

function fires(rule: TriggerRule, side: Side, price: string): boolean {
  return evaluate(rule, side, null, decimal(price)).fired;
}

/** Runs a trailing rule over prices; returns the index that fired (or -1) and the levels seen. */
function runTrailing(rule: TriggerRule, side: Side, prices: readonly string[]) {
  let trailing: TrailingState | null = initialTrailing(rule);
  const levels: (string | null)[] = [];
  for (const [index, price] of prices.entries()) {
    const result = evaluate(rule, side, trailing, decimal(price));
    trailing = result.trailing;
    const level = triggerLevel(rule, side, trailing);
    levels.push(level === null ? null : toWire(level));
    if (result.fired) return { firedAt: index, levels };
  }
  return { firedAt: -1, levels };
}

describe('stop and take-profit triggers', () => {
  it('fire on a tick exactly at the level', () => {
    expect(fires(stop('100'), 'sell', '100')).toBe(true);
    expect(fires(stop('100'), 'buy', '100.0')).toBe(true);
    expect(fires(takeProfit('110'), 'sell', '110')).toBe(true);
    expect(fires(takeProfit('90'), 'buy', '90')).toBe(true);
  });

  it('fire on a gap through the level and not a tick before it', () => {
    expect(fires(stop('100'), 'sell', '100.01')).toBe(false);
    expect(fires(stop('100'), 'sell', '93.5')).toBe(true);
    expect(fires(stop('100'), 'buy', '99.99')).toBe(false);
    expect(fires(stop('100'), 'buy', '120')).toBe(true);
    expect(fires(takeProfit('110'), 'sell', '109.99')).toBe(false);
    expect(fires(takeProfit('110'), 'sell', '130')).toBe(true);
    expect(fires(takeProfit('90'), 'buy', '90.01')).toBe(false);
    expect(fires(takeProfit('90'), 'buy', '80')).toBe(true);
  });

  it('read the price source the exit asked for (a sell at the bid, a buy at the ask)', () => {
    const observation = {
      mark: decimal('100'),
      last: decimal('101'),
      bid: decimal('99'),
      ask: decimal('102'),
    };
    expect(toWire(observedPrice('mark', 'sell', observation) ?? decimal(0))).toBe('100');
    expect(toWire(observedPrice('last', 'buy', observation) ?? decimal(0))).toBe('101');
    expect(toWire(observedPrice('bid_ask', 'sell', observation) ?? decimal(0))).toBe('99');
    expect(toWire(observedPrice('bid_ask', 'buy', observation) ?? decimal(0))).toBe('102');
    expect(observedPrice('bid_ask', 'buy', { mark: decimal('1') })).toBeUndefined();
  });

  it('measure the distance left, positive while not fired', () => {
    expect(toWire(distanceToTrigger(stop('95'), 'sell', null, decimal('100')) ?? decimal(0))).toBe(
      '5',
    );
    expect(
      toWire(distanceToTrigger(takeProfit('110'), 'sell', null, decimal('100')) ?? decimal(0)),
    ).toBe('10');
    expect(toWire(distanceToTrigger(stop('105'), 'buy', null, decimal('100')) ?? decimal(0))).toBe(
      '5',
    );
    expect(distanceToTrigger({ kind: 'trailing', offset: '1' }, 'sell', null, decimal('1'))).toBe(
      null,
    );
  });
});

describe('trailing stops', () => {
  it('follow the high by a price offset and fire on the pull-back to it', () => {
    const rule: TriggerRule = { kind: 'trailing', offset: '5' };
    const run = runTrailing(rule, 'sell', ['100', '104', '110', '107', '105.5', '105']);
    expect(run.levels).toEqual(['95', '99', '105', '105', '105', '105']);
    expect(run.firedAt).toBe(5);
  });

  it('follow the low of a buy by a percentage', () => {
    const rule: TriggerRule = { kind: 'trailing', offsetPercent: '10' };
    const run = runTrailing(rule, 'buy', ['100', '90', '95', '99', '99.1']);
    expect(run.levels).toEqual(['110', '99', '99', '99']);
    expect(run.firedAt).toBe(3);
  });

  it('wait for the activation price before following', () => {
    const rule: TriggerRule = { kind: 'trailing', offset: '2', activationPrice: '110' };
    const run = runTrailing(rule, 'sell', ['100', '90', '109.9', '110', '111', '109']);
    expect(run.levels).toEqual([null, null, null, '108', '109', '109']);
    expect(run.firedAt).toBe(5);
  });

  const side = fc.constantFrom<Side>('sell', 'buy');
  const price = fc
    .integer({ min: 1, max: 100_000 })
    .map((cents) => toWire(decimal(cents).div(100)));

  it('move only in the favourable direction, and fire only at or beyond the level (property)', () => {
    fc.assert(
      fc.property(
        side,
        fc.boolean(),
        fc.integer({ min: 1, max: 5000 }),
        fc.array(price, { minLength: 1, maxLength: 60 }),
        (exitSide, percent, offset, prices) => {
          const rule: TriggerRule = percent
            ? { kind: 'trailing', offsetPercent: toWire(decimal(offset).div(100)) }
            : { kind: 'trailing', offset: toWire(decimal(offset).div(100)) };
          let trailing = initialTrailing(rule);
          let previousLevel: ReturnType<typeof triggerLevel> = null;
          for (const text of prices) {
            const observed = decimal(text);
            const levelBefore = triggerLevel(rule, exitSide, trailing);
            const result = evaluate(rule, exitSide, trailing, observed);
            if (result.fired) {
              expect(levelBefore).not.toBeNull();
              if (levelBefore !== null) {
                expect(
                  exitSide === 'sell' ? observed.lte(levelBefore) : observed.gte(levelBefore),
                ).toBe(true);
              }
              return;
            }
            trailing = result.trailing;
            const level = triggerLevel(rule, exitSide, trailing);
            if (previousLevel !== null && level !== null) {
              expect(
                exitSide === 'sell' ? level.gte(previousLevel) : level.lte(previousLevel),
              ).toBe(true);
            }
            previousLevel = level;
          }
        },
      ),
    );
  });

  it('a stop fires exactly when the price is at or beyond its level (property)', () => {
    fc.assert(
      fc.property(side, price, price, (exitSide, level, observed) => {
        const fired = fires(stop(level), exitSide, observed);
        const expected =
          exitSide === 'sell'
            ? decimal(observed).lte(decimal(level))
            : decimal(observed).gte(decimal(level));
        expect(fired).toBe(expected);
        expect(fires(takeProfit(level), exitSide, observed)).toBe(
          decimal(observed).eq(decimal(level)) || !expected,
        );
      }),
    );
  });
});

describe('one-cancels-other', () => {
  it('releases the first to fire in a group and cancels its partner', () => {
    const decision = resolveOco([
      { id: 'stop', ocoGroup: 'b1', fired: true },
      { id: 'profit', ocoGroup: 'b1', fired: true },
      { id: 'alone', ocoGroup: null, fired: true },
      { id: 'other', ocoGroup: 'b2', fired: false },
    ]);
    expect(decision).toEqual({ release: ['stop', 'alone'], cancel: ['profit'] });
  });

  it('never releases two exits of one group, and cancels every other member (property)', () => {
    const candidate = fc.record({
      group: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: null }),
      fired: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(candidate, { maxLength: 20 }), (raw) => {
        const candidates = raw.map((entry, index) => ({
          id: `e${index}`,
          ocoGroup: entry.group,
          fired: entry.fired,
        }));
        const decision = resolveOco(candidates);
        const byId = new Map(candidates.map((entry) => [entry.id, entry]));
        const releasedGroups = decision.release
          .map((id) => byId.get(id)?.ocoGroup)
          .filter((group) => group !== null);
        expect(new Set(releasedGroups).size).toBe(releasedGroups.length);
        for (const id of decision.release) expect(byId.get(id)?.fired).toBe(true);
        for (const id of decision.cancel) expect(decision.release).not.toContain(id);
        for (const entry of candidates) {
          const groupReleased = entry.ocoGroup !== null && releasedGroups.includes(entry.ocoGroup);
          const released = decision.release.includes(entry.id);
          expect(released || decision.cancel.includes(entry.id)).toBe(
            groupReleased || (entry.fired && entry.ocoGroup === null),
          );
        }
      }),
    );
  });
});
