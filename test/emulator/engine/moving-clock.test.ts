/**
 * On the system clock, time moves while the engine works: two reads of `now()` within one unit
 * of work may be a millisecond apart. The engine must not depend on reading the same time twice.
 */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { openHarness, provideLiquidity, request, START } from './fixtures.ts';

/** A virtual clock whose every read is one millisecond later than the one before. */
class MovingClock extends VirtualClock {
  override now(): number {
    const now = super.now();
    this.advanceBy(1);
    return now;
  }
}

describe('the engine on a clock that moves between reads', () => {
  it('fills crossing orders, and each fill event carries its fill and the fill time', () => {
    const harness = openHarness({ clock: new MovingClock(START) });
    provideLiquidity(harness, [{ side: 'sell', price: '64000', quantity: '0.3' }]);
    const taker = harness.exchange.createAccount({ startingBalance: '100000000' });
    for (let index = 0; index < 3; index++) {
      harness.exchange.placeOrder(taker, request({ side: 'buy', price: '64000', quantity: '0.1' }));
      harness.settle();
    }
    const fills = harness.eventsOf(taker).filter((event) => event.type === 'fill');
    expect(fills).toHaveLength(3);
    for (const event of fills) {
      if (event.type !== 'fill') continue;
      expect(event.data.quantity).toBe('0.1');
      expect(event.occurred_at).toBe(event.data.occurred_at);
    }
  });
});
