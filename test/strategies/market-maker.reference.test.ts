/**
 * The market maker against the reference kept in test/strategies (its requote as it was, all in
 * big.js): over random walks of the mark, position changes, stale tickers and fills, both emit
 * the same intents in the same order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StampedIntent } from 'paperbot/strategy';
import { createStrategyHarness } from 'paperbot/testing';
import reference from './market-maker-reference.ts';
import marketMaker from '../../strategies/market-maker/index.ts';

const MARKET = 'BTC-PERP';

type Step =
  | { readonly kind: 'mark'; readonly halfTicks: number; readonly tenths: number }
  | { readonly kind: 'stale' }
  | { readonly kind: 'position'; readonly side: 'long' | 'short'; readonly quantity: string }
  | { readonly kind: 'fill'; readonly which: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('mark' as const),
      halfTicks: fc.integer({ min: -12, max: 12 }),
      tenths: fc.integer({ min: 0, max: 9 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stale' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('position' as const),
      side: fc.constantFrom<'long' | 'short'>('long', 'short'),
      quantity: fc.constantFrom('0', '0.1', '0.25', '1', '2', '3.7', '12'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fill' as const), which: fc.nat(7) }) },
);

const params = fc.record(
  {
    halfSpreadTicks: fc.integer({ min: 1, max: 8 }),
    refreshTicks: fc.integer({ min: 1, max: 6 }),
    skewTicksPerQuote: fc.integer({ min: 0, max: 3 }),
    maxSkewTicks: fc.integer({ min: 0, max: 5 }),
    maxInventoryQuotes: fc.integer({ min: 1, max: 4 }),
    quantity: fc.constantFrom('1', '0.5'),
  },
  { requiredKeys: [] },
);

/** The intents with each client order id replaced by the order it was first seen in. */
function normalized(intents: readonly StampedIntent[]): unknown[] {
  const ids = new Map<string, number>();
  const idOf = (id: string | null) => {
    if (id === null) return null;
    if (!ids.has(id)) ids.set(id, ids.size);
    return ids.get(id);
  };
  return intents.map((stamped) => {
    const intent = stamped.intent;
    const own = idOf(stamped.clientOrderId);
    return intent.kind === 'cancel'
      ? { own, intent: { ...intent, clientOrderId: idOf(intent.clientOrderId) } }
      : { own, intent };
  });
}

function run(strategy: typeof marketMaker, settings: object, steps: readonly Step[]): unknown[] {
  const harness = createStrategyHarness({ strategy, params: settings, respond: 'accept' });
  let mark = 100_000; // in tenths of a tick of 0.5: 5000.0
  harness.mark(MARKET, (mark / 20).toFixed(2));
  const seen: StampedIntent[] = harness.take();
  for (const one of steps) {
    harness.advanceBy(1_000);
    if (one.kind === 'mark') {
      mark = Math.max(1_000, mark + one.halfTicks * 5 + one.tenths - 5);
      harness.mark(MARKET, (mark / 20).toFixed(2));
    } else if (one.kind === 'stale') {
      harness.ticker({
        market_id: MARKET,
        mark_price: (mark / 20).toFixed(2),
        data_status: 'stale',
      });
    } else if (one.kind === 'position') {
      harness.positionUpdate({
        market_id: MARKET,
        side: one.side,
        quantity: one.quantity,
        entry_price: '5000',
      });
    } else {
      const places = seen.filter((stamped) => stamped.intent.kind === 'place');
      const target = places[one.which % Math.max(1, places.length)];
      const open = harness
        .openOrders(MARKET)
        .some((order) => order.clientOrderId === target?.clientOrderId);
      if (target !== undefined && open) harness.fillIntent(target);
    }
    seen.push(...harness.take());
  }
  return normalized(seen);
}

describe('market-maker against its reference', () => {
  it('emits the same intents over random marks, positions, stale tickers and fills', () => {
    fc.assert(
      fc.property(params, fc.array(step, { maxLength: 40 }), (settings, steps) => {
        const wanted = run(reference as typeof marketMaker, settings, steps);
        expect(wanted.length).toBeGreaterThan(0);
        expect(run(marketMaker, settings, steps)).toEqual(wanted);
      }),
      { numRuns: 150 },
    );
  });
});
