import { describe, expect, it } from 'vitest';
import { createStrategyHarness } from 'paperbot/testing';
import strategy, { TAG } from './index.ts';

const MARKET = 'BTC-PERP';

describe('example-strategy', () => {
  it('places one post-only bid below the mark, on the tick grid', () => {
    const harness = createStrategyHarness({ strategy, params: {} });
    harness.mark(MARKET, '100.3');
    expect(harness.take().map((stamped) => stamped.intent)).toEqual([
      {
        kind: 'place',
        marketId: MARKET,
        side: 'buy',
        type: 'limit',
        quantity: '0.103',
        price: '97.5',
        postOnly: true,
        tag: TAG,
      },
    ]);
  });

  it('does not add a second bid while the first is open', () => {
    const harness = createStrategyHarness({ strategy, params: {}, respond: 'accept' });
    harness.mark(MARKET, '100');
    harness.advanceBy(1_000).mark(MARKET, '101');
    expect(harness.intents).toHaveLength(1);
  });
});
